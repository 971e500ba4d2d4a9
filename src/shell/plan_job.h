// From a node's launch plan and the options of `gantry run` to the Job the
// shell runs: each task's environment, directory and the job's PMI data.
#pragma once

#include <string>
#include <vector>

#include "mapper/launch_plan.h"
#include "mapper/map.h"
#include "shell/environment.h"
#include "shell/shell.h"
#include "util/error.h"

namespace gantry::shell {

// What an app may set for its own tasks; empty: the job's.
struct AppSettings {
    std::vector<EnvRule> env_rules;  // applied after the job's
    std::string cwd;
};

struct LaunchSettings {
    std::string job_id;
    std::vector<EnvRule> env_rules;  // the job's, for every app
    std::vector<AppSettings> apps;   // by app index; missing: none
    std::string cwd;
    Input input;
    Output output;
    Limits limits;
    std::vector<std::pair<int, rlim_t>> soft_limits;
    std::optional<mode_t> umask;
};

// The job's PMI data: its KVS name, size, app numbers and server keys.
// The server keys of the job's PMI KVS: PMI_process_mapping (left out, with
// a warning in `warning`, when longer than a client takes),
// PMI_dead_processes (none yet) and gantry.taskmap.
pmi::JobInfo pmi_job(const JobMap& map, const std::string& job_id, std::string& warning);

// The shell's job for `plan`, one node of `map`, with the job's `pmi` data.
// `origin` is the front end's environment: tasks start from it. Errors: a
// bad --env rule or file.
Result<Job> job_from_plan(const NodePlan& plan, const JobMap& map,
                          const std::vector<std::string>& app_commands,
                          const LaunchSettings& settings, pmi::JobInfo pmi,
                          const Environment& origin);

}  // namespace gantry::shell
