// `gantry hostlist`: compress, expand, count, index and combine RFC 29
// hostlists, as `flux hostlist` does. Reference: docs/commands/hostlist.md.
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "formats/hostlist.h"
#include "formats/idset.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kDomain = "hostlist";
// With --quiet the result was empty, or --find did not find a host: a
// negative answer, not bad input (as `flux hostlist`).
constexpr int kExitNo = 1;

constexpr std::string_view kExamples = R"(Examples:
  $ gantry hostlist node3 node1 node2 node7
  node[3,1-2,7]
  $ gantry hostlist --sort node3 node1 node2 node7
  node[1-3,7]
  $ gantry hostlist --expand 'node[1-3]-ib'
  node1-ib node2-ib node3-ib
  $ gantry hostlist --count 'node[0-1023]'
  1024
  $ gantry hostlist --nth=-1 'node[0-1023]'
  node1023
  $ gantry hostlist --find=node7 'node[4-9]'
  3
  $ gantry hostlist --minus 'node[1-10]' 'node[2-3]' node7
  node[1,4-6,8-10]
  $ gantry hostlist --intersect 'node[1-8]' 'node[5-12]'
  node[5-8]
  $ gantry hostlist --exclude=0,2 --limit=2 'node[1-10]'
  node[2,4]
  $ printf 'node1\nnode2\nnode3\n' | gantry hostlist
  node[1-3]

Exit status: 0 on success; 1 when --quiet finds an empty result or --find a
host that is not in the list; 2 on a bad hostlist or bad options.)";

// How the command combines its arguments into one list.
enum class Combine { kAppend, kIntersect, kMinus, kXor };

struct Options {
    std::vector<std::string> hostlists;
    bool intersect = false;
    bool minus = false;
    bool exclusive_or = false;
    bool sort = false;
    bool uniq = false;
    std::vector<std::string> exclude;
    std::optional<std::string> nth;
    std::optional<long long> limit;
    bool count = false;
    bool expand = false;
    std::string delimiter = " ";
    std::optional<std::string> find;
    bool quiet = false;
    bool fallback = false;

    Combine combine() const {
        if (intersect)
            return Combine::kIntersect;
        if (minus)
            return Combine::kMinus;
        if (exclusive_or)
            return Combine::kXor;
        return Combine::kAppend;
    }
};

void define_options(CLI::App& app, Options& options) {
    app.footer(std::string(kExamples));
    app.add_option("HOSTLIST", options.hostlists,
                   "Hostlists, appended in order; with none, whitespace-separated hostlists are "
                   "read from stdin");

    auto* intersect = app.add_flag("-i,--intersect", options.intersect,
                                   "Print the hosts in every argument (sorted, unique)");
    auto* minus = app.add_flag("-m,--minus", options.minus,
                               "Remove from the first argument, for each host of the others, "
                               "its first occurrence");
    auto* exclusive_or = app.add_flag("-X,--xor", options.exclusive_or,
                                      "Print the hosts in an odd number of arguments (sorted, "
                                      "unique)");
    intersect->excludes(minus, exclusive_or);
    minus->excludes(exclusive_or);

    app.add_option("-x,--exclude", options.exclude,
                   "Remove every occurrence of these hosts, or the hosts at these 0-based "
                   "indices when the value is an idset")
        ->allow_extra_args(false);
    app.add_flag("-S,--sort", options.sort, "Sort the hosts in natural order (repeats kept)");
    app.add_flag("-u,--uniq,--union,--unique", options.uniq,
                 "Sort and drop repeated hosts: with several arguments, their union");
    auto* nth = app.add_option("-n,--nth", options.nth,
                               "Keep the hosts at these 0-based indices (an idset); a leading "
                               "'-' counts from the end, -1 being the last host");
    app.add_option("-L,--limit", options.limit,
                   "Keep the first N hosts, or the last N when N is negative");

    auto* count = app.add_flag("-c,--count", options.count, "Print the number of hosts");
    auto* expand =
        app.add_flag("-e,--expand", options.expand, "Print every host, separated by the delimiter");
    auto* delimiter = app.add_option("-d,--delimiter", options.delimiter,
                                     "Separator of --expand and --find output (default: a "
                                     "space; \\n and \\t are understood)");
    auto* find = app.add_option("-F,--find", options.find,
                                "Print the 0-based index of each of these hosts in the result");
    auto* quiet = app.add_flag("-q,--quiet", options.quiet,
                               "Print nothing; exit 0 when the result has hosts, 1 when empty");
    app.add_flag("-f,--fallback", options.fallback,
                 "Accepted as in flux; every argument is read as a hostlist anyway");
    count->excludes(expand, find);
    expand->excludes(find);
    quiet->excludes(count, expand, find, delimiter);
    find->excludes(nth);
}

Error error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

// Arguments may hold several hostlists separated by whitespace, as stdin does.
std::vector<std::string> words_of(const std::vector<std::string>& arguments) {
    std::vector<std::string> words;
    for (const std::string& argument : arguments) {
        std::size_t pos = 0;
        bool any = false;
        while (true) {
            const std::size_t start = argument.find_first_not_of(" \t\n\r\v\f", pos);
            if (start == std::string::npos)
                break;
            pos = argument.find_first_of(" \t\n\r\v\f", start);
            words.push_back(argument.substr(start, pos - start));
            any = true;
        }
        if (!any)
            words.emplace_back();  // "" is the empty hostlist
    }
    return words;
}

