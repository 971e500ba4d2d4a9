#include "broker/store.h"

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "support/scratch.h"
#include "support/vectors.h"

namespace gantry::broker {

// Readable values in failure messages.
void PrintTo(const OutputChunk& chunk, std::ostream* out) {
    *out << "{" << chunk.seq << ", " << to_string(chunk.stream) << ", rank " << chunk.rank << ", "
         << quote(chunk.bytes) << "}";
}
void PrintTo(const JobEvent& event, std::ostream* out) {
    *out << "{" << event.seq << ", " << event.time << ", " << event.name << ", "
         << to_compact(event.context) << "}";
}
void PrintTo(const JobRecord& job, std::ostream* out) {
    *out << "{job " << job.id << " " << quote(job.name) << " owner " << job.owner << " submit "
         << job.submit_time << " " << to_string(job.state) << " since " << job.state_time
         << " urgency " << job.urgency << " R " << job.R.value_or("-") << " taskmap "
         << job.taskmap.value_or("-") << " exit code "
         << (job.exit_code ? std::to_string(*job.exit_code) : "-") << "}";
}
void PrintTo(const TaskExit& exit, std::ostream* out) {
    *out << "{" << exit.rank << ", " << exit.wait_status << "}";
}

namespace {

namespace fs = std::filesystem;
using S = JobState;
using O = OutputStream;

// A fresh state directory per test, removed afterwards.
class StoreTest : public ::testing::Test {
protected:
    Store open(Store::Options options = {}) {
        Result<Store> store = Store::open(path_, options);
        EXPECT_TRUE(store.ok()) << store.error().str();
        return std::move(store).value();
    }

    static NewJob new_job(std::string name, double submit_time, std::uint32_t owner = 1000) {
        return {R"({"version":1,"tasks":[{"command":["hostname"]}]})", std::move(name), owner,
                submit_time, 16};
    }

    // The error line of a failed operation, "ok" when it succeeded.
    template <class T>
    static std::string error_of(const Result<T>& result) {
        return result.ok() ? "ok" : result.error().str();
    }

    // Runs SQL on the file through its own connection, outside the Store.
    void raw_exec(const std::string& sql) {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
        char* message = nullptr;
        EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
            << (message ? message : "");
        sqlite3_free(message);
        sqlite3_close(db);
    }

    // The first column of the first row of a query, as text.
    std::string raw_value(const std::string& sql) {
        sqlite3* db = nullptr;
        EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
        sqlite3_stmt* stmt = nullptr;
        std::string value = "(none)";
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
            sqlite3_step(stmt) == SQLITE_ROW) {
            const auto* text = sqlite3_column_text(stmt, 0);
            value = text ? reinterpret_cast<const char*>(text) : "NULL";
        }
        sqlite3_finalize(stmt);
        sqlite3_close(db);
        return value;
    }

    static std::vector<std::string> names(const std::vector<JobEvent>& events) {
        std::vector<std::string> out;
        for (const JobEvent& event : events)
            out.push_back(event.name);
        return out;
    }

    static std::vector<JobId> ids(const std::vector<JobRecord>& jobs) {
        std::vector<JobId> out;
        for (const JobRecord& job : jobs)
            out.push_back(job.id);
        return out;
    }

    // The bytes of the chunks, joined.
    static std::string joined(const std::vector<OutputChunk>& chunks) {
        std::string out;
        for (const OutputChunk& chunk : chunks)
            out += chunk.bytes;
        return out;
    }

    const test::ScratchDir scratch_{"gantry-store"};
    const fs::path dir_ = scratch_.path();
    const fs::path path_ = dir_ / Store::kFileName;
};

const std::string kJobspec = R"({"version":1,"tasks":[{"command":["hostname"]}]})";

TEST_F(StoreTest, CreatesTheSchemaOnFirstOpen) {
    EXPECT_FALSE(fs::exists(path_));
    { Store store = open(); }
    EXPECT_TRUE(fs::exists(path_));
    EXPECT_EQ(raw_value("PRAGMA user_version"), "2");
    EXPECT_EQ(raw_value("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw_value("SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema "
                        "WHERE type = 'table' ORDER BY name)"),
              "drained,events,jobs,output,sqlite_sequence,tasks");
    Store store = open();
    EXPECT_EQ(store.path(), path_);
    EXPECT_TRUE(store.check().ok());
}

TEST_F(StoreTest, NewJobIsRecordedWithItsSubmitEvent) {
    Store store = open();
    const Result<JobId> id = store.create_job(new_job("hostname", 1700000000.25));
    ASSERT_TRUE(id.ok()) << id.error().str();
    EXPECT_EQ(*id, 1u);
    JobRecord expected;
    expected.id = 1;
    expected.jobspec = kJobspec;
    expected.name = "hostname";
    expected.owner = 1000;
    expected.submit_time = 1700000000.25;
    expected.state = S::kNew;
    expected.state_time = 1700000000.25;
    expected.urgency = 16;
    EXPECT_EQ(store.job(1).value(), expected);
    const std::vector<JobEvent> events = store.events(1).value();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0],
              (JobEvent{1, 1700000000.25, "submit", {{"userid", 1000}, {"urgency", 16}}}));
    EXPECT_EQ(store.create_job(new_job("second", 1700000001)).value(), 2u);
    // A job bound to its front end says so in its submit event.
    NewJob interactive = new_job("third", 1700000002);
    interactive.interactive = true;
    EXPECT_EQ(store.create_job(interactive).value(), 3u);
    EXPECT_EQ(store.events(3).value().at(0).context,
              (Json{{"userid", 1000}, {"urgency", 16}, {"interactive", true}}));
}

