#include "broker/store.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <sqlite3.h>

namespace gantry::broker {
namespace {

constexpr const char* kDomain = "store";

// SQLite or the file system failed: a system error, which may pass.
Error failure(std::string_view what, std::string_view message) {
    return Error::system(kDomain, std::string(what) + " failed: " + std::string(message));
}

// The file is not what a job store must be: the caller named the wrong one.
Error refusal(std::string_view what, std::string_view message) {
    return Error(kDomain, std::string(what) + " failed: " + std::string(message));
}

std::string job_name(JobId id) {
    return "job " + std::to_string(id);
}

Error no_job(JobId id) {
    return Error::not_found(kDomain, "no " + job_name(id));
}

// The schema of version 1: created in one transaction on first open, with
// kFromVersion1.
constexpr const char* kSchema = R"sql(
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    owner INTEGER NOT NULL,
    submit_time REAL NOT NULL,
    urgency INTEGER NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('NEW', 'DEPEND', 'SCHED', 'RUN', 'CLEANUP', 'INACTIVE')),
    state_time REAL NOT NULL,
    jobspec TEXT NOT NULL,
    R TEXT,
    taskmap TEXT,
    exit_code INTEGER
);
CREATE INDEX jobs_by_state ON jobs (state, state_time);
CREATE TABLE events (
    job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    time REAL NOT NULL,
    name TEXT NOT NULL,
    context TEXT NOT NULL,
    PRIMARY KEY (job, seq)
) WITHOUT ROWID;
CREATE TABLE output (
    job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    stream TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    rank INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (job, seq)
);
CREATE TABLE tasks (
    job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    wait_status INTEGER NOT NULL,
    PRIMARY KEY (job, rank)
) WITHOUT ROWID;
PRAGMA user_version = 1;
)sql";

// From version 1, which had no drained nodes, to kSchemaVersion: a new
// store is made as version 1, then brought up to date the same way.
constexpr const char* kFromVersion1 = R"sql(
CREATE TABLE drained (
    rank INTEGER PRIMARY KEY,
    reason TEXT NOT NULL,
    time REAL NOT NULL
);
PRAGMA user_version = 2;
)sql";
static_assert(Store::kSchemaVersion == 2, "kFromVersion1 sets the version it makes");

constexpr const char* kJobColumns =
    "id, name, owner, submit_time, urgency, state, state_time, jobspec, R, taskmap, exit_code";

// An open connection, closed when destroyed.
class Connection {
public:
    Connection() = default;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection() {
        if (db_)
            sqlite3_close_v2(db_);
    }

    // `what` names the operation in the error.
    Status open(std::string_view what, const std::filesystem::path& path, int flags) {
        const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
        if (rc != SQLITE_OK)
            return failure(what, db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
        return {};
    }

    sqlite3* get() const { return db_; }

    // Runs SQL without results.
    Status exec(std::string_view what, const char* sql) const {
        char* message = nullptr;
        if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
            Error error = failure(what, message ? message : sqlite3_errmsg(db_));
            sqlite3_free(message);
            return error;
        }
        return {};
    }

private:
    sqlite3* db_ = nullptr;
};

// A prepared statement with its bind, step and column helpers. A bind
// failure (too big a value) is reported by the next step().
class Statement {
public:
    static Result<Statement> prepare(sqlite3* db, std::string_view what, std::string_view sql) {
        sqlite3_stmt* stmt = nullptr;
        const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                          SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
        if (rc != SQLITE_OK)
            return failure(what, sqlite3_errmsg(db));
        return Statement(stmt);
    }

    Statement(Statement&& other) noexcept
        : stmt_(std::exchange(other.stmt_, nullptr)), bind_rc_(other.bind_rc_) {}
    Statement& operator=(Statement&&) = delete;
    ~Statement() { sqlite3_finalize(stmt_); }

    void bind(int index, std::int64_t value) { note(sqlite3_bind_int64(stmt_, index, value)); }
    void bind(int index, std::uint64_t value) { bind(index, static_cast<std::int64_t>(value)); }
    void bind(int index, std::uint32_t value) { bind(index, std::int64_t{value}); }
    void bind(int index, int value) { bind(index, std::int64_t{value}); }
    void bind(int index, double value) { note(sqlite3_bind_double(stmt_, index, value)); }
    // Text is copied.
    void bind(int index, std::string_view text) {
        note(sqlite3_bind_text64(stmt_, index, text.empty() ? "" : text.data(), text.size(),
                                 SQLITE_TRANSIENT, SQLITE_UTF8));
    }
    void bind(int index, const char* text) { bind(index, std::string_view(text)); }
    // Bytes are not copied: they must stay until the step is done.
    void bind_blob(int index, std::string_view bytes) {
        note(sqlite3_bind_blob64(stmt_, index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                                 SQLITE_STATIC));
    }

