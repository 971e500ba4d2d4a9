// A PMI-1 "simple" wire-protocol server for one job, as MPICH's client speaks
// it (docs/pmi.md). A pure state machine: the shell feeds it the bytes each
// task writes on its PMI socket and sends the replies it returns; no I/O here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/taskmap.h"
#include "util/error.h"

namespace gantry::pmi {

// The longest value a client can take: MPICH clamps its value length to
// 1024 - kvsname_max - keylen_max - 30 with the maxes this server announces.
inline constexpr std::size_t kKvsNameMax = 64;
inline constexpr std::size_t kKeyLenMax = 64;
inline constexpr std::size_t kValueMax = 1024 - kKvsNameMax - kKeyLenMax - 30;  // 866

struct JobInfo {
    std::string kvsname;                        // no spaces, shorter than kKvsNameMax
    std::uint32_t size = 0;                     // tasks in the job (PMI_SIZE)
    std::uint32_t universe_size = 0;            // get_universe_size
    std::vector<std::uint32_t> appnum_of_rank;  // get_appnum, indexed by rank
    // Keys the server provides before any task starts (PMI_process_mapping,
    // gantry.taskmap, PMI_dead_processes); never overwritten by a put. A
    // value longer than kValueMax or holding a space or newline cannot go
    // on the wire: a get of it is answered "not found".
    std::map<std::string, std::string, std::less<>> server_keys;
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

struct Effects {
    std::vector<Reply> replies;
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
    // line; a completed barrier adds one `barrier_out` Reply per rank, in
    // rank order. The first protocol error ends the call (the replies to
    // the lines before it are kept) and every later byte of that rank is
    // ignored. A rank >= size is a protocol error.
    Effects receive(std::uint32_t rank, std::string_view bytes);

    // The task's socket reached end of file: its partial line is dropped,
    // it leaves a barrier it was waiting in (which then never completes)
    // and its later bytes are ignored.
    void disconnected(std::uint32_t rank);

    bool initialized(std::uint32_t rank) const;  // sent `init`, whatever the answer
    bool finalized(std::uint32_t rank) const;    // sent `finalize`

private:
    // What the server knows of one task's connection.
    struct Client {
        std::string partial_line;  // bytes after the last '\n'
        bool initialized = false;
        bool finalized = false;
        bool in_barrier = false;
        bool closed = false;  // after a protocol error or end of file
        // Inside an `mcmd=spawn` ... `endcmd` block: its counters so far.
        bool in_spawn = false;
        std::optional<int> spawn_total;
        std::optional<int> spawn_so_far;
    };

    Status handle_line(std::uint32_t rank, std::string_view line, Effects& effects);
    Status handle_spawn_line(std::uint32_t rank, std::string_view line, Effects& effects);
    Status handle_request(std::uint32_t rank, const Request& request, Effects& effects);
    Status init(std::uint32_t rank, const Request& request, Effects& effects);
    Status put(std::uint32_t rank, const Request& request, Effects& effects);
    Status get(std::uint32_t rank, const Request& request, Effects& effects);
    Status barrier_in(std::uint32_t rank, const Request& request, Effects& effects);
    // Ends `rank`'s part in the protocol: a protocol error or end of file.
    void close(std::uint32_t rank);

    JobInfo job_;
    std::vector<Client> clients_;                          // indexed by rank
    std::map<std::string, std::string, std::less<>> kvs_;  // the tasks' puts
    std::uint32_t in_barrier_ = 0;                         // ranks waiting
};

}  // namespace gantry::pmi
