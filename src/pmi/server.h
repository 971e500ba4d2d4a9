// A PMI-1 "simple" wire-protocol server for one node's tasks of a job, as
// MPICH's client speaks it (docs/pmi.md). A pure state machine: the shell
// feeds it the bytes each task writes on its PMI socket and sends the
// replies it returns; no I/O here.
//
// One server per node: it serves the job's ranks that run there (its local
// ranks). A barrier spans the whole job, so a server cannot end one alone:
// when every local rank has entered it, the server hands the puts made on
// its node to its owner (Effects::local_barrier), and the owner, once every
// node has reached the barrier, gives back the puts of all of them merged
// (Server::barrier_complete). For a job on one node the owner answers at
// once with the node's own puts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/idset.h"
#include "formats/taskmap.h"
#include "util/error.h"

namespace gantry::pmi {

// The longest value a client can take: MPICH clamps its value length to
// 1024 - kvsname_max - keylen_max - 30 with the maxes this server announces.
inline constexpr std::size_t kKvsNameMax = 64;
inline constexpr std::size_t kKeyLenMax = 64;
inline constexpr std::size_t kValueMax = 1024 - kKvsNameMax - kKeyLenMax - 30;  // 866

// Keys and their values, as the KVS holds them.
using KeyValues = std::map<std::string, std::string, std::less<>>;

// What the server knows of the job. Everything but local_ranks is job-wide:
// every node's server gets the same.
struct JobInfo {
    std::string kvsname;                        // no spaces, shorter than kKvsNameMax
    std::uint32_t size = 0;                     // tasks in the job (PMI_SIZE)
    std::uint32_t universe_size = 0;            // get_universe_size
    std::vector<std::uint32_t> appnum_of_rank;  // get_appnum, indexed by rank
    // Keys the server provides before any task starts (PMI_process_mapping,
    // gantry.taskmap, PMI_dead_processes); never overwritten by a put. A
    // value longer than kValueMax or holding a space or newline cannot go
    // on the wire: a get of it is answered "not found".
    KeyValues server_keys;
    // The ranks this server serves: the job's tasks on this node. Ranks of
    // `size` or more are left out. Nothing: every rank of the job (a job on
    // one node).
    std::optional<IdSet> local_ranks;
};

// The job's PMI_process_mapping (PMI vector form of the task map), or
// nothing when it would be longer than kValueMax or the map is empty: the
// key is then answered "not found" and MPICH falls back to exchanging
// host names.
std::optional<std::string> process_mapping(const TaskMap& map);

// What the shell must do after feeding bytes.
struct Reply {
    std::uint32_t rank = 0;  // whose socket
    std::string line;        // one or more complete lines, each ending in '\n'
    friend bool operator==(const Reply&, const Reply&) = default;
};

// Every local rank has entered the barrier: the owner's turn (see
// Server::barrier_complete).
struct LocalBarrier {
    // The puts made on this node since the previous barrier was handed over
    // (or since the start), the last value of each key. Server keys are
    // never among them.
    KeyValues puts;
    friend bool operator==(const LocalBarrier&, const LocalBarrier&) = default;
};

struct Effects {
    std::vector<Reply> replies;
    // The barrier is reached on this node: pass it to the owner, which calls
    // barrier_complete() when every node has reached it.
    std::optional<LocalBarrier> local_barrier;
    // `abort`: kill every task; the job exits with this code.
    std::optional<int> abort_exit_code;
    std::optional<std::uint32_t> abort_rank;
    // A malformed or oversized line: end this task (the rank that sent it)
    // with this one-line message; the server ignores its later bytes.
    std::optional<std::string> protocol_error;
};

class Request;  // one request line, pmi/wire.h

class Server {
public:
    explicit Server(JobInfo job);