    // True for a row, false when done.
    Result<bool> step(std::string_view what) {
        if (bind_rc_ != SQLITE_OK)
            return failure(what, sqlite3_errstr(bind_rc_));
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        return failure(what, sqlite3_errmsg(sqlite3_db_handle(stmt_)));
    }
    // Steps a statement that returns no row.
    Status run(std::string_view what) {
        const Result<bool> row = step(what);
        if (!row)
            return row.error();
        return {};
    }
    // The extended result code of the last step.
    int code() const { return sqlite3_extended_errcode(sqlite3_db_handle(stmt_)); }

    bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    std::int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
    double real(int column) const { return sqlite3_column_double(stmt_, column); }
    std::string text(int column) const {
        const auto* bytes = sqlite3_column_text(stmt_, column);
        const int size = sqlite3_column_bytes(stmt_, column);
        return bytes ? std::string(reinterpret_cast<const char*>(bytes), size) : std::string();
    }
    std::string blob(int column) const {
        const void* bytes = sqlite3_column_blob(stmt_, column);
        const int size = sqlite3_column_bytes(stmt_, column);
        return bytes ? std::string(static_cast<const char*>(bytes), size) : std::string();
    }

    // Ends a read, drops the bindings.
    void reset() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
        bind_rc_ = SQLITE_OK;
    }

private:
    explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
    void note(int rc) {
        if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK)
            bind_rc_ = rc;
    }
    sqlite3_stmt* stmt_ = nullptr;
    int bind_rc_ = SQLITE_OK;
};

// One use of a cached statement: reset when the use ends, so that no read
// stays open and holds back the checkpoints.
class Query {
public:
    explicit Query(Statement& statement) : statement_(&statement) {}
    Query(Query&& other) noexcept : statement_(std::exchange(other.statement_, nullptr)) {}
    Query& operator=(Query&&) = delete;
    ~Query() {
        if (statement_)
            statement_->reset();
    }
    Statement* operator->() const { return statement_; }
    Statement& operator*() const { return *statement_; }

private:
    Statement* statement_;
};

Status check_time(double time) {
    if (!std::isfinite(time))
        return Error(kDomain, "a time must be a finite number of seconds");
    return {};
}

Status check_urgency(int urgency) {
    if (urgency < Jobspec::kUrgencyHold || urgency > Jobspec::kUrgencyExpedite)
        return Error(kDomain, "urgency " + std::to_string(urgency) + " is not within 0-31");
    return {};
}

std::optional<OutputStream> parse_stream(std::string_view name) {
    if (name == "stdout")
        return OutputStream::kStdout;
    if (name == "stderr")
        return OutputStream::kStderr;
    return std::nullopt;
}

}  // namespace

std::string_view to_string(JobState state) {
    switch (state) {
        case JobState::kNew:
            return "NEW";
        case JobState::kDepend:
            return "DEPEND";
        case JobState::kSched:
            return "SCHED";
        case JobState::kRun:
            return "RUN";
        case JobState::kCleanup:
            return "CLEANUP";
        case JobState::kInactive:
            return "INACTIVE";
    }
    return "?";
}

std::optional<JobState> parse_job_state(std::string_view name) {
    for (const JobState state : {JobState::kNew, JobState::kDepend, JobState::kSched,
                                 JobState::kRun, JobState::kCleanup, JobState::kInactive})
        if (to_string(state) == name)
            return state;
    return std::nullopt;
}

std::string_view to_string(OutputStream stream) {
    return stream == OutputStream::kStdout ? "stdout" : "stderr";
}

struct Store::Impl {
    struct Chunk {
        JobId id;
        OutputStream stream;
        std::uint32_t rank;
        std::string bytes;
    };

    Connection db;  // declared first: closed after the statements are finalized
    std::unordered_map<std::string, Statement> statements;
    std::filesystem::path path;
    Options options;
    bool in_transaction = false;  // a Transaction is open
    int savepoints = 0;           // writes nested in it
    std::vector<Chunk> buffered;
    std::size_t buffered_bytes = 0;
    // Jobs append_output() found, so that it looks each up once; emptied
    // by a purge, and when it grows large.
    std::unordered_set<JobId> known_jobs;

    // The cached statement for `sql`, prepared on first use.
    Result<Query> query(std::string_view what, const std::string& sql) {
        auto found = statements.find(sql);
        if (found == statements.end()) {
            Result<Statement> prepared = Statement::prepare(db.get(), what, sql);
            if (!prepared)
                return prepared.error();
            found = statements.emplace(sql, std::move(prepared).value()).first;
        }
        return Query(found->second);
    }

