#include "mapper/nodes.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "formats/rset.h"
#include "util/text.h"

namespace gantry {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    return text;
}

std::optional<unsigned> number(std::string_view text) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        return std::nullopt;
    return n;
}

bool valid_host_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == ':' || c == '[' ||
               c == ']';
    });
}

// Hosts in the order they were first named, found by name: a list of
// thousands of hosts is not searched once per host.
class HostList {
public:
    // Adds `host`, or its slots to the entry already there.
    void add(HostSpec host) {
        const auto [at, added] = index_.try_emplace(host.name, hosts_.size());
        if (added) {
            hosts_.push_back(std::move(host));
            return;
        }
        HostSpec& same = hosts_[at->second];
        same.slots = same.slots.value_or(1) + host.slots.value_or(1);
        same.all_cpus = same.all_cpus || host.all_cpus;
        same.max_slots = std::max(same.max_slots, host.max_slots);
    }
    std::vector<HostSpec> take() && { return std::move(hosts_); }

private:
    std::vector<HostSpec> hosts_;
    std::unordered_map<std::string, std::size_t> index_;
};

// PRRTE's relative hosts: `+n<i>` (the job's i-th node), `+e` (its empty
// nodes), `+e:N` (N of them). Kept whole as the name; the mapper resolves
// them, since which nodes are empty depends on the apps placed before.
bool is_relative_host(std::string_view token) {
    if (token.starts_with("+n"))
        return number(token.substr(2)).has_value();
    if (token == "+e")
        return true;
    if (!token.starts_with("+e:"))
        return false;
    const auto count = number(token.substr(3));
    return count && *count > 0;
}

Result<HostSpec> parse_host_token(std::string_view token, std::string_view input) {
    HostSpec host;
    if (token.starts_with('+')) {
        if (!is_relative_host(token))
            return Error::in(
                "hosts", "bad relative host " + quote(token) + " (+n<i>, +e or +e:N with N > 0)",
                input);
        host.name = std::string(token);
        return host;
    }
    const std::size_t colon = token.rfind(':');
    host.name = std::string(token.substr(0, colon));
    if (colon != std::string_view::npos) {
        const std::string_view count = token.substr(colon + 1);
        if (count == "*" || count == "auto") {
            host.all_cpus = true;
        } else if (const auto n = number(count); n && *n > 0) {
            host.slots = *n;
        } else {
            return Error::in("hosts",
                             "bad slot count " + quote(count) + " for host " + quote(host.name) +
                                 " (host[:N] with N > 0, or host:*)",
                             input);
        }
    }
    if (!valid_host_name(host.name))
        return Error::in("hosts", "bad host name " + quote(host.name), input);
    return host;
}

// Strips comments: `#` and `//` to the end of the line, `/* ... */` within it.
std::string_view uncomment(std::string_view line) {
    for (const std::string_view mark : {"#", "//"})
        if (const std::size_t at = line.find(mark); at != std::string_view::npos)
            line = line.substr(0, at);
    return line;
}

std::string without_block_comments(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        if (text.compare(i, 2, "/*") == 0) {
            const std::size_t end = text.find("*/", i + 2);
            if (end == std::string_view::npos)
                break;
            // Keep the newlines so that line numbers in messages stay right.
            out.append(std::count(text.begin() + i, text.begin() + end, '\n'), '\n');
            i = end + 2;
        } else {
            out += text[i++];
        }
    }
    return out;
}

bool is_keyword(std::string_view key, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), key) != names.end();
}

struct HostfileLine {
    HostSpec host;
    bool exclude = false;
};

