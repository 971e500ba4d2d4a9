#include "mapper/files.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>

namespace gantry {
namespace {

std::optional<unsigned> number(std::string_view text) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return n;
}

std::vector<std::string> words_of(std::string_view line) {
    std::istringstream in{std::string(line)};
    std::vector<std::string> words;
    for (std::string word; in >> word;)
        words.push_back(word);
    return words;
}

// Calls `each(line, where)` for every non-blank line without its comment.
template <class Each>
Status for_each_line(std::string_view text, std::string_view path, Each each) {
    std::size_t number_of_line = 0;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++number_of_line;
        line = line.substr(0, line.find('#'));
        if (words_of(line).empty())
            continue;
        if (auto status = each(line, std::string(path) + ":" + std::to_string(number_of_line));
            !status)
            return status;
    }
    return {};
}

Result<CpuList> parse_cpu_list(std::string_view text, std::string_view domain,
                               const std::string& where, std::string_view line) {
    CpuList list;
    const std::size_t colon = text.find(':');
    if (colon != std::string_view::npos) {
        list.package = number(text.substr(0, colon));
        if (!list.package)
            return Error::in(std::string(domain),
                             where + ": bad package " + quote(text.substr(0, colon)), line);
        text = text.substr(colon + 1);
    }
    auto cpus = IdSet::parse(text);
    if (!cpus || cpus->empty())
        return Error::in(std::string(domain), where + ": bad CPU list " + quote(text), line);
    list.cpus = *cpus;
    return list;
}

}  // namespace

Result<std::string> file_text(const FileTexts& files, std::string domain, std::string_view what,
                              const std::string& path, std::string_view as_given) {
    const auto found = files.find(path);
    if (found != files.end() && !found->second.unreadable)
        return found->second.text;
    const std::string reason =
        found == files.end() ? std::strerror(ENOENT) : *found->second.unreadable;
    const std::string_view name = as_given.empty() ? std::string_view(path) : as_given;
    return Error(std::move(domain), std::string(what) + " " + quote(name) + ": " + reason);
}

Result<std::vector<SeqLine>> parse_seq_file(std::string_view text, std::string_view path) {
    std::vector<SeqLine> lines;
    auto status =
        for_each_line(text, path, [&](std::string_view line, const std::string& where) -> Status {
            const auto words = words_of(line);
            SeqLine parsed{words[0], std::nullopt};
            if (words.size() >= 2) {
                auto cpus = parse_cpu_list(words[1], "seq", where, line);
                if (!cpus)
                    return cpus.error();
                parsed.cpus = *cpus;
            }
            if (words.size() == 3 || words.size() > 4)
                return Error::in("seq", where + ": expected `host [cpus]`", line);
            lines.push_back(std::move(parsed));
            return {};
        });
    if (!status)
        return status.error();
    if (lines.empty())
        return Error::in("seq", "no hosts", path);
    return lines;
}

std::vector<SeqLine> seq_lines_of_hostfile(std::string_view text) {
    std::vector<SeqLine> lines;
    std::vector<std::string> excluded;
    (void)for_each_line(text, "hostfile", [&](std::string_view line, const std::string&) -> Status {
        line = line.substr(0, line.find("//"));
        const auto words = words_of(line);
        if (words.empty())
            return {};
        std::string host = words[0].substr(words[0].find('@') + 1);
        if (host.starts_with('^'))
            excluded.push_back(host.substr(1));
        else
            lines.push_back(SeqLine{std::move(host), std::nullopt});
        return {};
    });
    std::erase_if(lines, [&](const SeqLine& line) {
        return std::find(excluded.begin(), excluded.end(), line.host) != excluded.end();
    });
    return lines;
}

std::vector<SeqLine> seq_lines_of_hosts(std::string_view hosts) {
    std::vector<SeqLine> lines;
    std::istringstream in{std::string(hosts)};
    for (std::string token; std::getline(in, token, ',');)
        lines.push_back(SeqLine{token.substr(0, token.rfind(':')), std::nullopt});
    return lines;
}

Result<std::vector<RankfileLine>> parse_rankfile(std::string_view text, std::string_view path) {
    std::vector<RankfileLine> lines;
    auto status =
        for_each_line(text, path, [&](std::string_view line, const std::string& where) -> Status {
            const auto words = words_of(line);
            const auto bad = [&](std::string what) {
                return Error::in("rankfile",
                                 where + ": " + what + " (expected `rank N=host slot=LIST`)", line);
            };
            if (words.size() != 3 || words[0] != "rank")
                return bad("not a rank line");
            const std::size_t equals = words[1].find('=');
            if (equals == std::string::npos)
                return bad("missing '=' after the rank");
            RankfileLine parsed;
            const auto rank = number(std::string_view(words[1]).substr(0, equals));
            if (!rank)
                return bad("bad rank " + quote(words[1].substr(0, equals)));
            parsed.rank = *rank;
            const std::string host = words[1].substr(equals + 1);
            if (host.empty())
                return bad("missing host");
            if (host.rfind("+n", 0) == 0) {
                parsed.node_index = number(std::string_view(host).substr(2));
                if (!parsed.node_index)
                    return bad("bad relative host " + quote(host));
            } else {
                parsed.host = host;
            }
            if (words[2].rfind("slot=", 0) != 0)
                return bad("missing slot=");
            auto cpus =
                parse_cpu_list(std::string_view(words[2]).substr(5), "rankfile", where, line);
            if (!cpus)
                return cpus.error();
            parsed.cpus = *cpus;
            for (const RankfileLine& earlier : lines)
                if (earlier.rank == parsed.rank)
                    return bad("rank " + std::to_string(parsed.rank) + " given twice");
            lines.push_back(std::move(parsed));
            return {};
        });
    if (!status)
        return status.error();
    if (lines.empty())
        return Error::in("rankfile", "no ranks", path);
    return lines;
}

}  // namespace gantry
