// Jobspec and launch plan -> shell Job (docs/commands/run.md, docs/jobspec.md).
#include "shell/plan_job.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>

#include "mapper/jobspec_map.h"
#include "shell/output.h"
#include "topo/topology.h"
#include "util/file.h"
#include "util/text.h"

namespace gantry::shell {
namespace {

// The options of the jobspec are `gantry run`'s: their messages too.
constexpr std::string_view kDomain = "run";

// An app's env rules, an --env-file's path taken from attributes.cwd.
std::vector<EnvRule> env_rules_of(const Jobspec& spec, const Jobspec::App& app) {
    std::vector<EnvRule> rules = app.env;
    for (EnvRule& rule : rules)
        if (rule.kind == EnvRule::Kind::kFile)
            rule.text = jobspec_path(spec, rule.text);
    return rules;
}

// An app's --cwd, taken from attributes.cwd when relative; it must be a
// directory now, not only when a task starts.
Result<std::string> app_cwd(const Jobspec& spec, const Jobspec::App& app) {
    if (app.cwd.empty())
        return std::string();
    std::string cwd = jobspec_path(spec, app.cwd);
    if (!std::filesystem::is_directory(cwd))
        return Error::in(std::string(kDomain), "--cwd: no such directory", app.cwd);
    return cwd;
}

// --rlimit NAME=VALUE[,NAME=VALUE...]: NAME as in RLIMIT_NAME, lower case;
// VALUE a number or unlimited.
Status add_rlimits(std::string_view text, std::vector<std::pair<int, rlim_t>>& limits) {
    static constexpr std::pair<std::string_view, int> kNames[] = {{"as", RLIMIT_AS},
                                                                  {"core", RLIMIT_CORE},
                                                                  {"cpu", RLIMIT_CPU},
                                                                  {"data", RLIMIT_DATA},
                                                                  {"fsize", RLIMIT_FSIZE},
                                                                  {"locks", RLIMIT_LOCKS},
                                                                  {"memlock", RLIMIT_MEMLOCK},
                                                                  {"msgqueue", RLIMIT_MSGQUEUE},
                                                                  {"nice", RLIMIT_NICE},
                                                                  {"nofile", RLIMIT_NOFILE},
                                                                  {"nproc", RLIMIT_NPROC},
                                                                  {"rss", RLIMIT_RSS},
                                                                  {"rtprio", RLIMIT_RTPRIO},
                                                                  {"rttime", RLIMIT_RTTIME},
                                                                  {"sigpending", RLIMIT_SIGPENDING},
                                                                  {"stack", RLIMIT_STACK}};
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view item = text.substr(start, comma - start);
        const std::size_t equals = item.find('=');
        const std::string_view name = item.substr(0, equals);
        const auto known = std::find_if(std::begin(kNames), std::end(kNames),
                                        [&](const auto& entry) { return entry.first == name; });
        if (known == std::end(kNames))
            return Error::in(
                std::string(kDomain),
                "--rlimit: unknown limit " + quote(name) + " (core, nofile, stack, cpu, as, ...)",
                text);
        const std::string value(equals == std::string_view::npos ? "" : item.substr(equals + 1));
        rlim_t limit = RLIM_INFINITY;
        if (value != "unlimited" && value != "infinity") {
            std::size_t used = 0;
            unsigned long long number = 0;
            try {
                number = std::stoull(value, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (value.empty() || used != value.size() || value[0] == '-')
                return Error::in(std::string(kDomain),
                                 "--rlimit: " + std::string(name) + " needs a number or unlimited",
                                 text);
            limit = static_cast<rlim_t>(number);
        }
        limits.emplace_back(known->second, limit);
        start = comma + 1;
    }
    return {};
}

// --input: `all`, an idset of ranks, or a file to read (from attributes.cwd).
Result<Input> input_of(const Jobspec& spec, std::uint32_t size) {
    const std::string& value = spec.attributes.input;
    Input input;
    if (value.empty())
        return input;
    if (value == "all") {
        input.ranks = IdSet::range(0, size - 1);
        return input;
    }
    if (auto ranks = IdSet::parse(value)) {
        if (ranks->empty() || *ranks->last() >= size)
            return Error::in(std::string(kDomain),
                             "--input: the job's ranks are 0-" + std::to_string(size - 1), value);
        input.ranks = std::move(*ranks);
        return input;
    }
    std::string file = jobspec_path(spec, value);
    if (const auto reason = unreadable_reason(file))
        return Error(std::string(kDomain),
                     "--input " + quote(value) + ": " + *reason +
                         " (--input takes all, ranks such as 0-3, or a readable file)");
    input.source = Input::Source::kFile;
    input.file = std::move(file);
    return input;
}

Result<std::optional<mode_t>> umask_of(const std::string& text) {
    if (text.empty())
        return std::optional<mode_t>{};
    if (text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos)
        return Error::in(std::string(kDomain), "--umask takes an octal mask such as 022", text);
    return std::optional<mode_t>{static_cast<mode_t>(std::stoul(text, nullptr, 8))};
}

// A jobspec's seconds as the shell's timers take them. Beyond what
// parse_duration accepts (1e15 ms, some 30,000 years) is as good as never,
// and would overflow the timers.
std::chrono::milliseconds milliseconds_of(double seconds) {
    constexpr double kLongest = 1e15;
    return std::chrono::milliseconds(std::llround(std::min(seconds * 1e3, kLongest)));
}

// An --output or --error template, its path taken from attributes.cwd.
std::string output_path(const Jobspec& spec, const std::string& output_template) {
    return output_template.empty() ? output_template : jobspec_path(spec, output_template);
}

// --output-filename DIR[:QUALIFIER,...], as Open MPI 4.1 reads it: the
// files go under DIR/JOBID, or DIR with `nojobid`; `nocopy` keeps them off
// the terminal. DIR is taken from attributes.cwd.
Status add_rank_dir(const Jobspec& spec, const std::string& job_id, Output& output) {
    const std::string& value = spec.attributes.output_dir;
    if (value.empty())
        return {};
    const std::size_t colon = value.find(':');
    const std::string dir = value.substr(0, colon);
    bool with_job_id = true;
    if (colon != std::string::npos) {
        std::size_t start = colon + 1;
        while (start <= value.size()) {
            const std::size_t comma = std::min(value.find(',', start), value.size());
            const std::string qualifier = lower_case(value.substr(start, comma - start));
            if (qualifier == "nojobid")
                with_job_id = false;
            else if (qualifier == "nocopy")
                output.copy_rank_output = false;
            else
                return Error::in(std::string(kDomain),
                                 "--output-filename: unknown qualifier " + quote(qualifier) +
                                     " (nojobid, nocopy)",
                                 value);
            start = comma + 1;
        }
    }
    if (dir.empty())
        return Error::in(std::string(kDomain), "--output-filename needs a directory", value);
    output.rank_dir = jobspec_path(spec, dir);
    if (with_job_id)
        output.rank_dir += "/" + job_id;
    return {};
}

// --mpi: which interfaces the tasks get (docs/pmi.md).
Status set_interfaces(std::string_view mpi, LaunchSettings& settings) {
    if (mpi.empty())
        return {};
    if (mpi != "pmix" && mpi != "pmi1" && mpi != "none")
        return Error("--mpi", "'" + std::string(mpi) + "' is not pmix, pmi1 or none");
    settings.serve_pmi1 = mpi == "pmi1";
    settings.serve_pmix = mpi == "pmix" ? Job::Pmix::kAlways : Job::Pmix::kNever;
    return {};
}

}  // namespace

Result<LaunchSettings> launch_settings(const Jobspec& spec, const JobMap& map, std::string job_id) {
    LaunchSettings settings;
    settings.job_id = std::move(job_id);
    for (std::size_t k = 0; k < spec.apps.size(); ++k) {
        const Jobspec::App& app = spec.apps[k];
        auto cwd = app_cwd(spec, app);
        if (!cwd)
            return cwd.error();
        // App 0's rules and directory are the job's, for every app.
        if (k == 0) {
            settings.env_rules = env_rules_of(spec, app);
            settings.cwd = cwd->empty() ? spec.attributes.cwd : std::move(*cwd);
            settings.apps.emplace_back();
        } else {
            settings.apps.push_back(AppSettings{env_rules_of(spec, app), std::move(*cwd)});
        }
    }
    const Jobspec::Attributes& attributes = spec.attributes;
    auto input = input_of(spec, static_cast<std::uint32_t>(map.tasks.size()));
    if (!input)
        return input.error();
    settings.input = std::move(*input);
    if (auto status = check_template(kDomain, "--output", attributes.output); !status)
        return status.error();
    if (auto status = check_template(kDomain, "--error", attributes.error); !status)
        return status.error();
    settings.output.label = attributes.label_io;
    settings.output.unbuffered = attributes.unbuffered;
    settings.output.output_template = output_path(spec, attributes.output);
    settings.output.error_template = output_path(spec, attributes.error);
    settings.output.timestamp = attributes.timestamp_output;
    settings.output.merge_stderr = attributes.merge_stderr;
    settings.output.rank_digits =
        static_cast<std::uint32_t>(std::to_string(map.tasks.size()).size());
    if (auto status = add_rank_dir(spec, settings.job_id, settings.output); !status)
        return status.error();
    settings.limits = {milliseconds_of(attributes.time_limit),
                       milliseconds_of(attributes.kill_timeout), attributes.kill_on_bad_exit};
    for (const std::string& text : attributes.rlimits)
        if (auto status = add_rlimits(text, settings.soft_limits); !status)
            return status.error();
    if (auto status = set_interfaces(attributes.mpi, settings); !status)
        return status.error();
    auto mask = umask_of(attributes.umask);
    if (!mask)
        return mask.error();
    settings.umask = *mask;
    return settings;
}

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
    job.serve_pmi1 = settings.serve_pmi1;
    job.serve_pmix = settings.serve_pmix;
    // PMIx numbers the job's nodes that have tasks, in node order.
    std::vector<std::uint32_t> node_id(map.nodes.size(), 0);
    std::vector<bool> used(map.nodes.size(), false);
    for (const gantry::Task& task : map.tasks)
        used[task.node] = true;
    for (std::size_t node = 0; node < map.nodes.size(); ++node)
        if (used[node]) {
            node_id[node] = static_cast<std::uint32_t>(job.node_names.size());
            job.node_names.push_back(map.nodes[node].name);
            job.map_node_of_node.push_back(static_cast<std::uint32_t>(node));
        }
    job.node_of_rank.reserve(map.tasks.size());
    for (const gantry::Task& task : map.tasks)
        job.node_of_rank.push_back(node_id[task.node]);
    job.node_id = plan.node < node_id.size() ? node_id[plan.node] : 0;

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
    const auto nnodes = static_cast<std::uint32_t>(job.node_names.size());
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

Result<Job> node_job(const Jobspec& spec, const JobMap& map, std::size_t node,
                     const LaunchSettings& settings, std::string& warning) {
    const std::vector<NodePlan> plans = launch_plans(map, app_argvs(spec));
    const auto plan =
        std::find_if(plans.begin(), plans.end(), [&](const NodePlan& p) { return p.node == node; });
    if (node >= map.nodes.size())
        return Error(std::string(kDomain), "the job has no node " + std::to_string(node));
    // A node the job names (-H) but maps no task to runs none.
    const NodePlan empty{static_cast<std::uint32_t>(node),
                         map.nodes[node].name,
                         static_cast<std::uint32_t>(map.tasks.size()),
                         {}};
    pmi::JobInfo pmi = pmi_job(map, settings.job_id, warning);
    return job_from_plan(plan == plans.end() ? empty : *plan, map, app_commands(spec), settings,
                         std::move(pmi), Environment::from_map(spec.attributes.environment));
}

Result<Job> local_job(const Jobspec& spec, const JobMap& map, const LaunchSettings& settings,
                      std::string& warning) {
    // The first local node that has tasks.
    std::optional<std::size_t> here;
    for (const gantry::Task& task : map.tasks)
        if (map.nodes[task.node].local && (!here || task.node < *here))
            here = task.node;
    if (!here)
        return Error(std::string(kDomain),
                     "no task of the job is mapped to this machine (" + local_hostname() + ")");
    return node_job(spec, map, *here, settings, warning);
}

}  // namespace gantry::shell
