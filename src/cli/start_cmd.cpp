// `gantry start`: run an instance on this machine around an initial program,
// or detached until `gantry shutdown`. Reference: docs/commands/start.md.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/bootstrap.h"
#include "broker/instance.h"
#include "broker/node.h"
#include "broker/prepared_program.h"
#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/run_options.h"
#include "formats/hostlist.h"
#include "formats/rset.h"
#include "mapper/nodes.h"
#include "overlay/address.h"
#include "overlay/client.h"
#include "overlay/config.h"
#include "overlay/launch_agent.h"
#include "overlay/tree.h"
#include "shell/shell.h"
#include "topo/topology.h"
#include "util/duration.h"
#include "util/file.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kDomain = "start";

constexpr std::string_view kExamples = R"(Examples:
  $ gantry start sh -c 'gantry instance info | head -1'
  uri        unix:///tmp/gantry-.../socket
  $ gantry start sh -c 'exit 3'; echo $?
  3
  $ gantry start --test-size=2 gantry run -N 2 -n 2 --label-io sh -c 'echo node $GANTRY_NODE_ID' | sort
  0: node 0
  1: node 1
  $ gantry start
  (an interactive shell inside the instance; the instance ends with it)
  $ uri=$(gantry start --daemon --state-dir ~/.gantry/main)
  $ gantry instance info --uri "$uri" | head -1
  uri        unix:///.../.gantry/main/socket
  $ gantry shutdown --uri "$uri"

With -H HOSTS (or --hostfile FILE), rank 0 runs here and a broker starts on
each other host through the launch agent (ssh HOST gantry start --join ...),
joined over the agent's stdin and stdout; each ends when the instance does,
or when its agent's input closes. `gantry run -H` starts its instance so.

The initial program runs with GANTRY_URI set to the instance's URI, in its
own process group; SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to gantry
are forwarded to that group. Without CMD, on a terminal, the initial program is
$SHELL (else /bin/sh).

Exit status: the initial program's (128+N when signal N killed it); with
--daemon, 0 once the instance accepts connections. 1 when the instance
cannot start (its state directory in use, no socket); 2 on bad options or a
bad --resources file (or one naming ranks other than 0, without
--simulate-ranks).)";

struct Options {
    std::optional<std::string> state_dir;
    std::optional<std::string> resources;
    bool simulate_ranks = false;
    bool daemon = false;
    std::optional<std::string> config;
    unsigned test_size = 0;
    std::optional<std::string> test_hosts;
    std::optional<std::string> topology;  // --topology: each test broker's node
    unsigned fanout = overlay::kDefaultFanout;
    std::string lost_after = "5s";
    std::optional<std::string> overlay_address;
    std::optional<std::string> hosts;
    std::optional<std::string> hostfile;
    std::optional<std::string> launch_agent;
    std::optional<std::string> prefix;
    std::string launch_timeout = "30s";
    std::optional<std::string> join;
    std::optional<std::string> node_name;
};

Error error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

// The part of a one-node job's R (cores counted from 0) that is this
// task's: when the job runs several tasks, each bound to its own cores,
// this process's topology counts only its cores, 0 to `ncores` - 1, and
// its instance owns those, not its siblings'.
ResourceSet own_part(const ResourceSet& job, unsigned ncores) {
    if (job.targets().size() != 1 || ncores == 0)
        return job;
    const auto& [rank, target] = *job.targets().begin();
    if (target.cores.count() <= ncores)
        return job;
    Target own = target;
    own.cores &= IdSet::range(0, ncores - 1);
    ResourceSet part;
    (void)part.insert(rank, own);
    return part;
}

// Inside a job of an instance (GANTRY_URI and GANTRY_JOB_ID set, as for a
// job's tasks): that job's R, its ranks and cores counted from 0 as the
// child instance sees them (this process is confined to those cores, and
// its topology counts only them), or this task's part of it. Elsewhere:
// none.
Result<std::optional<ResourceSet>> enclosing_job_resources(const Topology& machine) {
    const char* uri = std::getenv(std::string(overlay::kUriVariable).c_str());
    const char* job = std::getenv("GANTRY_JOB_ID");
    if (!uri || !*uri || !job || !*job)
        return std::optional<ResourceSet>{};
    const auto id = parse_job_id(kDomain, job);
    if (!id)
        return id.error();
    auto client = overlay::Client::connect(uri);
    if (!client)
        return client.error();
    auto info = client->call("job.info", {{"id", *id}});
    if (!info)
        return info.error();
    auto R = ResourceSet::from_json(info->value("R", Json()));
    if (!R)
        return error("the R of job " + std::string(job) + ": " + R.error().str());
    return std::optional<ResourceSet>(own_part(R->remap(), machine.ncores()));
}

