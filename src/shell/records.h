// The records a supervised shell and the instance's broker exchange on one
// Unix stream socket (docs/shell.md, "Under an instance"). The shell sends
// its tasks' output, its own messages and the tasks' ends; the broker sends
// signals and the order to terminate. Plain text headers, so that a stream
// can be read with a pager when something goes wrong:
//
//     out RANK LEN\n<LEN bytes>    stdout bytes of task RANK
//     err RANK LEN\n<LEN bytes>    stderr bytes of task RANK
//     msg LEN\n<LEN bytes>         one shell message, a whole line
//     started\n                    every task has started
//     exit RANK WAITSTATUS\n       task RANK was reaped: its waitpid status
//     fence LEN\n<LEN bytes>       every task of this node is in a PMI
//                                  barrier; the puts they made since the
//                                  last one, as KEY=VALUE lines
//     dmodex RANK NODE LEN\n<LEN bytes>
//                                  a task of this node asks for what task
//                                  RANK, on node NODE of the job's map, put,
//                                  once it has put the key in the bytes (any
//                                  key when empty; at most kMaxKey bytes):
//                                  PMIx direct modex
//     modex RANK LEN\n<LEN bytes>  what task RANK of this node put, for a
//                                  dmodex control message
//     nomodex RANK\n               task RANK of this node has nothing to give
//
// and from the broker `signal N\n` (1 <= N <= 64), `terminate\n`,
// `fence LEN\n<LEN bytes>`: the puts of every node of the job, merged, which
// complete the barrier (a job that spans nodes: Job::pmi_through_supervisor),
// and for direct modex `dmodex RANK LEN\n<LEN bytes>` (another node asks for
// what task RANK of this node put, once it has put that key),
// `modex RANK LEN\n<LEN bytes>` and `nomodex RANK\n` (the answer to this
// shell's dmodex record).
// Numbers are decimal without sign or leading zeros ("0" is zero) and fit
// their fields: a rank in 32 bits, a wait status in a non-negative int, a
// length at most kMaxLength. Fields are separated by one space. Any other
// header is an error, so every stream read back re-encodes to its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry::shell::records {

// The most bytes one out, err or msg record carries: longer data is sent as
// several records.
inline constexpr std::size_t kMaxLength = 1 << 20;
// The longest header line a reader waits for, its newline included
// ("dmodex 4294967295 4294967295 511\n" has 33 bytes).
inline constexpr std::size_t kMaxHeader = 40;
// The longest key a dmodex record or control message names (PMIx's
// PMIX_MAX_KEYLEN).
inline constexpr std::size_t kMaxKey = 511;
// The highest signal number a control message may name.
inline constexpr int kMaxSignal = 64;

struct Record {
    enum class Kind {
        kStdout,
        kStderr,
        kMessage,
        kStarted,
        kExit,
        kFence,
        kModexRequest,
        kModex,
        kNoModex
    };
    Kind kind = Kind::kMessage;
    std::uint32_t rank = 0;  // kStdout, kStderr, kExit and the modex kinds
    int wait_status = 0;     // kExit: as waitpid gave it, >= 0
    // kStdout, kStderr, kMessage, kFence, kModex: at most kMaxLength;
    // kModexRequest: the key, at most kMaxKey
    std::string bytes{};
    std::uint32_t node = 0;  // kModexRequest

    friend bool operator==(const Record&, const Record&) = default;
};

// Appends the record's header and bytes to `out`.
void append(std::string& out, const Record& record);
std::string encode(const Record& record);
// Appends the header of an out, err or msg record (`kind` kStdout, kStderr or
// kMessage; `rank` unused for kMessage) that `length` bytes will follow, for
// writers that do not copy their bytes into a Record.
void append_header(std::string& out, Record::Kind kind, std::uint32_t rank, std::size_t length);

// The most bytes of a fence control message: a whole job's puts.
inline constexpr std::size_t kMaxFence = std::size_t{64} << 20;

struct Control {
    enum class Kind { kSignal, kTerminate, kFence, kModexRequest, kModex, kNoModex };
    Kind kind = Kind::kTerminate;
    int signal = 0;          // kSignal: 1 to kMaxSignal
    std::string bytes{};     // kFence, kModex: at most kMaxFence; kModexRequest: the key
    std::uint32_t rank = 0;  // the modex kinds

    friend bool operator==(const Control&, const Control&) = default;
};

std::string encode(const Control& control);

// PMI puts as a fence's bytes: KEY=VALUE lines in key order (a key holds no
// '=', neither holds a newline), and back. Errors name the line.
using KeyValues = std::map<std::string, std::string, std::less<>>;
std::string encode_key_values(const KeyValues& puts);
Result<KeyValues> parse_key_values(std::string_view bytes);

// The direct modex requests one end has sent and not had answered, by
// task. An answer (modex, nomodex) names its task but not its key, so each
// task has one request out at a time: a request for another key of the
// same task is sent once the one before is answered; requests for the same
// key wait together.
class ModexRequests {
public:
    using Answer = std::function<void(std::optional<std::string> data)>;

    // Whether the request for `key` of `task` is to be sent now.
    bool add(std::uint32_t task, std::string key, Answer answer);
    // The outstanding request of `task` is answered with `data` (nothing:
    // nomodex). Returns the key of the request to send next, if any.
    std::optional<std::string> answer(std::uint32_t task, const std::optional<std::string>& data);
    // Every request waiting is answered with nothing.
    void refuse_all();
    bool empty() const { return waiting_.empty(); }

private:
    struct Group {
        std::string key;
        std::vector<Answer> answers;
    };
    std::map<std::uint32_t, std::deque<Group>> waiting_;  // front: the one sent
};

namespace detail {

// The bytes received and not consumed yet, and where they are in the stream.
class Pending {
public:
    void append(std::string_view bytes);
    std::string_view view() const { return std::string_view(bytes_).substr(start_); }
    void consume(std::size_t count);
    // The offset in the stream of view()'s first byte.
    std::size_t offset() const { return offset_; }

private:
    std::string bytes_;
    std::size_t start_ = 0;  // bytes_ before it are consumed
    std::size_t offset_ = 0;
};

}  // namespace detail

// Records out of a byte stream cut anywhere. next() gives the next whole
// record, nothing while its bytes have not all arrived, or an error naming
// the stream offset of the header at fault:
//
//     records: bad header "out x 3" at byte 120
//     records: length 2000000 over the 1048576-byte limit at byte 0
//     records: header "out 1 0000000000"... longer than 40 bytes at byte 8
//
// After an error the reader stays failed: next() gives the same error.
class Reader {
public:
    void append(std::string_view bytes);
    Result<std::optional<Record>> next();
    // Bytes of the stream taken by the records next() has given.
    std::size_t consumed() const { return pending_.offset(); }

private:
    detail::Pending pending_;
    std::optional<Error> error_;
};

// Control messages out of a byte stream, the same way:
// `records: bad control message "signal 65" at byte 10`.
class ControlReader {
public:
    void append(std::string_view bytes);
    Result<std::optional<Control>> next();
    std::size_t consumed() const { return pending_.offset(); }

private:
    detail::Pending pending_;
    std::optional<Error> error_;
};

}  // namespace gantry::shell::records