// A whole job's life as the instance records it, then a restart.
// A store whose instance removes it writes nothing back on close: its
// write-ahead log stays (and still holds everything, for a reader that
// opens it before it goes). A kept store is checkpointed, its log removed.
TEST_F(StoreTest, OnlyAKeptStoreIsCheckpointedOnClose) {
    const std::string wal = path_.string() + "-wal";
    for (const bool temporary : {true, false}) {
        fs::remove(path_);
        fs::remove(wal);
        Store::Options options;
        options.temporary = temporary;
        {
            Store store = open(options);
            ASSERT_TRUE(store.create_job(new_job("a", 1.0)).ok());
        }
        EXPECT_EQ(fs::exists(wal), temporary);
        Store reopened = open();
        EXPECT_EQ(reopened.list().value().size(), 1u) << temporary;
    }
}

TEST_F(StoreTest, ReopenBringsBackEverything) {
    const std::string binary("a\0b\xff\xfe\n", 6);
    {
        Store store = open();
        const JobId id = store.create_job(new_job("mpi", 100.5, 42)).value();
        ASSERT_TRUE(store.append_event(id, 100.75, "depend").ok());
        ASSERT_TRUE(store.set_state(id, S::kDepend, 100.75).ok());
        ASSERT_TRUE(store.set_state(id, S::kSched, 100.8).ok());
        ASSERT_TRUE(store.set_urgency(id, 31).ok());
        ASSERT_TRUE(
            store.append_event(id, 100.85, "urgency", {{"userid", 42}, {"urgency", 31}}).ok());
        ASSERT_TRUE(store.set_R(id, R"({"version":1,"execution":{"R_lite":[]}})").ok());
        ASSERT_TRUE(store.append_event(id, 101.0, "alloc").ok());
        ASSERT_TRUE(store.set_state(id, S::kRun, 101.0).ok());
        ASSERT_TRUE(store.set_taskmap(id, "[[0,1,2,1]]").ok());
        ASSERT_TRUE(store.append_event(id, 101.5, "start").ok());
        ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "hello from 0\n").ok());
        ASSERT_TRUE(store.append_output(id, O::kStderr, 1, "warning from 1\n").ok());
        ASSERT_TRUE(store.append_output(id, O::kStdout, 1, binary).ok());
        ASSERT_TRUE(store.append_event(id, 102.0, "finish", {{"status", 256}}).ok());
        const TaskExit exits[] = {{0, 0}, {1, 256}};
        ASSERT_TRUE(store.record_task_exits(id, exits).ok());
        ASSERT_TRUE(store.set_exit_code(id, 1).ok());
        ASSERT_TRUE(
            store.append_event(id, 102.1, "release", {{"ranks", "all"}, {"final", true}}).ok());
        ASSERT_TRUE(store.set_state(id, S::kCleanup, 102.0).ok());
        ASSERT_TRUE(store.append_event(id, 102.2, "clean").ok());
        ASSERT_TRUE(store.set_state(id, S::kInactive, 102.2).ok());
        ASSERT_EQ(store.create_job(new_job("pending", 103.0)).value(), 2u);
    }
    Store store = open();
    JobRecord expected;
    expected.id = 1;
    expected.jobspec = kJobspec;
    expected.name = "mpi";
    expected.owner = 42;
    expected.submit_time = 100.5;
    expected.state = S::kInactive;
    expected.state_time = 102.2;
    expected.urgency = 31;
    expected.R = R"({"version":1,"execution":{"R_lite":[]}})";
    expected.taskmap = "[[0,1,2,1]]";
    expected.exit_code = 1;
    EXPECT_EQ(store.job(1).value(), expected);
    EXPECT_EQ(store.job(2).value().state, S::kNew);
    EXPECT_EQ(store.job(2).value().R, std::nullopt);
    EXPECT_EQ(store.job(2).value().exit_code, std::nullopt);

    const std::vector<JobEvent> expected_events = {
        {1, 100.5, "submit", {{"userid", 42}, {"urgency", 16}}},
        {2, 100.75, "depend", Json::object()},
        {3, 100.85, "urgency", {{"userid", 42}, {"urgency", 31}}},
        {4, 101.0, "alloc", Json::object()},
        {5, 101.5, "start", Json::object()},
        {6, 102.0, "finish", {{"status", 256}}},
        {7, 102.1, "release", {{"ranks", "all"}, {"final", true}}},
        {8, 102.2, "clean", Json::object()},
    };
    EXPECT_EQ(store.events(1).value(), expected_events);
    const std::vector<OutputChunk> expected_output = {
        {1, O::kStdout, 0, "hello from 0\n"},
        {2, O::kStderr, 1, "warning from 1\n"},
        {3, O::kStdout, 1, binary},
    };
    EXPECT_EQ(store.output(1).value(), expected_output);
    EXPECT_EQ(store.task_exits(1).value(), (std::vector<TaskExit>{{0, 0}, {1, 256}}));
    EXPECT_EQ(store.unfinished_jobs().value(), (std::vector<JobId>{2}));
    EXPECT_EQ(store.create_job(new_job("third", 104.0)).value(), 3u);
}

