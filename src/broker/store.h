// The job record store: everything an instance knows about its jobs, kept in
// one SQLite database (WAL) in the instance's state directory as it happens,
// and brought back when a broker restarts on the same directory.
//
// Per job: its jobspec, name, owner, submit time, state, urgency, R, task
// map, eventlog, stdout and stderr of each task, each task's wait status and
// the job's exit code. Ids are never reused, even after a purge. The file,
// its tables and how to read them with the sqlite3 command: docs/records.md.
//
// Every operation returns a Result; a failure of SQLite becomes
// `store: <what> failed: <sqlite's message>`. A Store is used by one thread
// at a time; other processes may open the same file (readers never wait for
// the writer, writers wait for each other up to the busy timeout).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/job_id.h"
#include "formats/idset.h"
#include "formats/jobspec.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// The job states of Flux RFC 21 that gantry uses, in the order a job goes
// through them. A job only moves forward; INACTIVE is its last state.
enum class JobState { kNew, kDepend, kSched, kRun, kCleanup, kInactive };

std::string_view to_string(JobState state);  // "NEW", ..., "INACTIVE"
std::optional<JobState> parse_job_state(std::string_view name);

enum class OutputStream { kStdout, kStderr };

std::string_view to_string(OutputStream stream);  // "stdout", "stderr"

// What a job starts with.
struct NewJob {
    std::string jobspec;  // a JSON object, kept as given
    std::string name;
    std::uint32_t owner = 0;                 // the submitting user's uid
    double submit_time = 0;                  // epoch seconds
    int urgency = Jobspec::kUrgencyDefault;  // 0-31, 16 as in Flux
    // Bound to the front end that submitted it (gantry run, alloc): the
    // submit event says so, and a restarted instance cancels it unstarted.
    bool interactive = false;
};

// One job as recorded.
struct JobRecord {
    JobId id = 0;
    std::string jobspec;
    std::string name;
    std::uint32_t owner = 0;
    double submit_time = 0;
    JobState state = JobState::kNew;
    double state_time = 0;  // when the job entered `state`
    int urgency = Jobspec::kUrgencyDefault;
    std::optional<std::string> R;        // RFC 20, once allocated
    std::optional<std::string> taskmap;  // RFC 34, once mapped
    std::optional<int> exit_code;        // the job's result, once known
    friend bool operator==(const JobRecord&, const JobRecord&) = default;
};

// One entry of a job's eventlog. `seq` counts a job's events from 1.
struct JobEvent {
    std::uint64_t seq = 0;
    double time = 0;  // epoch seconds
    std::string name;
    Json context = Json::object();
    friend bool operator==(const JobEvent&, const JobEvent&) = default;
};

// Bytes one task wrote to one stream. `seq` counts a job's chunks from 1,
// over both streams and all tasks, in the order they were appended.
struct OutputChunk {
    std::uint64_t seq = 0;
    OutputStream stream = OutputStream::kStdout;
    std::uint32_t rank = 0;
    std::string bytes;  // as written: NUL bytes and invalid UTF-8 included
    friend bool operator==(const OutputChunk&, const OutputChunk&) = default;
};

// How one task ended: its wait status as waitpid(2) gave it.
struct TaskExit {
    std::uint32_t rank = 0;
    int wait_status = 0;
    friend bool operator==(const TaskExit&, const TaskExit&) = default;
};

// Which jobs list() returns (all that match every filter given, newest
// first) and count() counts.
struct JobFilter {
    std::vector<JobState> states = {};                  // any of these; empty: any state
    std::optional<std::string> name = std::nullopt;     // exactly this name
    std::optional<std::uint32_t> owner = std::nullopt;  // this owner's
    std::size_t limit = 0;                              // at most this many; 0: no limit
};

// Which output output() returns, in seq order.
struct OutputQuery {
    std::uint64_t after_seq = 0;  // chunks with a greater seq; 0: from the start
    std::optional<OutputStream> stream = std::nullopt;  // this stream only
    std::size_t max_bytes = 0;  // stop once this many bytes are returned; 0: all
};

class Transaction;

struct DrainedNode {
    std::uint32_t rank = 0;
    std::string reason;
    double time = 0;  // when it was drained, seconds since the epoch
    friend bool operator==(const DrainedNode&, const DrainedNode&) = default;
};

class Store {
public:
    static constexpr std::string_view kFileName = "gantry.db";  // in the state directory
    static constexpr int kSchemaVersion = 2;                    // PRAGMA user_version

    struct Options {
        int busy_timeout_ms = 5000;  // how long a write waits for another writer
        // append_output() writes its buffer once it holds this many bytes;
        // 0 writes every chunk at once.
        std::size_t output_buffer_bytes = std::size_t{1} << 20;
        bool read_only = false;  // never writes; the schema must exist
        // Removed with its instance (a private temporary state directory):
        // nothing is synced to disk, and closing it writes nothing back.
        bool temporary = false;
    };