    // Runs `body` as one write: its own transaction, or a savepoint of the
    // open Transaction, with the buffered output written first. On failure
    // nothing of it stays.
    template <class Body>
    Status write(std::string_view what, Body&& body) {
        if (options.read_only)
            return failure(what, "the store is open read-only");
        const bool own = !in_transaction;
        const std::string savepoint = "SAVEPOINT write" + std::to_string(savepoints);
        const std::string release = "RELEASE write" + std::to_string(savepoints);
        const std::string undo = "ROLLBACK TO write" + std::to_string(savepoints);
        Status status = db.exec(what, own ? "BEGIN IMMEDIATE" : savepoint.c_str());
        if (!status)
            return status;
        ++savepoints;
        status = write_buffered();
        if (status)
            status = body();
        --savepoints;
        if (status)
            status = db.exec(what, own ? "COMMIT" : release.c_str());
        if (!status) {
            if (own) {
                (void)db.exec(what, "ROLLBACK");
            } else {
                (void)db.exec(what, undo.c_str());
                (void)db.exec(what, release.c_str());
            }
        }
        return status;
    }

    // Inserts the buffered output; the buffer is emptied even on failure.
    Status write_buffered() {
        if (buffered.empty())
            return {};
        const std::vector<Chunk> chunks = std::exchange(buffered, {});
        buffered_bytes = 0;
        const std::string what = "appending output";
        std::unordered_map<JobId, std::uint64_t> last_seq;
        Result<Query> insert = query(
            what, "INSERT INTO output (job, seq, stream, rank, bytes) VALUES (?, ?, ?, ?, ?)");
        if (!insert)
            return insert.error();
        for (const Chunk& chunk : chunks) {
            auto last = last_seq.find(chunk.id);
            if (last == last_seq.end()) {
                Result<std::uint64_t> seq =
                    max_seq(what, "SELECT max(seq) FROM output WHERE job = ?", chunk.id);
                if (!seq)
                    return seq.error();
                last = last_seq.emplace(chunk.id, *seq).first;
            }
            (*insert)->bind(1, chunk.id);
            (*insert)->bind(2, last->second + 1);
            (*insert)->bind(3, to_string(chunk.stream));
            (*insert)->bind(4, chunk.rank);
            (*insert)->bind_blob(5, chunk.bytes);
            const Result<bool> done = (*insert)->step(what);
            if (!done)
                return failure(what + " to " + job_name(chunk.id), sqlite3_errmsg(db.get()));
            (*insert)->reset();
            ++last->second;
        }
        return {};
    }

    // The greatest seq `sql` finds for the job, 0 when it has none.
    Result<std::uint64_t> max_seq(std::string_view what, const std::string& sql, JobId id) {
        Result<Query> select = query(what, sql);
        if (!select)
            return select.error();
        (*select)->bind(1, id);
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        return static_cast<std::uint64_t>((*select)->int64(0));
    }

    // The job's state; "no job N" when there is no such job.
    Result<JobState> state_of(std::string_view what, JobId id) {
        Result<Query> select = query(what, "SELECT state FROM jobs WHERE id = ?");
        if (!select)
            return select.error();
        (*select)->bind(1, id);
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            return no_job(id);
        const std::string name = (*select)->text(0);
        const std::optional<JobState> state = parse_job_state(name);
        if (!state)
            return Error(kDomain, job_name(id) + " has an unknown state " + quote(name));
        return *state;
    }

    Status exists(std::string_view what, JobId id) {
        const Result<JobState> state = state_of(what, id);
        if (!state)
            return state.error();
        return {};
    }

    Result<std::uint64_t> insert_event(std::string_view what, JobId id, double time,
                                       std::string_view name, const Json& context) {
        if (Status valid = check_time(time); !valid)
            return valid.error();
        if (name.empty())
            return Error(kDomain, "an event needs a name");
        if (!context.is_object())
            return Error(kDomain, "the context of event " + quote(name) +
                                      " is a JSON object, not " + json_type_name(context));
        Result<std::uint64_t> last = max_seq(what, "SELECT max(seq) FROM events WHERE job = ?", id);
        if (!last)
            return last.error();
        Result<Query> insert = query(
            what, "INSERT INTO events (job, seq, time, name, context) VALUES (?, ?, ?, ?, ?)");
        if (!insert)
            return insert.error();
        (*insert)->bind(1, id);
        (*insert)->bind(2, *last + 1);
        (*insert)->bind(3, time);
        (*insert)->bind(4, name);
        (*insert)->bind(5, to_compact(context));
        if (Status done = (*insert)->run(what); !done)
            return done.error();
        return *last + 1;
    }

    // Sets a column whatever it held.
    template <class Value>
    Status replace(JobId id, const char* column, std::string_view title, const Value& value) {
        const std::string what = "setting " + std::string(title) + " of " + job_name(id);
        return write(what, [&]() -> Status {
            Result<Query> update =
                query(what, "UPDATE jobs SET " + std::string(column) + " = ? WHERE id = ?");
            if (!update)
                return update.error();
            (*update)->bind(1, value);
            (*update)->bind(2, id);
            if (Status done = (*update)->run(what); !done)
                return done;
            if (sqlite3_changes64(db.get()) == 0)
                return no_job(id);
            return {};
        });
    }

