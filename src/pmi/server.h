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

namespace gantry::pmi {

// The longest value a client can take: MPICH clamps its value length to
// 1024 - kvsname_max - keylen_max - 30 with the maxes this server announces.
inline constexpr std::size_t kKvsNameMax = 64;
inline constexpr std::size_t kKeyLenMax = 64;
inline constexpr std::size_t kValueMax = 1024 - kKvsNameMax - kKeyLenMax - 30;  // 866

struct JobInfo {
    std::string kvsname;                       // no spaces, shorter than kKvsNameMax
    std::uint32_t size = 0;                    // tasks in the job (PMI_SIZE)
    std::uint32_t universe_size = 0;           // get_universe_size
    std::vector<std::uint32_t> appnum_of_rank;  // get_appnum, indexed by rank
    // Keys the server provides before any task starts (PMI_process_mapping,
    // gantry.taskmap, PMI_dead_processes); never overwritten by a put.
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

class Server {
public:
    explicit Server(JobInfo job);

    // Bytes read from `rank`'s socket; complete lines are handled in order
    // and a partial line is kept for the next call.
    Effects receive(std::uint32_t rank, std::string_view bytes);

    // The task's socket reached end of file.
    void disconnected(std::uint32_t rank);

    bool initialized(std::uint32_t rank) const;  // sent `init`
    bool finalized(std::uint32_t rank) const;    // sent `finalize`

private:
    // The helper that implements this class defines its state here.
};

}  // namespace gantry::pmi
