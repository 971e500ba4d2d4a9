// The exec service: the job manager asks it to run a job's tasks on an R
// and it answers with a small stream of events, as flux-core's job-exec
// answers its job manager:
//
//   started     once: the shells of every rank of R have started their tasks
//   released    per broker rank: that rank's shell has ended, its part of R
//               is free again
//   exception   the execution failed (a shell could not start, or broke);
//               `finished` still follows
//   finished    once, last: every shell has ended; the job's wait status
//               (the first failing shell's, else the last's)
//
// Beside the events, the tasks' output, the shells' own messages and each
// task's end flow back as they come, each naming the job and the broker rank
// of the shell that sent it. The job manager never sees a process: it holds
// an Execution, through which it signals the tasks, ends them and feeds
// their stdin.
//
// LocalExecService runs the shells of this broker's own rank as its child
// processes (src/broker/exec.h). The shells of other ranks will be started
// by their brokers, with the same events coming back over the overlay.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <asio/io_context.hpp>

#include "broker/store.h"
#include "formats/rset.h"
#include "topo/rank_topologies.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// Bytes a shell sent: a task's output, or the shell's own message.
struct ShellOutput {
    enum class Kind { kStdout, kStderr, kMessage };
    JobId job = 0;
    std::uint32_t shell_rank = 0;  // the broker rank of the shell that sent it
    Kind kind = Kind::kStdout;
    std::uint32_t task_rank = 0;  // the task's rank in the execution (not for kMessage)
    std::string bytes;
};

// A task of an execution has been reaped.
struct TaskEnd {
    JobId job = 0;
    std::uint32_t shell_rank = 0;
    std::uint32_t task_rank = 0;  // in the execution
    int wait_status = 0;          // as waitpid gave it
};

struct ExecEvents {
    std::function<void()> started;
    std::function<void(std::uint32_t rank)> released;
    // `type`: "exec" (a shell failed) or "node-failure" (a rank was lost).
    std::function<void(std::string_view type, const Error& error)> exception;
    std::function<void(int wait_status)> finished;
    std::function<void(const ShellOutput& output)> output;
    std::function<void(const TaskEnd& end)> task_end;
    // The shell of `rank` is in a PMI barrier of a job that spans nodes,
    // with its node's puts (KEY=VALUE lines): the barrier completes when
    // Execution::complete_fence gives it every node's. Unset: each shell's
    // barrier is completed at once with its own puts.
    std::function<void(std::uint32_t rank, std::string puts)> fence = nullptr;
    // The shell of `rank` asks for what task `task` (of the execution), on
    // node `node` of its map (the node-th rank of R), put, once it has put
    // `key` (empty: any): PMIx direct modex. The answer goes to
    // Execution::answer_modex. Unset: answered with nothing at once.
    std::function<void(std::uint32_t rank, std::uint32_t task, std::uint32_t node,
                       const std::string& key)>
        modex = nullptr;
    // Asked after each batch of a shell's records: true when what `output`
    // sends to is full, and the shell is read no further until `resume` is
    // called (ShellProcess::Handlers::hold). Unset: never.
    std::function<bool(std::function<void()> resume)> hold_output = nullptr;
};

// What to run: the job's tasks as `jobspec` (placed) says, inside `R`.
struct ExecRequest {
    JobId job = 0;
    ResourceSet R;
    Json jobspec = Json::object();
    // What the broker mapped the job with, besides the topologies
    // (shell::map_inputs_to_json): each shell maps it again with the same,
    // on whichever host it runs.
    Json map_inputs = Json::object();
};

// One running execution. Destroying it kills what is left of it at once
// (the instance is going away); terminate() is the orderly end.
class Execution {
public:
    virtual ~Execution() = default;
    // Every task's process group gets `number`.
    virtual void signal(int number) = 0;
    // SIGTERM to every task, SIGKILL after the job's kill timeout.
    virtual void terminate() = 0;
    // Completes the PMI barrier every shell is in (ExecEvents::fence).
    virtual void complete_fence(const std::string& merged_puts) = 0;
    // Bytes for the tasks that read stdin (rank 0's shell's), and its end.
    virtual Status write_stdin(std::string_view bytes) = 0;
    virtual void close_stdin() = 0;
    // `room` runs on the loop once little of the stdin written waits to
    // reach the tasks (WriteQueue::kRoom on the way), or it never will: the
    // writer's cue for more, so that stdin read faster than the tasks take
    // it waits in its own pipe rather than in the brokers' memory. Dropped
    // if the execution goes first.
    virtual void when_stdin_room(std::function<void()> room) = 0;

    // Direct modex (ExecEvents::modex), for one node's shell: what its task
    // `task` put once it has put `key`, for another node's; `answer` gets
    // it, or nothing.
    using ModexAnswer = std::function<void(std::optional<std::string> data)>;
    virtual void serve_modex(std::uint32_t /*task*/, const std::string& /*key*/,
                             ModexAnswer answer) {
        answer(std::nullopt);
    }
    // The answer to the shell's ExecEvents::modex for `task`.
    virtual void answer_modex(std::uint32_t /*task*/, std::optional<std::string> /*data*/) {}
};

class ExecService {
public:
    virtual ~ExecService() = default;
    // Starts `request`'s shells. Events come later, on the loop, never from
    // within this call. Errors: R names a rank where no broker runs, or the
    // shell of this rank cannot be started.
    virtual Result<std::unique_ptr<Execution>> start(const ExecRequest& request,
                                                     ExecEvents events) = 0;
};

// Shells as child processes of this broker, which is rank `own_rank` of its
// instance and, until brokers join over the overlay, the only one: R may
// name no other rank. `shell_program` is the gantry executable, run as
// `gantry job-shell`; `topologies` are those the job manager maps jobs on,
// given to the shells (those of R's ranks) so that they map the job alike.
std::unique_ptr<ExecService> make_local_exec_service(asio::io_context& loop,
                                                     std::string shell_program,
                                                     std::uint32_t own_rank,
                                                     RankTopologies topologies);

// Starts the shell of broker rank `rank` for `request` as a child of this
// process; `topologies` are those of R's ranks (RankTopologies::to_json()).
// The execution's events are this one shell's.
Result<std::unique_ptr<Execution>> start_node_shell(asio::io_context& loop,
                                                    const std::string& shell_program,
                                                    std::uint32_t rank, const ExecRequest& request,
                                                    const Json& topologies, ExecEvents events);

// Tasks on a rank that no broker serves would never start: an error naming
// those ranks of R, if it has any. `up` are the ranks whose brokers are up
// in an instance of `size` brokers. Messages: "R names ranks 1-3, where no
// broker runs (this instance has one broker, rank 0)"; "R names rank 2,
// where no broker is up (this instance has 4 brokers; up: 0-1,3)".
Status check_ranks_have_brokers(const ResourceSet& R, const IdSet& up = IdSet{0},
                                std::uint32_t size = 1);

}  // namespace gantry::broker
