// `gantry run`: map an MPMD program onto nodes with PRRTE's --map-by,
// --rank-by and --bind-to (per app when a segment after `:` gives its own),
// show the map, and run the tasks on this machine through the shell.
// Policies and output: docs/mapping.md; launching: docs/commands/run.md.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "formats/rset.h"
#include "mapper/display.h"
#include "mapper/launch_plan.h"
#include "mapper/map.h"
#include "mapper/nodes.h"
#include "mapper/resources.h"
#include "shell/environment.h"
#include "shell/plan_job.h"
#include "shell/shell.h"
#include "topo/topology.h"
#include "util/duration.h"

namespace gantry::cli {
namespace {

constexpr std::string_view kDomain = "run";

constexpr std::string_view kUsage =
    R"(Usage: gantry run [JOB AND APP-0 OPTIONS] CMD [ARGS] [: [APP OPTIONS] CMD [ARGS]]...

Maps a program's tasks onto nodes, cores and GPUs with PRRTE's policies, then
runs them on this machine, bound as mapped, with PMI-1 for MPI programs, and
exits with the job's exit code. Options before the first command are the
job's and app 0's; after a ':' an app's own -n, --map-by, --rank-by,
--bind-to, -H, --hostfile, --env*, --cwd.

App options:
  -n, --np, -np N        number of tasks (default: one per slot)
  --map-by POLICY        slot|hwthread|core|l1cache|l2cache|l3cache|numa|package|
                         node|seq|ppr:N:OBJ|rankfile|pe-list=LIST|device=gpu,
                         then :QUALIFIERS (PE=n, SPAN, OVERSUBSCRIBE, NOLOCAL...)
  --rank-by POLICY       slot|node|fill|span
  --bind-to POLICY       none|hwthread|core|l1cache|l2cache|l3cache|numa|package,
                         then :overload-allowed, :if-supported...
  -H, --host HOSTS       host[:slots],... (default: this machine, one slot per core);
                         in a later segment, the only hosts that app uses,
                         where +n<i> is the job's node i, +e the nodes earlier
                         apps left empty and +e:N the first N of them
  --hostfile FILE        PRRTE hostfile: host slots=N max_slots=M (per app too)
  --env NAME=VALUE       set a variable; --env NAME copies this one's value
  --env-remove GLOB      remove the variables whose names match
  --env-file FILE        NAME=VALUE lines (# comments); all three in the order given
  --cwd DIR              the tasks' working directory (default: this one)
Job options:
  -l, --label-io         prefix each output line with "RANK: "
  -o, --output FILE      stdout (and stderr, without --error) to FILE; {{id}},
                         {{taskid}}, {{node}} in FILE make one per job, task, node
  -e, --error FILE       stderr to FILE, same templates
  -u, --unbuffered       pass output on as it comes, not line by line
  -i, --input WHAT       stdin to rank 0 (default), to RANKS (an idset), to all,
                         or from a FILE
  -t, --time-limit DUR   SIGTERM every task after DUR (30s, 5m, 1h), then SIGKILL
  --kill-timeout DUR     from SIGTERM to SIGKILL (default 5s)
  -K, --kill-on-bad-exit the first task to fail ends the job
  --rlimit NAME=VALUE    a soft limit for the tasks (core=0,nofile=4096,stack=unlimited)
  --umask MASK           the tasks' umask (octal)
  --resources R.json     an RFC 20 resource set: one node per rank, its cores
                         and GPUs only
  --topology TOPOLOGY    give every node this topology: an lstopo XML file or a
                         synthetic description ("package:2 core:8 pu:2"); with --dry-run
  --dry-run              map, launch nothing (also --do-not-launch,
                         --runtime-options donotlaunch)
  --display WHAT         map, map:json, map:svg=FILE, bindings, R (the job's
                         RFC 20 resource set), plan (each node's launch plan,
                         one JSON line per node); comma-separated
  --display-map, --report-bindings, --oversubscribe, --nolocal,
  --use-hwthread-cpus, --rankfile FILE    the spellings mpirun users know

Examples:
  $ gantry run -n 4 --label-io hostname
  $ gantry run --display map -n 2 --map-by core ./a : -n 2 --map-by package --env X=1 ./b
  $ gantry run -n 8 --bind-to core --time-limit 10m ./mpi_app
  $ gantry run --dry-run --display map -H n0:4,n1:4 --topology "package:2 core:4 pu:1" \
      -n 2 --map-by package ./a : -n 4 --map-by core ./b

Exit status: the job's: 0 when every task exited 0, else the first failing
task's exit code (128+N for signal N), the code given to MPI_Abort, 127/126
for a command that cannot run; 2 on bad options, policies, hosts or a job
that does not fit; 1 when the system fails.)";

// One app's part of the command line.
struct Segment {
    unsigned nprocs = 0;
    Directives directives;
    std::string hosts;                      // a later app's own -H
    std::string hostfile;                   // a later app's own --hostfile
    std::vector<shell::EnvRule> env_rules;  // the first segment's: the job's
    std::string cwd;
    std::vector<std::string> command;
};

struct RunOptions {
    std::vector<Segment> segments;
    std::string hosts;
    std::string hostfile;
    std::string resources;
    std::string topology;
    std::string rankfile;
    std::vector<std::string> display;
    bool dry_run = false;
    bool oversubscribe = false;
    bool nolocal = false;
    bool hwthread_cpus = false;
    bool help = false;
    // Launching.
    std::string output;
    std::string error;
    std::string input;
    std::string time_limit;
    std::string kill_timeout;
    std::vector<std::string> rlimits;
    std::string umask;
    bool label_io = false;
    bool unbuffered = false;
    bool kill_on_bad_exit = false;
};

bool is_one_of(std::string_view option, std::initializer_list<std::string_view> names) {
    for (const std::string_view name : names)
        if (option == name)
            return true;
    return false;
}

bool takes_value(std::string_view option) {
    return is_one_of(option, {"-n",
                              "--n",
                              "-np",
                              "--np",
                              "--map-by",
                              "--mapby",
                              "--rank-by",
                              "--rankby",
                              "--bind-to",
                              "--bindto",
                              "-H",
                              "--host",
                              "--hostfile",
                              "--machinefile",
                              "--resources",
                              "--topology",
                              "--display",
                              "--runtime-options",
                              "--rtos",
                              "--rankfile",
                              "--env",
                              "--env-remove",
                              "--env-file",
                              "--cwd",
                              "-o",
                              "--output",
                              "-e",
                              "--error",
                              "-i",
                              "--input",
                              "-t",
                              "--time-limit",
                              "--kill-timeout",
                              "--rlimit",
                              "--umask"});
}

// Options every segment may give for its own app's tasks.
bool is_task_option(std::string_view option) {
    return is_one_of(option, {"--env", "--env-remove", "--env-file", "--cwd"});
}

void apply_task_option(Segment& segment, std::string_view option, const std::string& value) {
    using Kind = shell::EnvRule::Kind;
    if (option == "--cwd")
        segment.cwd = value;
    else
        segment.env_rules.push_back({option == "--env"          ? Kind::Set
                                     : option == "--env-remove" ? Kind::Remove
                                                                : Kind::File,
                                     value});
}

bool is_app_option(std::string_view option) {
    return is_one_of(option, {"-n", "--n", "-np", "--np", "--map-by", "--mapby", "--rank-by",
                              "--rankby", "--bind-to", "--bindto"});
}

template <class Policy>
Status set_once(std::optional<Policy>& slot, Result<Policy> parsed, std::string_view option) {
    if (!parsed)
        return parsed.error();
    if (slot)
        return Error(std::string(kDomain), std::string(option) + " given twice for one app");
    slot = std::move(*parsed);
    return {};
}

Status apply_app_option(Segment& segment, std::string_view option, const std::string& value) {
    if (is_one_of(option, {"-n", "--n", "-np", "--np"})) {
        std::size_t used = 0;
        unsigned long n = 0;
        try {
            n = std::stoul(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != value.size() || n == 0 || n > 1u << 30)
            return Error::in(std::string(kDomain), std::string(option) + " needs a task count",
                             value);
        segment.nprocs = static_cast<unsigned>(n);
        return {};
    }
    if (is_one_of(option, {"--map-by", "--mapby"}))
        return set_once(segment.directives.map, parse_map_by(value), "--map-by");
    if (is_one_of(option, {"--rank-by", "--rankby"}))
        return set_once(segment.directives.rank, parse_rank_by(value), "--rank-by");
    return set_once(segment.directives.bind, parse_bind_to(value), "--bind-to");
}

Status apply_job_option(RunOptions& run, std::string_view option, const std::string& value) {
    if (is_one_of(option, {"-H", "--host"}))
        run.hosts = value;
    else if (is_one_of(option, {"--hostfile", "--machinefile"}))
        run.hostfile = value;
    else if (option == "--resources")
        run.resources = value;
    else if (option == "--topology")
        run.topology = value;
    else if (option == "--rankfile")
        run.rankfile = value;
    else if (option == "--display") {
        std::istringstream items(value);
        for (std::string item; std::getline(items, item, ',');) {
            const bool svg = item.starts_with("map:svg=") && item.size() > 8;
            if (!svg && !is_one_of(item, {"map", "map:json", "bindings", "R", "plan"}))
                return Error::in(std::string(kDomain),
                                 "--display shows map, map:json, map:svg=FILE, bindings, R or "
                                 "plan, not " +
                                     quote(item),
                                 value);
            run.display.push_back(item);
        }
    } else if (is_one_of(option, {"-o", "--output"}))
        run.output = value;
    else if (is_one_of(option, {"-e", "--error"}))
        run.error = value;
    else if (is_one_of(option, {"-i", "--input"}))
        run.input = value;
    else if (is_one_of(option, {"-t", "--time-limit"}))
        run.time_limit = value;
    else if (option == "--kill-timeout")
        run.kill_timeout = value;
    else if (option == "--rlimit")
        run.rlimits.push_back(value);
    else if (option == "--umask")
        run.umask = value;
    else if (is_one_of(option, {"--runtime-options", "--rtos"})) {
        if (value != "donotlaunch")
            return Error::in(std::string(kDomain),
                             "the only runtime option is donotlaunch, not " + quote(value), value);
        run.dry_run = true;
    }
    return {};
}

Status apply_flag(RunOptions& run, std::string_view flag) {
    if (is_one_of(flag, {"--dry-run", "--do-not-launch"}))
        run.dry_run = true;
    else if (flag == "--display-map")
        run.display.push_back("map");
    else if (flag == "--report-bindings")
        run.display.push_back("bindings");
    else if (flag == "--oversubscribe")
        run.oversubscribe = true;
    else if (flag == "--nolocal")
        run.nolocal = true;
    else if (flag == "--use-hwthread-cpus")
        run.hwthread_cpus = true;
    else if (is_one_of(flag, {"-l", "--label-io"}))
        run.label_io = true;
    else if (is_one_of(flag, {"-u", "--unbuffered"}))
        run.unbuffered = true;
    else if (is_one_of(flag, {"-K", "--kill-on-bad-exit"}))
        run.kill_on_bad_exit = true;
    else if (is_one_of(flag, {"-h", "--help"}))
        run.help = true;
    else
        return Error(std::string(kDomain),
                     "unknown option " + quote(flag) + " (see gantry run --help)");
    return {};
}

// Splits argv at ':' into app segments; each segment's options come before
// its command, whose own arguments are left alone.
Result<RunOptions> parse_command_line(int argc, char** argv) {
    RunOptions run;
    run.segments.emplace_back();
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        Segment& segment = run.segments.back();
        if (arg == ":") {
            if (segment.command.empty())
                return Error(std::string(kDomain),
                             "app " + std::to_string(run.segments.size() - 1) + " has no command");
            run.segments.emplace_back();
            continue;
        }
        if (!segment.command.empty() || arg.empty() || arg[0] != '-') {
            segment.command.push_back(arg);
            continue;
        }
        std::string value;
        const std::size_t equals = arg.find('=');
        if (arg.starts_with("--") && equals != std::string::npos) {
            value = arg.substr(equals + 1);
            arg = arg.substr(0, equals);
        } else if (takes_value(arg)) {
            if (i + 1 >= argc)
                return Error(std::string(kDomain), arg + " needs a value");
            value = argv[++i];
        }
        const bool first = run.segments.size() == 1;
        Status status;
        if (is_app_option(arg))
            status = apply_app_option(segment, arg, value);
        else if (is_task_option(arg))
            apply_task_option(segment, arg, value);
        else if (!first && is_one_of(arg, {"-H", "--host"}))
            segment.hosts = value;
        else if (!first && is_one_of(arg, {"--hostfile", "--machinefile"}))
            segment.hostfile = value;
        else if (!first)
            status = Error(std::string(kDomain),
                           arg + " in app " + std::to_string(run.segments.size() - 1) +
                               "'s segment: it is the job's; give it before the first command");
        else if (takes_value(arg))
            status = apply_job_option(run, arg, value);
        else
            status = apply_flag(run, arg);
        if (!status)
            return status.error();
    }
    if (!run.help && run.segments.back().command.empty())
        return Error(std::string(kDomain), "no command to run (see gantry run --help)");
    return run;
}

// The mpirun spellings (--oversubscribe, --nolocal, --use-hwthread-cpus,
// --rankfile) are qualifiers of the job's --map-by.
Status fold_compat_flags(const RunOptions& run, Directives& job) {
    if (!(run.oversubscribe || run.nolocal || run.hwthread_cpus || !run.rankfile.empty()))
        return {};
    if (!job.map) {
        job.map = MapPolicy{};
        job.map->has_directive = false;
    }
    MapPolicy& map = *job.map;
    if (run.oversubscribe) {
        if (map.oversubscribe == false)
            return Error(std::string(kDomain),
                         "--oversubscribe conflicts with NOOVERSUBSCRIBE in --map-by");
        map.oversubscribe = true;
    }
    map.nolocal = map.nolocal || run.nolocal;
    if (run.hwthread_cpus) {
        if (map.cpus == CpuUnit::kCore)
            return Error(std::string(kDomain),
                         "--use-hwthread-cpus conflicts with CORECPUS in --map-by");
        map.cpus = CpuUnit::kHwthread;
    }
    if (!run.rankfile.empty()) {
        if (map.has_directive && map.by != MapBy::kRankfile)
            return Error(std::string(kDomain),
                         "--rankfile conflicts with --map-by " + mapping_name(map));
        map.by = MapBy::kRankfile;
        map.has_directive = true;
        map.file = run.rankfile;
    }
    return {};
}

Result<Topology> load_topology(const std::string& topology) {
    if (topology.empty())
        return Topology::local();
    if (std::filesystem::exists(topology))
        return Topology::from_xml(topology);
    return Topology::from_synthetic(topology);
}

Result<std::string> read_text(const std::string& path, std::string_view what) {
    std::ifstream in(path);
    if (!in)
        return Error::in(std::string(kDomain), "cannot read the " + std::string(what), path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The hosts of `-H` or a hostfile, when either is given.
Result<std::vector<HostSpec>> host_specs(const std::string& hosts, const std::string& hostfile) {
    if (!hosts.empty() && !hostfile.empty())
        return Error(std::string(kDomain), "give -H or --hostfile, not both");
    if (!hosts.empty())
        return parse_hosts(hosts);
    if (hostfile.empty())
        return std::vector<HostSpec>{};
    auto text = read_text(hostfile, "hostfile");
    if (!text)
        return text.error();
    return parse_hostfile(*text, hostfile);
}

// The job's nodes: the first segment's -H, --hostfile or --resources (this
// machine when none), then the hosts later apps name that are not among
// them yet. An app that names hosts uses only those; the others use the
// job's.
Result<std::vector<Node>> node_pool(const RunOptions& run, const Topology& topology,
                                    JobRequest& request) {
    const CpuUnit cpus = run.hwthread_cpus ? CpuUnit::kHwthread : CpuUnit::kCore;
    const std::string here = local_hostname();
    if (!run.hosts.empty() + !run.hostfile.empty() + !run.resources.empty() > 1)
        return Error(std::string(kDomain), "give one of -H, --hostfile and --resources");
    std::vector<Node> nodes;
    if (!run.resources.empty()) {
        auto text = read_text(run.resources, "resource set");
        if (!text)
            return text.error();
        auto resources = ResourceSet::parse(*text);
        if (!resources)
            return resources.error();
        auto from_r = nodes_from_resources(*resources, topology, cpus, here);
        if (!from_r)
            return from_r.error();
        nodes = std::move(*from_r);
    } else {
        auto job_hosts = host_specs(run.hosts, run.hostfile);
        if (!job_hosts)
            return job_hosts.error();
        for (const HostSpec& spec : *job_hosts)
            if (relative_host(spec.name))
                return Error(std::string(kDomain),
                             "the relative host " + spec.name +
                                 " names one of the job's nodes; give it in a later app's -H");
        nodes = make_nodes(*job_hosts, topology, cpus, here);
    }
    std::vector<std::string> job_names;
    for (const Node& node : nodes)
        job_names.push_back(node.name);
    bool any_app_hosts = false;
    for (std::size_t k = 1; k < run.segments.size(); ++k) {
        auto specs = host_specs(run.segments[k].hosts, run.segments[k].hostfile);
        if (!specs)
            return specs.error();
        for (const HostSpec& spec : *specs) {
            request.apps[k].hosts.push_back(spec.name);
            if (relative_host(spec.name))
                continue;  // one of the job's nodes, resolved when mapping
            const bool known = std::any_of(nodes.begin(), nodes.end(),
                                           [&](const Node& n) { return n.name == spec.name; });
            if (!known)
                nodes.push_back(make_nodes(std::vector<HostSpec>{spec}, topology, cpus, here)[0]);
        }
        any_app_hosts = any_app_hosts || !specs->empty();
    }
    if (nodes.empty())
        nodes.push_back(local_node(topology, here, cpus));
    if (any_app_hosts && !job_names.empty())
        for (AppRequest& app : request.apps)
            if (app.hosts.empty())
                app.hosts = job_names;
    return nodes;
}

std::string command_text(const std::vector<std::string>& command) {
    std::string text;
    for (const std::string& word : command)
        text += (text.empty() ? "" : " ") + word;
    return text;
}

// seq without FILE= reads the app's hosts in their order, as PRRTE: its own
// -H or --hostfile, else the job's (already checked by node_pool).
Status set_seq_lines(const RunOptions& run, JobRequest& request) {
    for (std::size_t k = 0; k < run.segments.size(); ++k) {
        const Segment& segment = run.segments[k];
        const std::optional<MapPolicy>& map =
            k > 0 && segment.directives.map ? segment.directives.map : request.directives.map;
        if (!map || map->by != MapBy::kSeq || !map->file.empty())
            continue;
        const bool own = k > 0 && !(segment.hosts.empty() && segment.hostfile.empty());
        const std::string& hosts = own ? segment.hosts : run.hosts;
        const std::string& hostfile = own ? segment.hostfile : run.hostfile;
        if (!hosts.empty()) {
            request.apps[k].seq_lines = seq_lines_of_hosts(hosts);
        } else if (!hostfile.empty()) {
            auto text = read_text(hostfile, "hostfile");
            if (!text)
                return text.error();
            request.apps[k].seq_lines = seq_lines_of_hostfile(*text);
        }
    }
    return {};
}

std::vector<std::vector<std::string>> argv_of_apps(const RunOptions& run) {
    std::vector<std::vector<std::string>> argv;
    for (const Segment& segment : run.segments)
        argv.push_back(segment.command);
    return argv;
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

// --input: `all`, an idset of ranks, or a file to read.
Result<shell::Input> input_of(const std::string& value, std::uint32_t size) {
    shell::Input input;
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
    if (access(value.c_str(), R_OK) != 0)
        return Error::in(std::string(kDomain),
                         "--input takes all, ranks (0-3) or a readable file, not", value);
    input.source = shell::Input::Source::File;
    input.file = value;
    return input;
}

Result<std::optional<mode_t>> umask_of(const std::string& text) {
    if (text.empty())
        return std::optional<mode_t>{};
    if (text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos)
        return Error::in(std::string(kDomain), "--umask takes an octal mask such as 022", text);
    return std::optional<mode_t>{static_cast<mode_t>(std::stoul(text, nullptr, 8))};
}

Result<shell::LaunchSettings> launch_settings(const RunOptions& run, const JobMap& map,
                                              std::string job_id) {
    shell::LaunchSettings settings;
    settings.job_id = std::move(job_id);
    settings.env_rules = run.segments.front().env_rules;
    settings.cwd = run.segments.front().cwd;
    for (std::size_t k = 0; k < run.segments.size(); ++k)
        settings.apps.push_back(
            k == 0 ? shell::AppSettings{}
                   : shell::AppSettings{run.segments[k].env_rules, run.segments[k].cwd});
    for (const Segment& segment : run.segments)
        if (!segment.cwd.empty() && !std::filesystem::is_directory(segment.cwd))
            return Error::in(std::string(kDomain), "--cwd: no such directory", segment.cwd);
    auto input = input_of(run.input, static_cast<std::uint32_t>(map.tasks.size()));
    if (!input)
        return input.error();
    settings.input = std::move(*input);
    settings.output = {run.label_io, run.unbuffered, run.output, run.error};
    if (!run.time_limit.empty()) {
        auto limit = parse_duration(kDomain, run.time_limit);
        if (!limit)
            return limit.error();
        settings.limits.time_limit = *limit;
    }
    if (!run.kill_timeout.empty()) {
        auto timeout = parse_duration(kDomain, run.kill_timeout);
        if (!timeout)
            return timeout.error();
        settings.limits.kill_timeout = *timeout;
    }
    settings.limits.kill_on_bad_exit = run.kill_on_bad_exit;
    for (const std::string& text : run.rlimits)
        if (auto status = add_rlimits(text, settings.soft_limits); !status)
            return status.error();
    auto mask = umask_of(run.umask);
    if (!mask)
        return mask.error();
    settings.umask = *mask;
    return settings;
}

// Without an instance gantry starts tasks on this machine only.
Status check_local(const RunOptions& run, const JobMap& map, const std::string& here) {
    if (!run.topology.empty())
        return Error(std::string(kDomain),
                     "--topology simulates nodes, where nothing can run; add --dry-run");
    for (const gantry::Task& task : map.tasks)
        if (map.nodes[task.node].name != here)
            return Error(std::string(kDomain),
                         "tasks mapped to " + quote(map.nodes[task.node].name) +
                             ", but gantry run starts tasks on this machine (" + here +
                             ") only; add --dry-run to see the map");
    return {};
}

// Starts the job's tasks here and waits for them: the job's exit code.
int launch(const RunOptions& run, const JobMap& map, const shell::LaunchSettings& settings) {
    std::string warning;
    pmi::JobInfo pmi = shell::pmi_job(map, settings.job_id, warning);
    if (!warning.empty())
        std::cerr << "gantry: " << warning << '\n';
    std::vector<std::string> app_commands;
    for (const Segment& segment : run.segments)
        app_commands.push_back(command_text(segment.command));
    const std::vector<NodePlan> plans = launch_plans(map, argv_of_apps(run));
    auto job = shell::job_from_plan(plans.front(), map, app_commands, settings, std::move(pmi),
                                    shell::Environment::inherited());
    if (!job)
        return fail(job.error());
    std::cout.flush();  // the map before the tasks' output
    return shell::run(*job);
}

}  // namespace

int run_main(int argc, char** argv) {
    auto run = parse_command_line(argc, argv);
    if (!run)
        return fail(run.error());
    if (run->help) {
        std::cout << kUsage << '\n';
        return kExitOk;
    }
    JobRequest request;
    request.directives = run->segments.front().directives;
    if (auto status = fold_compat_flags(*run, request.directives); !status)
        return fail(status.error());
    for (std::size_t k = 0; k < run->segments.size(); ++k) {
        const Segment& segment = run->segments[k];
        request.apps.push_back(AppRequest{segment.nprocs,
                                          k == 0 ? Directives{} : segment.directives,
                                          command_text(segment.command),
                                          {},
                                          {}});
    }
    auto topology = load_topology(run->topology);
    if (!topology)
        return fail(topology.error());
    auto nodes = node_pool(*run, *topology, request);
    if (!nodes)
        return fail(nodes.error());
    if (auto status = set_seq_lines(*run, request); !status)
        return fail(status.error());
    auto map = map_job(request, std::move(*nodes));
    if (!map)
        return fail(map.error());

    // Launch options are checked before anything is shown.
    std::optional<shell::LaunchSettings> settings;
    if (!run->dry_run) {
        if (auto status = check_local(*run, *map, local_hostname()); !status)
            return fail(status.error());
        auto checked = launch_settings(*run, *map, std::to_string(getpid()));
        if (!checked)
            return fail(checked.error());
        settings = std::move(*checked);
    }
    const DisplayOptions display{
        "gantry-" + local_hostname() + "-" + std::to_string(getpid()) + "@1", run->dry_run};
    for (const std::string& what : run->display) {
        if (what == "map")
            std::cout << display_map(*map, display);
        else if (what == "map:json")
            std::cout << map_json_text(*map) << '\n';
        else if (what == "R")
            std::cout << job_resources(*map).encode() << '\n';
        else if (what == "plan")
            std::cout << launch_plans_text(launch_plans(*map, argv_of_apps(*run)));
        else if (what.starts_with("map:svg=")) {
            const std::string path = what.substr(8);
            std::ofstream file(path);
            file << map_svg(*map);
            if (!file) {
                std::cerr << "gantry: run: cannot write the map to " << quote(path) << '\n';
                return kExitRuntime;
            }
        } else
            std::cout << display_bindings(*map, display);
    }
    if (run->dry_run)
        return kExitOk;
    return launch(*run, *map, *settings);
}

}  // namespace gantry::cli
