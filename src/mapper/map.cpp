// The job: resolve the policies, place the apps in order against the same
// nodes (a later app sees what earlier ones used), and number the tasks in
// one pass, app after app, each app's ranks contiguous.
#include "mapper/map.h"

#include "mapper/placement.h"

namespace gantry {
namespace {

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

// Local and node ranks: a task's position among its node's tasks, by rank.
void number_within_nodes(JobMap& map) {
    std::vector<std::uint32_t> next(map.nodes.size(), 0);
    for (Task& task : map.tasks) {
        task.local_rank = next[task.node]++;
        task.node_rank = task.local_rank;
    }
}

}  // namespace

unsigned JobMap::total_slots() const {
    unsigned total = 0;
    for (const Node& node : nodes)
        total += node.slots;
    return total;
}

Result<JobMap> map_job(const JobRequest& request, std::vector<Node> nodes) {
    if (request.apps.empty())
        return Error("map", "the job has no apps");
    if (nodes.empty())
        return Error("map", "no nodes to map the job onto");
    std::vector<Directives> own;
    unsigned nprocs = 0;
    for (const AppRequest& app : request.apps) {
        own.push_back(app.directives);
        nprocs += app.nprocs;
    }
    auto policy = resolve_policies(request.directives, own, nprocs);
    if (!policy)
        return policy.error();

    JobMap map;
    map.nodes = std::move(nodes);
    map.policy = std::move(*policy);
    std::vector<placement::NodeUsage> usage;
    for (const Node& node : map.nodes)
        usage.push_back(placement::NodeUsage{0, node.topology.all_pus()});

    for (std::size_t k = 0; k < request.apps.size(); ++k) {
        AppPolicy& app_policy = map.policy.apps[k];
        auto placed = placement::place_app(map.nodes, usage, app_policy, request.apps[k].nprocs,
                                           map.policy.oversubscribe,
                                           app_label(request.apps[k], k, request.apps.size()));
        if (!placed)
            return placed.error();
        const auto order = placement::ranking_order(*placed, app_policy.rank.by);
        const auto first_rank = static_cast<std::uint32_t>(map.tasks.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            placement::Placed& p = (*placed)[order[i]];
            Task task;
            task.rank = first_rank + static_cast<std::uint32_t>(i);
            task.app = static_cast<std::uint32_t>(k);
            task.app_rank = static_cast<std::uint32_t>(i);
            task.node = p.node;
            task.cpus_os = map.nodes[p.node].topology.os_pus(p.cpus);
            task.cpus = std::move(p.cpus);
            task.gpus = std::move(p.gpus);
            map.tasks.push_back(std::move(task));
        }
        map.app_sizes.push_back(static_cast<unsigned>(order.size()));
    }
    number_within_nodes(map);
    return map;
}

}  // namespace gantry
