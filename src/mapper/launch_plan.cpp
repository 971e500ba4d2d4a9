// Launch plans: the job's tasks split by node, each with what spawning it
// takes (docs/mapping.md).
#include "mapper/launch_plan.h"

#include "util/json.h"

namespace gantry {
namespace {

LaunchTask launch_task(const Task& task, std::span<const std::vector<std::string>> argv_of_app,
                       std::vector<unsigned> gpus) {
    LaunchTask launch;
    launch.rank = task.rank;
    launch.app = task.app;
    launch.app_rank = task.app_rank;
    launch.local_rank = task.local_rank;
    launch.node_rank = task.node_rank;
    if (task.app < argv_of_app.size())
        launch.argv = argv_of_app[task.app];
    launch.cpus_os = task.cpus_os;
    launch.gpus = std::move(gpus);
    return launch;
}

Json plan_json(const NodePlan& plan) {
    Json tasks = Json::array();
    for (const LaunchTask& task : plan.tasks)
        tasks.push_back(Json{{"rank", task.rank},
                             {"app", task.app},
                             {"app_rank", task.app_rank},
                             {"local_rank", task.local_rank},
                             {"node_rank", task.node_rank},
                             {"argv", task.argv},
                             {"cpus_os", task.cpus_os.encode()},
                             {"gpus", task.gpus}});
    return Json{{"node", plan.node},
                {"hostname", plan.hostname},
                {"job_size", plan.job_size},
                {"tasks", std::move(tasks)}};
}

}  // namespace

std::vector<NodePlan> launch_plans(const JobMap& map,
                                   std::span<const std::vector<std::string>> argv_of_app) {
    // Tasks come in rank order, and local ranks follow rank order on each
    // node, so appending keeps every plan in local-rank order.
    std::vector<NodePlan> by_node(map.nodes.size());
    std::vector<std::vector<unsigned>> gpus = visible_gpus(map);
    for (const Task& task : map.tasks)
        by_node[task.node].tasks.push_back(
            launch_task(task, argv_of_app, std::move(gpus[task.rank])));
    std::vector<NodePlan> plans;
    for (std::size_t n = 0; n < by_node.size(); ++n) {
        if (by_node[n].tasks.empty())
            continue;
        NodePlan& plan = by_node[n];
        plan.node = static_cast<std::uint32_t>(n);
        plan.hostname = map.nodes[n].name;
        plan.job_size = static_cast<std::uint32_t>(map.tasks.size());
        plans.push_back(std::move(plan));
    }
    return plans;
}

std::string launch_plans_text(std::span<const NodePlan> plans) {
    std::string text;
    for (const NodePlan& plan : plans)
        text += to_compact(plan_json(plan)) + '\n';
    return text;
}

}  // namespace gantry