// What an instance runs jobs on, and this machine's topology when it was
// found for that (the instance then does not look again).
struct Inventory {
    ResourceSet resources;
    std::optional<Topology> machine;
};

// The inventory: the R file given, checked; inside a job, the job's R; or
// this machine.
Result<Inventory> inventory(const std::optional<std::string>& path, bool simulate_ranks) {
    if (!path) {
        auto machine = Topology::local();
        if (!machine)
            return machine.error();
        auto enclosing = enclosing_job_resources(*machine);
        if (!enclosing)
            return enclosing.error();
        if (*enclosing)
            return Inventory{std::move(**enclosing), std::move(*machine)};
        auto local = broker::local_inventory(*machine);
        if (!local)
            return local.error();
        return Inventory{std::move(*local), std::move(*machine)};
    }
    std::ifstream in(*path, std::ios::binary);
    if (!in)
        return error("--resources: cannot read " + *path + ": " + std::strerror(errno));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto set = ResourceSet::parse(text);
    if (!set)
        return error("--resources " + *path + ": " + set.error().str());
    if (set->empty())
        return error("--resources " + *path + ": R has no execution target");
    if (auto served = broker::check_ranks_have_brokers(*set); !served && !simulate_ranks)
        return error("--resources " + *path + ": " + served.error().message() +
                     "; --simulate-ranks accepts them for scheduling only");
    return Inventory{std::move(*set), std::nullopt};
}

// The host names of the brokers posing as nodes: --test-hosts, which under
// --test-size=N must name N (default node0 to nodeN-1); none for a broker
// on a host of its own.
Result<std::optional<Hostlist>> test_hosts(const Options& options) {
    if (!options.test_hosts) {
        if (options.test_size == 0)
            return std::optional<Hostlist>{};
        return std::optional<Hostlist>(
            *Hostlist::parse("node[0-" + std::to_string(options.test_size - 1) + "]"));
    }
    auto hosts = Hostlist::parse(*options.test_hosts);
    if (!hosts)
        return error("--test-hosts: " + hosts.error().str());
    if (options.test_size > 0 && hosts->count() != options.test_size)
        return error("--test-hosts names " + std::to_string(hosts->count()) + " hosts, " +
                     "--test-size is " + std::to_string(options.test_size));
    return std::optional<Hostlist>(std::move(*hosts));
}

// `--test-size=N`: N brokers on this host, started as the tasks of a job of
// gantry's own launcher, whose PMI they bootstrap by (as under any other
// launcher); each takes its host name from --test-hosts. The launcher's
// containment ends every broker, shell and task with it.
int start_test_brokers(const Options& options, const std::vector<std::string>& command) {
    auto hosts = test_hosts(options);
    if (!hosts)
        return fail(hosts.error());
    const auto self = gantry_executable();
    if (!self)
        return fail(self.error());
    std::vector<std::string> args = {"run",
                                     "-n",
                                     std::to_string(options.test_size),
                                     "--bind-to",
                                     "none",
                                     "--oversubscribe",
                                     "--",
                                     *self,
                                     "start",
                                     "--test-hosts",
                                     (*hosts)->encode(),
                                     "--fanout",
                                     std::to_string(options.fanout),
                                     "--lost-after",
                                     options.lost_after};
    if (options.state_dir)
        args.insert(args.end(), {"--state-dir", *options.state_dir});
    if (options.resources)
        args.insert(args.end(), {"--resources", *options.resources});
    if (options.topology) {
        // Checked here, once; the brokers, started elsewhere in the tree of
        // directories, get a file by its absolute path.
        if (auto topology = Topology::from_file_or_synthetic(*options.topology); !topology)
            return fail(error("--topology: " + topology.error().str()));
        const bool file = std::filesystem::exists(*options.topology);
        args.insert(args.end(),
                    {"--topology", file ? std::filesystem::absolute(*options.topology).string()
                                        : *options.topology});
    }
    if (options.daemon)
        args.push_back("--daemon");
    args.insert(args.end(), command.begin(), command.end());
    std::vector<char*> argv = argv_of(args);
    // The launcher runs here, and its tasks are no job of an enclosing
    // instance.
    ::unsetenv(std::string(overlay::kUriVariable).c_str());
    ::unsetenv("GANTRY_JOB_ID");
    auto run = parse_run_command("run", static_cast<int>(args.size()), argv.data());
    if (!run)
        return fail(run.error());
    return run_here(*run, [](shell::Job& job) { job.fronted_by_task_zero = true; });
}

