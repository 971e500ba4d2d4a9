// An instance on this machine: its state directory, its broker and API
// socket, and its initial program (RFC 8), in one process with one event
// loop. The commands: `gantry start` runs one in the foreground around an
// initial program, `gantry start --daemon` detaches one that runs until
// `gantry shutdown`. docs/commands/start.md says what users see.
//
// State directory: given (created 0700 if missing, kept at the end) or a
// private temporary one (0700, removed at the end). It holds `lock`, locked
// with flock(2) while a broker uses the directory and holding its pid, and
// `socket`, the API's Unix socket, removed at the end. The instance's URI
// is unix://STATE_DIR/socket.
//
// Methods: instance.info, instance.shutdown {"force":bool}, and the job
// manager's job.* (src/broker/jobs.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include "broker/bootstrap.h"
#include "broker/broker.h"
#include "broker/child.h"
#include "broker/jobs.h"
#include "broker/membership.h"
#include "broker/prepared_program.h"
#include "broker/store.h"
#include "formats/rset.h"
#include "shell/containment.h"
#include "topo/rank_topologies.h"
#include "topo/topology.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

struct InstanceOptions {
    std::optional<std::string> state_dir;  // none: a private temporary directory
    ResourceSet inventory;                 // what the instance may run jobs on
    // argv of the initial program, looked up in PATH; empty: none, and the
    // instance runs until instance.shutdown, SIGTERM or SIGINT.
    std::vector<std::string> initial_program;
    // The gantry executable, which runs each job's shell (`gantry
    // job-shell`); empty: the running executable (/proc/self/exe).
    std::string shell_program;
    // When a launcher started several brokers: this one is rank 0, and the
    // others join it (bootstrap.h). Then `inventory` is rank 0's node (or,
    // given with --resources, every rank's), and the instance is ready,
    // and runs its initial program, once every rank has joined.
    std::optional<Bootstrap> bootstrap = std::nullopt;
    // With a bootstrap: whether rank 0's node runs jobs. `gantry start -H`
    // on a host it does not name starts an instance of those hosts only.
    bool rank_zero_runs_jobs = true;
    MembershipOptions membership = {};
    // How long the other ranks have to join.
    std::chrono::milliseconds join_timeout{30000};
    // With a bootstrap: rank 0's node topology (lstopo XML) when it is not
    // this machine's (gantry start --topology): simulated, its tasks unbound.
    std::optional<std::string> topology_xml = std::nullopt;
    // This machine's topology, when the caller found it already (for the
    // inventory): hwloc's discovery is not done twice. None: found when
    // the instance opens.
    std::optional<Topology> machine_topology = std::nullopt;
    // The initial program, forked already (prepared_program.h): started
    // where `initial_program` would be, which then only names it.
    std::optional<PreparedProgram> prepared_program = std::nullopt;
    // Called once the event loop has ended (the other brokers shut down),
    // before the instance is torn down: `gantry start -H` closes the
    // hosts' lifelines then, so that their agents end meanwhile.
    std::function<void()> loop_ended = nullptr;
};

// This machine as an inventory: rank 0 with its host name and the cores and
// GPUs of `machine`, its topology (as `gantry R encode --local`).
Result<ResourceSet> local_inventory(const Topology& machine);

// The topology of each rank of `inventory`: `machine`'s (this machine's)
// for all, since rank 0 is this machine and the other ranks
// (--simulate-ranks) are simulated on it; a synthetic one where R names
// more cores than it has.
Result<RankTopologies> local_topologies(const ResourceSet& inventory, const Topology& machine);
// Gives `rank` its node's topology, or, when `target` names more cores than
// the node has, a synthetic one of as many cores (one per entry of
// `synthetic`, shared by the ranks of one size): a simulated node, where
// jobs are mapped as on a real one and their tasks run unbound.
// A node `simulated` already (gantry start --topology) stays so.
Status assign_topology(RankTopologies& topologies, std::uint32_t rank, const Target& target,
                       const Topology& node, std::map<unsigned, Topology>& synthetic,
                       bool simulated = false);