    // Sets a column that is set once.
    Status set_once(JobId id, const char* column, std::string_view title, std::int64_t number,
                    std::optional<std::string_view> text) {
        const std::string what = "setting " + std::string(title) + " of " + job_name(id);
        return write(what, [&]() -> Status {
            const std::string column_name(column);
            Result<Query> select =
                query(what, "SELECT " + column_name + " IS NOT NULL FROM jobs WHERE id = ?");
            if (!select)
                return select.error();
            (*select)->bind(1, id);
            const Result<bool> row = (*select)->step(what);
            if (!row)
                return row.error();
            if (!*row)
                return no_job(id);
            if ((*select)->int64(0) != 0)
                return Error(kDomain, job_name(id) + " already has " + std::string(title));
            Result<Query> update =
                query(what, "UPDATE jobs SET " + column_name + " = ? WHERE id = ?");
            if (!update)
                return update.error();
            if (text)
                (*update)->bind(1, *text);
            else
                (*update)->bind(1, number);
            (*update)->bind(2, id);
            return (*update)->run(what);
        });
    }

    Result<JobRecord> job_of(const Statement& row) {
        JobRecord job;
        job.id = static_cast<JobId>(row.int64(0));
        job.name = row.text(1);
        job.owner = static_cast<std::uint32_t>(row.int64(2));
        job.submit_time = row.real(3);
        job.urgency = static_cast<int>(row.int64(4));
        const std::string state = row.text(5);
        const std::optional<JobState> parsed = parse_job_state(state);
        if (!parsed)
            return Error(kDomain, job_name(job.id) + " has an unknown state " + quote(state));
        job.state = *parsed;
        job.state_time = row.real(6);
        job.jobspec = row.text(7);
        if (!row.is_null(8))
            job.R = row.text(8);
        if (!row.is_null(9))
            job.taskmap = row.text(9);
        if (!row.is_null(10))
            job.exit_code = static_cast<int>(row.int64(10));
        return job;
    }

    // Creates the schema in an empty file, or checks the one there.
    Status prepare_schema(std::string_view what) {
        if (!options.read_only) {
            if (Status begun = db.exec(what, "BEGIN IMMEDIATE"); !begun)
                return begun;
        }
        Status status = check_schema(what);
        if (options.read_only)
            return status;
        if (status)
            status = db.exec(what, "COMMIT");
        if (!status)
            (void)db.exec(what, "ROLLBACK");
        return status;
    }