// This broker's node: this machine, or what --topology says.
Result<Topology> node_topology(const Options& options) {
    return options.topology ? Topology::from_file_or_synthetic(*options.topology)
                            : Topology::local();
}

// This broker's host name: its own, --node-name's, or under --test-hosts the
// one of its rank.
Result<std::string> broker_hostname(const Options& options, overlay::Rank rank) {
    if (options.node_name)
        return *options.node_name;
    auto hosts = test_hosts(options);
    if (!hosts)
        return hosts.error();
    if (!*hosts)
        return local_hostname();
    auto name = (*hosts)->nth(rank);
    if (!name)
        return error("--test-hosts names " + std::to_string((*hosts)->count()) +
                     " hosts, this broker is rank " + std::to_string(rank));
    return *name;
}

// SSH_CONNECTION's words ("CLIENT CLIENT_PORT SERVER SERVER_PORT") when ssh
// started this process: the launcher's address and this host's, as the
// connection between them has them.
std::vector<std::string> ssh_connection() {
    const char* text = std::getenv("SSH_CONNECTION");
    if (!text)
        return {};
    auto words = overlay::parse_launch_agent(text);  // words on blanks
    if (!words || words->size() != 4)
        return {};
    return *words;
}

// `--join RANK/SIZE`: this broker's place among those `gantry start -H`
// launched. Its stdin and stdout are the launcher's stream; the broker's own
// stdin becomes /dev/null and its stdout its stderr, so that nothing it or
// its job shells write goes into the stream.
Result<broker::Bootstrap> joined_bootstrap(const Options& options) {
    const std::string& text = *options.join;
    const auto slash = text.find('/');
    overlay::Rank rank = 0, size = 0;
    const auto number = [](std::string_view digits, overlay::Rank& into) {
        const auto end = digits.data() + digits.size();
        return !digits.empty() && std::from_chars(digits.data(), end, into).ptr == end;
    };
    if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), rank) ||
        !number(std::string_view(text).substr(slash + 1), size) || rank == 0 || rank >= size)
        return error("--join: expected RANK/SIZE with 0 < RANK < SIZE, got \"" + text + "\"");
    const int in = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || out < 0 || null < 0)
        return error(std::string("--join: ") + std::strerror(errno));
    ::dup2(null, STDIN_FILENO);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    ::close(null);
    const auto connection = ssh_connection();
    return broker::Bootstrap::from_stream(in, out, rank, size, options.fanout,
                                          connection.empty() ? "" : connection[0]);
}

// The bootstrap of a broker of many: --join's, --config's, or the
// launcher's PMI; none for an instance of one broker.
Result<std::optional<broker::Bootstrap>> configured_bootstrap(const Options& options) {
    if (options.join) {
        auto joined = joined_bootstrap(options);
        if (!joined)
            return joined.error();
        return std::optional<broker::Bootstrap>(std::move(*joined));
    }
    if (!options.config)
        return broker::Bootstrap::from_pmi(options.fanout);
    auto config = overlay::read_config(*options.config);
    if (!config)
        return config.error();
    auto bootstrap = broker::Bootstrap::from_config(*config, local_hostname());
    if (!bootstrap)
        return error("--config " + *options.config + ": " + bootstrap.error().message());
    return std::optional<broker::Bootstrap>(std::move(*bootstrap));
}