Result<std::vector<Hostlist>> parse_all(const std::vector<std::string>& words) {
    std::vector<Hostlist> lists;
    lists.reserve(words.size());
    for (const std::string& word : words) {
        auto list = Hostlist::parse(word);
        if (!list)
            return list.error();
        lists.push_back(std::move(*list));
    }
    return lists;
}

Hostlist combined(const std::vector<Hostlist>& lists, Combine how) {
    if (lists.empty())
        return {};
    Hostlist result = lists.front();
    for (std::size_t i = 1; i < lists.size(); ++i) {
        const Hostlist& other = lists[i];
        switch (how) {
            case Combine::kAppend:
                result.append(other);
                break;
            case Combine::kIntersect:
                result = Hostlist::set_intersection(result, other);
                break;
            case Combine::kMinus:
                result.remove_each(other);
                break;
            case Combine::kXor:
                result = Hostlist::set_xor(result, other);
                break;
        }
    }
    return result;
}

// The hosts of `list` at the 0-based `positions`, in ascending order.
Hostlist hosts_at(const Hostlist& list, const IdSet& positions) {
    Hostlist out;
    for (const IdSet::Range& range : positions.ranges())
        out.append(list.slice(range.lo, std::size_t{range.hi} + 1));
    return out;
}

// The hosts of `list` not at the 0-based `positions`.
Hostlist hosts_not_at(const Hostlist& list, const IdSet& positions) {
    Hostlist out;
    std::size_t next = 0;
    for (const IdSet::Range& range : positions.ranges()) {
        out.append(list.slice(next, range.lo));
        next = std::size_t{range.hi} + 1;
    }
    out.append(list.slice(next, list.count()));
    return out;
}

Result<Hostlist> excluded(Hostlist list, const std::vector<std::string>& values) {
    for (const std::string& value : values) {
        if (const auto indices = IdSet::parse(value); indices && !indices->empty()) {
            list = hosts_not_at(list, *indices);
            continue;
        }
        const auto hosts = Hostlist::parse(value);
        if (!hosts)
            return Error(std::string(kDomain), "--exclude: " + hosts.error().str());
        for (const std::string& host : hosts->expand())
            list.remove(host);
    }
    return list;
}

Result<Hostlist> limited(const Hostlist& list, long long limit) {
    if (limit == 0)
        return error("--limit: 0 keeps no host; give N > 0 for the first N, N < 0 for the last N");
    const std::size_t count = list.count();
    const auto n = static_cast<unsigned long long>(limit > 0 ? limit : -(limit + 1) + 1ULL);
    if (n >= count)
        return list;
    return limit > 0 ? list.slice(0, static_cast<std::size_t>(n))
                     : list.slice(count - static_cast<std::size_t>(n), count);
}

// Everything the options ask for after the lists are combined, in flux's
// order: exclude, sort, unique, nth, limit.
Result<Hostlist> transformed(Hostlist list, const Options& options) {
    if (!options.exclude.empty()) {
        auto kept = excluded(std::move(list), options.exclude);
        if (!kept)
            return kept.error();
        list = std::move(*kept);
    }
    if (options.sort)
        list.sort();
    if (options.uniq)
        list.uniq();
    if (options.nth) {
        const auto positions = nth_positions(kDomain, "host", *options.nth, list.count());
        if (!positions)
            return positions.error();
        list = hosts_at(list, *positions);
    }
    if (options.limit) {
        auto kept = limited(list, *options.limit);
        if (!kept)
            return kept.error();
        list = std::move(*kept);
    }
    return list;
}

std::string joined(const std::vector<std::string>& words, std::string_view delimiter) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i > 0)
            out += delimiter;
        out += words[i];
    }
    return out;
}

// The indices of the hosts of --find, or the error for the first missing one.
Result<std::vector<std::string>> indices_of(const Hostlist& list, std::string_view hosts_text) {
    const auto hosts = Hostlist::parse(hosts_text);
    if (!hosts)
        return Error(std::string(kDomain), "--find: " + hosts.error().str());
    std::vector<std::string> indices;
    for (const std::string& host : hosts->expand()) {
        const auto index = list.find(host);
        if (!index)
            return Error::in(std::string(kDomain), "--find: " + host + " is not in the list",
                             list.encode());
        indices.push_back(std::to_string(*index));
    }
    return indices;
}

int print(const Hostlist& result, const Options& options) {
    const std::string delimiter = unescape_delimiter(options.delimiter);
    std::string text;
    if (options.quiet)
        return result.empty() ? kExitNo : kExitOk;
    if (options.count) {
        text = std::to_string(result.count());
    } else if (options.find) {
        const auto indices = indices_of(result, *options.find);
        if (!indices) {
            std::cerr << "gantry: " << indices.error().str() << '\n';
            return kExitNo;
        }
        text = joined(*indices, delimiter);
    } else if (options.expand) {
        text = joined(result.expand(), delimiter);
    } else {
        text = result.encode();
    }
    std::cout << text << '\n';
    std::cout.flush();
    return kExitOk;
}

}  // namespace

int hostlist_main(int argc, char** argv) {
    CLI::App app("Compress, expand, count, index and combine RFC 29 hostlists.", "hostlist");
    Options options;
    define_options(app, options);
    if (const auto exit_code = parse_options(app, argc, argv))
        return *exit_code;

    const auto lists = parse_all(words_of(arguments_or_stdin(options.hostlists)));
    if (!lists)
        return fail(lists.error());
    const auto result = transformed(combined(*lists, options.combine()), options);
    if (!result)
        return fail(result.error());
    return print(*result, options);
}

}  // namespace gantry::cli
