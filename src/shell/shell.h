// The shell: runs one node's share of a job. It spawns each task bound to
// its cpus with its environment and stdio, serves the job PMI-1 and PMIx,
// forwards signals, enforces the time limit, and turns the tasks' exit
// statuses into the job's exit code. One event loop (Asio); the PMIx
// server library's thread only hands its events to it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/idset.h"
#include "pmi/server.h"
#include "pmix/server.h"

namespace gantry::shell {

struct Task {
    std::uint32_t rank = 0;  // in the job
    std::uint32_t app = 0;
    std::vector<std::string> argv;  // argv[0] is looked up in PATH of `env`
    std::vector<std::string> env;   // complete, "NAME=VALUE"; the shell adds PMI_FD
    std::string cwd;                // empty: the shell's own
    IdSet cpus_os;                  // sched_setaffinity before exec; empty: unbound
};

// Where stdin comes from and which ranks receive it (each the same bytes).
struct Input {
    enum class Source { kStdin, kFile, kNone };
    Source source = Source::kStdin;
    std::string file;        // Source::kFile
    IdSet ranks = IdSet{0};  // receivers; every other task reads /dev/null
};

struct Output {
    bool label = false;       // --label-io: "RANK: " before every line
    bool unbuffered = false;  // --unbuffered: pass bytes on as they come
    // --output / --error: file name templates with {{id}}, {{taskid}},
    // {{node}}; empty: the shell's stdout / stderr. --output alone takes
    // stderr too, as flux does.
    std::string output_template;
    std::string error_template;
    // --timestamp-output: before every line (and its label), the local time
    // the shell received it and its stream, as Open MPI writes them:
    // "Wed Nov 25 21:52:50 2026<stdout>:".
    bool timestamp = false;
    // --merge-stderr-to-stdout: a task's fd 2 is its fd 1, so that its lines
    // keep the order it wrote them in wherever its stdout goes.
    bool merge_stderr = false;
    // --output-filename: the directory under which each task's output also
    // goes to rank.N/stdout and rank.N/stderr (N zero-padded to as many
    // digits as the job's size has), as Open MPI 4.1 writes it; empty: none.
    std::string rank_dir;
    std::uint32_t rank_digits = 1;
    bool copy_rank_output = true;  // false (`:nocopy`): the files only
};

struct Limits {
    std::chrono::milliseconds time_limit{0};  // 0: none
    std::chrono::milliseconds kill_timeout{5000};
    bool kill_on_bad_exit = false;
};

// The owner of a job's PMI barriers. Each node's shell serves PMI to its own
// tasks only (pmi::Server), so when they have all entered a barrier the
// shell hands the puts they made to the owner, which gathers those of every
// node of the job and gives them back merged; the shell then answers its
// tasks' barrier_in. A PMIx fence goes the same way, its node's data as one
// put of a key of its own ("pmix.RANK", RANK the node's first). An
// instance's broker, the owner of a job that spans nodes, merges across
// them.
class PmiOwner {
public:
    // Takes the puts of every node of the job, merged.
    using Complete = std::function<void(const pmi::KeyValues& merged_puts)>;

    virtual ~PmiOwner() = default;

