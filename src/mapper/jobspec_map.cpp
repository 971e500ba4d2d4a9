// Jobspec -> JobMap (docs/jobspec.md, docs/mapping.md).
#include "mapper/jobspec_map.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "mapper/display.h"
#include "mapper/launch_plan.h"
#include "mapper/nodes.h"
#include "mapper/policy.h"
#include "mapper/resources.h"

namespace gantry {
namespace {

// The options the jobspec carries are `gantry run`'s: their messages too.
constexpr std::string_view kDomain = "run";

Error run_error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

// The directives of one app, from its option strings.
Result<Directives> directives_of(const Jobspec& spec, const Jobspec::App& app) {
    Directives directives;
    if (!app.map_by.empty()) {
        auto map = parse_map_by(app.map_by);
        if (!map)
            return map.error();
        if (!map->file.empty())
            map->file = jobspec_path(spec, map->file);
        directives.map = std::move(*map);
    }
    if (!app.rank_by.empty()) {
        auto rank = parse_rank_by(app.rank_by);
        if (!rank)
            return rank.error();
        directives.rank = *rank;
    }
    if (!app.bind_to.empty()) {
        auto bind = parse_bind_to(app.bind_to);
        if (!bind)
            return bind.error();
        directives.bind = *bind;
    }
    return directives;
}

// The mpirun spellings (--oversubscribe, --nolocal, --use-hwthread-cpus,
// --rankfile) are qualifiers of the job's --map-by.
Status fold_compat_flags(const Jobspec& spec, Directives& job_directives) {
    const Jobspec::Job& job = spec.job;
    if (!(job.oversubscribe || job.nolocal || job.hwthread_cpus || !job.rankfile.empty()))
        return {};
    if (!job_directives.map) {
        job_directives.map = MapPolicy{};
        job_directives.map->has_directive = false;
    }
    MapPolicy& map = *job_directives.map;
    if (job.oversubscribe) {
        if (map.oversubscribe == false)
            return run_error("--oversubscribe conflicts with NOOVERSUBSCRIBE in --map-by");
        map.oversubscribe = true;
    }
    map.nolocal = map.nolocal || job.nolocal;
    if (job.hwthread_cpus) {
        if (map.cpus == CpuUnit::kCore)
            return run_error("--use-hwthread-cpus conflicts with CORECPUS in --map-by");
        map.cpus = CpuUnit::kHwthread;
    }
    if (!job.rankfile.empty()) {
        if (map.has_directive && map.by != MapBy::kRankfile)
            return run_error("--rankfile conflicts with --map-by " + mapping_name(map));
        map.by = MapBy::kRankfile;
        map.has_directive = true;
        map.file = jobspec_path(spec, job.rankfile);
    }
    return {};
}

// The request without hosts: every app's task count, directives and command.
Result<JobRequest> job_request(const Jobspec& spec) {
    JobRequest request;
    const std::vector<std::string> commands = app_commands(spec);
    for (std::size_t k = 0; k < spec.apps.size(); ++k) {
        const Jobspec::App& app = spec.apps[k];
        auto directives = directives_of(spec, app);
        if (!directives)
            return directives.error();
        if (k == 0)
            request.directives = std::move(*directives);
        request.apps.push_back(AppRequest{
            app.ntasks, k == 0 ? Directives{} : std::move(*directives), commands[k], {}, {}});
    }
    if (auto status = fold_compat_flags(spec, request.directives); !status)
        return status.error();
    return request;
}

// The text of a hostfile `spec` names, as the caller read it.
Result<std::string> hostfile_text(const Jobspec& spec, const MapInputs& inputs,
                                  std::string_view hostfile) {
    return file_text(inputs.files, std::string(kDomain), "hostfile", jobspec_path(spec, hostfile),
                     hostfile);
}

// The hosts of `-H` or a hostfile, when either is given, with this
// machine's other names (localhost, its addresses) as its host name.
Result<std::vector<HostSpec>> host_specs(const Jobspec& spec, const MapInputs& inputs,
                                         const std::string& hosts, const std::string& hostfile) {
    if (!hosts.empty() && !hostfile.empty())
        return run_error("give -H or --hostfile, not both");
    Result<std::vector<HostSpec>> parsed = std::vector<HostSpec>{};
    if (!hosts.empty()) {
        parsed = parse_hosts(hosts);
    } else if (!hostfile.empty()) {
        auto text = hostfile_text(spec, inputs, hostfile);
        if (!text)
            return text.error();
        parsed = parse_hostfile(*text, hostfile);
    }
    if (!parsed || parsed->empty())
        return parsed;
    return with_names_as(std::move(*parsed), inputs.names, inputs.hostname);
}

// The job's own nodes: the allocation, resources.R, -H or --hostfile; none
// when the job names none of them.
Result<std::vector<Node>> job_nodes(const Jobspec& spec, const MapInputs& inputs,
                                    const std::optional<ResourceSet>& allocation, CpuUnit cpus) {
    const Jobspec::Job& job = spec.job;
    const std::string& here = inputs.hostname;
    if (!allocation &&
        !job.hosts.empty() + !job.hostfile.empty() + spec.resources.R.has_value() > 1)
        return run_error("give one of -H, --hostfile and --resources");
    if (allocation) {
        auto allocated = nodes_from_resources(*allocation, inputs.ranks, cpus, here);
        if (!allocated || (job.hosts.empty() && job.hostfile.empty()))
            return allocated;
        // Inside an instance, -H and --hostfile say which of its nodes the
        // job uses and how many slots each gives, as outside.
        auto hosts = host_specs(spec, inputs, job.hosts, job.hostfile);
        if (!hosts)
            return hosts.error();
        return nodes_of_hosts(*hosts, *allocated, cpus);
    }
    if (spec.resources.R)
        return nodes_from_resources(*spec.resources.R, *inputs.topology, cpus, here);
    auto hosts = host_specs(spec, inputs, job.hosts, job.hostfile);
    if (!hosts)
        return hosts.error();
    for (const HostSpec& host : *hosts)
        if (relative_host(host.name))
            return run_error("the relative host " + host.name +
                             " names one of the job's nodes; give it in a later app's -H");
    return make_nodes(*hosts, *inputs.topology, cpus, here);
}

// The job's nodes, then the hosts later apps name that are not among them
// yet. An allocation, a hostfile or R holds all the job may use, as in
// PRRTE: an app's host outside them is an error. An app that names hosts
// uses only those; the others use the job's.
Result<std::vector<Node>> node_pool(const Jobspec& spec, const MapInputs& inputs,
                                    const std::optional<ResourceSet>& allocation,
                                    JobRequest& request) {
    const CpuUnit cpus = spec.job.hwthread_cpus ? CpuUnit::kHwthread : CpuUnit::kCore;
    const std::string& here = inputs.hostname;
    auto nodes = job_nodes(spec, inputs, allocation, cpus);
    if (!nodes)
        return nodes.error();
    std::vector<std::string> job_names;
    for (const Node& node : *nodes)
        job_names.push_back(node.name);
    const bool closed = allocation || spec.resources.R || !spec.job.hostfile.empty();
    // An allocation's nodes, made when an app first names one the job's
    // nodes do not hold.
    std::optional<std::vector<Node>> allocated;
    bool any_app_hosts = false;
    for (std::size_t k = 0; k < spec.apps.size(); ++k) {
        auto hosts = host_specs(spec, inputs, spec.apps[k].hosts, spec.apps[k].hostfile);
        if (!hosts)
            return hosts.error();
        for (const HostSpec& host : *hosts) {
            request.apps[k].hosts.push_back(host.name);
            if (relative_host(host.name))
                continue;  // one of the job's nodes, resolved when mapping
            const bool known = std::any_of(nodes->begin(), nodes->end(),
                                           [&](const Node& n) { return n.name == host.name; });
            if (known)
                continue;
            if (allocation) {
                if (!allocated) {
                    auto made = nodes_from_resources(*allocation, inputs.ranks, cpus, here);
                    if (!made)
                        return made.error();
                    allocated = std::move(*made);
                }
                auto node = nodes_of_hosts(std::span(&host, 1), *allocated, cpus);
                if (!node)
                    return run_error("app " + std::to_string(k) + "'s host " + host.name +
                                     " is not among the job's allocated nodes");
                nodes->push_back(std::move(node->front()));
                continue;
            }
            if (closed)
                return run_error("app " + std::to_string(k) + "'s host " + host.name +
                                 " is not in " +
                                 (spec.resources.R ? std::string("--resources")
                                                   : "the hostfile " + quote(spec.job.hostfile)));
            nodes->push_back(
                make_nodes(std::vector<HostSpec>{host}, *inputs.topology, cpus, here)[0]);
        }
        any_app_hosts = any_app_hosts || !hosts->empty();
    }
    if (nodes->empty())
        nodes->push_back(local_node(*inputs.topology, here, cpus));
    if (any_app_hosts && !job_names.empty())
        for (AppRequest& app : request.apps)
            if (app.hosts.empty())
                app.hosts = job_names;
    return nodes;
}

// seq without FILE= reads the app's hosts in their order, as PRRTE: its own
// -H or --hostfile, else the job's (already checked by node_pool).
Status set_seq_lines(const Jobspec& spec, const MapInputs& inputs, JobRequest& request) {
    for (std::size_t k = 0; k < spec.apps.size(); ++k) {
        const std::optional<MapPolicy>& map = k > 0 && request.apps[k].directives.map
                                                  ? request.apps[k].directives.map
                                                  : request.directives.map;
        if (!map || map->by != MapBy::kSeq || !map->file.empty())
            continue;
        const Jobspec::App& app = spec.apps[k];
        const bool own = !(app.hosts.empty() && app.hostfile.empty());
        const std::string& hosts = own ? app.hosts : spec.job.hosts;
        const std::string& hostfile = own ? app.hostfile : spec.job.hostfile;
        if (!hosts.empty()) {
            request.apps[k].seq_lines = seq_lines_of_hosts(hosts);
        } else if (!hostfile.empty()) {
            auto text = hostfile_text(spec, inputs, hostfile);
            if (!text)
                return text.error();
            request.apps[k].seq_lines = seq_lines_of_hostfile(*text);
        }
    }
    return {};
}

// The nodes of `map` in the order of `allocation`'s ranks, each task
// following its node: a job shell's node is its rank's place in R, whatever
// order -H named the hosts in.
void order_by_ranks(JobMap& map, const ResourceSet& allocation) {
    std::unordered_map<std::string, std::size_t> place_of_name;
    for (const auto& [rank, target] : allocation.targets())
        place_of_name.emplace(
            target.hostname.empty() ? "rank" + std::to_string(rank) : target.hostname,
            place_of_name.size());
    std::vector<std::size_t> place(map.nodes.size());
    std::vector<std::uint32_t> order(map.nodes.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
        const auto found = place_of_name.find(map.nodes[i].name);
        place[i] = found == place_of_name.end() ? place_of_name.size() : found->second;
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return place[a] < place[b]; });
    std::vector<std::uint32_t> moved_to(order.size());
    std::vector<Node> nodes;
    nodes.reserve(order.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
        moved_to[order[i]] = i;
        nodes.push_back(std::move(map.nodes[order[i]]));
    }
    map.nodes = std::move(nodes);
    for (Task& task : map.tasks)
        task.node = moved_to[task.node];
}

}  // namespace

