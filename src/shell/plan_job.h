// From a jobspec's launch options and a node's launch plan to the Job the
// shell runs: each task's environment, directory, stdio, limits and the
// job's PMI data. `gantry run` and an instance's broker both go through here.
#pragma once

#include <string>
#include <vector>

#include "formats/jobspec.h"
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
    bool serve_pmi1 = true;  // --mpi
    Job::Pmix serve_pmix = Job::Pmix::kWhenClient;
};

// The shell's settings of `spec`'s job, mapped as `map`: the apps' env
// rules and directories, stdio, time limit, kill timeout, rlimits and umask.
// Relative paths (--cwd, --env-file, an --input file, --output and --error
// templates) are taken from attributes.cwd. Checks what the shell would only
// find when starting tasks, with `gantry run`'s messages: a --cwd that is no
// directory, --input ranks beyond the job's or an unreadable file, an
// unknown --rlimit or bad value, a --umask that is not octal.
Result<LaunchSettings> launch_settings(const Jobspec& spec, const JobMap& map, std::string job_id);

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

// Node `node`'s share of `spec`'s job (an index into map.nodes): its plan,
// its tasks starting from attributes.environment, with the job's PMI data.
// `warning` gets what pmi_job warns of. A node without tasks (one a job
// names with -H but maps nothing to) gets a job of no task. Errors: a node
// the map does not have, a bad --env rule or file. A job shell under an instance runs the node of
// its broker's rank.
Result<Job> node_job(const Jobspec& spec, const JobMap& map, std::size_t node,
                     const LaunchSettings& settings, std::string& warning);

// This machine's share of `spec`'s job: node_job for `map`'s local node
// (the one named as this host), as `gantry run` outside an instance runs
// it. Errors: no task on this machine, and node_job's.
Result<Job> local_job(const Jobspec& spec, const JobMap& map, const LaunchSettings& settings,
                      std::string& warning);

}  // namespace gantry::shell
