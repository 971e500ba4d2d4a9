// The environment of a task: the front end's, edited by --env, --env-remove
// and --env-file in the order given, then the variables that tell a task
// where it stands in its job (docs/commands/run.md, "Environment").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/jobspec.h"
#include "util/error.h"

namespace gantry::shell {

class Environment {
public:
    // The calling process's environment.
    static Environment inherited();
    // From "NAME=VALUE" entries; an entry without '=' is ignored, as getenv does.
    static Environment from_entries(const std::vector<std::string>& entries);
    // From a jobspec's attributes.environment: names and values as stored.
    static Environment from_map(const std::map<std::string, std::string>& variables);
    // The same variables as a jobspec stores them.
    std::map<std::string, std::string> to_map() const;

    std::optional<std::string_view> get(std::string_view name) const;
    void set(std::string name, std::string value);
    // Removes every variable whose name matches the glob (fnmatch).
    void remove_matching(std::string_view glob);

    // "NAME=VALUE" entries sorted by name, as execve takes them.
    std::vector<std::string> entries() const;

    friend bool operator==(const Environment&, const Environment&) = default;

private:
    std::map<std::string, std::string, std::less<>> variables_;
};

// One --env, --env-remove or --env-file, applied in command-line order: the
// jobspec's own rule, so that a job's rules reach the shell as they are.
using EnvRule = Jobspec::EnvRule;

// Applies `rule` to `env`; `origin` is the front end's environment, where a
// bare --env NAME takes its value. A file holds one NAME=VALUE per line,
// with blank lines and lines starting with '#' ignored. Errors name the
// option, the file and the line: `run: --env-file: no '=' in line 3 of "a.env"`.
Status apply_rule(Environment& env, const EnvRule& rule, const Environment& origin);

// Where one task stands in its job: the GANTRY_*, PMI and MPI variables.
struct TaskPlace {
    std::string job_id;
    std::uint32_t job_size = 0;
    std::uint32_t job_nnodes = 0;
    std::uint32_t rank = 0;
    std::uint32_t local_rank = 0;
    std::uint32_t local_size = 0;
    std::uint32_t node_id = 0;
    std::uint32_t app = 0;
    std::uint32_t app_rank = 0;
    std::string task_map;        // RFC 34 wrapped form
    std::vector<unsigned> gpus;  // the task's GPUs; empty: the node has none
};

// Sets GANTRY_JOB_ID, GANTRY_JOB_SIZE, GANTRY_JOB_NNODES, GANTRY_TASK_RANK,
// GANTRY_TASK_LOCAL_RANK, GANTRY_TASK_LOCAL_SIZE, GANTRY_NODE_ID,
// GANTRY_APP_INDEX, GANTRY_APP_RANK, GANTRY_TASK_MAP, PMI_RANK, PMI_SIZE,
// PMI_SPAWNED=0, MPI_LOCALRANKID, MPI_LOCALNRANKS and, when the task has
// GPUs, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES; removes PMI_JOBID,
// PMI_PORT and PMI_ID, which would name another launcher's PMI. They
// override what the rules set, so that a task can always trust them.
void set_task_variables(Environment& env, const TaskPlace& place);

}  // namespace gantry::shell