std::string jobspec_path(const Jobspec& spec, std::string_view path) {
    const std::filesystem::path given(path);
    if (given.empty() || given.is_absolute() || spec.attributes.cwd.empty())
        return std::string(path);
    return (std::filesystem::path(spec.attributes.cwd) / given).string();
}

std::vector<std::string> jobspec_files(const Jobspec& spec) {
    std::vector<std::string> paths;
    std::set<std::string> seen;
    const auto add = [&](std::string_view path) {
        if (path.empty())
            return;
        std::string full = jobspec_path(spec, path);
        if (seen.insert(full).second)
            paths.push_back(std::move(full));
    };
    add(spec.job.hostfile);
    add(spec.job.rankfile);
    for (const Jobspec::App& app : spec.apps) {
        add(app.hostfile);
        if (app.map_by.empty())
            continue;
        // A policy that does not parse is reported when mapping, not here.
        if (auto map = parse_map_by(app.map_by))
            add(map->file);
    }
    return paths;
}

Result<std::vector<std::string>> jobspec_hosts(const Jobspec& spec, const MapInputs& inputs) {
    std::vector<std::string> names;
    const auto add = [&](const std::string& hosts, const std::string& hostfile) -> Status {
        auto specs = host_specs(spec, inputs, hosts, hostfile);
        if (!specs)
            return specs.error();
        for (const HostSpec& host : *specs)
            if (!relative_host(host.name) &&
                std::find(names.begin(), names.end(), host.name) == names.end())
                names.push_back(host.name);
        return {};
    };
    if (auto added = add(spec.job.hosts, spec.job.hostfile); !added)
        return added.error();
    for (std::size_t k = 1; k < spec.apps.size(); ++k)
        if (auto added = add(spec.apps[k].hosts, spec.apps[k].hostfile); !added)
            return added.error();
    return names;
}