    // Every task of this node has entered the barrier; `puts` are the ones
    // they made since the previous barrier. The owner calls `complete` once,
    // at once or later from the shell's event loop, never after run()
    // returns; the tasks wait in the barrier until then. A task that ends
    // while the others wait in a barrier keeps it from ever reaching the
    // owner (docs/pmi.md).
    virtual void barrier(pmi::KeyValues puts, Complete complete) = 0;
};

// The owner of a job whose every task is on this node: it completes each
// barrier at once with the node's own puts.
class LocalPmiOwner final : public PmiOwner {
public:
    void barrier(pmi::KeyValues puts, Complete complete) override { complete(puts); }
};

struct Job {
    std::string id;                         // GANTRY_JOB_ID, {{id}}
    std::string hostname;                   // {{node}}, and in messages "task 3 (node0)"
    std::vector<Task> tasks;                // this node's, in local-rank order
    std::vector<std::string> app_commands;  // per app, for messages: "./b"
    // The job's PMI data, job-wide. The shell serves its own tasks' ranks
    // (it sets pmi.local_ranks to them), and what a caller leaves out of the
    // rest it makes up from them.
    pmi::JobInfo pmi;
    // Who completes the PMI barriers; null: a LocalPmiOwner.
    std::shared_ptr<PmiOwner> pmi_owner;
    // Which interfaces the tasks get (--mpi): PMI-1 on PMI_FD, and PMIx
    // from the shell's PMIx server always, never, or (the default) when an
    // app's program may be a PMIx client (shell/pmix_clients.h, docs/pmi.md).
    enum class Pmix { kWhenClient, kAlways, kNever };
    bool serve_pmi1 = true;
    Pmix serve_pmix = Pmix::kWhenClient;
    // Where the job's tasks run, for PMIx: the job's nodes by node id, each
    // rank's node id, and this node's. Empty: every task is on this node.
    std::vector<std::string> node_names;
    std::vector<std::uint32_t> node_of_rank;
    std::uint32_t node_id = 0;
    // Each node id's node in the job's map (under an instance, its position
    // among R's ranks): where a direct modex record sends a get for a task
    // of another node. Empty: the node ids are the map's.
    std::vector<std::uint32_t> map_node_of_node;
    Input input;
    Output output;
    Limits limits;
    std::vector<std::pair<int, rlim_t>> soft_limits;  // --rlimit: RLIMIT_*, value
    std::optional<mode_t> umask;                      // --umask
    // Set when an instance's broker runs the job: the shell's end of a
    // connected AF_UNIX stream socket whose other end the broker holds. The
    // shell then sends the tasks' output, its messages and the tasks' ends
    // there as records (shell/records.h) and takes signals and the order to
    // terminate from it; see run(). The caller keeps the descriptor: the
    // shell neither closes it nor changes its flags (it sends and receives
    // with MSG_DONTWAIT), and no task inherits it.
    std::optional<int> supervisor_fd;
    // With a supervisor, for a job that spans nodes: each PMI barrier's
    // puts go to the supervisor (a fence record), which completes the
    // barrier with every node's puts (a fence control message); pmi_owner
    // is then not used.
    bool pmi_through_supervisor = false;
    // Whether the job gets a cgroup (v2) of its own when this machine lets
    // the shell make one, so that its end kills every process it started;
    // false: the tasks' process groups only (for tests of that path).
    bool job_cgroup = true;
    // Task 0 fronts the job, as rank 0 fronts the instance that the brokers
    // of `gantry start --test-size` make: the job's exit code is task 0's;
    // no failing task is reported ("gantry: task 1 (node1) exited ...": a
    // broker that dies is the instance's news, not the launcher's); and the
    // signals the launcher forwards go to task 0 alone while it runs, which
    // passes them to its initial program and ends the others in order once
    // that program ends (after task 0, to every task left).
    bool fronted_by_task_zero = false;
};

// Runs the job's tasks to their end and returns the job's exit code: 0 when
// every task exited 0, else the first failure's (128+N for signal N), the
// exit code of a PMI abort, 127/126 when a command cannot start. Prints one
// summary line on stderr when the job failed. docs/shell.md says what each
// task gets.
//
// Writes the tasks' output to the calling process's fd 1 and 2 (or the
// --output/--error files) and reads its fd 0 when a task receives stdin,
// never changing the flags of those descriptors. While it runs, the process
// ignores SIGPIPE, catches SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 (all
// forwarded to the tasks) and SIGCHLD, and has its soft RLIMIT_NOFILE raised
// to the hard limit; on return SIGPIPE and the limit are as they were and the
// caught signals are at their default action. Only the job's own children
// are reaped, and the watcher, a child of its own (shell/watcher.h).
//
// Nothing outlives the job: each task joins the job's cgroup when cgroup v2
// allows one (shell/cgroup.h), and dies with the calling thread's process
// (PR_SET_PDEATHSIG). When every task is reaped, what they left is killed
// (the cgroup, else each task's process group); when the process dies
// first, the watcher does it.
//
// Unsupervised, a write to fd 1 or 2 that fails with EPIPE (the reader is
// gone) ends the job as a pipeline's writer: SIGPIPE to the tasks, SIGKILL
// after the kill timeout, exit code 141 unless a task failed first.
//
// Supervised (job.supervisor_fd set), the same job runs, with these
// differences (docs/shell.md, "Under an instance"):
// - the tasks' stdout and stderr go to the supervisor as out and err
//   records, in whole lines as above (or as they come, unbuffered) but
//   never labelled; an --output/--error file is still written as above.
//   The shell's fd 1 and 2 are not used at all;
// - every message, those before anything starts included, is a msg record;
// - once every task has started, a started record; when a task is reaped,
//   an exit record with its wait status (the output it left in its pipes
//   is sent before it, unless the socket's queue is full);
// - `signal N` sends N to every running task's process group, `terminate`
//   does what the time limit does (SIGTERM, SIGKILL after the kill
//   timeout); end of file or an error on the socket, or a malformed
//   message, kills every task (SIGKILL): tasks never outlive their broker;
// - the socket's queue is bounded like the shell's stdout (the tasks' pipes
//   stop being read while it is full), and everything queued is sent
//   before run() returns.
int run(const Job& job);

}  // namespace gantry::shell