TEST_F(StoreTest, IdsAreNeverReusedAcrossPurgeAndReopen) {
    {
        Store store = open();
        for (int i = 1; i <= 3; ++i) {
            const JobId id = store.create_job(new_job("j", i)).value();
            EXPECT_EQ(id, JobId(i));
            ASSERT_TRUE(store.set_state(id, S::kInactive, 10 + i).ok());
        }
        ASSERT_TRUE(store.purge(3).ok());  // the newest: AUTOINCREMENT keeps its id taken
        EXPECT_EQ(store.create_job(new_job("j", 4)).value(), 4u);
        ASSERT_TRUE(store.set_state(4, S::kInactive, 14).ok());
        EXPECT_EQ(store.purge_inactive().value(), 3u);
        EXPECT_EQ(store.list().value().size(), 0u);
    }
    Store store = open();
    EXPECT_EQ(store.create_job(new_job("j", 5)).value(), 5u);
    EXPECT_EQ(error_of(store.job(4)), "store: no job 4");
    EXPECT_EQ(error_of(store.events(3)), "store: no job 3");
}

TEST_F(StoreTest, EventsAfterASeq) {
    Store store = open();
    const JobId id = store.create_job(new_job("j", 1)).value();
    for (int i = 2; i <= 6; ++i)
        EXPECT_EQ(store.append_event(id, i, "e" + std::to_string(i), {{"i", i}}).value(),
                  std::uint64_t(i));
    using Names = std::vector<std::string>;
    EXPECT_EQ(names(store.events(id).value()), (Names{"submit", "e2", "e3", "e4", "e5", "e6"}));
    EXPECT_EQ(names(store.events(id, 4).value()), (Names{"e5", "e6"}));
    EXPECT_EQ(names(store.events(id, 6).value()), Names{});
    EXPECT_EQ(names(store.events(id, 99).value()), Names{});
    EXPECT_EQ(names(store.events(id, 1, 2).value()), (Names{"e2", "e3"}));
    // A follower resumes where it stopped.
    std::uint64_t seen = 0;
    Names followed;
    for (;;) {
        const std::vector<JobEvent> batch = store.events(id, seen, 4).value();
        if (batch.empty())
            break;
        for (const JobEvent& event : batch)
            followed.push_back(event.name);
        seen = batch.back().seq;
    }
    EXPECT_EQ(followed, (Names{"submit", "e2", "e3", "e4", "e5", "e6"}));
    EXPECT_EQ(store.events(id, 5).value().at(0).context, (Json{{"i", 6}}));
}

TEST_F(StoreTest, OutputAfterASeqAndPerStream) {
    Store store = open();
    const JobId id = store.create_job(new_job("j", 1)).value();
    const JobId other = store.create_job(new_job("k", 2)).value();
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "o0a").ok());
    ASSERT_TRUE(store.append_output(other, O::kStdout, 0, "other").ok());
    ASSERT_TRUE(store.append_output(id, O::kStderr, 0, "e0a").ok());
    ASSERT_TRUE(store.append_output(id, O::kStdout, 1, "o1a").ok());
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "").ok());  // ignored
    ASSERT_TRUE(store.append_output(id, O::kStderr, 1, "e1a").ok());
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "o0b").ok());
    ASSERT_TRUE(store.flush().ok());

    EXPECT_EQ(store.output(id).value(), (std::vector<OutputChunk>{{1, O::kStdout, 0, "o0a"},
                                                                  {2, O::kStderr, 0, "e0a"},
                                                                  {3, O::kStdout, 1, "o1a"},
                                                                  {4, O::kStderr, 1, "e1a"},
                                                                  {5, O::kStdout, 0, "o0b"}}));
    EXPECT_EQ(store.output(other).value(), (std::vector<OutputChunk>{{1, O::kStdout, 0, "other"}}));
    EXPECT_EQ(
        store.output(id, {.after_seq = 2}).value(),
        (std::vector<OutputChunk>{
            {3, O::kStdout, 1, "o1a"}, {4, O::kStderr, 1, "e1a"}, {5, O::kStdout, 0, "o0b"}}));
    EXPECT_EQ(store.output(id, {.stream = O::kStderr}).value(),
              (std::vector<OutputChunk>{{2, O::kStderr, 0, "e0a"}, {4, O::kStderr, 1, "e1a"}}));
    EXPECT_EQ(store.output(id, {.after_seq = 3, .stream = O::kStdout}).value(),
              (std::vector<OutputChunk>{{5, O::kStdout, 0, "o0b"}}));
    EXPECT_EQ(store.output(id, {.after_seq = 5}).value(), std::vector<OutputChunk>{});
    // max_bytes: whole chunks until the bound is reached.
    EXPECT_EQ(joined(store.output(id, {.max_bytes = 4}).value()), "o0ae0a");
    EXPECT_EQ(joined(store.output(id, {.max_bytes = 3}).value()), "o0a");
    // Seqs go on after more output, across a reopen.
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "o0c").ok());
    ASSERT_TRUE(store.flush().ok());
    Store reopened = open();
    ASSERT_TRUE(reopened.append_output(id, O::kStderr, 0, "e0b").ok());
    ASSERT_TRUE(reopened.flush().ok());
    EXPECT_EQ(reopened.output(id, {.after_seq = 5}).value(),
              (std::vector<OutputChunk>{{6, O::kStdout, 0, "o0c"}, {7, O::kStderr, 0, "e0b"}}));
}