Result<HostfileLine> parse_hostfile_line(std::string_view line, std::string_view where) {
    HostfileLine parsed;
    std::vector<std::string_view> words;
    for (std::size_t i = 0; i < line.size();) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
            ++i;
        std::size_t end = i;
        while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])))
            ++end;
        if (end > i)
            words.push_back(line.substr(i, end - i));
        i = end;
    }
    std::string_view name = words.front();
    if (name.front() == '^') {
        parsed.exclude = true;
        name.remove_prefix(1);
    }
    if (const std::size_t at = name.find('@'); at != std::string_view::npos)
        name = name.substr(at + 1);  // user@host: the user is the launcher's business
    if (!valid_host_name(name))
        return Error::in("hostfile", std::string(where) + ": bad host name " + quote(name), line);
    parsed.host.name = std::string(name);
    for (std::size_t w = 1; w < words.size(); ++w) {
        const std::size_t equals = words[w].find('=');
        const std::string key = lower_case(words[w].substr(0, equals));
        const auto parsed_value =
            equals == std::string_view::npos ? std::nullopt : number(words[w].substr(equals + 1));
        const unsigned value = parsed_value.value_or(0);
        const bool slots = is_keyword(key, {"slots", "cpu", "count"});
        const bool max = is_keyword(key, {"max_slots", "slots_max", "max-slots", "slots-max",
                                          "cpu_max", "max_cpu", "count_max", "max_count"});
        if (is_keyword(key, {"port", "username", "user"}))
            continue;
        if (!slots && !max)
            return Error::in("hostfile",
                             std::string(where) + ": unknown keyword " + quote(words[w]) +
                                 " (slots=N, max_slots=M, port=, username=)",
                             line);
        if (!parsed_value || (slots && value == 0))
            return Error::in(
                "hostfile",
                std::string(where) + ": " + key + " needs a number, not " + quote(words[w]), line);
        if (slots && parsed.host.slots)
            return Error::in("hostfile", std::string(where) + ": slots given twice", line);
        if (slots)
            parsed.host.slots = value;
        else
            parsed.host.max_slots = value;
    }
    if (parsed.host.max_slots > 0 && parsed.host.slots &&
        *parsed.host.slots > parsed.host.max_slots)
        return Error::in("hostfile",
                         std::string(where) + ": slots=" + std::to_string(*parsed.host.slots) +
                             " exceeds max_slots=" + std::to_string(parsed.host.max_slots),
                         line);
    if (parsed.host.max_slots > 0 && !parsed.host.slots)
        parsed.host.slots = parsed.host.max_slots;  // PRRTE: slots default to the cap
    return parsed;
}

unsigned cpu_count(const Topology& topology, CpuUnit cpus) {
    const unsigned n = cpus == CpuUnit::kHwthread ? topology.npus() : topology.ncores();
    return std::max(n, 1u);
}

// nodes_from_resources, each rank's topology from `topology_of`.
Result<std::vector<Node>> nodes_of_ranks(
    const ResourceSet& resources,
    const std::function<const Topology*(ResourceSet::Rank)>& topology_of, CpuUnit cpus,
    std::string_view local_name) {
    if (resources.empty())
        return Error("R", "the resource set has no ranks to map onto");
    std::vector<Node> nodes;
    for (const auto& [rank, target] : resources.targets()) {
        const std::string name =
            target.hostname.empty() ? "rank" + std::to_string(rank) : target.hostname;
        const Topology* found = topology_of(rank);
        if (found == nullptr)
            return Error("R", "rank " + std::to_string(rank) + " (" + name + ") has no topology");
        const Topology& topology = *found;
        IdSet pus;
        for (const IdSet::Id core : target.cores) {
            if (core >= topology.ncores())
                return Error("R", "rank " + std::to_string(rank) + " (" + name + ") has core " +
                                      std::to_string(core) + " but the topology has " +
                                      std::to_string(topology.ncores()) + " cores");
            pus |= topology.object(ObjectType::kCore, core).pus;
        }
        for (const IdSet::Id gpu : target.gpus)
            if (gpu >= topology.ngpus())
                return Error("R", "rank " + std::to_string(rank) + " (" + name + ") has gpu " +
                                      std::to_string(gpu) + " but the topology has " +
                                      std::to_string(topology.ngpus()) + " GPUs");
        if (pus.empty())
            return Error("R", "rank " + std::to_string(rank) + " (" + name + ") has no cores");
        const auto slots =
            static_cast<unsigned>(cpus == CpuUnit::kHwthread ? pus.count() : target.cores.count());
        Node node{name,     slots,   0,           true, !local_name.empty() && name == local_name,
                  topology, IdSet{}, std::nullopt};
        node.allowed_pus = std::move(pus);
        node.allowed_gpus = target.gpus;
        nodes.push_back(std::move(node));
    }
    return nodes;
}

}  // namespace

Result<std::vector<HostSpec>> parse_hosts(std::string_view text) {
    HostList hosts;
    if (trim(text).empty())
        return Error::in("hosts", "empty host list", text);
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = text.find(',', start);
        const std::string_view token =
            text.substr(start, comma == std::string_view::npos ? comma : comma - start);
        auto host = parse_host_token(token, text);
        if (!host)
            return host.error();
        hosts.add(std::move(*host));
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    return std::move(hosts).take();
}