// The hosts -H or --hostfile name, each once in order, this machine's other
// names (localhost, its addresses) as its host name.
Result<std::vector<std::string>> named_hosts(const Options& options) {
    if (options.hosts && options.hostfile)
        return error("give -H or --hostfile, not both");
    Result<std::vector<HostSpec>> parsed = std::vector<HostSpec>{};
    if (options.hosts) {
        parsed = parse_hosts(*options.hosts);
    } else {
        auto text = read_named_file(std::string(kDomain), "hostfile", *options.hostfile);
        if (!text)
            return text.error();
        parsed = parse_hostfile(*text, *options.hostfile);
    }
    if (!parsed)
        return parsed.error();
    std::vector<std::string> names;
    for (const HostSpec& host : with_names_as(std::move(*parsed), local_names(), local_hostname()))
        if (std::find(names.begin(), names.end(), host.name) == names.end())
            names.push_back(host.name);
    return names;
}

// The launch agent's words: --launch-agent, else $GANTRY_LAUNCH_AGENT, else ssh.
Result<std::vector<std::string>> launch_agent(const Options& options) {
    if (options.launch_agent)
        return overlay::parse_launch_agent(*options.launch_agent);
    const char* given = std::getenv(std::string(overlay::kLaunchAgentVariable).c_str());
    if (given && *given)
        return overlay::parse_launch_agent(given);
    return std::vector<std::string>{"ssh"};
}

// What `gantry start -H` runs on each other host: a broker that joins
// through its agent's stream, named as the user named its host.
std::vector<std::string> joining_broker(const Options& options, const std::string& gantry,
                                        overlay::Rank rank, overlay::Rank size,
                                        const std::string& host,
                                        const std::optional<std::string>& rank_zero) {
    std::vector<std::string> argv = {
        gantry,         "start",
        "--join",       std::to_string(rank) + "/" + std::to_string(size),
        "--node-name",  host,
        "--fanout",     std::to_string(options.fanout),
        "--lost-after", options.lost_after};
    // Each publishes the address it reaches rank 0 from; without one (rank
    // 0 on every interface), the one its ssh connection came to.
    if (rank_zero)
        argv.insert(argv.end(), {"--overlay-address", "to:" + *rank_zero});
    return argv;
}

// What `gantry start -H` is told, checked before anything starts: bad
// hosts, agent, timeout or address are bad options (exit 2).
struct HostLaunch {
    std::vector<std::string> hosts;  // the other hosts, in order
    bool here_named = false;         // this machine is among them: rank 0 runs jobs
    std::vector<std::string> agent;
    std::chrono::milliseconds timeout{0};
    std::optional<std::string> address;  // where the other hosts reach rank 0
};

Result<HostLaunch> host_launch(const Options& options) {
    auto names = named_hosts(options);
    if (!names)
        return names.error();
    HostLaunch launch;
    const std::string here = local_hostname();
    launch.here_named = std::find(names->begin(), names->end(), here) != names->end();
    std::erase(*names, here);
    launch.hosts = std::move(*names);
    auto agent = launch_agent(options);
    if (!agent)
        return agent.error();
    launch.agent = std::move(*agent);
    const auto timeout = parse_duration(kDomain, options.launch_timeout);
    if (!timeout)
        return error("--launch-timeout: " + timeout.error().str());
    launch.timeout = *timeout;
    if (options.overlay_address) {
        auto chosen = overlay::local_address(*options.overlay_address);
        if (!chosen)
            return error("--overlay-address: " + chosen.error().message());
        launch.address = *chosen;
    }
    return launch;
}

