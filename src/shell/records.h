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
//
// and from the broker `signal N\n` (1 <= N <= 64), `terminate\n`, and
// `fence LEN\n<LEN bytes>`: the puts of every node of the job, merged, which
// complete the barrier (a job that spans nodes: Job::pmi_through_supervisor).
// Numbers are decimal without sign or leading zeros ("0" is zero) and fit
// their fields: a rank in 32 bits, a wait status in a non-negative int, a
// length at most kMaxLength. Fields are separated by one space. Any other
// header is an error, so every stream read back re-encodes to its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry::shell::records {

// The most bytes one out, err or msg record carries: longer data is sent as
// several records.
inline constexpr std::size_t kMaxLength = 1 << 20;
// The longest header line a reader waits for, its newline included ("exit
// 4294967295 2147483647\n" has 27 bytes).
inline constexpr std::size_t kMaxHeader = 32;
// The highest signal number a control message may name.
inline constexpr int kMaxSignal = 64;

struct Record {
    enum class Kind { kStdout, kStderr, kMessage, kStarted, kExit, kFence };
    Kind kind = Kind::kMessage;
    std::uint32_t rank = 0;  // kStdout, kStderr, kExit
    int wait_status = 0;     // kExit: as waitpid gave it, >= 0
    std::string bytes{};     // kStdout, kStderr, kMessage, kFence: at most kMaxLength

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
    enum class Kind { kSignal, kTerminate, kFence };
    Kind kind = Kind::kTerminate;
    int signal = 0;       // kSignal: 1 to kMaxSignal
    std::string bytes{};  // kFence: at most kMaxFence

    friend bool operator==(const Control&, const Control&) = default;
};

std::string encode(const Control& control);

// PMI puts as a fence's bytes: KEY=VALUE lines in key order (a key holds no
// '=', neither holds a newline), and back. Errors name the line.
using KeyValues = std::map<std::string, std::string, std::less<>>;
std::string encode_key_values(const KeyValues& puts);
Result<KeyValues> parse_key_values(std::string_view bytes);

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
//     records: header "out 1 0000000000"... longer than 32 bytes at byte 8
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
