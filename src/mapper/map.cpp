// The job: resolve the policies, place the apps in order against the same
// nodes (a later app sees what earlier ones used), and number the tasks in
// one pass, app after app, each app's ranks contiguous.
#include "mapper/map.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "mapper/cpuset_cache.h"
#include "mapper/placement.h"

namespace gantry {
namespace {

// Beyond this a job is a typo, not a program; refuse before allocating.
constexpr unsigned kMaxTasks = 1u << 26;

std::string app_label(const AppRequest& app, std::size_t index, std::size_t napps) {
    std::string label = "app " + std::to_string(index);
    if (app.nprocs > 0 || !app.command.empty()) {
        label += " (";
        if (app.nprocs > 0)
            label += "-n " + std::to_string(app.nprocs);
        if (!app.command.empty())
            label += (app.nprocs > 0 ? " " : "") + app.command;
        label += ")";
    }
    return napps > 1 || !app.command.empty() ? label : "job";
}

// seq and rankfile take their tasks from a file; the others from a policy.
Result<std::vector<placement::Placed>> place(const JobMap& map,
                                             std::vector<placement::NodeUsage>& usage,
                                             placement::Cpusets& cpusets, AppPolicy& policy,
                                             const AppRequest& app, unsigned first_rank,
                                             const std::string& label, const FileTexts& files) {
    const MapBy by = policy.map.by;
    if (by != MapBy::kSeq && by != MapBy::kRankfile)
        return placement::place_app(map.nodes, usage, cpusets, policy, app.nprocs,
                                    map.policy.oversubscribe, label, app.hosts);
    if (by == MapBy::kSeq && policy.map.file.empty() && !app.seq_lines.empty())
        return placement::place_sequential(map.nodes, usage, cpusets, policy, app.nprocs,
                                           app.seq_lines, label, app.hosts);
    if (policy.map.file.empty())
        return Error("map-by",
                     label + (by == MapBy::kSeq ? ": seq needs its file: seq:FILE=path, or hosts "
                                                  "from -H or --hostfile"
                                                : ": rankfile needs its file: rankfile:FILE=path"));
    auto text =
        file_text(files, "map-by", by == MapBy::kSeq ? "seq file" : "rankfile", policy.map.file);
    if (!text)
        return text.error();
    if (by == MapBy::kSeq) {
        auto lines = parse_seq_file(*text, policy.map.file);
        if (!lines)
            return lines.error();
        return placement::place_sequential(map.nodes, usage, cpusets, policy, app.nprocs, *lines,
                                           label, app.hosts);
    }
    auto lines = parse_rankfile(*text, policy.map.file);
    if (!lines)
        return lines.error();
    return placement::place_by_rankfile(map.nodes, usage, cpusets, policy, app.nprocs, first_rank,
                                        *lines, label, app.hosts);
}

// The nodes `hosts` names, relative hosts resolved against the job's nodes
// and what earlier apps used (`usage`).
Result<std::vector<std::string>> resolve_hosts(std::span<const std::string> hosts,
                                               const std::vector<Node>& nodes,
                                               const std::vector<placement::NodeUsage>& usage,
                                               std::size_t app) {
    const std::string label = "app " + std::to_string(app) + ": ";
    std::vector<std::string> names;
    for (const std::string& host : hosts) {
        if (!relative_host(host)) {
            names.push_back(host);
        } else if (host.starts_with("+n")) {
            const auto index = std::stoul(host.substr(2));
            if (index >= nodes.size())
                return Error("map", label + host + " names node " + std::to_string(index) +
                                        " but the job has " + std::to_string(nodes.size()) +
                                        " nodes (+n0 to +n" + std::to_string(nodes.size() - 1) +
                                        ")");
            names.push_back(nodes[index].name);
        } else {
            // +e or +e:N: nodes no earlier app put a task on, in node order.
            const std::size_t wanted = host == "+e" ? nodes.size() : std::stoul(host.substr(3));
            std::size_t found = 0;
            for (std::size_t n = 0; n < nodes.size() && found < wanted; ++n)
                if (usage[n].tasks == 0) {
                    names.push_back(nodes[n].name);
                    ++found;
                }
            if (found == 0 || (host != "+e" && found < wanted))
                return Error("map", label + host + " asks for " +
                                        (host == "+e" ? std::string("the empty nodes")
                                                      : std::to_string(wanted) + " empty nodes") +
                                        " and " + std::to_string(found) +
                                        " are left; give fewer or more nodes");
        }
    }
    return names;
}

// A machine without cores (hwloc reports only PUs) has hwthreads for CPUs:
// PRRTE maps and binds by hwthread where core was asked for or defaulted.
void adapt_to_coreless_nodes(AppPolicy& policy, const std::vector<Node>& nodes) {
    const bool any_cores = std::any_of(nodes.begin(), nodes.end(),
                                       [](const Node& node) { return node.topology.ncores() > 0; });
    if (any_cores)
        return;
    policy.cpus = CpuUnit::kHwthread;
    if (policy.map.by == MapBy::kCore)
        policy.map.by = MapBy::kHwthread;
    if (policy.bind.to == BindTo::kCore)
        policy.bind.to = BindTo::kHwthread;
}

}  // namespace

unsigned JobMap::total_slots() const {
    unsigned total = 0;
    for (const Node& node : nodes)
        total += node.slots;
    return total;
}

TaskMap task_map(const JobMap& map) {
    std::vector<TaskMap::NodeId> node_of_task;
    node_of_task.reserve(map.tasks.size());
    for (const Task& task : map.tasks)
        node_of_task.push_back(task.node);
    return TaskMap::from_nodes(node_of_task);
}

Result<JobMap> map_job(const JobRequest& request, std::vector<Node> nodes, const FileTexts& files) {
    if (request.apps.empty())
        return Error("map", "the job has no apps");
    if (nodes.empty())
        return Error("map", "no nodes to map the job onto");
    std::vector<Directives> own;
    unsigned nprocs = 0;
    // A set: apps' -H may name thousands of nodes.
    std::unordered_set<std::string_view> node_names;
    for (const Node& node : nodes)
        node_names.insert(node.name);
    for (std::size_t k = 0; k < request.apps.size(); ++k) {
        const AppRequest& app = request.apps[k];
        for (const std::string& host : app.hosts)
            if (!relative_host(host) && !node_names.contains(host))
                return Error("map", "app " + std::to_string(k) + ": host " + quote(host) +
                                        " is not one of the job's nodes");
        own.push_back(app.directives);
        if (app.nprocs > kMaxTasks - nprocs)
            return Error("map", "more than " + std::to_string(kMaxTasks) + " tasks in one job");
        nprocs += app.nprocs;
    }
    auto policy = resolve_policies(request.directives, own, nprocs);
    if (!policy)
        return policy.error();

    JobMap map;
    map.tasks.reserve(nprocs);
    map.nodes = std::move(nodes);
    map.policy = std::move(*policy);
    std::vector<placement::NodeUsage> usage;
    for (const Node& node : map.nodes)
        usage.push_back(placement::NodeUsage{0, node.usable_pus()});

    placement::Cpusets cpusets;
    CpusetCache<IdSet> os_cpus;
    // Tasks are made in rank order, so counting each node's tasks so far
    // gives local and node ranks (a task's position among its node's tasks,
    // by rank) without another pass.
    std::vector<std::uint32_t> on_node(map.nodes.size(), 0);
    for (std::size_t k = 0; k < request.apps.size(); ++k) {
        AppPolicy& app_policy = map.policy.apps[k];
        adapt_to_coreless_nodes(app_policy, map.nodes);
        // One app may take "one task per slot"; several would all claim the
        // same slots (PRRTE: multi-apps-and-zero-np). seq and rankfile count
        // their own tasks.
        const bool counts_itself =
            app_policy.map.by == MapBy::kSeq || app_policy.map.by == MapBy::kRankfile;
        if (request.apps.size() > 1 && request.apps[k].nprocs == 0 && !counts_itself)
            return Error("map", "app " + std::to_string(k) +
                                    ": give its task count (-n) when the job has several apps "
                                    "(multi-apps-and-zero-np)");
        const auto first_rank = static_cast<std::uint32_t>(map.tasks.size());
        AppRequest app = request.apps[k];
        auto hosts = resolve_hosts(app.hosts, map.nodes, usage, k);
        if (!hosts)
            return hosts.error();
        app.hosts = std::move(*hosts);
        auto placed = place(map, usage, cpusets, app_policy, app, first_rank,
                            app_label(request.apps[k], k, request.apps.size()), files);
        if (!placed)
            return placed.error();
        // seq and rankfile number their own tasks, in file order.
        std::vector<std::size_t> order;
        if (counts_itself) {
            order.resize(placed->size());
            std::iota(order.begin(), order.end(), 0);
        } else {
            order = placement::ranking_order(*placed, app_policy.rank.by);
        }
        for (std::size_t i = 0; i < order.size(); ++i) {
            placement::Placed& p = (*placed)[order[i]];
            Task& task = map.tasks.emplace_back();
            task.rank = first_rank + static_cast<std::uint32_t>(i);
            task.app = static_cast<std::uint32_t>(k);
            task.app_rank = static_cast<std::uint32_t>(i);
            task.node = p.node;
            task.local_rank = on_node[p.node]++;
            task.node_rank = task.local_rank;
            // Each task's sets are made here, in rank order: the order in
            // which the JobMap frees them.
            if (p.cpus != nullptr) {
                const Topology& topology = map.nodes[p.node].topology;
                task.cpus = *p.cpus;
                task.cpus_os = os_cpus.get(topology.handle(), 0, *p.cpus,
                                           [&] { return topology.os_pus(*p.cpus); });
            }
            task.gpus = std::move(p.gpus);
        }
        map.app_sizes.push_back(static_cast<unsigned>(order.size()));
    }
    return map;
}

}  // namespace gantry