class Instance {
public:
    // Creates or takes the state directory, locks it and listens on its
    // socket: from here on clients may connect. Fails when another broker
    // holds the directory.
    static Result<std::unique_ptr<Instance>> open(InstanceOptions options);
    // Removes the socket (and a temporary state directory), unlocks the
    // directory, then disconnects the clients.
    ~Instance();
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    // Starts the initial program, if any, and runs the event loop until the
    // instance ends. Returns the initial program's exit code (128+N when
    // signal N killed it), or 0 when it ran without one.
    Result<int> run();

    // Ends the instance (instance.shutdown). While the initial program runs
    // this is refused, unless `force`: then its process group gets SIGTERM
    // and the instance ends when it does.
    Status shutdown(bool force);

    // What instance.info answers.
    Json info() const;
    // The brokers' tree: each rank's parent, host and state ("up", "lost"
    // with why, "joining" until it has joined); docs/commands/overlay.md.
    Json overlay_status() const;

    const std::string& uri() const { return broker_.uri(); }
    const std::string& state_dir() const { return state_dir_; }
    const ResourceSet& inventory() const { return options_.inventory; }
    // For the services that register their methods before run().
    Broker& broker() { return broker_; }
    asio::io_context& loop() { return loop_; }

private:
    Instance(InstanceOptions options, std::string state_dir, bool temporary, int lock_fd);
    void register_methods();
    // Many brokers: the overlay, the other ranks' joins and losses.
    Status join_overlay();
    void start_join_timer();
    void register_overlay_methods();
    void rank_joined(const overlay::Message& request, Responder& responder);
    void ranks_lost(const IdSet& ranks, const std::string& why);
    // Every rank is in: the inventory is complete, jobs may run and the
    // initial program starts.
    void all_joined();
    Status open_jobs(const ResourceSet& inventory, const RankTopologies& topologies);
    void shut_down_brokers(std::function<void()> done);
    Status spawn_initial_program();
    Status start_prepared_program();
    // The initial program `pid` runs: its end ends the instance.
    Status watch_initial_program(pid_t pid);
    void initial_program_ended(int wait_status);
    void catch_signals();
    void end();

    asio::io_context loop_;  // first: everything below uses it
    InstanceOptions options_;
    std::string state_dir_;
    bool temporary_;
    int lock_fd_;
    Broker broker_;
    std::string shell_program_;
    std::unique_ptr<Membership> membership_;
    struct Joined {
        std::string hostname;
        std::string topology_xml;
        bool simulated = false;
    };
    std::map<overlay::Rank, Joined> joined_;         // the other ranks, as they joined
    IdSet up_ = IdSet{0};                            // the ranks whose brokers are up
    std::map<overlay::Rank, std::string> lost_why_;  // the ranks lost, why
    std::unique_ptr<asio::steady_timer> join_timer_;
    bool ready_ = false;  // every rank has joined
    // Opened by open() (on a thread of its own while other ranks join),
    // until open_jobs() hands it on.
    std::future<Result<Store>> store_;
    // Rank 0's own node, found while the other ranks join.
    std::optional<Result<Topology>> own_topology_;
    std::unique_ptr<JobManager> jobs_;
    asio::signal_set signals_;
    std::optional<ChildExit> initial_exit_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    pid_t initial_pid_ = -1;  // the initial program, while it runs
    // What the initial program starts ends with it, and with the broker
    // however the broker ends, as a job's tasks do.
    std::unique_ptr<shell::Containment> initial_containment_;
    bool foreground_ = false;  // the initial program was given the terminal
    bool terminated_ = false;  // shutdown --force sent it SIGTERM
    bool ending_ = false;
    int exit_code_ = 0;
};

// Runs an instance in this process until it ends: open(), then run().
Result<int> run_instance(InstanceOptions options);

// Starts an instance without an initial program in a detached process (a
// new session; stdin, stdout and stderr on /dev/null; working directory /)
// and returns its URI once it accepts connections, or why it did not start.
// Only the calling process returns.
Result<std::string> start_daemon(InstanceOptions options);

}  // namespace gantry::broker