    Status check_schema(std::string_view what) {
        Result<Query> version = query(what, "PRAGMA user_version");
        if (!version)
            return version.error();
        Result<bool> row = (*version)->step(what);
        if (!row)
            return row.error();
        const std::int64_t found = (*version)->int64(0);
        Result<Query> tables = query(
            what,
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
        if (!tables)
            return tables.error();
        row = (*tables)->step(what);
        if (!row)
            return row.error();
        const std::int64_t count = (*tables)->int64(0);
        if (found == 0 && count == 0) {
            if (options.read_only)
                return refusal(what, "it holds no job records yet");
            if (Status made = db.exec(what, kSchema); !made)
                return made;
            return db.exec(what, kFromVersion1);
        }
        if (found == 0)
            return refusal(what, "it is an SQLite database but not a job store");
        if (found > kSchemaVersion)
            return refusal(what, "its schema version " + std::to_string(found) +
                                     " is newer than this gantry's (" +
                                     std::to_string(kSchemaVersion) + "): use a newer gantry");
        if (found == 1 && count >= 4) {
            if (options.read_only)
                return {};  // read as it is: it has no drained nodes
            return db.exec(what, kFromVersion1);
        }
        if (found == 1)
            return failure(what, "it lacks tables of a job store (schema version 1)");
        if (found != kSchemaVersion)
            return failure(
                what, "its schema version " + std::to_string(found) + " is not one gantry knows");
        if (count < 5)
            return failure(what, "it lacks tables of a job store (schema version " +
                                     std::to_string(found) + ")");
        return {};
    }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&& other) noexcept {
    if (this != &other) {
        if (impl_ && !impl_->in_transaction)
            (void)flush();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

Store::~Store() {
    if (impl_ && !impl_->in_transaction)
        (void)flush();
}

Result<Store> Store::open(const std::filesystem::path& path, Options options) {
    const std::string what = "opening " + quote(path.string(), 4096);
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->options = options;
    const int flags =
        (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
        SQLITE_OPEN_NOMUTEX;
    if (Status opened = impl->db.open(what, path, flags); !opened)
        return opened.error();
    sqlite3_extended_result_codes(impl->db.get(), 1);
    sqlite3_busy_timeout(impl->db.get(), options.busy_timeout_ms);

    // First: the switch to WAL and the schema are written under it (a
    // temporary store's file goes with its instance, and is never synced).
    if (options.temporary)
        sqlite3_db_config(impl->db.get(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    if (Status set = impl->db.exec(
            what, options.temporary ? "PRAGMA synchronous = OFF;" : "PRAGMA synchronous = NORMAL;");
        !set)
        return set.error();
    if (!options.read_only) {
        // 16 KiB pages: a 64 KiB chunk of output is 4 pages to write, not 16
        // (twice the append rate of 4 KiB pages, measured); effective only on
        // a new file.
        if (Status set = impl->db.exec(what, "PRAGMA page_size = 16384"); !set)
            return set.error();
        Result<Query> mode = impl->query(what, "PRAGMA journal_mode = WAL");
        if (!mode)
            return mode.error();
        const Result<bool> row = (*mode)->step(what);
        if (!row)
            return row.error();
        if ((*mode)->text(0) != "wal")
            return failure(what, "it cannot be put in WAL mode (journal mode " +
                                     quote((*mode)->text(0)) + ")");
    }
    if (Status set = impl->db.exec(what,
                                   "PRAGMA foreign_keys = ON;"
                                   "PRAGMA journal_size_limit = 67108864;");
        !set)
        return set.error();
    if (Status schema = impl->prepare_schema(what); !schema)
        return schema.error();
    return Store(std::move(impl));
}

const std::filesystem::path& Store::path() const {
    return impl_->path;
}

Result<JobId> Store::create_job(const NewJob& job) {
    if (Status valid = check_time(job.submit_time); !valid)
        return valid.error();
    if (Status valid = check_urgency(job.urgency); !valid)
        return valid.error();
    const Result<Json> jobspec = parse_json("jobspec", job.jobspec);
    if (!jobspec)
        return jobspec.error();
    if (!jobspec->is_object())
        return Error(kDomain, "a jobspec is a JSON object, not " + json_type_name(*jobspec));
    const std::string what = "creating a job";
    JobId id = 0;
    Status status = impl_->write(what, [&]() -> Status {
        Result<Query> insert = impl_->query(
            what,
            "INSERT INTO jobs (name, owner, submit_time, urgency, state, state_time, jobspec) "
            "VALUES (?, ?, ?, ?, 'NEW', ?, ?)");
        if (!insert)
            return insert.error();
        (*insert)->bind(1, job.name);
        (*insert)->bind(2, job.owner);
        (*insert)->bind(3, job.submit_time);
        (*insert)->bind(4, job.urgency);
        (*insert)->bind(5, job.submit_time);
        (*insert)->bind(6, job.jobspec);
        if (Status done = (*insert)->run(what); !done)
            return done;
        id = static_cast<JobId>(sqlite3_last_insert_rowid(impl_->db.get()));
        Json context = {{"userid", job.owner}, {"urgency", job.urgency}};
        if (job.interactive)
            context["interactive"] = true;
        const Result<std::uint64_t> seq =
            impl_->insert_event(what, id, job.submit_time, "submit", context);
        if (!seq)
            return seq.error();
        return {};
    });
    if (!status)
        return status.error();
    return id;
}

Result<std::uint64_t> Store::append_event(JobId id, double time, std::string_view name,
                                          const Json& context) {
    const std::string what = "appending an event to " + job_name(id);
    std::uint64_t seq = 0;
    Status status = impl_->write(what, [&]() -> Status {
        if (Status known = impl_->exists(what, id); !known)
            return known;
        Result<std::uint64_t> added = impl_->insert_event(what, id, time, name, context);
        if (!added)
            return added.error();
        seq = *added;
        return {};
    });
    if (!status)
        return status.error();
    return seq;
}

Status Store::set_state(JobId id, JobState state, double time) {
    if (Status valid = check_time(time); !valid)
        return valid;
    const std::string what = "setting the state of " + job_name(id);
    return impl_->write(what, [&]() -> Status {
        const Result<JobState> current = impl_->state_of(what, id);
        if (!current)
            return current.error();
        if (*current == state)
            return {};
        if (*current == JobState::kInactive)
            return Error(kDomain, job_name(id) + " is INACTIVE: its state cannot change to " +
                                      std::string(to_string(state)));
        if (state < *current)
            return Error(kDomain, job_name(id) + " cannot go back from " +
                                      std::string(to_string(*current)) + " to " +
                                      std::string(to_string(state)));
        Result<Query> update =
            impl_->query(what, "UPDATE jobs SET state = ?, state_time = ? WHERE id = ?");
        if (!update)
            return update.error();
        (*update)->bind(1, to_string(state));
        (*update)->bind(2, time);
        (*update)->bind(3, id);
        return (*update)->run(what);
    });
}

Status Store::set_urgency(JobId id, int urgency) {
    if (Status valid = check_urgency(urgency); !valid)
        return valid;
    return impl_->replace(id, "urgency", "the urgency", urgency);
}

Status Store::set_R(JobId id, std::string_view R) {
    return impl_->set_once(id, "R", "R", 0, R);
}

Status Store::set_taskmap(JobId id, std::string_view taskmap) {
    return impl_->set_once(id, "taskmap", "a task map", 0, taskmap);
}

Status Store::replace_R(JobId id, std::string_view R) {
    return impl_->replace(id, "R", "R", R);
}

Status Store::replace_taskmap(JobId id, std::string_view taskmap) {
    return impl_->replace(id, "taskmap", "a task map", taskmap);
}

Status Store::set_exit_code(JobId id, int exit_code) {
    return impl_->set_once(id, "exit_code", "an exit code", exit_code, std::nullopt);
}

Status Store::record_task_exits(JobId id, std::span<const TaskExit> exits) {
    const std::string what = "recording task exits of " + job_name(id);
    return impl_->write(what, [&]() -> Status {
        if (Status known = impl_->exists(what, id); !known)
            return known;
        for (const TaskExit& exit : exits) {
            Result<Query> insert =
                impl_->query(what, "INSERT INTO tasks (job, rank, wait_status) VALUES (?, ?, ?)");
            if (!insert)
                return insert.error();
            (*insert)->bind(1, id);
            (*insert)->bind(2, exit.rank);
            (*insert)->bind(3, exit.wait_status);
            Status done = (*insert)->run(what);
            if (!done && (*insert)->code() == SQLITE_CONSTRAINT_PRIMARYKEY)
                return Error(kDomain, "task " + std::to_string(exit.rank) + " of " + job_name(id) +
                                          " already has its exit recorded");
            if (!done)
                return done;
        }
        return {};
    });
}

Status Store::append_output(JobId id, OutputStream stream, std::uint32_t rank,
                            std::string_view bytes) {
    if (impl_->options.read_only)
        return failure("appending output to " + job_name(id), "the store is open read-only");
    if (bytes.empty())
        return {};
    if (!impl_->known_jobs.contains(id)) {
        if (Status known = impl_->exists("appending output to " + job_name(id), id); !known)
            return known;
        if (impl_->known_jobs.size() >= 1024)
            impl_->known_jobs.clear();
        impl_->known_jobs.insert(id);
    }
    impl_->buffered.push_back({id, stream, rank, std::string(bytes)});
    impl_->buffered_bytes += bytes.size();
    if (impl_->buffered_bytes >= impl_->options.output_buffer_bytes)
        return flush();
    return {};
}

Status Store::flush() {
    if (impl_->buffered.empty())
        return {};
    return impl_->write("appending output", [] { return Status{}; });
}

std::size_t Store::buffered_output_bytes() const {
    return impl_->buffered_bytes;
}

Result<Transaction> Store::transaction() {
    const std::string what = "opening a transaction";
    if (impl_->options.read_only)
        return failure(what, "the store is open read-only");
    if (impl_->in_transaction)
        return failure(what, "one is open already");
    if (Status begun = impl_->db.exec(what, "BEGIN IMMEDIATE"); !begun)
        return begun.error();
    impl_->in_transaction = true;
    return Transaction(impl_.get());
}

Status Store::purge(JobId id) {
    const std::string what = "purging " + job_name(id);
    return impl_->write(what, [&]() -> Status {
        const Result<JobState> state = impl_->state_of(what, id);
        if (!state)
            return state.error();
        if (*state != JobState::kInactive)
            return Error(kDomain, job_name(id) + " is " + std::string(to_string(*state)) +
                                      ": only INACTIVE jobs are purged");
        Result<Query> remove = impl_->query(what, "DELETE FROM jobs WHERE id = ?");
        if (!remove)
            return remove.error();
        (*remove)->bind(1, id);
        impl_->known_jobs.clear();
        return (*remove)->run(what);
    });
}

Result<std::size_t> Store::purge_inactive(std::size_t max_jobs) {
    const std::string what = "purging inactive jobs";
    std::size_t removed = 0;
    Status status = impl_->write(what, [&]() -> Status {
        Result<Query> remove = impl_->query(
            what,
            "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'INACTIVE' "
            "ORDER BY state_time, id LIMIT ?)");
        if (!remove)
            return remove.error();
        (*remove)->bind(1, max_jobs == 0 ? std::int64_t{-1} : static_cast<std::int64_t>(max_jobs));
        impl_->known_jobs.clear();
        if (Status done = (*remove)->run(what); !done)
            return done;
        removed = static_cast<std::size_t>(sqlite3_changes64(impl_->db.get()));
        return {};
    });
    if (!status)
        return status.error();
    return removed;
}

Result<JobRecord> Store::job(JobId id) const {
    const std::string what = "reading " + job_name(id);
    Result<Query> select =
        impl_->query(what, std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?");
    if (!select)
        return select.error();
    (*select)->bind(1, id);
    const Result<bool> row = (*select)->step(what);
    if (!row)
        return row.error();
    if (!*row)
        return no_job(id);
    return impl_->job_of(**select);
}

namespace {

// The WHERE clause selecting the jobs `filter` names, "" for all of them;
// bind_filter binds its values from index 1 and returns the next index.
std::string where_clause(const JobFilter& filter) {
    std::vector<std::string> terms;
    if (!filter.states.empty()) {
        std::string states = "state IN (";
        for (std::size_t i = 0; i < filter.states.size(); ++i)
            states += i == 0 ? "?" : ", ?";
        terms.push_back(states + ")");
    }
    if (filter.name)
        terms.push_back("name = ?");
    if (filter.owner)
        terms.push_back("owner = ?");
    std::string clause;
    for (const std::string& term : terms)
        clause += (clause.empty() ? " WHERE " : " AND ") + term;
    return clause;
}

int bind_filter(Statement& statement, const JobFilter& filter) {
    int index = 1;
    for (const JobState state : filter.states)
        statement.bind(index++, to_string(state));
    if (filter.name)
        statement.bind(index++, std::string_view(*filter.name));
    if (filter.owner)
        statement.bind(index++, *filter.owner);
    return index;
}

}  // namespace

Result<std::vector<JobRecord>> Store::list(const JobFilter& filter) const {
    const std::string what = "listing jobs";
    Result<Query> select =
        impl_->query(what, std::string("SELECT ") + kJobColumns + " FROM jobs" +
                               where_clause(filter) + " ORDER BY id DESC LIMIT ?");
    if (!select)
        return select.error();
    const int limit_index = bind_filter(**select, filter);
    (*select)->bind(limit_index,
                    filter.limit == 0 ? std::int64_t{-1} : static_cast<std::int64_t>(filter.limit));
    std::vector<JobRecord> jobs;
    for (;;) {
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            break;
        Result<JobRecord> job = impl_->job_of(**select);
        if (!job)
            return job.error();
        jobs.push_back(std::move(job).value());
    }
    return jobs;
}

Result<std::uint64_t> Store::count(const JobFilter& filter) const {
    const std::string what = "counting jobs";
    Result<Query> select = impl_->query(what, "SELECT count(*) FROM jobs" + where_clause(filter));
    if (!select)
        return select.error();
    bind_filter(**select, filter);
    const Result<bool> row = (*select)->step(what);
    if (!row)
        return row.error();
    return static_cast<std::uint64_t>((*select)->int64(0));
}

Status Store::set_drained(const IdSet& ranks, std::string_view reason, double time) {
    const std::string what = "draining ranks " + ranks.encode();
    if (Status valid = check_time(time); !valid)
        return valid;
    return impl_->write(what, [&]() -> Status {
        for (const IdSet::Id rank : ranks) {
            Result<Query> insert = impl_->query(
                what, "INSERT OR REPLACE INTO drained (rank, reason, time) VALUES (?, ?, ?)");
            if (!insert)
                return insert.error();
            (*insert)->bind(1, static_cast<std::uint32_t>(rank));
            (*insert)->bind(2, reason);
            (*insert)->bind(3, time);
            if (Status done = (*insert)->run(what); !done)
                return done;
        }
        return {};
    });
}

Status Store::set_undrained(const IdSet& ranks) {
    const std::string what = "undraining ranks " + ranks.encode();
    return impl_->write(what, [&]() -> Status {
        for (const IdSet::Id rank : ranks) {
            Result<Query> remove = impl_->query(what, "DELETE FROM drained WHERE rank = ?");
            if (!remove)
                return remove.error();
            (*remove)->bind(1, static_cast<std::uint32_t>(rank));
            if (Status done = (*remove)->run(what); !done)
                return done;
        }
        return {};
    });
}

Result<std::vector<DrainedNode>> Store::drained() const {
    const std::string what = "listing drained nodes";
    std::vector<DrainedNode> nodes;
    Result<Query> select =
        impl_->query(what, "SELECT rank, reason, time FROM drained ORDER BY rank");
    if (!select) {
        // A version 1 store opened read-only has no such table: nothing is drained.
        return nodes;
    }
    for (;;) {
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            break;
        nodes.push_back({static_cast<std::uint32_t>((*select)->int64(0)), (*select)->text(1),
                         (*select)->real(2)});
    }
    return nodes;
}

Result<std::vector<JobId>> Store::unfinished_jobs() const {
    const std::string what = "listing unfinished jobs";
    Result<Query> select =
        impl_->query(what, "SELECT id FROM jobs WHERE state != 'INACTIVE' ORDER BY id");
    if (!select)
        return select.error();
    std::vector<JobId> ids;
    for (;;) {
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            break;
        ids.push_back(static_cast<JobId>((*select)->int64(0)));
    }
    return ids;
}

Result<std::vector<JobEvent>> Store::events(JobId id, std::uint64_t after_seq,
                                            std::size_t limit) const {
    const std::string what = "reading the events of " + job_name(id);
    if (Status known = impl_->exists(what, id); !known)
        return known.error();
    Result<Query> select = impl_->query(what,
                                        "SELECT seq, time, name, context FROM events "
                                        "WHERE job = ? AND seq > ? ORDER BY seq LIMIT ?");
    if (!select)
        return select.error();
    (*select)->bind(1, id);
    (*select)->bind(2,
                    std::min<std::uint64_t>(after_seq, std::numeric_limits<std::int64_t>::max()));
    (*select)->bind(3, limit == 0 ? std::int64_t{-1} : static_cast<std::int64_t>(limit));
    std::vector<JobEvent> events;
    for (;;) {
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            break;
        JobEvent event;
        event.seq = static_cast<std::uint64_t>((*select)->int64(0));
        event.time = (*select)->real(1);
        event.name = (*select)->text(2);
        Result<Json> context = parse_json(kDomain, (*select)->text(3));
        if (!context || !context->is_object())
            return Error(kDomain, "event " + std::to_string(event.seq) + " of " + job_name(id) +
                                      " has a context that is not a JSON object");
        event.context = std::move(context).value();
        events.push_back(std::move(event));
    }
    return events;
}

Result<std::vector<OutputChunk>> Store::output(JobId id, const OutputQuery& query) const {
    const std::string what = "reading the output of " + job_name(id);
    if (Status known = impl_->exists(what, id); !known)
        return known.error();
    Result<Query> select =
        impl_->query(what, query.stream ? "SELECT seq, stream, rank, bytes FROM output "
                                          "WHERE job = ? AND seq > ? AND stream = ? ORDER BY seq"
                                        : "SELECT seq, stream, rank, bytes FROM output "
                                          "WHERE job = ? AND seq > ? ORDER BY seq");
    if (!select)
        return select.error();
    (*select)->bind(1, id);
    (*select)->bind(
        2, std::min<std::uint64_t>(query.after_seq, std::numeric_limits<std::int64_t>::max()));
    if (query.stream)
        (*select)->bind(3, to_string(*query.stream));
    std::vector<OutputChunk> chunks;
    std::size_t total = 0;
    while (query.max_bytes == 0 || total < query.max_bytes) {
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            break;
        OutputChunk chunk;
        chunk.seq = static_cast<std::uint64_t>((*select)->int64(0));
        const std::optional<OutputStream> stream = parse_stream((*select)->text(1));
        if (!stream)
            return Error(kDomain, "output " + std::to_string(chunk.seq) + " of " + job_name(id) +
                                      " has an unknown stream");
        chunk.stream = *stream;
        chunk.rank = static_cast<std::uint32_t>((*select)->int64(2));
        chunk.bytes = (*select)->blob(3);
        total += chunk.bytes.size();
        chunks.push_back(std::move(chunk));
    }
    return chunks;
}

Result<std::vector<TaskExit>> Store::task_exits(JobId id) const {
    const std::string what = "reading the task exits of " + job_name(id);
    if (Status known = impl_->exists(what, id); !known)
        return known.error();
    Result<Query> select =
        impl_->query(what, "SELECT rank, wait_status FROM tasks WHERE job = ? ORDER BY rank");
    if (!select)
        return select.error();
    (*select)->bind(1, id);
    std::vector<TaskExit> exits;
    for (;;) {
        const Result<bool> row = (*select)->step(what);
        if (!row)
            return row.error();
        if (!*row)
            break;
        exits.push_back({static_cast<std::uint32_t>((*select)->int64(0)),
                         static_cast<int>((*select)->int64(1))});
    }
    return exits;
}

Status Store::check() const {
    const std::string what = "checking " + quote(impl_->path.string(), 4096);
    Result<Query> select = impl_->query(what, "PRAGMA quick_check");
    if (!select)
        return select.error();
    const Result<bool> row = (*select)->step(what);
    if (!row)
        return row.error();
    const std::string verdict = *row ? (*select)->text(0) : "no answer";
    if (verdict != "ok")
        return failure(what, verdict);
    return {};
}

Transaction::Transaction(Transaction&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)) {}

Transaction::~Transaction() {
    if (store_) {
        (void)store_->db.exec("rolling back a transaction", "ROLLBACK");
        store_->in_transaction = false;
    }
}

Status Transaction::commit() {
    const std::string what = "committing a transaction";
    if (!store_)
        return failure(what, "it is over");
    Store::Impl* store = std::exchange(store_, nullptr);
    store->in_transaction = false;
    Status status = store->db.exec(what, "COMMIT");
    if (!status)
        (void)store->db.exec(what, "ROLLBACK");
    return status;
}

}  // namespace gantry::broker