Result<std::vector<HostSpec>> parse_hostfile(std::string_view text, std::string_view path) {
    const std::string clean = without_block_comments(text);
    HostList named;
    std::vector<std::string> excluded;
    std::size_t line_number = 0;
    for (std::size_t start = 0; start < clean.size();) {
        const std::size_t end = std::min(clean.find('\n', start), clean.size());
        const std::string_view line =
            trim(uncomment(std::string_view(clean).substr(start, end - start)));
        start = end + 1;
        ++line_number;
        if (line.empty())
            continue;
        const std::string where = std::string(path) + ":" + std::to_string(line_number);
        auto parsed = parse_hostfile_line(line, where);
        if (!parsed)
            return parsed.error();
        if (parsed->exclude)
            excluded.push_back(parsed->host.name);
        else
            named.add(std::move(parsed->host));
    }
    std::vector<HostSpec> hosts = std::move(named).take();
    std::erase_if(hosts, [&](const HostSpec& h) {
        return std::find(excluded.begin(), excluded.end(), h.name) != excluded.end();
    });
    if (hosts.empty())
        return Error::in("hostfile", "no hosts", path);
    return hosts;
}

std::vector<HostSpec> with_names_as(std::vector<HostSpec> hosts,
                                    const std::vector<std::string>& names, std::string_view here) {
    const std::unordered_set<std::string> aliases(names.begin(), names.end());
    HostList merged;
    for (HostSpec& host : hosts) {
        if (aliases.contains(host.name))
            host.name = std::string(here);
        merged.add(std::move(host));
    }
    return std::move(merged).take();
}

// The slots `host` gives its node: as many as it says; for host:*, one per
// CPU (an allocated node keeps the slots of its allocated cores); else 1,
// PRRTE's default for a named host.
void give_slots(Node& node, const HostSpec& host, CpuUnit cpus) {
    node.max_slots = host.max_slots;
    node.slots_given = true;
    if (host.all_cpus && !host.slots) {
        if (node.allowed_pus.empty())
            node.slots = cpu_count(node.topology, cpus);
        return;
    }
    node.slots = host.slots.value_or(1);
    node.slots_given = host.slots.has_value();
}

std::vector<Node> make_nodes(std::span<const HostSpec> hosts, const Topology& topology,
                             CpuUnit cpus, std::string_view local_name) {
    std::vector<Node> nodes;
    nodes.reserve(hosts.size());
    for (const HostSpec& host : hosts) {
        Node node{
            host.name, 1,       0,           false, !local_name.empty() && host.name == local_name,
            topology,  IdSet{}, std::nullopt};
        give_slots(node, host, cpus);
        nodes.push_back(std::move(node));
    }
    return nodes;
}

Result<std::vector<Node>> nodes_of_hosts(std::span<const HostSpec> hosts,
                                         std::span<const Node> allocated, CpuUnit cpus) {
    std::unordered_map<std::string_view, const Node*> by_name;
    for (const Node& node : allocated)
        by_name.emplace(node.name, &node);  // the first of a name
    std::vector<Node> nodes;
    nodes.reserve(hosts.size());
    for (const HostSpec& host : hosts) {
        const auto found = by_name.find(host.name);
        if (found == by_name.end())
            return Error("hosts", "host " + host.name + " is not among the job's nodes");
        Node node = *found->second;
        give_slots(node, host, cpus);
        nodes.push_back(std::move(node));
    }
    return nodes;
}

Result<std::vector<Node>> nodes_from_resources(const ResourceSet& resources,
                                               const RankTopologies& topologies, CpuUnit cpus,
                                               std::string_view local_name) {
    return nodes_of_ranks(
        resources, [&](ResourceSet::Rank rank) { return topologies.find(rank); }, cpus, local_name);
}

Result<std::vector<Node>> nodes_from_resources(const ResourceSet& resources,
                                               const Topology& topology, CpuUnit cpus,
                                               std::string_view local_name) {
    return nodes_of_ranks(
        resources, [&](ResourceSet::Rank) { return &topology; }, cpus, local_name);
}

Node local_node(const Topology& topology, std::string_view name, CpuUnit cpus) {
    return Node{std::string(name), cpu_count(topology, cpus), 0, false, true, topology, IdSet{},
                std::nullopt};
}

}  // namespace gantry