    // Opens the database at `path`, creating the file and the schema when
    // absent. Refuses a file that is not SQLite, an SQLite database that is
    // not a job store, and a schema newer than kSchemaVersion.
    static Result<Store> open(const std::filesystem::path& path, Options options);
    static Result<Store> open(const std::filesystem::path& path) { return open(path, Options{}); }

    Store(Store&&) noexcept;
    Store& operator=(Store&&) noexcept;
    ~Store();  // writes buffered output; call flush() to see its errors

    const std::filesystem::path& path() const;

    // --- Writing. Each call is one transaction, or joins the open
    // Transaction. Each first writes the buffered output, so that records
    // keep the order in which they were given.

    // Records a new job in state NEW with its first event, `submit`
    // ({"userid":owner,"urgency":urgency}) at the submit time.
    Result<JobId> create_job(const NewJob& job);

    // Appends an event to the job's eventlog; `context` must be a JSON
    // object. Returns the event's seq.
    Result<std::uint64_t> append_event(JobId id, double time, std::string_view name,
                                       const Json& context = Json::object());

    // Moves the job to `state` at `time`. Refuses to move backwards or out
    // of INACTIVE; moving to the state a job is in changes nothing.
    Status set_state(JobId id, JobState state, double time);
    Status set_urgency(JobId id, int urgency);
    // R, the task map and the exit code are set once each...
    Status set_R(JobId id, std::string_view R);
    Status set_taskmap(JobId id, std::string_view taskmap);
    Status set_exit_code(JobId id, int exit_code);
    // ...except a program's (RFC 8's job.new), whose R and task map change
    // as it grows, shrinks and execs.
    Status replace_R(JobId id, std::string_view R);
    Status replace_taskmap(JobId id, std::string_view taskmap);
    // Each task's end is recorded once.
    Status record_task_exits(JobId id, std::span<const TaskExit> exits);

    // Buffers bytes a task wrote; the buffer is written in one transaction
    // when it reaches Options::output_buffer_bytes, by flush(), or by the
    // next other write. Empty bytes are ignored. Refuses an unknown job.
    Status append_output(JobId id, OutputStream stream, std::uint32_t rank, std::string_view bytes);
    // Writes the buffered output. On failure the buffered output is dropped.
    Status flush();
    std::size_t buffered_output_bytes() const;

    // Opens a transaction that the writes above join until it is committed;
    // one at a time. The Store must outlive it.
    Result<Transaction> transaction();

    // Removes an INACTIVE job and all its records; refuses an active one.
    Status purge(JobId id);
    // Removes up to `max_jobs` INACTIVE jobs, those inactive longest first
    // (0: all of them); returns how many were removed.
    Result<std::size_t> purge_inactive(std::size_t max_jobs = 0);

    // --- Reading: what is committed, by this Store or another on the file.

    Result<JobRecord> job(JobId id) const;
    Result<std::vector<JobRecord>> list(const JobFilter& filter = {}) const;
    // How many jobs match `filter` (its limit aside), without reading them.
    Result<std::uint64_t> count(const JobFilter& filter = {}) const;
    // The ids of the jobs not INACTIVE, in increasing order: on restart the
    // broker marks each with an exception event, as they were lost.
    Result<std::vector<JobId>> unfinished_jobs() const;

    // Nodes the owner took out of service (gantry resource drain), by
    // broker rank, kept across restarts. Draining a drained rank again
    // replaces its reason and time.
    Status set_drained(const IdSet& ranks, std::string_view reason, double time);
    Status set_undrained(const IdSet& ranks);
    Result<std::vector<DrainedNode>> drained() const;  // by rank
    // The job's events with a seq greater than `after_seq`, at most `limit`
    // of them (0: all), in order.
    Result<std::vector<JobEvent>> events(JobId id, std::uint64_t after_seq = 0,
                                         std::size_t limit = 0) const;
    Result<std::vector<OutputChunk>> output(JobId id, const OutputQuery& query = {}) const;
    Result<std::vector<TaskExit>> task_exits(JobId id) const;  // by rank

    // SQLite's quick_check of the whole file (reads every page).
    Status check() const;

private:
    friend class Transaction;
    struct Impl;
    explicit Store(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Writes joined into one transaction: committed by commit(), rolled back
// (buffered output written inside it included) when destroyed uncommitted.
class Transaction {
public:
    Transaction(Transaction&& other) noexcept;
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction();

    Status commit();

private:
    friend class Store;
    explicit Transaction(Store::Impl* store) : store_(store) {}
    Store::Impl* store_;
};

}  // namespace gantry::broker