std::vector<std::vector<std::string>> app_argvs(const Jobspec& spec) {
    std::vector<std::vector<std::string>> argv;
    argv.reserve(spec.apps.size());
    for (const Jobspec::App& app : spec.apps)
        argv.push_back(app.command);
    return argv;
}

std::vector<std::string> app_commands(const Jobspec& spec) {
    std::vector<std::string> commands;
    commands.reserve(spec.apps.size());
    for (const Jobspec::App& app : spec.apps) {
        std::string text;
        for (const std::string& word : app.command)
            text += (text.empty() ? "" : " ") + word;
        commands.push_back(std::move(text));
    }
    return commands;
}

Result<JobMap> map_jobspec(const Jobspec& spec, const MapInputs& inputs,
                           const std::optional<ResourceSet>& allocation) {
    if (!allocation && !inputs.topology)
        return Error("map", "no topology for the job's nodes");
    auto request = job_request(spec);
    if (!request)
        return request.error();
    auto nodes = node_pool(spec, inputs, allocation, *request);
    if (!nodes)
        return nodes.error();
    if (auto status = set_seq_lines(spec, inputs, *request); !status)
        return status.error();
    auto map = map_job(*request, std::move(*nodes), inputs.files);
    if (map && allocation && !(spec.job.hosts.empty() && spec.job.hostfile.empty()))
        order_by_ranks(*map, *allocation);
    return map;
}

DisplayOutput display_output(const Jobspec& spec, const JobMap& map,
                             const DisplayOptions& options) {
    DisplayOutput output;
    for (const std::string& what : spec.job.display) {
        if (what == "map") {
            output.text += display_map(map, options);
        } else if (what == "map:json") {
            output.text += map_json_text(map) + '\n';
        } else if (what == "R") {
            output.text += job_resources(map).encode() + '\n';
        } else if (what == "plan") {
            output.text += launch_plans_text(launch_plans(map, app_argvs(spec)));
        } else if (what.starts_with("map:svg=")) {
            output.files.push_back({jobspec_path(spec, what.substr(8)), map_svg(map)});
        } else {
            output.text += display_bindings(map, options);
        }
    }
    return output;
}

}  // namespace gantry