TEST_F(StoreTest, BinaryOutputIsKeptExactly) {
    Store store = open();
    const JobId id = store.create_job(new_job("j", 1)).value();
    std::string every_byte;
    for (int b = 0; b < 256; ++b)
        every_byte += static_cast<char>(b);
    const std::string nuls(1000, '\0');
    const std::string bad_utf8 =
        "\xc3\x28 \xa0\xa1 \xe2\x82 \xf0\x28\x8c\xbc \xed\xa0\x80 \xc0\xaf";
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, every_byte).ok());
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, nuls).ok());
    ASSERT_TRUE(store.append_output(id, O::kStderr, 3, bad_utf8).ok());
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, std::string_view("\0", 1)).ok());
    ASSERT_TRUE(store.flush().ok());
    Store reopened = open();
    const std::vector<OutputChunk> chunks = reopened.output(id).value();
    ASSERT_EQ(chunks.size(), 4u);
    EXPECT_EQ(chunks[0].bytes, every_byte);
    EXPECT_EQ(chunks[1].bytes, nuls);
    EXPECT_EQ(chunks[2].bytes, bad_utf8);
    EXPECT_EQ(chunks[3].bytes, std::string(1, '\0'));
    EXPECT_EQ(joined(reopened.output(id, {.stream = O::kStdout}).value()),
              every_byte + nuls + std::string(1, '\0'));
    EXPECT_EQ(raw_value("SELECT sum(length(bytes)) FROM output"),
              std::to_string(256 + 1000 + 1 + bad_utf8.size()));
}

TEST_F(StoreTest, OutputIsBufferedUntilFlushedOrTheBufferIsFull) {
    Store store = open({.output_buffer_bytes = 10});
    Store reader = open({.read_only = true});
    const JobId id = store.create_job(new_job("j", 1)).value();
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "12345").ok());
    EXPECT_EQ(store.buffered_output_bytes(), 5u);
    EXPECT_EQ(reader.output(id).value().size(), 0u);
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "6789").ok());
    EXPECT_EQ(store.buffered_output_bytes(), 9u);
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "0").ok());  // 10 bytes: written
    EXPECT_EQ(store.buffered_output_bytes(), 0u);
    EXPECT_EQ(joined(reader.output(id).value()), "1234567890");
    // Another write writes the buffer first: output before an event stays before it.
    ASSERT_TRUE(store.append_output(id, O::kStderr, 0, "late").ok());
    EXPECT_EQ(store.buffered_output_bytes(), 4u);
    ASSERT_TRUE(store.append_event(id, 2, "finish", {{"status", 0}}).ok());
    EXPECT_EQ(store.buffered_output_bytes(), 0u);
    EXPECT_EQ(reader.output(id, {.stream = O::kStderr}).value(),
              (std::vector<OutputChunk>{{4, O::kStderr, 0, "late"}}));
    // Unbuffered: every chunk at once.
    Store direct = open({.output_buffer_bytes = 0});
    ASSERT_TRUE(direct.append_output(id, O::kStdout, 2, "x").ok());
    EXPECT_EQ(direct.buffered_output_bytes(), 0u);
    EXPECT_EQ(reader.output(id, {.after_seq = 4}).value(),
              (std::vector<OutputChunk>{{5, O::kStdout, 2, "x"}}));
    // Destroying a store writes its buffer.
    {
        Store closing = open();
        ASSERT_TRUE(closing.append_output(id, O::kStdout, 2, "bye").ok());
        EXPECT_EQ(reader.output(id, {.after_seq = 5}).value().size(), 0u);
    }
    EXPECT_EQ(reader.output(id, {.after_seq = 5}).value(),
              (std::vector<OutputChunk>{{6, O::kStdout, 2, "bye"}}));
}

// A failed write of the buffer reports the job and SQLite's message, and
// drops what was buffered.
TEST_F(StoreTest, FailedOutputWriteIsReportedAndDropped) {
    Store store = open();
    const JobId id = store.create_job(new_job("j", 1)).value();
    ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "lost").ok());
    raw_exec("DELETE FROM events; DELETE FROM jobs");  // behind the store's back
    EXPECT_EQ(error_of(store.flush()),
              "store: appending output to job 1 failed: FOREIGN KEY constraint failed");
    EXPECT_EQ(store.buffered_output_bytes(), 0u);
    EXPECT_TRUE(store.flush().ok());
    EXPECT_EQ(raw_value("SELECT count(*) FROM output"), "0");
    EXPECT_EQ(store.create_job(new_job("k", 2)).value(), 2u);
}

TEST_F(StoreTest, ListFiltersNewestFirst) {
    Store store = open();
    ASSERT_EQ(store.create_job(new_job("a", 1, 100)).value(), 1u);
    ASSERT_EQ(store.create_job(new_job("b", 2, 100)).value(), 2u);
    ASSERT_EQ(store.create_job(new_job("a", 3, 200)).value(), 3u);
    ASSERT_EQ(store.create_job(new_job("c", 4, 200)).value(), 4u);
    ASSERT_EQ(store.create_job(new_job("a", 5, 100)).value(), 5u);
    ASSERT_TRUE(store.set_state(1, S::kInactive, 10).ok());
    ASSERT_TRUE(store.set_state(2, S::kRun, 10).ok());
    ASSERT_TRUE(store.set_state(3, S::kSched, 10).ok());
    ASSERT_TRUE(store.set_state(4, S::kRun, 10).ok());
    using Ids = std::vector<JobId>;
    EXPECT_EQ(ids(store.list().value()), (Ids{5, 4, 3, 2, 1}));
    EXPECT_EQ(ids(store.list({.states = {S::kRun}}).value()), (Ids{4, 2}));
    EXPECT_EQ(ids(store.list({.states = {S::kNew, S::kInactive}}).value()), (Ids{5, 1}));
    EXPECT_EQ(ids(store.list({.name = "a"}).value()), (Ids{5, 3, 1}));
    EXPECT_EQ(ids(store.list({.owner = 200}).value()), (Ids{4, 3}));
    EXPECT_EQ(ids(store.list({.states = {S::kSched, S::kNew}, .name = "a", .owner = 100}).value()),
              (Ids{5}));
    EXPECT_EQ(ids(store.list({.limit = 2}).value()), (Ids{5, 4}));
    EXPECT_EQ(ids(store.list({.name = "a", .limit = 1}).value()), (Ids{5}));
    EXPECT_EQ(ids(store.list({.name = "zzz"}).value()), Ids{});
    EXPECT_EQ(store.list({.states = {S::kSched}}).value().at(0).name, "a");
}

