// `gantry run`: map an MPMD program onto nodes with PRRTE's --map-by,
// --rank-by and --bind-to (per app when a segment after `:` gives its own),
// show the map, and run the tasks on this machine through the shell. The
// command line becomes a jobspec (run_options.h), which the mapper maps
// (map_jobspec) and the shell launches (shell::launch_settings, local_job),
// as an instance does with a stored one. Policies and output:
// docs/mapping.md; launching: docs/commands/run.md; keys: docs/jobspec.md.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "broker/prepared_program.h"
#include "cli/attach.h"
#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/run_options.h"
#include "mapper/display.h"
#include "mapper/jobspec_map.h"
#include "mapper/launch_plan.h"
#include "mapper/resources.h"
#include "overlay/client.h"
#include "shell/map_io.h"
#include "shell/plan_job.h"
#include "shell/shell.h"
#include "shell/spawn.h"
#include "topo/topology.h"

namespace gantry::cli {
namespace {

constexpr std::string_view kDomain = "run";

constexpr std::string_view kUsage =
    R"(Usage: gantry run [JOB AND APP-0 OPTIONS] CMD [ARGS] [: [APP OPTIONS] CMD [ARGS]]...

Maps a program's tasks onto nodes, cores and GPUs with PRRTE's policies, then
runs them, bound as mapped, with PMI-1 for MPI programs, and exits with the
job's exit code: on this machine; on the hosts -H or --hostfile name, through
the launch agent (ssh); inside a Slurm allocation, on its nodes. Options
before the first command are the job's and app 0's; after a ':' an app's own
-n, --map-by, --rank-by, --bind-to, -H, --hostfile, --env*, --cwd.

App options:
  -n, --np, -np, --ntasks N
                         number of tasks (default: one per slot)
  --map-by POLICY        slot|hwthread|core|l1cache|l2cache|l3cache|numa|package|
                         node|seq|ppr:N:OBJ|rankfile|pe-list=LIST|device=gpu,
                         then :QUALIFIERS (PE=n, SPAN, OVERSUBSCRIBE, NOLOCAL,
                         DISPLAY...)
  -ppn, --npernode, --ntasks-per-node N   N tasks per node (--map-by ppr:N:node)
  --rank-by POLICY       slot|node|fill|span
  --bind-to POLICY       none|hwthread|core|l1cache|l2cache|l3cache|numa|package,
                         then :overload-allowed, :if-supported, :REPORT...
  -H, --host, -hosts HOSTS
                         host[:slots],... (default: this machine, one slot per
                         core; localhost and its addresses are this machine;
                         in a Slurm allocation, its nodes and CPUs);
                         beside --hostfile, and in a later segment, the only
                         hosts that app uses, where +n<i> is the job's node i,
                         +e the nodes earlier apps left empty and +e:N the
                         first N of them
  --hostfile, --machinefile, -f FILE
                         PRRTE hostfile: host slots=N max_slots=M (per app too)
  --env, -x NAME=VALUE   set a variable; --env NAME copies this one's value
  -env NAME VALUE        the same, MPICH's spelling
  --env-remove GLOB      remove the variables whose names match
  --env-file FILE        NAME=VALUE lines (# comments); all three in the order given
  --export ALL|NONE|NAME[=VALUE],...   srun's: which variables the tasks get
  --mca NAME VALUE       OMPI_MCA_NAME=VALUE in the tasks
  --cwd, -D, --chdir, -wdir DIR   the tasks' working directory (default: this one)
Job options:
  -l, --label-io, --label, --tag-output
                         prefix each output line with "RANK: "
  -o, --output FILE      stdout (and stderr, without --error) to FILE; {{id}},
                         {{taskid}}, {{node}} in FILE make one per job, task, node
  -e, --error FILE       stderr to FILE, same templates
  -u, --unbuffered       pass output on as it comes, not line by line
  --timestamp-output     prefix each output line with the time it came and its
                         stream, as Open MPI: "Wed Nov 25 21:52:50 2026<stdout>:"
  --output-filename DIR[:nojobid,nocopy]
                         each rank's output also to DIR/ID/rank.N/stdout and
                         stderr (N zero-padded); nojobid: no ID; nocopy: files only
  --merge-stderr-to-stdout
                         each task's stderr goes where its stdout goes
  -i, --input WHAT       stdin to rank 0 (default), to RANKS (an idset), to all,
                         or from a FILE
  -t, --time-limit LIMIT SIGTERM every task after LIMIT, then SIGKILL: minutes
                         (30), [D-]H:M:S (1:00:00, 2-00:00:00) or 90s, 1.5h, 1d
  --kill-timeout DUR     from SIGTERM to SIGKILL (default 5s)
  -K, --kill-on-bad-exit the first task to fail ends the job
  --rlimit NAME=VALUE    a soft limit for the tasks (core=0,nofile=4096,stack=unlimited)
  --umask MASK           the tasks' umask (octal)
  --mpi pmix|pmi1|none   which interface the tasks get (default: both, PMI-1
                         for MPICH and PMIx for Open MPI)
  -J, --job-name NAME    the job's name (default: its first program's)
  -genv NAME VALUE, -genvlist A,B, -genvnone
                         MPICH's job-wide variables
  --resources R.json     an RFC 20 resource set: one node per rank, its cores
                         and GPUs only
  --topology TOPOLOGY    give every node this topology: an lstopo XML file or a
                         synthetic description ("package:2 core:8 pu:2"); with --dry-run
  --dry-run              map, launch nothing (also --do-not-launch,
                         --runtime-options donotlaunch)
  --display WHAT         map, map:json, map:svg=FILE, bindings, R (the job's
                         RFC 20 resource set), plan (each node's launch plan,
                         one JSON line per node); comma-separated
  --oversubscribe, -O, --overcommit   more tasks than slots
  --display-map, --report-bindings, --nolocal,
  --use-hwthread-cpus, --rankfile FILE    the spellings mpirun users know
  --prtemca NAME VALUE   accepted and ignored, with a note
  --launch-agent CMD     how other hosts are reached: CMD HOST COMMAND-LINE
                         (default: $GANTRY_LAUNCH_AGENT, else ssh; rsh works too)
  --prefix DIR           gantry is DIR/bin/gantry on the other hosts (default:
                         this gantry's path)
  --launch-timeout DUR   how long a host has to start its broker (default 30s)
  --overlay-address ADDRESS|INTERFACE   where the other hosts reach this one
                         (default: where each one's ssh connection came from,
                         else this machine's address on the route to it)
  --uri URI              run in this instance (default: $GANTRY_URI)
  --                     ends the options: what follows is the command
Values: -n 4, -n4, -n=4, --np=4. Open MPI's one-dash long forms too: -map-by,
-bind-to, -host, -hostfile, -oversubscribe, -tag-output, -mca...
Scheduling options (inside an instance only):
  -N, --nodes N          nodes to allocate (default: as many as the tasks need)
  -c, --cores-per-task, --cpus-per-task N
                         cores of each task's slot (default 1)
  -g, --gpus-per-task N  GPUs of each task's slot (default 0)
  --exclusive            allocate whole nodes
  --requires QUERY       only nodes that satisfy QUERY: properties (gpu, -big),
                         host:HOSTS, rank:IDS, with and, or, not, ( )
  --urgency N            0 (hold) to 31 (expedite), or hold/default/expedite; default 16
  --begin-time WHEN      not before +DURATION from now (+10m) or seconds since
                         the epoch
  -d, --dependency TYPE:ID   start after job ID: afterok, afterany or afternotok;
                         comma-separated or repeated

Examples:
  $ gantry run -n 2 --label-io hostname
  $ gantry run --display map -n 1 --map-by core ./a : -n 1 --map-by package --env X=1 ./b
  $ gantry run -n 2 --bind-to core --time-limit 10m ./mpi_app
  $ gantry run -np 1 -x OMP_NUM_THREADS=2 --map-by slot:PE=2 -- ./mpi_app
  $ gantry run --dry-run --hostfile hosts -H node0 -n 1 ./a : -H node1,node2 -n 2 ./b
  $ gantry run --dry-run --display map -H n0:4,n1:4 --topology "package:2 core:4 pu:1" \
      -n 2 --map-by package ./a : -n 4 --map-by core ./b

On other hosts (-H or --hostfile naming a host other than this one), gantry
starts a broker on each through the launch agent, runs the job in that
instance of them, and stops every broker when it ends: output, stdin, signals
and the exit code are as on one machine (docs/commands/run.md, "Across
hosts"). A host that cannot be reached is named in one line (exit 1).

Inside an instance (GANTRY_URI set) the job is submitted there and followed:
SIGINT, SIGTERM or SIGHUP while it is pending cancel it, and a job whose
gantry run has gone never starts.

Exit status: the job's: 0 when every task exited 0, else the first failing
task's exit code (128+N for signal N), the code given to MPI_Abort, 127/126
for a command that cannot run, 141 when stdout was closed (| head); 2 on bad
options, policies, hosts or a job that does not fit; 1 when the system
fails. Inside an instance also: 1 when the job never ran, 128+N when signal
N canceled it while pending, 69 when the instance shut down first.)";

// Without an instance gantry starts tasks on this machine only.
Status check_local(const Jobspec& spec, const JobMap& map, const std::string& here) {
    if (!spec.job.topology.empty())
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

// Only an instance's scheduler acts on -N, -c, -g, --exclusive, --urgency,
// --begin-time and --dependency: refused here rather than ignored.
Status check_no_scheduling(const RunCommand& run) {
    if (run.scheduling_options.empty())
        return {};
    const std::string& option = run.scheduling_options.front();
    const bool cores =
        option == "-c" || option == "--cores-per-task" || option == "--cpus-per-task";
    return Error(std::string(kDomain),
                 option + " needs an instance (gantry start, or GANTRY_URI)" +
                     (cores ? "; without one, --map-by slot:PE=N gives each task N cores" : ""));
}

// The instance a run is submitted to: --uri, else GANTRY_URI; none for a
// dry run, which maps here.
std::optional<std::string> instance_of(const RunCommand& run) {
    if (run.dry_run)
        return std::nullopt;
    if (run.uri)
        return run.uri;
    const char* uri = std::getenv(std::string(overlay::kUriVariable).c_str());
    if (uri && *uri)
        return std::string(uri);
    return std::nullopt;
}

// Shows each --display item in order, its files written first; the exit
// code when one cannot be written.
std::optional<int> show(const Jobspec& spec, const JobMap& map, bool dry_run) {
    const DisplayOptions display{
        "gantry-" + local_hostname() + "-" + std::to_string(getpid()) + "@1", dry_run};
    const DisplayOutput output = display_output(spec, map, display);
    if (auto written = shell::write_display_files(output); !written) {
        std::cerr << "gantry: " << written.error().str() << '\n';
        return kExitRuntime;
    }
    std::cout << output.text;
    return std::nullopt;
}

// Starts the job's tasks here and waits for them: the job's exit code.
int launch(const Jobspec& spec, const JobMap& map, const shell::LaunchSettings& settings,
           const std::function<void(shell::Job&)>& adjust) {
    std::string warning;
    auto job = shell::local_job(spec, map, settings, warning);
    if (!warning.empty())
        std::cerr << "gantry: " << warning << '\n';
    if (!job)
        return fail(job.error());
    if (adjust)
        adjust(*job);
    std::cout.flush();  // the map before the tasks' output
    return shell::run(*job);
}

}  // namespace

namespace {

// Inside an instance gantry run does what it does outside, on the
// instance's cores: without -n (or -N), one task per slot of them all, as
// mpirun in an allocation; with --oversubscribe, more tasks than slots share
// them (resources.ntasks: the slots asked for, fewer than the tasks; with
// -N, those of that many nodes).
void fit_to_instance(Jobspec& spec, std::uint64_t cores, std::uint64_t nodes) {
    Jobspec::Resources& resources = spec.resources;
    // With -N, the slots of that many nodes of the instance's average size.
    if (resources.nodes > 0 && nodes > 0)
        cores = cores / nodes * resources.nodes;
    const std::uint64_t slots = std::max<std::uint64_t>(1, cores / resources.cores_per_task);
    if (resources.ntasks > 0 || resources.R || !spec.job.hosts.empty() ||
        !spec.job.hostfile.empty())
        return;
    std::uint64_t ntasks = 0;
    for (const Jobspec::App& app : spec.apps)
        ntasks += app.ntasks;
    // With -N, at least a slot a node; the tasks share what the nodes give.
    if (spec.job.oversubscribe && ntasks > slots)
        resources.ntasks =
            static_cast<std::uint32_t>(std::max<std::uint64_t>(slots, resources.nodes));
    else if (ntasks == 0 && resources.nodes == 0)
        resources.ntasks = static_cast<std::uint32_t>(slots);
}

// The instance's nodes that `constraint` allows; none when it cannot tell.
std::optional<ResourceSet> allowed_nodes(overlay::Client& client, const Json& constraint) {
    const auto listed = client.call("resource.list", Json::object());
    if (!listed || !listed->contains("all"))
        return std::nullopt;
    auto all = ResourceSet::from_json(listed->at("all"));
    if (!all)
        return std::nullopt;
    auto ranks = all->constraint_ranks(constraint, "constraint");
    if (!ranks)
        return std::nullopt;
    return all->copy_ranks(*ranks);
}

// Set by run_across_hosts for the run inside the instance it makes, which
// takes it out of its environment before anything else.
constexpr const char* kAcrossHostsVariable = "GANTRY_RUN_ACROSS_HOSTS";

// Inside an instance (GANTRY_URI set) a run is a submit followed by an
// attach: the instance's scheduler places the job, and this front end
// follows it to its end, as `flux run` does.
int run_in_instance(RunCommand run, const std::string& uri, bool across_hosts) {
    int exit_code = kExitOk;
    auto client = connect_instance(uri, exit_code);
    if (!client)
        return exit_code;
    const auto info = client->call("instance.info", Json::object());
    if (!info)
        return runtime_failure(info.error());
    std::uint64_t cores = info->value("cores", std::uint64_t{0});
    std::uint64_t nodes = info->value("size", std::uint64_t{0});
    // With --requires, the slots of the nodes it allows; a constraint the
    // instance refuses is said by job.submit.
    if (!run.jobspec.resources.constraint.empty())
        if (auto allowed = allowed_nodes(*client, run.jobspec.resources.constraint)) {
            cores = allowed->ncores();
            nodes = allowed->nnodes();
        }
    fit_to_instance(run.jobspec, cores, nodes);
    if (auto fits = check_for_instance(run.jobspec, "job.submit"); !fits)
        return runtime_failure(fits.error());
    // Interactive: the job is bound to this connection and never starts
    // without this front end.
    auto reply =
        client->call("job.submit", {{"jobspec", run.jobspec.to_json()}, {"interactive", true}});
    if (!reply)
        return runtime_failure(reply.error());
    return attach_job(*client, uri, reply->value("id", std::uint64_t{0}),
                      AttachOptions{.owns_job = true, .can_detach = !across_hosts});
}

// The hosts the job names, when one of them is not this machine: then the
// job runs in an instance of those hosts (run_across_hosts).
Result<std::vector<std::string>> hosts_elsewhere(const RunCommand& run) {
    const MapInputs inputs = shell::read_map_inputs(run.jobspec);
    auto hosts = jobspec_hosts(run.jobspec, inputs);
    if (!hosts)
        return hosts.error();
    const bool elsewhere = std::any_of(hosts->begin(), hosts->end(), [&](const std::string& host) {
        return host != inputs.hostname;
    });
    return elsewhere ? std::move(*hosts) : std::vector<std::string>{};
}

// `gantry run -H a,b ...` outside an instance, as mpirun does it: `gantry
// start -H a,b` starts a broker on each host through the launch agent, and
// this same command line runs inside that instance, where it is a submit
// and an attach. The instance (hence its brokers, shells and tasks on
// every host) ends with it, and its exit code is the job's.
int run_across_hosts(const RunCommand& run, const std::vector<std::string>& hosts, int argc,
                     char** argv) {
    const auto found = gantry_executable();
    if (!found)
        return runtime_failure(found.error());
    const std::string& self = *found;
    std::string names;
    for (const std::string& host : hosts)
        names += (names.empty() ? "" : ",") + host;
    std::vector<std::string> args = {"start", "-H", names};
    args.insert(args.end(), run.launch_options.begin(), run.launch_options.end());
    args.insert(args.end(), {"--", self});
    for (int i = 0; i < argc; ++i)
        args.emplace_back(argv[i]);
    std::vector<char*> start_argv = argv_of(args);
    // The run inside is this command line again, forked now (while this
    // process has one thread) rather than executed once every host has
    // joined: it then submits at once, in the instance its GANTRY_URI names.
    auto initial = broker::PreparedProgram::fork([argc, argv](const std::string&) {
        ::setenv(kAcrossHostsVariable, "1", 1);
        return run_main(argc, argv);
    });
    if (!initial)
        return runtime_failure(initial.error());
    // In this process: every millisecond before the agents start is one
    // more on the whole run.
    return start_main_with(static_cast<int>(args.size()), start_argv.data(), std::move(*initial));
}

// Inside a Slurm allocation (SLURM_JOB_NODELIST set, outside any job step,
// srun on the PATH): the allocation's hosts with their slots, its tasks on
// each node (SLURM_TASKS_PER_NODE, as PRRTE and hydra read them; its CPUs
// when Slurm gives no task counts); else nothing.
Result<std::optional<std::string>> slurm_allocation() {
    const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
    const char* tasks = std::getenv("SLURM_TASKS_PER_NODE");
    const char* variable = tasks ? "SLURM_TASKS_PER_NODE" : "SLURM_JOB_CPUS_PER_NODE";
    const char* counts = std::getenv(variable);
    if (!nodelist || !*nodelist || std::getenv("SLURM_STEP_ID") || !counts)
        return std::optional<std::string>{};
    const char* path = std::getenv("PATH");
    const std::vector<std::string> environment{path ? std::string("PATH=") + path : ""};
    if (shell::find_command("srun", shell::search_path_of(environment), "").error != 0)
        return std::optional<std::string>{};
    auto hosts = slurm_hosts(nodelist, counts, variable);
    if (!hosts)
        return hosts.error();
    return std::optional<std::string>(std::move(*hosts));
}

// `gantry run ...` inside a Slurm allocation, as mpirun does it there: one
// srun starts a broker on each of its nodes (-n as well, over the
// allocation's SLURM_NTASKS), which bootstrap by Slurm's PMI-2 into one
// instance, and the run inside it maps the job on the
// allocation's hosts and slots (-H). A single Ctrl-C reaches srun's tasks
// (--quit-on-interrupt); srun's exit code is the highest of its tasks',
// rank 0's being the job's.
int run_in_allocation(const std::string& hosts, int argc, char** argv) {
    const auto found = gantry_executable();
    if (!found)
        return runtime_failure(found.error());
    const char* nnodes = std::getenv("SLURM_NNODES");
    std::vector<std::string> args = {"srun",
                                     "--mpi=pmi2",
                                     "--whole",
                                     "--quit-on-interrupt",
                                     "--kill-on-bad-exit=0",
                                     "-N",
                                     nnodes ? nnodes : "1",
                                     "-n",
                                     nnodes ? nnodes : "1",
                                     "--ntasks-per-node=1",
                                     *found,
                                     "start",
                                     "--",
                                     *found,
                                     argv[0],
                                     "-H",
                                     hosts};
    for (int i = 1; i < argc; ++i)
        args.emplace_back(argv[i]);
    std::vector<char*> exec_argv = argv_of(args);
    std::cout.flush();
    ::setenv(kAcrossHostsVariable, "1", 1);
    ::execvp("srun", exec_argv.data());
    return runtime_failure(
        Error(std::string(kDomain), std::string("cannot run srun: ") + std::strerror(errno)));
}

}  // namespace

int run_main(int argc, char** argv) {
    const bool across_hosts = std::getenv(kAcrossHostsVariable) != nullptr;
    ::unsetenv(kAcrossHostsVariable);
    auto run = parse_run_command(kDomain, argc, argv);
    if (!run)
        return fail(run.error());
    if (run->help) {
        std::cout << kUsage << '\n';
        return kExitOk;
    }
    print_notes(*run);
    if (const auto uri = instance_of(*run))
        return run_in_instance(*run, *uri, across_hosts);
    if (!run->dry_run) {
        auto hosts = hosts_elsewhere(*run);
        if (!hosts)
            return fail(hosts.error());
        if (!hosts->empty())
            return run_across_hosts(*run, *hosts, argc, argv);
        if (!shell::names_hosts(run->jobspec)) {
            auto allocation = slurm_allocation();
            if (!allocation)
                return fail(allocation.error());
            if (*allocation)
                return run_in_allocation(**allocation, argc, argv);
        }
    }
    return run_here(*run);
}

int run_here(const RunCommand& command, const std::function<void(shell::Job&)>& adjust) {
    const RunCommand* run = &command;
    if (auto status = check_no_scheduling(*run); !status)
        return fail(status.error());
    const Jobspec& spec = run->jobspec;
    auto topology = shell::jobspec_topology(spec);
    if (!topology)
        return fail(topology.error());
    MapInputs inputs = shell::read_map_inputs(spec);
    inputs.topology = std::move(*topology);
    auto map = map_jobspec(spec, inputs);
    if (!map)
        return fail(map.error());

    // Launch options are checked before anything is shown.
    std::optional<shell::LaunchSettings> settings;
    if (!run->dry_run) {
        if (auto status = check_local(spec, *map, inputs.hostname); !status)
            return fail(status.error());
        auto checked = shell::launch_settings(spec, *map, std::to_string(getpid()));
        if (!checked)
            return fail(checked.error());
        settings = std::move(*checked);
    }
    if (const auto failed = show(spec, *map, run->dry_run))
        return *failed;
    if (run->dry_run)
        return kExitOk;
    return launch(spec, *map, *settings, adjust);
}

}  // namespace gantry::cli