    // Bytes read from `rank`'s socket; complete lines are handled in order
    // and a partial line is kept for the next call. One Reply per reply
    // line. The first protocol error ends the call (the replies to the lines
    // before it are kept) and every later byte of that rank is ignored. A
    // rank >= size, or one that is not local, is a protocol error.
    //
    // When the last local rank enters the barrier, the Effects carry
    // local_barrier and nobody is answered yet. A rank's replies always come
    // in the order of its requests: the requests it sends between its
    // barrier_in and its barrier_out (MPICH sends none) are handled at once,
    // against the KVS as it is then, but their replies wait behind its
    // barrier_out.
    Effects receive(std::uint32_t rank, std::string_view bytes);

    // The owner's answer to the local barrier last handed over: the puts of
    // every node of the job, this one's included, merged. They go into the
    // KVS (a key takes its merged value; a server key, or a put no task
    // could have made, such as a value longer than kValueMax or holding a
    // space, is left out), and the Effects hold one `barrier_out` Reply per
    // local rank in rank order, then the replies held behind them. A rank
    // whose socket closed or that made a protocol error after the barrier
    // was handed over is not answered, but the barrier completes for the
    // others. Error: no barrier is waiting for its owner (none reached, or
    // already completed), a programming error of the owner; nothing changes.
    Result<Effects> barrier_complete(const KeyValues& merged_puts);

    // Whether a local barrier was handed over and barrier_complete() is due.
    bool barrier_waiting() const { return barrier_waiting_; }

    // The task's socket reached end of file: its partial line and held
    // replies are dropped, it leaves a barrier it was waiting in (which then
    // never reaches the owner: the ranks already in it wait for ever, as
    // the job is failing anyway; a barrier already handed over completes
    // without it) and its later bytes are ignored. Ignored for a rank that
    // is not local.
    void disconnected(std::uint32_t rank);

    bool initialized(std::uint32_t rank) const;  // sent `init`, whatever the answer
    bool finalized(std::uint32_t rank) const;    // sent `finalize`
    const IdSet& local_ranks() const { return local_ranks_; }

private:
    // What the server knows of one task's connection.
    struct Client {
        std::uint32_t rank = 0;
        std::string partial_line;  // bytes after the last '\n'
        bool initialized = false;
        bool finalized = false;
        bool in_barrier = false;
        bool closed = false;  // after a protocol error or end of file
        // Inside an `mcmd=spawn` ... `endcmd` block: its counters so far.
        bool in_spawn = false;
        std::optional<int> spawn_total;
        std::optional<int> spawn_so_far;
        // Replies to requests sent inside a barrier, sent after barrier_out.
        std::vector<std::string> held;
    };

    // The local rank's client, or null.
    Client* client_of(std::uint32_t rank);
    const Client* client_of(std::uint32_t rank) const;
    Status handle_line(Client& client, std::string_view line, Effects& effects);
    Status handle_spawn_line(Client& client, std::string_view line, Effects& effects);
    Status handle_request(Client& client, const Request& request, Effects& effects);
    Status init(Client& client, const Request& request, Effects& effects);
    Status put(Client& client, const Request& request, Effects& effects);
    Status get(Client& client, const Request& request, Effects& effects);
    Status barrier_in(Client& client, const Request& request, Effects& effects);
    // A reply line to `client`, its newline added: now, or held while it is
    // in a barrier.
    void answer(Client& client, std::string line, Effects& effects);
    // Ends the client's part in the protocol: a protocol error or end of file.
    void close(Client& client);

    JobInfo job_;
    IdSet local_ranks_;
    std::vector<Client> clients_;   // of the local ranks, in rank order
    KeyValues kvs_;                 // the tasks' puts, this node's and merged ones
    KeyValues unsent_puts_;         // this node's since the last local barrier
    std::uint32_t in_barrier_ = 0;  // local ranks waiting, before the barrier is handed over
    bool barrier_waiting_ = false;  // handed over, barrier_complete() due
};

}  // namespace gantry::pmi