TEST_F(StoreTest, CountUsesTheListFilters) {
    Store store = open();
    EXPECT_EQ(store.count().value(), 0u);
    ASSERT_EQ(store.create_job(new_job("a", 1, 100)).value(), 1u);
    ASSERT_EQ(store.create_job(new_job("b", 2, 100)).value(), 2u);
    ASSERT_EQ(store.create_job(new_job("a", 3, 200)).value(), 3u);
    ASSERT_TRUE(store.set_state(1, S::kInactive, 10).ok());
    ASSERT_TRUE(store.set_state(3, S::kInactive, 10).ok());
    EXPECT_EQ(store.count().value(), 3u);
    EXPECT_EQ(store.count({.states = {S::kInactive}}).value(), 2u);
    EXPECT_EQ(store.count({.states = {S::kInactive}, .owner = 200}).value(), 1u);
    EXPECT_EQ(store.count({.states = {S::kNew, S::kRun}, .name = "b"}).value(), 1u);
    EXPECT_EQ(store.count({.name = "zzz"}).value(), 0u);
    // The limit is list()'s: a count is of them all.
    EXPECT_EQ(store.count({.limit = 1}).value(), 3u);
    ASSERT_TRUE(store.purge(1).ok());
    EXPECT_EQ(store.count({.states = {S::kInactive}}).value(), 1u);
}

// The broker's restart: every job that was not INACTIVE gets an exception
// event and ends, never silently lost.
TEST_F(StoreTest, UnfinishedJobsAfterARestart) {
    {
        Store store = open();
        for (int i = 1; i <= 5; ++i)
            ASSERT_TRUE(store.create_job(new_job("j", i)).ok());
        ASSERT_TRUE(store.set_state(1, S::kInactive, 10).ok());
        ASSERT_TRUE(store.set_state(2, S::kRun, 10).ok());
        ASSERT_TRUE(store.set_state(3, S::kCleanup, 10).ok());
        ASSERT_TRUE(store.set_state(5, S::kInactive, 10).ok());
        ASSERT_TRUE(store.append_output(2, O::kStdout, 0, "running...\n").ok());
        // The broker dies here.
    }
    Store store = open();
    const std::vector<JobId> unfinished = store.unfinished_jobs().value();
    EXPECT_EQ(unfinished, (std::vector<JobId>{2, 3, 4}));
    for (const JobId id : unfinished) {
        Result<Transaction> transaction = store.transaction();
        ASSERT_TRUE(transaction.ok()) << transaction.error().str();
        ASSERT_TRUE(store
                        .append_event(id, 20, "exception",
                                      {{"type", "broker-restart"},
                                       {"severity", 0},
                                       {"note", "the broker restarted while the job was active"}})
                        .ok());
        ASSERT_TRUE(store.set_state(id, S::kInactive, 20).ok());
        ASSERT_TRUE(transaction->commit().ok());
    }
    EXPECT_EQ(store.unfinished_jobs().value(), std::vector<JobId>{});
    for (const JobId id : unfinished)
        EXPECT_EQ(names(store.events(id).value()),
                  (std::vector<std::string>{"submit", "exception"}))
            << id;
    EXPECT_EQ(store.events(2).value().back().context,
              (Json{{"type", "broker-restart"},
                    {"severity", 0},
                    {"note", "the broker restarted while the job was active"}}));
    EXPECT_EQ(joined(store.output(2).value()), "running...\n");
}

TEST_F(StoreTest, StatesOnlyMoveForward) {
    Store store = open();
    const JobId id = store.create_job(new_job("j", 1)).value();
    EXPECT_TRUE(store.set_state(id, S::kSched, 2).ok());  // DEPEND may be skipped
    EXPECT_TRUE(store.set_state(id, S::kSched, 3).ok());  // no change
    EXPECT_EQ(store.job(id).value().state_time, 2.0);
    EXPECT_EQ(error_of(store.set_state(id, S::kDepend, 4)),
              "store: job 1 cannot go back from SCHED to DEPEND");
    EXPECT_TRUE(store.set_state(id, S::kInactive, 5).ok());  // an exception before RUN
    EXPECT_EQ(error_of(store.set_state(id, S::kRun, 6)),
              "store: job 1 is INACTIVE: its state cannot change to RUN");
    EXPECT_EQ(store.job(id).value().state, S::kInactive);
    EXPECT_EQ(error_of(store.set_state(7, S::kRun, 6)), "store: no job 7");
    for (const S state : {S::kNew, S::kDepend, S::kSched, S::kRun, S::kCleanup, S::kInactive})
        EXPECT_EQ(parse_job_state(to_string(state)), state);
    EXPECT_EQ(parse_job_state("PRIORITY"), std::nullopt);
    EXPECT_EQ(to_string(O::kStdout), "stdout");
    EXPECT_EQ(to_string(O::kStderr), "stderr");
}

