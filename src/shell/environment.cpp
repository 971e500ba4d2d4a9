// Task environments (docs/commands/run.md, "Environment").
#include "shell/environment.h"

#include <fnmatch.h>

#include <fstream>
#include <sstream>

#include "util/file.h"

extern char** environ;

namespace gantry::shell {
namespace {

constexpr std::string_view kDomain = "run";

bool is_variable_name(std::string_view name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
        return false;
    for (const char c : name)
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9')))
            return false;
    return true;
}

// NAME=VALUE sets; a bare NAME copies the front end's value (nothing when
// it has none), as flux's --env does.
Status apply_assignment(Environment& env, std::string_view text, const Environment& origin,
                        const std::string& where) {
    const std::size_t equals = text.find('=');
    const std::string_view name = text.substr(0, equals);
    if (!is_variable_name(name))
        return Error::in(std::string(kDomain), where + ": bad variable name " + quote(name), text);
    if (equals != std::string_view::npos)
        env.set(std::string(name), std::string(text.substr(equals + 1)));
    else if (const auto value = origin.get(name))
        env.set(std::string(name), std::string(*value));
    return {};
}

Status apply_file(Environment& env, const std::string& path, const Environment& origin) {
    auto text = read_named_file(std::string(kDomain), "--env-file", path);
    if (!text)
        return text.error();
    std::istringstream in(*text);
    std::string line;
    for (unsigned number = 1; std::getline(in, line); ++number) {
        if (line.empty() || line[0] == '#')
            continue;
        const std::string where =
            "--env-file: line " + std::to_string(number) + " of " + quote(path);
        if (line.find('=') == std::string::npos)
            return Error::in(std::string(kDomain), where + ": no '='", line);
        if (auto status = apply_assignment(env, line, origin, where); !status)
            return status;
    }
    return {};
}

}  // namespace

Environment Environment::inherited() {
    Environment env;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string_view text(*entry);
        const std::size_t equals = text.find('=');
        if (equals != std::string_view::npos)
            env.variables_.emplace(text.substr(0, equals), text.substr(equals + 1));
    }
    return env;
}

Environment Environment::from_entries(const std::vector<std::string>& entries) {
    Environment env;
    for (const std::string& text : entries) {
        const std::size_t equals = text.find('=');
        if (equals != std::string::npos)
            env.variables_.emplace(text.substr(0, equals), text.substr(equals + 1));
    }
    return env;
}

Environment Environment::from_map(const std::map<std::string, std::string>& variables) {
    Environment env;
    env.variables_.insert(variables.begin(), variables.end());
    return env;
}

std::map<std::string, std::string> Environment::to_map() const {
    return {variables_.begin(), variables_.end()};
}

std::optional<std::string_view> Environment::get(std::string_view name) const {
    const auto found = variables_.find(name);
    if (found == variables_.end())
        return std::nullopt;
    return std::string_view(found->second);
}

void Environment::set(std::string name, std::string value) {
    variables_.insert_or_assign(std::move(name), std::move(value));
}

void Environment::remove_matching(std::string_view glob) {
    const std::string pattern(glob);
    std::erase_if(variables_, [&](const auto& variable) {
        return fnmatch(pattern.c_str(), variable.first.c_str(), 0) == 0;
    });
}

std::vector<std::string> Environment::entries() const {
    std::vector<std::string> entries;
    entries.reserve(variables_.size());
    for (const auto& [name, value] : variables_)
        entries.push_back(name + '=' + value);
    return entries;
}

Status apply_rule(Environment& env, const EnvRule& rule, const Environment& origin) {
    switch (rule.kind) {
        case EnvRule::Kind::kSet:
            return apply_assignment(env, rule.text, origin, "--env");
        case EnvRule::Kind::kRemove:
            env.remove_matching(rule.text);
            return {};
        case EnvRule::Kind::kFile:
            return apply_file(env, rule.text, origin);
    }
    return {};
}

void set_task_variables(Environment& env, const TaskPlace& place) {
    const auto set_number = [&](const char* name, std::uint32_t value) {
        env.set(name, std::to_string(value));
    };
    env.set("GANTRY_JOB_ID", place.job_id);
    set_number("GANTRY_JOB_SIZE", place.job_size);
    set_number("GANTRY_JOB_NNODES", place.job_nnodes);
    set_number("GANTRY_TASK_RANK", place.rank);
    set_number("GANTRY_TASK_LOCAL_RANK", place.local_rank);
    set_number("GANTRY_TASK_LOCAL_SIZE", place.local_size);
    set_number("GANTRY_NODE_ID", place.node_id);
    set_number("GANTRY_APP_INDEX", place.app);
    set_number("GANTRY_APP_RANK", place.app_rank);
    env.set("GANTRY_TASK_MAP", place.task_map);
    // PMI-1 as MPICH's client reads it; MPI_LOCAL* as hydra sets them.
    set_number("PMI_RANK", place.rank);
    set_number("PMI_SIZE", place.job_size);
    env.set("PMI_SPAWNED", "0");
    // The variables of an outer launcher's PMI, inherited when gantry runs
    // inside one (a Slurm step, hydra's -pmi-port), name a server that is
    // not the task's: PMI_JOBID would make a PMI-2 client (gantry's own,
    // MPICH's) ask gantry's PMI-1 server for PMI-2, and PMI_ID would give
    // it another job's rank. So would an outer PMIx server's variables a
    // PMIx client (the shell's PMIx server gives its own, shell/shell.h).
    for (const char* name : {"PMI_JOBID", "PMI_PORT", "PMI_ID", "PMIX_*"})
        env.remove_matching(name);
    set_number("MPI_LOCALRANKID", place.local_rank);
    set_number("MPI_LOCALNRANKS", place.local_size);
    if (!place.gpus.empty()) {
        std::string list;
        for (const unsigned gpu : place.gpus)
            list += (list.empty() ? "" : ",") + std::to_string(gpu);
        env.set("CUDA_VISIBLE_DEVICES", list);
        env.set("ROCR_VISIBLE_DEVICES", list);
    }
}

}  // namespace gantry::shell