// `gantry start -H HOSTS`: rank 0 here, a broker on each other host through
// the launch agent. Rank 0's node runs jobs only when the hosts name it.
Result<broker::InstanceOptions> launched_instance(const Options& options, const HostLaunch& launch,
                                                  std::vector<std::string> command,
                                                  broker::MembershipOptions membership,
                                                  std::shared_ptr<overlay::LaunchedHosts>& hosts,
                                                  std::optional<broker::PreparedProgram>& initial) {
    const std::vector<std::string>& names = launch.hosts;
    if (!names.empty()) {
        auto gantry = gantry_executable();
        if (!gantry)
            return gantry.error();
        const auto size = static_cast<overlay::Rank>(names.size() + 1);
        std::vector<overlay::LaunchedHosts::Launch> launches;
        for (overlay::Rank rank = 1; rank < size; ++rank)
            launches.push_back(
                {names[rank - 1],
                 joining_broker(options, options.prefix ? *options.prefix + "/bin/gantry" : *gantry,
                                rank, size, names[rank - 1], launch.address)});
        // The agents first: what this host does next overlaps their
        // connections.
        auto launched = overlay::LaunchedHosts::start(launch.agent, std::move(launches));
        if (!launched)
            return launched.error();
        hosts = std::move(*launched);
    }
    auto machine = Topology::local();
    if (!machine)
        return machine.error();
    auto resources = broker::local_inventory(*machine);
    if (!resources)
        return resources.error();
    broker::InstanceOptions instance{
        options.state_dir, std::move(*resources), std::move(command), {}};
    instance.machine_topology = std::move(*machine);
    instance.prepared_program = std::move(initial);
    if (!hosts)
        return instance;  // this host alone
    // Unless told, on every interface: each host is told the address its
    // ssh connection came to (bootstrap.h), which needs no name resolved
    // here.
    membership.bind_host = launch.address.value_or("*");
    instance.bootstrap = broker::Bootstrap::from_launched(hosts, options.fanout, launch.timeout);
    instance.rank_zero_runs_jobs = launch.here_named;
    instance.membership = membership;
    return instance;
}

// Runs the instance `gantry start -H` makes, then ends its tie to the other
// hosts: their brokers have gone with the instance by then, or go now.
int start_on_hosts(const Options& options, std::vector<std::string> command,
                   const broker::MembershipOptions& membership,
                   std::optional<broker::PreparedProgram>& initial) {
    auto launch = host_launch(options);
    if (!launch)
        return fail(launch.error());
    std::shared_ptr<overlay::LaunchedHosts> hosts;
    auto instance =
        launched_instance(options, *launch, std::move(command), membership, hosts, initial);
    if (!instance)
        return runtime_failure(instance.error());
    if (hosts)
        instance->loop_ended = [&hosts] { hosts->close_lifelines(); };
    const auto exit_code = broker::run_instance(std::move(*instance));
    if (hosts)
        hosts->finish(std::chrono::seconds(2));
    if (!exit_code)
        return runtime_failure(exit_code.error());
    return *exit_code;
}