TEST_F(StoreTest, AProgramsRAndTaskMapAreReplaced) {
    Store store = open();
    const JobId id = store.create_job(new_job("p", 1)).value();
    ASSERT_TRUE(store.replace_R(id, "{\"a\":1}").ok());
    ASSERT_TRUE(store.replace_R(id, "{\"b\":2}").ok());
    ASSERT_TRUE(store.replace_taskmap(id, "[[0,1,1,1]]").ok());
    ASSERT_TRUE(store.replace_taskmap(id, "[[0,1,2,1]]").ok());
    const JobRecord job = store.job(id).value();
    EXPECT_EQ(job.R, "{\"b\":2}");
    EXPECT_EQ(job.taskmap, "[[0,1,2,1]]");
    EXPECT_EQ(error_of(store.replace_R(9, "{}")), "store: no job 9");
}

TEST_F(StoreTest, RecordsSetOnceAreRefusedTheSecondTime) {
    Store store = open();
    const JobId id = store.create_job(new_job("j", 1)).value();
    ASSERT_TRUE(store.set_R(id, "{}").ok());
    EXPECT_EQ(error_of(store.set_R(id, "{}")), "store: job 1 already has R");
    ASSERT_TRUE(store.set_taskmap(id, "[[0,1,1,1]]").ok());
    EXPECT_EQ(error_of(store.set_taskmap(id, "[[0,1,1,1]]")),
              "store: job 1 already has a task map");
    ASSERT_TRUE(store.set_exit_code(id, 0).ok());
    EXPECT_EQ(error_of(store.set_exit_code(id, 3)), "store: job 1 already has an exit code");
    EXPECT_EQ(store.job(id).value().exit_code, 0);
    const TaskExit first[] = {{0, 0}, {2, 9}};
    ASSERT_TRUE(store.record_task_exits(id, first).ok());
    const TaskExit again[] = {{1, 0}, {2, 0}};
    EXPECT_EQ(error_of(store.record_task_exits(id, again)),
              "store: task 2 of job 1 already has its exit recorded");
    // Nothing of a refused write stays: task 1 is not recorded either.
    EXPECT_EQ(store.task_exits(id).value(), (std::vector<TaskExit>{{0, 0}, {2, 9}}));
    EXPECT_EQ(error_of(store.set_R(9, "{}")), "store: no job 9");
    EXPECT_EQ(error_of(store.set_exit_code(9, 0)), "store: no job 9");
}

TEST_F(StoreTest, UnknownJobsAndBadInput) {
    Store store = open();
    EXPECT_EQ(error_of(store.job(1)), "store: no job 1");
    EXPECT_EQ(error_of(store.events(1)), "store: no job 1");
    EXPECT_EQ(error_of(store.output(1)), "store: no job 1");
    EXPECT_EQ(error_of(store.task_exits(1)), "store: no job 1");
    EXPECT_EQ(error_of(store.append_event(1, 1, "x")), "store: no job 1");
    EXPECT_EQ(error_of(store.append_output(1, O::kStdout, 0, "x")), "store: no job 1");
    EXPECT_EQ(error_of(store.set_urgency(1, 3)), "store: no job 1");
    EXPECT_EQ(error_of(store.purge(1)), "store: no job 1");
    const TaskExit exits[] = {{0, 0}};
    EXPECT_EQ(error_of(store.record_task_exits(1, exits)), "store: no job 1");

    NewJob job = new_job("j", 1);
    job.jobspec = "{\"version\":1,";
    EXPECT_EQ(error_of(store.create_job(job)),
              "jobspec: invalid JSON at offset 13 in \"{\\\"version\\\":1,\"");
    job.jobspec = "[1]";
    EXPECT_EQ(error_of(store.create_job(job)), "store: a jobspec is a JSON object, not array");
    job = new_job("j", 1);
    job.urgency = 32;
    EXPECT_EQ(error_of(store.create_job(job)), "store: urgency 32 is not within 0-31");
    job = new_job("j", std::nan(""));
    EXPECT_EQ(error_of(store.create_job(job)), "store: a time must be a finite number of seconds");
    EXPECT_EQ(store.list().value().size(), 0u);

    const JobId id = store.create_job(new_job("j", 1)).value();
    EXPECT_EQ(error_of(store.append_event(id, 2, "x", Json::array())),
              "store: the context of event \"x\" is a JSON object, not array");
    EXPECT_EQ(error_of(store.append_event(id, 2, "")), "store: an event needs a name");
    EXPECT_EQ(error_of(store.set_urgency(id, -1)), "store: urgency -1 is not within 0-31");
    EXPECT_EQ(store.events(id).value().size(), 1u);
}

// A missing job and a failing SQLite are different kinds of error: the job
// manager answers "no such job" for the first only.
TEST_F(StoreTest, ErrorsSayTheirKind) {
    Store store = open();
    EXPECT_EQ(store.job(1).error().kind(), ErrorKind::kNotFound);
    EXPECT_EQ(store.events(1).error().kind(), ErrorKind::kNotFound);
    NewJob bad = new_job("j", 1);
    bad.urgency = 32;
    EXPECT_EQ(store.create_job(bad).error().kind(), ErrorKind::kInvalid);
    const JobId id = store.create_job(new_job("j", 1)).value();
    raw_exec("ALTER TABLE jobs RENAME TO jobs_aside");  // behind the store's back
    const auto failed = store.job(id);
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().str(), "store: reading job 1 failed: no such table: jobs");
    EXPECT_EQ(failed.error().kind(), ErrorKind::kSystem);
    raw_exec("ALTER TABLE jobs_aside RENAME TO jobs");
    EXPECT_EQ(store.job(id).value().name, "j");
}

