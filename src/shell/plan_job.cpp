// Launch plan -> shell Job (docs/commands/run.md).
#include "shell/plan_job.h"

#include <algorithm>

namespace gantry::shell {
namespace {

std::uint32_t nodes_with_tasks(const JobMap& map) {
    std::vector<bool> used(map.nodes.size(), false);
    for (const gantry::Task& task : map.tasks)
        used[task.node] = true;
    return static_cast<std::uint32_t>(std::count(used.begin(), used.end(), true));
}

}  // namespace

pmi::JobInfo pmi_job(const JobMap& map, const std::string& job_id, std::string& warning) {
    pmi::JobInfo info;
    info.kvsname = "gantry_" + job_id;
    info.size = static_cast<std::uint32_t>(map.tasks.size());
    info.universe_size = info.size;
    info.appnum_of_rank.reserve(map.tasks.size());
    for (const gantry::Task& task : map.tasks)
        info.appnum_of_rank.push_back(task.app);
    const TaskMap tasks = task_map(map);
    if (const auto mapping = pmi::process_mapping(tasks))
        info.server_keys.emplace("PMI_process_mapping", *mapping);
    else
        warning = "the task map is too irregular for PMI_process_mapping (longer than " +
                  std::to_string(pmi::kValueMax) +
                  " bytes); MPI programs will exchange host names instead";
    info.server_keys.emplace("PMI_dead_processes", "");
    if (const std::string json = tasks.to_json(); json.size() <= pmi::kValueMax)
        info.server_keys.emplace("gantry.taskmap", json);
    return info;
}

Result<Job> job_from_plan(const NodePlan& plan, const JobMap& map,
                          const std::vector<std::string>& app_commands,
                          const LaunchSettings& settings, pmi::JobInfo pmi,
                          const Environment& origin) {
    Job job;
    job.id = settings.job_id;
    job.hostname = plan.hostname;
    job.app_commands = app_commands;
    job.pmi = std::move(pmi);
    job.input = settings.input;
    job.output = settings.output;
    job.limits = settings.limits;
    job.soft_limits = settings.soft_limits;
    job.umask = settings.umask;

    // Every task of an app starts from the same environment; only its place
    // in the job differs.
    std::vector<Environment> app_env;
    for (std::size_t app = 0; app < map.app_sizes.size(); ++app) {
        Environment env = origin;
        for (const EnvRule& rule : settings.env_rules)
            if (auto status = apply_rule(env, rule, origin); !status)
                return status.error();
        if (app < settings.apps.size())
            for (const EnvRule& rule : settings.apps[app].env_rules)
                if (auto status = apply_rule(env, rule, origin); !status)
                    return status.error();
        app_env.push_back(std::move(env));
    }
    const std::string wrapped = task_map(map).to_wrapped();
    const std::uint32_t nnodes = nodes_with_tasks(map);
    for (const LaunchTask& launch : plan.tasks) {
        Environment env = app_env[launch.app];
        set_task_variables(
            env, TaskPlace{settings.job_id, plan.job_size, nnodes, launch.rank, launch.local_rank,
                           static_cast<std::uint32_t>(plan.tasks.size()), plan.node, launch.app,
                           launch.app_rank, wrapped, launch.gpus});
        Task task;
        task.rank = launch.rank;
        task.app = launch.app;
        task.argv = launch.argv;
        task.env = env.entries();
        const bool own_cwd =
            launch.app < settings.apps.size() && !settings.apps[launch.app].cwd.empty();
        task.cwd = own_cwd ? settings.apps[launch.app].cwd : settings.cwd;
        task.cpus_os = launch.cpus_os;
        job.tasks.push_back(std::move(task));
    }
    return job;
}

}  // namespace gantry::shell