// `gantry start`; `initial`, when given, is the -H instance's initial
// program (dropped, and so ended, on any other path).
int start(int argc, char** argv, std::optional<broker::PreparedProgram> initial) {
    CLI::App app(
        "Start an instance on this machine: a broker with its API socket, running CMD "
        "as its initial program, or detached with --daemon.",
        "start");
    app.footer(std::string(kExamples));
    // Everything from CMD on is CMD's, options included.
    app.positionals_at_end();
    Options options;
    std::vector<std::string> command;
    app.add_option("--state-dir", options.state_dir,
                   "The instance's state directory, created (mode 0700) if missing and kept; "
                   "default: a private temporary one, removed at the end")
        ->type_name("DIR");
    app.add_option("--resources", options.resources,
                   "The instance's resources as an RFC 20 R document (default: this machine's "
                   "cores and GPUs)")
        ->type_name("R.json");
    app.add_flag("--simulate-ranks", options.simulate_ranks,
                 "Accept a --resources R with ranks other than 0: the scheduler allocates "
                 "them, and a job given one fails at once with an exec exception naming it "
                 "(only rank 0 has a broker to run tasks)");
    app.add_option("CMD", command,
                   "The initial program and its arguments (default on a terminal: $SHELL)")
        ->type_name("");
    app.add_option("--config", options.config,
                   "Be the broker of this host in the instance FILE describes: its hosts (rank "
                   "= place), their addresses and port, the instance's certificate")
        ->type_name("FILE");
    app.add_option("--test-size", options.test_size,
                   "Run N brokers on this host as one instance, each posing as a node with its "
                   "own host name (for tests)")
        ->type_name("N")
        ->check(CLI::Range(1u, 4096u));
    app.add_option("--test-hosts", options.test_hosts,
                   "The host names of the --test-size brokers, in rank order (default: "
                   "node[0-N-1])")
        ->type_name("HOSTLIST");
    app.add_option("--topology", options.topology,
                   "With --test-size: give every node this topology, an lstopo --of xml file or a "
                   "synthetic description such as \"package:2 core:8 pu:2\" (simulated: tasks "
                   "run unbound)")
        ->type_name("X");
    app.add_option("--fanout", options.fanout,
                   "Children of each broker in the overlay's tree (default: " +
                       std::to_string(overlay::kDefaultFanout) + ")")
        ->type_name("K")
        ->check(CLI::Range(1u, 1024u));
    app.add_option("--lost-after", options.lost_after,
                   "A broker silent this long is lost, with its node (default: 5s)")
        ->type_name("DURATION");
    app.add_option("--overlay-address", options.overlay_address,
                   "Under a parallel launcher: the address, or the network interface, where "
                   "this broker's children connect (default: the address of the default "
                   "route's interface, else of the first interface up other than loopback); "
                   "with -H, where the other hosts reach this one (default: where each one's "
                   "ssh connection came from, else this machine's address on the route to it)")
        ->type_name("ADDRESS|INTERFACE");
    app.add_option("-H,--host", options.hosts,
                   "Start a broker on each of these hosts (host[:slots],...: PRRTE's -H) through "
                   "the launch agent; rank 0 stays here, and runs jobs only if named")
        ->type_name("HOSTS");
    app.add_option("--hostfile", options.hostfile, "The same, the hosts of a PRRTE hostfile")
        ->type_name("FILE");
    app.add_option("--launch-agent", options.launch_agent,
                   "How -H reaches a host: a command taking the host and a command line "
                   "(default: $GANTRY_LAUNCH_AGENT, else ssh)")
        ->type_name("CMD");
    app.add_option("--prefix", options.prefix,
                   "gantry is DIR/bin/gantry on the other hosts (default: this gantry's path)")
        ->type_name("DIR");
    app.add_option("--launch-timeout", options.launch_timeout,
                   "How long each host has to start its broker (default: 30s)")
        ->type_name("DURATION");
    app.add_option("--join", options.join,
                   "Be broker RANK of SIZE that `gantry start -H` started here: the bootstrap "
                   "comes on stdin and goes out on stdout")
        ->type_name("RANK/SIZE");
    app.add_option("--node-name", options.node_name,
                   "This node's name in the instance's R (default: the host name)")
        ->type_name("NAME");
    app.add_flag("--daemon", options.daemon,
                 "Run without an initial program, detached, until `gantry shutdown`; print the "
                 "URI once the instance accepts connections");
    if (const auto code = parse_options(app, argc, argv))
        return *code;

    if (options.daemon && !command.empty())
        return fail(kDomain, "--daemon runs no initial program; CMD is not allowed with it");
    // Rank 0's initial program: CMD, else on a terminal an interactive shell.
    const auto need_command = [&]() -> std::optional<int> {
        if (options.daemon || !command.empty())
            return std::nullopt;
        if (!::isatty(STDIN_FILENO))
            return fail(kDomain,
                        "no CMD given and stdin is not a terminal (give CMD, or use --daemon)");
        const char* shell = std::getenv("SHELL");
        command.push_back(shell && *shell ? shell : "/bin/sh");
        return std::nullopt;
    };

    const auto lost_after = parse_duration(kDomain, options.lost_after);
    if (!lost_after)
        return fail(error("--lost-after: " + lost_after.error().str()));
    if (options.overlay_address && (options.config || options.test_size > 0))
        return fail(error(std::string("--overlay-address: ") +
                          (options.config ? "--config names each host's address"
                                          : "--test-size brokers talk over loopback")));
    if (options.topology && options.test_size == 0 && !options.test_hosts)
        return fail(error("--topology: only with --test-size (a real node has its own)"));
    if (options.test_size > 0) {
        if (const auto code = need_command())
            return *code;
        return start_test_brokers(options, command);
    }
    broker::MembershipOptions membership;
    membership.lost_after = *lost_after;
    membership.heartbeat = std::max(std::chrono::milliseconds(10), *lost_after / 5);
    if (options.hosts || options.hostfile) {
        if (options.config || options.join)
            return fail(error(std::string(options.config ? "--config" : "--join") +
                              " and -H/--hostfile are two ways to find the brokers; give one"));
        if (options.daemon)
            return fail(error("--daemon: the brokers -H starts end with their launcher"));
        if (const auto code = need_command())
            return *code;
        return start_on_hosts(options, std::move(command), membership, initial);
    }

    // Under a parallel launcher with more than one task, the tasks are the
    // brokers of one instance; with --config, the hosts it names are.
    auto bootstrap = configured_bootstrap(options);
    if (!bootstrap)
        return fail(bootstrap.error());
    std::optional<std::string> hostname;
    if (*bootstrap) {
        auto name = broker_hostname(options, (*bootstrap)->rank());
        if (!name)
            return fail(name.error());
        hostname = *name;
        // Brokers on one host (posing as nodes, or so placed by their
        // launcher) join over loopback; others publish an address their
        // children on other hosts can reach.
        if (!options.test_hosts && !options.config &&
            (options.overlay_address || !(*bootstrap)->all_on_one_host())) {
            // Started over ssh: the address the launcher reached this host at.
            const auto connection = options.join ? ssh_connection() : std::vector<std::string>{};
            auto address = overlay::local_address(
                options.overlay_address.value_or(connection.empty() ? "" : connection[2]));
            if (!address)
                return fail(error("--overlay-address: " + address.error().message()));
            membership.bind_host = *address;
        }
        if ((*bootstrap)->rank() > 0) {
            const auto xml_of = [&options]() -> Result<std::string> {
                auto found = node_topology(options);
                if (!found)
                    return found.error();
                return found->to_xml();
            };
            // This machine's is found while the broker bootstraps, which
            // waits on the others. A --topology file is read first, while
            // this process has one thread: its reader is tried in a forked
            // child (Topology::from_xml), which another thread's lock held
            // at the fork would hang.
            std::shared_future<Result<std::string>> topology;
            if (options.topology) {
                std::promise<Result<std::string>> read;
                read.set_value(xml_of());
                topology = read.get_future().share();
            } else {
                topology = std::async(std::launch::async, xml_of).share();
            }
            broker::NodeOptions node{
                *hostname, topology, options.topology.has_value(), {}, membership};
            const auto ended = broker::run_node(std::move(**bootstrap), std::move(node));
            if (!ended)
                return runtime_failure(ended.error());
            return *ended;
        }
        if (options.daemon && !options.config)
            return fail(error("--daemon: the brokers of a launcher's job end with it"));
    }
    if (const auto code = need_command())
        return *code;

    auto found = inventory(options.resources, options.simulate_ranks || *bootstrap);
    if (!found) {
        const int code = fail(found.error());
        return options.resources ? code : kExitRuntime;  // hwloc failing is no user error
    }
    ResourceSet& resources = found->resources;
    if (hostname && resources.nnodes() == 1) {
        // Rank 0 poses under its --test-hosts name.
        const auto& [rank, target] = *resources.targets().begin();
        Target named = target;
        named.hostname = *hostname;
        ResourceSet renamed;
        (void)renamed.insert(rank, named);
        resources = std::move(renamed);
    }
    broker::InstanceOptions instance{
        options.state_dir, std::move(resources), std::move(command), {}};
    instance.machine_topology = std::move(found->machine);
    if (*bootstrap) {
        instance.bootstrap = std::move(**bootstrap);
        instance.membership = membership;
        if (options.topology) {
            auto topology = node_topology(options);
            if (!topology)
                return fail(error("--topology: " + topology.error().str()));
            instance.topology_xml = topology->to_xml();
        }
    }

    if (options.daemon) {
        std::cout.flush();
        const auto uri = broker::start_daemon(std::move(instance));
        if (!uri) {
            fail(uri.error());
            return kExitRuntime;
        }
        std::cout << *uri << std::endl;
        return kExitOk;
    }
    const auto exit_code = broker::run_instance(std::move(instance));
    if (!exit_code) {
        fail(exit_code.error());
        return kExitRuntime;
    }
    return *exit_code;
}

}  // namespace

int start_main(int argc, char** argv) {
    return start(argc, argv, std::nullopt);
}

int start_main_with(int argc, char** argv, broker::PreparedProgram initial) {
    return start(argc, argv, std::move(initial));
}

}  // namespace gantry::cli