TEST_F(StoreTest, PurgeRemovesOnlyInactiveJobs) {
    Store store = open();
    for (int i = 1; i <= 5; ++i)
        ASSERT_TRUE(store.create_job(new_job("j", i)).ok());
    ASSERT_TRUE(store.set_state(2, S::kRun, 10).ok());
    ASSERT_TRUE(store.append_output(1, O::kStdout, 0, "out").ok());
    ASSERT_TRUE(store.record_task_exits(1, std::vector<TaskExit>{{0, 0}}).ok());
    // Inactive since 30, 20, 40: purged in that order.
    ASSERT_TRUE(store.set_state(1, S::kInactive, 30).ok());
    ASSERT_TRUE(store.set_state(3, S::kInactive, 20).ok());
    ASSERT_TRUE(store.set_state(4, S::kInactive, 40).ok());

    EXPECT_EQ(error_of(store.purge(2)), "store: job 2 is RUN: only INACTIVE jobs are purged");
    EXPECT_EQ(error_of(store.purge(5)), "store: job 5 is NEW: only INACTIVE jobs are purged");
    EXPECT_EQ(store.purge_inactive(2).value(), 2u);
    EXPECT_EQ(ids(store.list().value()), (std::vector<JobId>{5, 4, 2}));
    // Their events, output and task exits went with them.
    EXPECT_EQ(raw_value("SELECT count(*) FROM events WHERE job IN (1, 3)"), "0");
    EXPECT_EQ(raw_value("SELECT count(*) FROM output"), "0");
    EXPECT_EQ(raw_value("SELECT count(*) FROM tasks"), "0");
    ASSERT_TRUE(store.purge(4).ok());
    EXPECT_EQ(error_of(store.purge(4)), "store: no job 4");
    EXPECT_EQ(store.purge_inactive().value(), 0u);
    EXPECT_EQ(ids(store.list().value()), (std::vector<JobId>{5, 2}));
}

TEST_F(StoreTest, TransactionCommitsOrRollsBack) {
    Store store = open();
    Store reader = open({.read_only = true});
    const JobId id = store.create_job(new_job("j", 1)).value();
    {
        Result<Transaction> transaction = store.transaction();
        ASSERT_TRUE(transaction.ok());
        EXPECT_EQ(error_of(store.transaction()),
                  "store: opening a transaction failed: one is open already");
        ASSERT_TRUE(store.append_event(id, 2, "exception", {{"type", "cancel"}}).ok());
        ASSERT_TRUE(store.set_state(id, S::kInactive, 2).ok());
        ASSERT_TRUE(store.append_output(id, O::kStdout, 0, "x").ok());
        ASSERT_TRUE(store.flush().ok());
        // A refused write inside leaves the others.
        EXPECT_FALSE(store.set_state(id, S::kRun, 3).ok());
        EXPECT_EQ(store.events(id).value().size(), 2u);   // this connection sees its own writes
        EXPECT_EQ(reader.events(id).value().size(), 1u);  // others do not, yet
        // Dropped uncommitted: rolled back.
    }
    EXPECT_EQ(store.events(id).value().size(), 1u);
    EXPECT_EQ(store.job(id).value().state, S::kNew);
    EXPECT_EQ(store.output(id).value().size(), 0u);
    {
        Result<Transaction> transaction = store.transaction();
        ASSERT_TRUE(transaction.ok());
        ASSERT_TRUE(store.append_event(id, 2, "exception", {{"type", "cancel"}}).ok());
        ASSERT_TRUE(store.set_state(id, S::kInactive, 2).ok());
        ASSERT_TRUE(transaction->commit().ok());
        EXPECT_EQ(error_of(transaction->commit()),
                  "store: committing a transaction failed: it is over");
    }
    EXPECT_EQ(names(reader.events(id).value()), (std::vector<std::string>{"submit", "exception"}));
    EXPECT_EQ(reader.job(id).value().state, S::kInactive);
}

// WAL: a reader on another connection sees what is committed, at once and
// without waiting for the writer's open transaction.
TEST_F(StoreTest, ConcurrentReaderSeesCommittedData) {
    Store writer = open();
    Store reader = open({.busy_timeout_ms = 0});
    const JobId id = writer.create_job(new_job("j", 1)).value();
    EXPECT_EQ(reader.job(id).value().name, "j");
    ASSERT_TRUE(writer.append_output(id, O::kStdout, 0, "abc").ok());
    EXPECT_EQ(reader.output(id).value().size(), 0u);
    ASSERT_TRUE(writer.flush().ok());
    EXPECT_EQ(joined(reader.output(id).value()), "abc");

    Result<Transaction> transaction = writer.transaction();
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(writer.append_event(id, 2, "start").ok());
    EXPECT_EQ(names(reader.events(id).value()), (std::vector<std::string>{"submit"}));
    EXPECT_EQ(reader.list().value().size(), 1u);
    // A second writer waits for the first: without a busy timeout, at once refused.
    EXPECT_EQ(error_of(reader.create_job(new_job("k", 2))),
              "store: creating a job failed: database is locked");
    ASSERT_TRUE(transaction->commit().ok());
    EXPECT_EQ(names(reader.events(id).value()), (std::vector<std::string>{"submit", "start"}));
    EXPECT_EQ(reader.create_job(new_job("k", 2)).value(), 2u);
    EXPECT_EQ(writer.job(2).value().name, "k");
}

TEST_F(StoreTest, ReadOnlyStoreRefusesWrites) {
    EXPECT_EQ(error_of(Store::open(path_, {.read_only = true})),
              "store: opening \"" + path_.string() + "\" failed: unable to open database file");
    Store store = open();
    ASSERT_TRUE(store.create_job(new_job("j", 1)).ok());
    Store reader = open({.read_only = true});
    EXPECT_EQ(reader.job(1).value().name, "j");
    EXPECT_EQ(error_of(reader.create_job(new_job("j", 1))),
              "store: creating a job failed: the store is open read-only");
    EXPECT_EQ(error_of(reader.append_output(1, O::kStdout, 0, "x")),
              "store: appending output to job 1 failed: the store is open read-only");
    EXPECT_EQ(error_of(reader.transaction()),
              "store: opening a transaction failed: the store is open read-only");
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
    { Store store = open(); }
    raw_exec("PRAGMA user_version = 3");
    EXPECT_EQ(error_of(Store::open(path_)),
              "store: opening \"" + path_.string() +
                  "\" failed: its schema version 3 is newer than this gantry's (2): use a newer "
                  "gantry");
}

// A store of version 1 (before drained nodes) is read as it is, and
// opened for writing gets the table, its jobs kept.
TEST_F(StoreTest, VersionOneStoreIsUpgraded) {
    {
        Store store = open();
        ASSERT_TRUE(store.create_job(new_job("j", 1)).ok());
    }
    raw_exec("DROP TABLE drained");
    raw_exec("PRAGMA user_version = 1");
    {
        auto reader = Store::open(path_, {.read_only = true});
        ASSERT_TRUE(reader.ok()) << reader.error().str();
        EXPECT_EQ(reader->drained().value(), std::vector<DrainedNode>{});
        EXPECT_EQ(reader->list().value().size(), 1u);
    }
    EXPECT_EQ(raw_value("PRAGMA user_version"), "1");
    Store store = open();
    EXPECT_EQ(raw_value("PRAGMA user_version"), "2");
    EXPECT_EQ(store.list().value().size(), 1u);
    EXPECT_TRUE(store.set_drained(IdSet{3}, "disk", 10).ok());
    EXPECT_EQ(store.drained().value(), (std::vector<DrainedNode>{{3, "disk", 10}}));
}

TEST_F(StoreTest, DrainedNodesAreKept) {
    {
        Store store = open();
        ASSERT_TRUE(store.set_drained(IdSet::range(1, 3), "maintenance", 100.5).ok());
        ASSERT_TRUE(store.set_drained(IdSet{2}, "bad fan", 200).ok());  // replaces
        ASSERT_TRUE(store.set_undrained(IdSet{3, 9}).ok());
    }
    Store store = open();
    EXPECT_EQ(store.drained().value(),
              (std::vector<DrainedNode>{{1, "maintenance", 100.5}, {2, "bad fan", 200}}));
    EXPECT_EQ(error_of(store.set_drained(IdSet{1}, "x", std::nan(""))),
              "store: a time must be a finite number of seconds");
}

TEST_F(StoreTest, GarbageFileIsRefusedWithOneMessage) {
    {
        std::ofstream out(path_, std::ios::binary);
        for (int i = 0; i < 1000; ++i)
            out << "this is not a database, line " << i << '\n';
    }
    const std::string size_before = std::to_string(fs::file_size(path_));
    EXPECT_EQ(error_of(Store::open(path_)),
              "store: opening \"" + path_.string() + "\" failed: file is not a database");
    EXPECT_EQ(error_of(Store::open(path_, {.read_only = true})),
              "store: opening \"" + path_.string() + "\" failed: file is not a database");
    EXPECT_EQ(std::to_string(fs::file_size(path_)), size_before);  // left as it was
}

TEST_F(StoreTest, OtherSqliteDatabaseIsRefused) {
    raw_exec("CREATE TABLE notes (text TEXT)");
    EXPECT_EQ(error_of(Store::open(path_)),
              "store: opening \"" + path_.string() +
                  "\" failed: it is an SQLite database but not a job store");
    raw_exec("PRAGMA user_version = 1");
    EXPECT_EQ(error_of(Store::open(path_)),
              "store: opening \"" + path_.string() +
                  "\" failed: it lacks tables of a job store (schema version 1)");
    raw_exec("PRAGMA user_version = -3");
    EXPECT_EQ(error_of(Store::open(path_)),
              "store: opening \"" + path_.string() +
                  "\" failed: its schema version -3 is not one gantry knows");
}

TEST_F(StoreTest, CorruptFileIsRefusedWithOneMessage) {
    {
        Store store = open();
        ASSERT_TRUE(store.create_job(new_job("j", 1)).ok());
    }
    ASSERT_FALSE(fs::exists(path_.string() + "-wal") && fs::file_size(path_.string() + "-wal") > 0);
    {
        // Page 1 past the file header: the schema's b-tree.
        std::fstream file(path_, std::ios::binary | std::ios::in | std::ios::out);
        file.seekp(100);
        const std::string junk(400, '\xa5');
        file.write(junk.data(), junk.size());
    }
    EXPECT_EQ(error_of(Store::open(path_)),
              "store: opening \"" + path_.string() + "\" failed: database disk image is malformed");
}

TEST_F(StoreTest, CheckFindsAnIntactFileOk) {
    Store store = open();
    ASSERT_TRUE(store.create_job(new_job("j", 1)).ok());
    EXPECT_TRUE(store.check().ok());
}

}  // namespace
}  // namespace gantry::broker
