// The job manager through its API (src/broker/jobs.h): each test starts an
// instance with the real `gantry start --daemon` on a state directory of its
// own, on an inventory of two cores of this host, and talks to it as front
// ends do, through overlay::Client. Jobs run in real job shells as real
// processes; their records are the instance's SQLite store.
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "formats/rset.h"
#include "overlay/client.h"
#include "support/eventlog.h"
#include "support/machine.h"
#include "support/other_user.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"
#include "util/base64.h"
#include "util/json.h"

namespace gantry {
namespace {

using overlay::Client;
using test::ended;
using test::event_names;
using test::event_time;
using test::eventually;
using test::exists;
using test::host_name;
using test::read_file;
using Clock = std::chrono::steady_clock;
using JobId = std::uint64_t;
using Strings = std::vector<std::string>;
// A job's output: the bytes of each (stream, rank), rank -1 the shell's own.
using Output = std::map<std::pair<std::string, std::int64_t>, std::string>;

constexpr const char* kPath = "/usr/local/bin:/usr/bin:/bin";

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void touch_file(const std::string& path) {
    std::ofstream(path) << "";
}

// `seq 1 N` as it prints.
std::string seq_output(int n) {
    std::string text;
    for (int i = 1; i <= n; ++i)
        text += std::to_string(i) + "\n";
    return text;
}

// Output compared without printing it whole: for a large one, where each
// stream's bytes first differ.
testing::AssertionResult same_output(const Output& actual, const Output& expected) {
    if (actual == expected)
        return testing::AssertionSuccess();
    auto failure = testing::AssertionFailure();
    std::set<std::pair<std::string, std::int64_t>> keys;
    for (const auto& [key, bytes] : actual)
        keys.insert(key);
    for (const auto& [key, bytes] : expected)
        keys.insert(key);
    for (const auto& key : keys) {
        const auto a = actual.find(key);
        const auto e = expected.find(key);
        const std::string got = a == actual.end() ? "" : a->second;
        const std::string want = e == expected.end() ? "" : e->second;
        if (a != actual.end() && e != expected.end() && got == want)
            continue;
        std::size_t at = 0;
        while (at < got.size() && at < want.size() && got[at] == want[at])
            ++at;
        failure << key.first << " of rank " << key.second << ": " << got.size() << " bytes"
                << (a == actual.end() ? " (none)" : "") << ", expected " << want.size()
                << (e == expected.end() ? " (none)" : "") << "; from byte " << at << ": "
                << testing::PrintToString(got.substr(at, 40)) << " instead of "
                << testing::PrintToString(want.substr(at, 40)) << "\n";
    }
    return failure;
}

// The next reply on a connection within `limit`, or nothing.
std::optional<overlay::Reply> next_reply(
    Client& client, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    if (!client.has_reply()) {
        pollfd ready{client.native_handle(), POLLIN, 0};
        if (::poll(&ready, 1, static_cast<int>(limit.count())) != 1)
            return std::nullopt;
    }
    auto reply = client.receive();
    if (!reply)
        return std::nullopt;
    return std::move(*reply);
}

// What job.attach sent, gathered.
struct Attached {
    Json jobspec;
    Strings events;
    Json finish;  // the finish event's context
    Output output;
    std::uint64_t last_seq = 0;
    bool seq_in_order = true;
    std::size_t in_base64 = 0;  // chunks that came in base64 (not UTF-8)
    Json summary;               // the last reply

    // Takes one reply that has "more".
    void take(const Json& reply) {
        if (reply.contains("jobspec"))
            jobspec = reply.at("jobspec");
        for (const Json& chunk : reply.value("output", Json::array())) {
            const auto bytes = data_of(chunk);
            EXPECT_TRUE(bytes.ok());
            output[{chunk.at("stream").get<std::string>(), chunk.at("rank").get<std::int64_t>()}] +=
                bytes.ok() ? *bytes : "(bad data)";
            in_base64 += chunk.value("encoding", "") == "base64" ? 1 : 0;
            const auto seq = chunk.at("seq").get<std::uint64_t>();
            seq_in_order = seq_in_order && seq > last_seq;
            last_seq = seq;
        }
        for (const Json& event : reply.value("events", Json::array())) {
            events.push_back(event.at("name").get<std::string>());
            if (event.at("name") == "finish")
                finish = event.at("context");
        }
    }
};

Json event_context(const Json& info, const std::string& name) {
    for (const Json& event : info.value("eventlog", Json::array()))
        if (event.at("name") == name)
            return event.at("context");
    return nullptr;
}

const Strings kRanToTheEnd = {"submit", "depend", "alloc", "start", "finish", "release", "clean"};

// An instance started with `gantry start --daemon`, shut down at the end
// unless the test killed it.
class Instance {
public:
    Instance(const std::string& state_dir, const std::string& resources)
        : uri_("unix://" + state_dir + "/socket") {
        const auto started = test::run_gantry(
            {"start", "--daemon", "--state-dir", state_dir, "--resources", resources});
        EXPECT_EQ(started.exit_code, 0) << started.err;
        EXPECT_EQ(started.err, "");
        EXPECT_EQ(started.out, uri_ + "\n");
        auto client = Client::connect(uri_);
        EXPECT_TRUE(client.ok()) << client.error().str();
        if (client.ok())
            client_.emplace(std::move(*client));
    }
    ~Instance() { shutdown(); }
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    bool ok() const { return client_.has_value(); }
    Client& client() { return *client_; }
    const std::string& uri() const { return uri_; }
    std::string socket() const { return uri_.substr(std::string("unix://").size()); }
    Client connect() const {
        auto client = Client::connect(uri_);
        EXPECT_TRUE(client.ok()) << client.error().str();
        return std::move(*client);
    }
    pid_t pid() {
        const auto info = client_->call("instance.info");
        EXPECT_TRUE(info.ok()) << info.error().str();
        return info.ok() ? info->at("pid").get<pid_t>() : -1;
    }
    // instance.shutdown, then the end of the connection.
    void shutdown() {
        if (!client_)
            return;
        if (client_->call("instance.shutdown").ok()) {
            EXPECT_TRUE(client_->wait_closed().ok());
        }
        client_.reset();
    }
    // The broker was killed: nothing to shut down.
    void forget() { client_.reset(); }

private:
    std::string uri_;
    std::optional<Client> client_;
};

class Jobs : public testing::Test {
protected:
    void SetUp() override {
        host_ = host_name();
        const auto R =
            test::run_gantry({"R", "encode", "--ranks", "0", "--cores", "0-1", "--hosts", host_});
        ASSERT_EQ(R.exit_code, 0) << R.err;
        std::ofstream(resources()) << R.out;
        start();
    }
    void TearDown() override { instance_.reset(); }

    std::string file(const std::string& name) const { return dir_ / name; }
    std::string resources() const { return file("R.json"); }
    std::string state_dir() const { return file("state"); }
    void start() {
        instance_.reset();
        instance_.emplace(state_dir(), resources());
        ASSERT_TRUE(instance_->ok());
    }
    Instance& instance() { return *instance_; }
    Client& client() { return instance_->client(); }

    // A jobspec of `command` in `ntasks` tasks, run in the test's directory
    // with PATH alone.
    Json jobspec(const Strings& command, int ntasks = 1, Json attributes = Json::object()) const {
        attributes["cwd"] = dir_.path();
        attributes["environment"] = {{"PATH", kPath}};
        return {{"version", 1},
                {"apps", Json::array({Json{{"command", command}, {"ntasks", ntasks}}})},
                {"attributes", std::move(attributes)}};
    }
    Json sh(const std::string& script, int ntasks = 1, Json attributes = Json::object()) const {
        return jobspec({"sh", "-c", script}, ntasks, std::move(attributes));
    }

    // The result of a call that must succeed.
    Json call(const std::string& method, const Json& params) {
        auto reply = client().call(method, params);
        EXPECT_TRUE(reply.ok()) << method << " " << to_compact(params) << ": "
                                << reply.error().str();
        return reply.ok() ? std::move(*reply) : Json();
    }
    // The error of a call that must fail.
    std::string refusal(const std::string& method, const Json& params) {
        auto reply = client().call(method, params);
        EXPECT_FALSE(reply.ok()) << method << " " << to_compact(params) << ": "
                                 << (reply.ok() ? to_compact(*reply) : "");
        return reply.ok() ? "(accepted)" : reply.error().str();
    }
    JobId submit(const Json& spec) {
        const Json reply = call("job.submit", {{"jobspec", spec}});
        return reply.is_object() ? reply.at("id").get<JobId>() : 0;
    }
    Json info(JobId id) { return call("job.info", {{"id", id}}); }
    std::string state(JobId id) { return info(id).value("state", "(none)"); }
    Json wait(JobId id) { return call("job.wait", {{"id", id}}); }
    // Waits until the job's tasks have started (only waits: tests compare
    // the whole eventlog after).
    bool started(JobId id) {
        return eventually([&] {
            const Strings names = event_names(info(id));
            return std::find(names.begin(), names.end(), "start") != names.end();
        });
    }
    // job.attach on `client` to its end.
    Attached attach(JobId id, Client& on) {
        Attached attached;
        auto summary =
            on.call("job.attach", {{"id", id}}, [&](const Json& reply) { attached.take(reply); });
        EXPECT_TRUE(summary.ok()) << summary.error().str();
        if (summary.ok())
            attached.summary = std::move(*summary);
        EXPECT_TRUE(attached.seq_in_order);
        return attached;
    }
    Attached attach(JobId id) { return attach(id, client()); }
    // The shell's line about a task of this host.
    std::string task_line(int rank, const std::string& what) const {
        return "gantry: task " + std::to_string(rank) + " (" + host_ + ") " + what + "\n";
    }

    test::ScratchDir dir_{"gantry-jobs-api"};
    std::string host_;
    std::optional<Instance> instance_;
};

// --- One job from submit to its end ------------------------------------------

TEST_F(Jobs, SubmitWaitInfoAndOutput) {
    const std::string script =
        "echo out $GANTRY_TASK_RANK; echo err $GANTRY_TASK_RANK >&2; "
        "if [ $GANTRY_TASK_RANK = 0 ]; then seq 1 20000; fi; printf '\\377\\000x'";
    const JobId id = submit(sh(script, 2, {{"name", "two"}}));
    EXPECT_EQ(id, 1u);

    const Json summary = wait(id);
    EXPECT_EQ(summary.at("id"), 1);
    EXPECT_EQ(summary.at("name"), "two");
    EXPECT_EQ(summary.at("state"), "INACTIVE");
    EXPECT_EQ(summary.at("urgency"), 16);
    EXPECT_EQ(summary.at("userid"), ::getuid());
    EXPECT_EQ(summary.at("ntasks"), 2);
    EXPECT_EQ(summary.at("exit_code"), 0);
    EXPECT_TRUE(summary.at("exception").is_null());
    EXPECT_LE(summary.at("submit_time").get<double>(), summary.at("state_time").get<double>());

    const Json job = info(id);
    EXPECT_EQ(event_names(job), kRanToTheEnd);
    std::uint64_t seq = 0;
    double time = 0;
    for (const Json& event : job.at("eventlog")) {
        EXPECT_EQ(event.at("seq"), ++seq);
        EXPECT_GE(event.at("time").get<double>(), time);
        time = event.at("time").get<double>();
    }
    EXPECT_EQ(event_context(job, "submit"), (Json{{"userid", ::getuid()}, {"urgency", 16}}));
    EXPECT_EQ(event_context(job, "depend"), Json::object());
    EXPECT_EQ(event_context(job, "alloc"), Json::object());
    EXPECT_EQ(event_context(job, "start"), Json::object());
    EXPECT_EQ(event_context(job, "finish"), (Json{{"status", 0}}));
    EXPECT_EQ(event_context(job, "release"), (Json{{"ranks", "all"}, {"final", true}}));
    EXPECT_EQ(event_context(job, "clean"), Json::object());
    EXPECT_EQ(job.at("R").at("execution").at("R_lite"),
              Json::parse(R"([{"rank":"0","children":{"core":"0-1"}}])"));
    EXPECT_EQ(job.at("R").at("execution").at("nodelist"), Json::array({host_}));
    EXPECT_EQ(job.at("taskmap"), Json::parse("[[0,1,2,1]]"));
    EXPECT_EQ(job.at("task_exits"),
              Json::parse(R"([{"rank":0,"wait_status":0},{"rank":1,"wait_status":0}])"));
    EXPECT_EQ(job.at("jobspec").at("apps").at(0).at("command"), Json::array({"sh", "-c", script}));
    EXPECT_EQ(job.at("jobspec").at("attributes").at("cwd"), dir_.path());
    for (const char* key : {"id", "name", "state", "urgency", "userid", "submit_time", "state_time",
                            "ntasks", "exit_code", "exception"})
        EXPECT_EQ(job.at(key), summary.at(key)) << key;

    const Attached attached = attach(id);
    EXPECT_EQ(attached.jobspec, job.at("jobspec"));
    EXPECT_EQ(attached.events, kRanToTheEnd);
    EXPECT_EQ(attached.summary, summary);
    const std::string tail("\377\000x", 3);
    EXPECT_TRUE(same_output(attached.output, {{{"stdout", 0}, "out 0\n" + seq_output(20000) + tail},
                                              {{"stdout", 1}, "out 1\n" + tail},
                                              {{"stderr", 0}, "err 0\n"},
                                              {{"stderr", 1}, "err 1\n"}}));
}

TEST_F(Jobs, ExitCodes) {
    const JobId three = submit(sh("exit 3"));
    const JobId killed = submit(sh("kill -9 $$"));
    const JobId missing = submit(jobspec({"no-such-command-here", "x"}));

    EXPECT_EQ(wait(three).at("exit_code"), 3);
    Json job = info(three);
    EXPECT_EQ(event_names(job), kRanToTheEnd);
    EXPECT_EQ(event_context(job, "finish"), (Json{{"status", 768}}));
    EXPECT_EQ(job.at("task_exits"), Json::parse(R"([{"rank":0,"wait_status":768}])"));
    EXPECT_EQ(attach(three).output,
              (Output{{{"stderr", -1}, task_line(0, "exited with exit code 3")}}));

    EXPECT_EQ(wait(killed).at("exit_code"), 128 + SIGKILL);
    job = info(killed);
    EXPECT_EQ(event_names(job), kRanToTheEnd);
    // The job's wait status is its shell's, which exits 128+N for a task
    // killed by signal N; the task's own is the signal.
    EXPECT_EQ(event_context(job, "finish"), (Json{{"status", (128 + SIGKILL) << 8}}));
    EXPECT_EQ(job.at("task_exits"), Json::parse(R"([{"rank":0,"wait_status":9}])"));
    EXPECT_EQ(attach(killed).output,
              (Output{{{"stderr", -1}, task_line(0, "killed by signal 9 (Killed)")}}));

    const Json summary = wait(missing);
    EXPECT_EQ(summary.at("exit_code"), 127);
    EXPECT_TRUE(summary.at("exception").is_null());
    job = info(missing);
    // No task started: no start event.
    EXPECT_EQ(event_names(job),
              (Strings{"submit", "depend", "alloc", "finish", "release", "clean"}));
    EXPECT_EQ(event_context(job, "finish"), (Json{{"status", 127 << 8}}));
    EXPECT_EQ(attach(missing).output,
              (Output{{{"stderr", -1},
                       "gantry: app 0 (no-such-command-here x): no-such-command-here: No such "
                       "file or directory\n"}}));
}

// --- Following a job ---------------------------------------------------------

TEST_F(Jobs, AttachWhileRunningSeesOutputAsItComes) {
    const JobId id = submit(
        sh("echo first; while [ ! -e go ]; do sleep 0.02; done; echo second; echo last >&2"));
    Client front = instance().connect();
    ASSERT_TRUE(front.send("job.attach", {{"id", id}}).ok());
    Attached attached;
    // Until the first line: the job cannot go on before the file exists.
    while (attached.output[{"stdout", 0}].empty()) {
        auto reply = next_reply(front);
        ASSERT_TRUE(reply) << "no reply within 10 s";
        ASSERT_TRUE(reply->result) << reply->message.value_or("");
        ASSERT_TRUE(reply->more) << to_compact(*reply->result);
        attached.take(*reply->result);
    }
    EXPECT_EQ(attached.output, (Output{{{"stdout", 0}, "first\n"}}));
    EXPECT_EQ(state(id), "RUN");
    touch_file(file("go"));
    for (;;) {
        auto reply = next_reply(front);
        ASSERT_TRUE(reply) << "no reply within 10 s";
        ASSERT_TRUE(reply->result) << reply->message.value_or("");
        if (!reply->more) {
            attached.summary = *reply->result;
            break;
        }
        attached.take(*reply->result);
    }
    EXPECT_FALSE(attached.jobspec.is_null());
    EXPECT_EQ(attached.events, kRanToTheEnd);
    EXPECT_EQ(attached.finish, (Json{{"status", 0}}));
    EXPECT_EQ(attached.output,
              (Output{{{"stdout", 0}, "first\nsecond\n"}, {{"stderr", 0}, "last\n"}}));
    EXPECT_EQ(attached.summary.at("state"), "INACTIVE");
    EXPECT_EQ(attached.summary.at("exit_code"), 0);
    EXPECT_EQ(attached.summary, wait(id));
}

TEST_F(Jobs, FrontEndGoneMidJobLosesNothing) {
    const JobId id =
        submit(sh("echo one; while [ ! -e go ]; do sleep 0.02; done; seq 1 50000; echo two >&2"));
    {
        Client front = instance().connect();
        ASSERT_TRUE(front.send("job.attach", {{"id", id}}).ok());
        Attached attached;
        while (attached.output[{"stdout", 0}].empty()) {
            auto reply = next_reply(front);
            ASSERT_TRUE(reply && reply->result && reply->more);
            attached.take(*reply->result);
        }
        EXPECT_EQ(attached.output, (Output{{{"stdout", 0}, "one\n"}}));
    }  // the front end closes its connection while the job waits
    touch_file(file("go"));
    const Json summary = wait(id);
    EXPECT_EQ(summary.at("state"), "INACTIVE");
    EXPECT_EQ(summary.at("exit_code"), 0);
    const Attached again = attach(id);
    EXPECT_EQ(again.events, kRanToTheEnd);
    EXPECT_TRUE(same_output(
        again.output, {{{"stdout", 0}, "one\n" + seq_output(50000)}, {{"stderr", 0}, "two\n"}}));
    // The instance serves others as before.
    EXPECT_EQ(wait(submit(jobspec({"true"}))).at("exit_code"), 0);
}

// --- Stdin ---------------------------------------------------------------------

TEST_F(Jobs, StdinOfARunningJob) {
    const JobId id = submit(jobspec({"cat"}));
    ASSERT_TRUE(started(id));
    std::string first(300000, '\0');
    for (std::size_t i = 0; i < first.size(); ++i)
        first[i] = static_cast<char>(i * 7 % 256);
    const std::string second = "hello\nworld";
    EXPECT_EQ(refusal("job.stdin", {{"id", id}, {"data", "aGk="}, {"encoding", "utf-16"}}),
              "job.stdin: unknown \"encoding\" \"utf-16\" (only \"base64\" is known)");
    EXPECT_EQ(refusal("job.stdin", {{"id", id}, {"data", "aGk"}, {"encoding", "base64"}}),
              "job.stdin: base64: length 3 is not a multiple of 4");
    EXPECT_EQ(refusal("job.stdin", {{"id", id}, {"data", 1}}),
              "job.stdin: \"data\" must be a string, not number");
    // Binary in base64, text as it is.
    EXPECT_EQ(
        call("job.stdin", {{"id", id}, {"data", base64_encode(first)}, {"encoding", "base64"}}),
        Json::object());
    EXPECT_EQ(call("job.stdin", {{"id", id}, {"data", second}, {"eof", true}}), Json::object());
    EXPECT_EQ(wait(id).at("exit_code"), 0);
    const Attached attached = attach(id);
    EXPECT_TRUE(same_output(attached.output, {{{"stdout", 0}, first + second}}));
    EXPECT_GT(attached.in_base64, 0u);
    EXPECT_EQ(refusal("job.stdin", {{"id", id}, {"data", "late"}}),
              "job " + std::to_string(id) + ": has ended");
}

TEST_F(Jobs, StdinSentWhilePendingIsDeliveredAtStart) {
    const JobId id = submit(jobspec({"cat"}, 1, {{"urgency", 0}}));
    EXPECT_EQ(call("job.stdin", {{"id", id}, {"data", "early\n"}}), Json::object());
    EXPECT_EQ(call("job.stdin",
                   {{"id", id}, {"data", "YmlyZA=="}, {"encoding", "base64"}, {"eof", true}}),
              Json::object());
    EXPECT_EQ(state(id), "SCHED");
    EXPECT_EQ(call("job.urgency", {{"id", id}, {"urgency", 16}}), Json::object());
    EXPECT_EQ(wait(id).at("exit_code"), 0);
    const Attached attached = attach(id);
    EXPECT_EQ(attached.events, (Strings{"submit", "depend", "urgency", "alloc", "start", "finish",
                                        "release", "clean"}));
    EXPECT_EQ(attached.output, (Output{{{"stdout", 0}, "early\nbird"}}));
    EXPECT_EQ(attached.in_base64, 0u);  // text comes as it is
}

// --- The queue -----------------------------------------------------------------

TEST_F(Jobs, QueuedWhileTheInventoryIsFull) {
    const JobId a = submit(sh("while [ ! -e go ]; do sleep 0.02; done", 2));
    const JobId b = submit(jobspec({"echo", "b"}));
    ASSERT_TRUE(started(a));
    // Whether b waited is in the eventlogs at the end; here, how the queue
    // is listed meanwhile.
    EXPECT_EQ(state(a), "RUN");
    EXPECT_EQ(state(b), "SCHED");
    EXPECT_EQ(event_names(info(b)), (Strings{"submit", "depend"}));
    const Json sched = call("job.list", {{"states", {"SCHED"}}}).at("jobs");
    ASSERT_EQ(sched.size(), 1u);
    EXPECT_EQ(sched.at(0).at("id"), b);
    const Json running = call("job.list", {{"states", {"RUN"}}}).at("jobs");
    ASSERT_EQ(running.size(), 1u);
    EXPECT_EQ(running.at(0).at("id"), a);
    // Newest first.
    const Json all = call("job.list", Json::object()).at("jobs");
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all.at(0).at("id"), b);
    EXPECT_EQ(all.at(1).at("id"), a);

    touch_file(file("go"));
    EXPECT_EQ(wait(b).at("exit_code"), 0);
    EXPECT_EQ(wait(a).at("exit_code"), 0);
    const Json ja = info(a), jb = info(b);
    EXPECT_EQ(event_names(ja), kRanToTheEnd);
    EXPECT_EQ(event_names(jb), kRanToTheEnd);
    // b got its core only once a had given the inventory back: however late
    // b would have started, an alloc while a ran comes before a's release.
    EXPECT_GT(event_time(ja, "release"), 0);
    EXPECT_GE(event_time(jb, "alloc"), event_time(ja, "release"));
    EXPECT_EQ(attach(b).output, (Output{{{"stdout", 0}, "b\n"}}));
}

// --- Dependencies --------------------------------------------------------------

Json dependency(const std::string& type, JobId id) {
    return {{"dependencies", Json::array({Json{{"type", type}, {"id", id}}})}};
}

TEST_F(Jobs, AfterOkOnAFailedJobIsNeverSatisfied) {
    // Held, so that the dependent is submitted while it waits.
    const JobId failing = submit(jobspec({"false"}, 1, {{"urgency", 0}}));
    const JobId waiting = submit(jobspec({"echo", "never"}, 1, dependency("afterok", failing)));
    EXPECT_EQ(state(waiting), "DEPEND");
    EXPECT_EQ(call("job.urgency", {{"id", failing}, {"urgency", 16}}), Json::object());
    EXPECT_EQ(wait(failing).at("exit_code"), 1);

    const std::string note = "afterok:" + std::to_string(failing) + " can never be satisfied";
    Json summary = wait(waiting);
    EXPECT_EQ(summary.at("state"), "INACTIVE");
    EXPECT_TRUE(summary.at("exit_code").is_null());
    EXPECT_EQ(summary.at("exception"), (Json{{"type", "dependency"}, {"note", note}}));
    Json job = info(waiting);
    EXPECT_EQ(event_names(job), (Strings{"submit", "exception", "clean"}));
    EXPECT_EQ(event_context(job, "exception"),
              (Json{{"type", "dependency"}, {"severity", 0}, {"note", note}, {"userid", 0}}));
    EXPECT_EQ(attach(waiting).output, Output{});

    // On a job that has already ended: decided at once.
    const JobId late = submit(jobspec({"echo", "never"}, 1, dependency("afterok", failing)));
    summary = wait(late);
    EXPECT_TRUE(summary.at("exit_code").is_null());
    EXPECT_EQ(summary.at("exception"), (Json{{"type", "dependency"}, {"note", note}}));
    EXPECT_EQ(event_names(info(late)), (Strings{"submit", "exception", "clean"}));
}

TEST_F(Jobs, AfterAnyAndAfterNotOkRunAfterAFailure) {
    const JobId failing = submit(sh("exit 2", 1, {{"urgency", 0}}));
    const JobId any = submit(jobspec({"echo", "any"}, 1, dependency("afterany", failing)));
    const JobId notok = submit(jobspec({"echo", "notok"}, 1, dependency("afternotok", failing)));
    const JobId ok = submit(jobspec({"echo", "ok"}, 1, dependency("afterok", failing)));
    EXPECT_EQ(state(any), "DEPEND");
    EXPECT_EQ(state(notok), "DEPEND");
    EXPECT_EQ(call("job.urgency", {{"id", failing}, {"urgency", 16}}), Json::object());
    EXPECT_EQ(wait(failing).at("exit_code"), 2);
    for (const auto& [id, word] : {std::pair{any, "any"}, std::pair{notok, "notok"}}) {
        const Json summary = wait(id);
        EXPECT_EQ(summary.at("exit_code"), 0) << word;
        EXPECT_TRUE(summary.at("exception").is_null()) << word;
        EXPECT_EQ(event_names(info(id)), kRanToTheEnd) << word;
        EXPECT_EQ(attach(id).output, (Output{{{"stdout", 0}, std::string(word) + "\n"}})) << word;
    }
    EXPECT_EQ(wait(ok).at("exception").at("type"), "dependency");

    // afternotok on a success is never satisfied; afterany on it runs.
    const JobId good = submit(jobspec({"true"}));
    EXPECT_EQ(wait(good).at("exit_code"), 0);
    const Json never = wait(submit(jobspec({"true"}, 1, dependency("afternotok", good))));
    EXPECT_EQ(never.at("exception"),
              (Json{{"type", "dependency"},
                    {"note", "afternotok:" + std::to_string(good) + " can never be satisfied"}}));
    EXPECT_EQ(wait(submit(jobspec({"true"}, 1, dependency("afterany", good)))).at("exit_code"), 0);
}

TEST_F(Jobs, DependencyOnAnUnknownJobIsRefused) {
    EXPECT_EQ(refusal("job.submit", {{"jobspec", jobspec({"true"}, 1, dependency("afterok", 99))}}),
              "job.submit: --dependency=afterok:99: no such job");
    EXPECT_EQ(call("job.list", Json::object()).at("jobs"), Json::array());
    EXPECT_EQ(submit(jobspec({"true"})), 1u);
}

// The store failing (here its jobs table renamed behind the broker's back,
// so that SQLite itself fails) is not a missing job: each answer says what
// failed, a dependency is not called unknown, and the instance goes on
// once the table is back.
TEST_F(Jobs, AStoreThatFailsIsNotAMissingJob) {
    const JobId done = submit(jobspec({"true"}));
    EXPECT_EQ(wait(done).at("exit_code"), 0);
    const auto alter = [this](const std::string& statement) {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open((state_dir() + "/gantry.db").c_str(), &db), SQLITE_OK);
        sqlite3_busy_timeout(db, 5000);
        EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
            << sqlite3_errmsg(db);
        sqlite3_close(db);
    };
    alter("ALTER TABLE jobs RENAME TO jobs_aside");
    const std::string failed = "store: reading job 1 failed: no such table: jobs";
    EXPECT_EQ(refusal("job.info", {{"id", done}}), failed);
    EXPECT_EQ(refusal("job.wait", {{"id", done}}), failed);
    EXPECT_EQ(refusal("job.cancel", {{"id", done}}), failed);
    EXPECT_EQ(refusal("job.purge", {{"id", done}}), failed);
    EXPECT_EQ(
        refusal("job.submit", {{"jobspec", jobspec({"true"}, 1, dependency("afterok", done))}}),
        failed);
    alter("ALTER TABLE jobs_aside RENAME TO jobs");
    EXPECT_EQ(refusal("job.info", {{"id", 99}}), "job 99: no such job");
    const JobId after = submit(jobspec({"true"}, 1, dependency("afterok", done)));
    EXPECT_EQ(wait(after).at("exit_code"), 0);
    EXPECT_EQ(event_names(info(after)), kRanToTheEnd);
}

// --- Urgency, cancel, kill, time limit -------------------------------------------

TEST_F(Jobs, UrgencyZeroHoldsUntilRaised) {
    const JobId id = submit(jobspec({"echo", "held"}, 1, {{"urgency", 0}}));
    Json job = info(id);
    EXPECT_EQ(job.at("state"), "SCHED");
    EXPECT_EQ(job.at("urgency"), 0);
    EXPECT_EQ(event_names(job), (Strings{"submit", "depend"}));
    EXPECT_EQ(event_context(job, "submit"), (Json{{"userid", ::getuid()}, {"urgency", 0}}));
    EXPECT_EQ(call("job.urgency", {{"id", id}, {"urgency", 31}}), Json::object());
    const Json summary = wait(id);
    EXPECT_EQ(summary.at("exit_code"), 0);
    EXPECT_EQ(summary.at("urgency"), 31);
    job = info(id);
    // `alloc` after `urgency`: held until raised, however long it was held.
    EXPECT_EQ(event_names(job), (Strings{"submit", "depend", "urgency", "alloc", "start", "finish",
                                         "release", "clean"}));
    EXPECT_EQ(event_context(job, "urgency"), (Json{{"urgency", 31}}));
    EXPECT_EQ(attach(id).output, (Output{{{"stdout", 0}, "held\n"}}));
    EXPECT_EQ(refusal("job.urgency", {{"id", id}, {"urgency", 1}}),
              "job " + std::to_string(id) + ": has ended");
}

TEST_F(Jobs, CancelOfAPendingJob) {
    const JobId id = submit(jobspec({"echo", "never"}, 1, {{"urgency", 0}}));
    EXPECT_EQ(call("job.cancel", {{"id", id}}), Json::object());
    const Json summary = wait(id);
    EXPECT_EQ(summary.at("state"), "INACTIVE");
    EXPECT_TRUE(summary.at("exit_code").is_null());
    const std::string note = "canceled by " + std::to_string(::getuid());
    EXPECT_EQ(summary.at("exception"), (Json{{"type", "cancel"}, {"note", note}}));
    const Json job = info(id);
    EXPECT_EQ(event_names(job), (Strings{"submit", "depend", "exception", "clean"}));
    EXPECT_EQ(event_context(job, "exception"),
              (Json{{"type", "cancel"}, {"severity", 0}, {"note", note}, {"userid", ::getuid()}}));
    EXPECT_TRUE(job.at("R").is_null());
    EXPECT_EQ(job.at("task_exits"), Json::array());
    EXPECT_EQ(attach(id).output, Output{});
    EXPECT_EQ(refusal("job.cancel", {{"id", id}}), "job " + std::to_string(id) + ": has ended");
    EXPECT_EQ(refusal("job.cancel", {{"id", 99}}), "job 99: no such job");
}

TEST_F(Jobs, CancelOfARunningJob) {
    const JobId id = submit(jobspec({"sleep", "100"}));
    ASSERT_TRUE(started(id));
    const auto canceled = Clock::now();
    EXPECT_EQ(call("job.cancel", {{"id", id}}), Json::object());
    const Json summary = wait(id);
    EXPECT_LT(seconds_since(canceled), 5.0);  // the default kill timeout
    EXPECT_EQ(summary.at("exit_code"), 128 + SIGTERM);
    EXPECT_EQ(summary.at("exception").at("type"), "cancel");
    const Json job = info(id);
    EXPECT_EQ(event_names(job), (Strings{"submit", "depend", "alloc", "start", "exception",
                                         "finish", "release", "clean"}));
    EXPECT_EQ(event_context(job, "finish"), (Json{{"status", (128 + SIGTERM) << 8}}));
    EXPECT_EQ(attach(id).output,
              (Output{{{"stderr", -1}, task_line(0, "killed by signal 15 (Terminated)")}}));
}

TEST_F(Jobs, CancelKillsAJobIgnoringSigtermAfterItsKillTimeout) {
    const JobId id = submit(
        // Bounded (about 30 s), in case it outlives the job.
        sh("trap '' TERM; touch ready; i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); "
           "done",
           1, {{"kill_timeout", 0.5}}));
    ASSERT_TRUE(eventually([&] { return exists(file("ready")); }));
    const auto canceled = Clock::now();
    EXPECT_EQ(call("job.cancel", {{"id", id}}), Json::object());
    const Json summary = wait(id);
    const double took = seconds_since(canceled);
    EXPECT_GE(took, 0.5);
    EXPECT_LT(took, 3.0);
    EXPECT_EQ(summary.at("exit_code"), 128 + SIGKILL);
    EXPECT_EQ(attach(id).output,
              (Output{{{"stderr", -1}, task_line(0, "killed by signal 9 (Killed)")}}));
}

TEST_F(Jobs, CancelAllCancelsTheSelectedJobsInOneStep) {
    const JobId running = submit(jobspec({"sleep", "100"}));
    ASSERT_TRUE(started(running));
    const JobId held = submit(jobspec({"true"}, 1, {{"urgency", 0}}));
    // Ends when `held` does, maybe within the same step: then it is not
    // among those canceled, and the count says so.
    const JobId dependent = submit(jobspec({"true"}, 1, dependency("afterok", held)));
    EXPECT_EQ(call("job.cancelall", {{"dry_run", true}}), (Json{{"canceled", 3}}));
    EXPECT_EQ(call("job.cancelall", {{"states", {"RUN"}}, {"dry_run", true}}),
              (Json{{"canceled", 1}}));
    EXPECT_EQ(call("job.cancelall", {{"userid", ::getuid() + 1}}), (Json{{"canceled", 0}}));
    EXPECT_EQ(state(held), "SCHED");
    const Json canceled = call("job.cancelall", {{"userid", ::getuid()}});
    for (const JobId id : {running, held})
        EXPECT_EQ(wait(id).at("exception").at("type"), "cancel") << id;
    const std::string dependent_end = wait(dependent).at("exception").at("type");
    EXPECT_EQ(canceled, (Json{{"canceled", dependent_end == "cancel" ? 3 : 2}})) << dependent_end;
    // Nothing active is left.
    EXPECT_EQ(call("job.cancelall", Json::object()), (Json{{"canceled", 0}}));
    EXPECT_EQ(refusal("job.cancelall", {{"states", "RUN"}}),
              "job.cancelall: \"states\" must be an array of names");
    EXPECT_EQ(refusal("job.cancelall", {{"userid", -1}}),
              "job.cancelall: \"userid\" must be a uid");
    EXPECT_EQ(refusal("job.cancelall", {{"dry_run", 1}}),
              "job.cancelall: \"dry_run\" is number, expected a boolean");
}

TEST_F(Jobs, ResourceListSaysWhatJobsHold) {
    const auto list = [&] { return call("resource.list", Json::object()); };
    const Json idle = list();
    const Json inventory = ResourceSet::parse(read_file(resources())).value().to_json();
    EXPECT_EQ(idle.at("all"), inventory);
    EXPECT_EQ(idle.at("free"), inventory);
    EXPECT_EQ(ResourceSet::from_json(idle.at("allocated")).value().nnodes(), 0u);
    EXPECT_EQ(ResourceSet::from_json(idle.at("down")).value().nnodes(), 0u);
    const JobId one = submit(jobspec({"sleep", "100"}));
    ASSERT_TRUE(started(one));
    const Json busy = list();
    const auto allocated = ResourceSet::from_json(busy.at("allocated")).value();
    const auto free = ResourceSet::from_json(busy.at("free")).value();
    EXPECT_EQ(allocated.ncores(), 1u);
    EXPECT_EQ(free.ncores(), 1u);
    EXPECT_EQ(allocated.nodelist().encode(), host_);
    EXPECT_EQ(free.nodelist().encode(), host_);
    EXPECT_EQ(call("job.cancel", {{"id", one}}), Json::object());
    wait(one);
    EXPECT_EQ(list(), idle);
}

TEST_F(Jobs, KillSendsTheSignalToTheTasks) {
    // The task's process group gets the signal: its child ignores it (set
    // before the fork, kept across exec), so that only the task's trap acts.
    // `ready` is made by the shell itself: a `touch` still exiting when the
    // signal comes would die of it (a trapped signal is default in children).
    const JobId id =
        submit(sh("trap '' USR1; sleep 100 & pid=$!; trap 'echo got; kill $pid; exit 0' USR1; "
                  ": >ready; wait $pid"));
    ASSERT_TRUE(eventually([&] { return exists(file("ready")); }));
    EXPECT_EQ(call("job.kill", {{"id", id}, {"signal", SIGUSR1}}), Json::object());
    const Json summary = wait(id);
    EXPECT_EQ(summary.at("exit_code"), 0);
    EXPECT_TRUE(summary.at("exception").is_null());
    EXPECT_EQ(attach(id).output, (Output{{{"stdout", 0}, "got\n"}}));
    EXPECT_EQ(refusal("job.kill", {{"id", id}, {"signal", 0}}),
              "job.kill: signal 0 is not a signal number (1-64)");
    EXPECT_EQ(refusal("job.kill", {{"id", id}}), "job " + std::to_string(id) + ": has ended");
}

TEST_F(Jobs, KillOfAPendingJobIsRefused) {
    const JobId id = submit(jobspec({"true"}, 1, {{"urgency", 0}}));
    EXPECT_EQ(refusal("job.kill", {{"id", id}}),
              "job " + std::to_string(id) + ": is not running (SCHED)");
    EXPECT_EQ(call("job.cancel", {{"id", id}}), Json::object());
}

TEST_F(Jobs, TimeLimit) {
    const auto submitted = Clock::now();
    const JobId id = submit(jobspec({"sleep", "100"}, 1, {{"time_limit", 1}}));
    const Json summary = wait(id);
    const double took = seconds_since(submitted);
    EXPECT_GE(took, 1.0);
    EXPECT_LT(took, 4.0);
    EXPECT_EQ(summary.at("exit_code"), 128 + SIGTERM);
    EXPECT_EQ(event_names(info(id)), kRanToTheEnd);
    EXPECT_EQ(attach(id).output, (Output{{{"stderr", -1},
                                          "gantry: job hit its time limit of 1s\n" +
                                              task_line(0, "killed by signal 15 (Terminated)")}}));
}

// --- Refused at submit -----------------------------------------------------------

TEST_F(Jobs, InfeasibleJobsAreRefused) {
    EXPECT_EQ(refusal("job.submit", {{"jobspec", jobspec({"true"}, 3)}}),
              "scheduler: 3 tasks of 1 core requested, the instance holds 2");
    Json with_hosts = jobspec({"true"}, 1);
    with_hosts["job"] = {{"hosts", "elsewhere:2"}};
    EXPECT_EQ(refusal("job.submit", {{"jobspec", with_hosts}}),
              "job.submit: host elsewhere is not one of the instance's nodes (" + host_ + ")");
    Json simulated = jobspec({"true"}, 1);
    simulated["job"] = {{"topology", "core:4"}};
    EXPECT_EQ(refusal("job.submit", {{"jobspec", simulated}}),
              "job.submit: job.topology simulates nodes, where nothing can run");
    Json mpmd = jobspec({"true"}, 1);
    mpmd["apps"].push_back(Json{{"command", {"true"}}});
    EXPECT_EQ(refusal("job.submit", {{"jobspec", mpmd}}),
              "job.submit: apps[1].ntasks is 0: every app of an MPMD program needs a task "
              "count inside an instance");
    mpmd["apps"][1]["ntasks"] = 1;
    mpmd["apps"][1]["hosts"] = "elsewhere";
    EXPECT_EQ(refusal("job.submit", {{"jobspec", mpmd}}),
              "job.submit: host elsewhere is not one of the instance's nodes (" + host_ + ")");
    EXPECT_EQ(refusal("job.submit", {{"jobspec", {{"version", 1}}}}),
              "jobspec: missing key \"apps\"");
    EXPECT_EQ(refusal("job.submit", Json::object()), "job.submit: \"jobspec\" is missing");
    // Nothing was recorded: the next job is the first.
    EXPECT_EQ(call("job.list", Json::object()).at("jobs"), Json::array());
    EXPECT_EQ(submit(jobspec({"true"}, 2)), 1u);
}

// --- A job shell that dies --------------------------------------------------------

TEST_F(Jobs, TasksDoNotOutliveTheirShell) {
    const JobId id = submit(sh("echo $$ > task.pid; exec sleep 100"));
    ASSERT_TRUE(started(id));
    ASSERT_TRUE(eventually([&] { return !read_file(file("task.pid")).empty(); }));
    const pid_t task = std::stoi(read_file(file("task.pid")));
    const pid_t shell = test::parent_of(task);
    ASSERT_GT(shell, 1);
    EXPECT_EQ(read_file("/proc/" + std::to_string(shell) + "/cmdline"),
              std::string("gantry\0job-shell\0", 17));
    ASSERT_EQ(::kill(shell, SIGKILL), 0);
    const Json summary = wait(id);
    EXPECT_EQ(summary.at("state"), "INACTIVE");
    EXPECT_NE(summary.at("exit_code"), 0);
    // The job's cores are free again: nothing of it may still run there.
    EXPECT_TRUE(eventually([&] { return ended(task); }, std::chrono::seconds(5)))
        << "task " << task << " (sleep 100) outlived its job shell and its job";
    ::kill(task, SIGKILL);
}

// --- Restart ---------------------------------------------------------------------

TEST_F(Jobs, RestartAfterTheBrokerWasKilled) {
    const JobId running = submit(sh("echo $$ > task.pid; exec sleep 100"));
    const JobId held = submit(jobspec({"echo", "after"}, 1, {{"urgency", 0}}));
    ASSERT_TRUE(started(running));
    ASSERT_TRUE(eventually([&] { return !read_file(file("task.pid")).empty(); }));
    const pid_t task = std::stoi(read_file(file("task.pid")));
    ASSERT_FALSE(ended(task));
    EXPECT_EQ(state(held), "SCHED");

    const pid_t broker = instance().pid();
    ASSERT_GT(broker, 0);
    ASSERT_EQ(::kill(broker, SIGKILL), 0);
    instance().forget();
    EXPECT_TRUE(eventually([&] { return ended(broker); }));
    // The job's shell sees the broker gone and kills its tasks.
    EXPECT_TRUE(eventually([&] { return ended(task); }));

    start();
    Json job = info(running);
    EXPECT_EQ(job.at("state"), "INACTIVE");
    EXPECT_TRUE(job.at("exit_code").is_null());
    EXPECT_EQ(event_names(job),
              (Strings{"submit", "depend", "alloc", "start", "exception", "release", "clean"}));
    EXPECT_EQ(event_context(job, "exception"), (Json{{"type", "lost"},
                                                     {"severity", 0},
                                                     {"note", "the broker ended while the job ran"},
                                                     {"userid", 0}}));
    EXPECT_EQ(job.at("exception"),
              (Json{{"type", "lost"}, {"note", "the broker ended while the job ran"}}));

    job = info(held);
    EXPECT_EQ(job.at("state"), "SCHED");
    EXPECT_EQ(event_names(job), (Strings{"submit", "depend"}));
    EXPECT_EQ(call("job.urgency", {{"id", held}, {"urgency", 16}}), Json::object());
    EXPECT_EQ(wait(held).at("exit_code"), 0);
    EXPECT_EQ(attach(held).output, (Output{{{"stdout", 0}, "after\n"}}));

    // Ids go on from where they were.
    EXPECT_EQ(submit(jobspec({"true"})), held + 1);
    // The whole inventory is free again.
    EXPECT_EQ(wait(submit(jobspec({"true"}, 2))).at("exit_code"), 0);
}

// --- Purge -----------------------------------------------------------------------

TEST_F(Jobs, PurgeRemovesInactiveJobsOnly) {
    const JobId active = submit(sh("while [ ! -e go ]; do sleep 0.02; done"));
    const JobId first = submit(jobspec({"true"}));
    const JobId second = submit(jobspec({"true"}));
    EXPECT_EQ(wait(first).at("exit_code"), 0);
    EXPECT_EQ(wait(second).at("exit_code"), 0);

    EXPECT_EQ(refusal("job.purge", {{"id", active}}),
              "job " + std::to_string(active) + ": is still active");
    EXPECT_EQ(call("job.purge", {{"id", first}}), (Json{{"purged", 1}}));
    EXPECT_EQ(refusal("job.info", {{"id", first}}),
              "job " + std::to_string(first) + ": no such job");
    EXPECT_EQ(refusal("job.purge", {{"id", first}}),
              "job " + std::to_string(first) + ": no such job");
    EXPECT_EQ(call("job.purge", Json::object()), (Json{{"purged", 1}}));
    EXPECT_EQ(refusal("job.info", {{"id", second}}),
              "job " + std::to_string(second) + ": no such job");
    EXPECT_EQ(state(active), "RUN");

    touch_file(file("go"));
    EXPECT_EQ(wait(active).at("exit_code"), 0);
    EXPECT_EQ(call("job.purge", Json::object()), (Json{{"purged", 1}}));
    EXPECT_EQ(call("job.list", Json::object()).at("jobs"), Json::array());
    // Ids are never reused.
    EXPECT_EQ(submit(jobspec({"true"})), second + 1);
}

// --- Another user ----------------------------------------------------------------

TEST_F(Jobs, SubmitFromAnotherUidNeverReachesTheManager) {
    if (::getuid() != 0)
        GTEST_SKIP() << "needs root to become another uid";
    // Open the way to the socket (the instance keeps it in a 0700
    // directory), so that only the broker's check of the peer stands.
    ::chmod(dir_.path().c_str(), 0755);
    ::chmod(state_dir().c_str(), 0755);
    ::chmod(instance().socket().c_str(), 0777);
    const std::string refused = "gantry: instance of uid 0: connection refused for uid 65534";
    EXPECT_EQ(test::connect_as_nobody(instance().socket()),
              "{\"error\":{\"message\":\"" + refused + "\"}}\n");

    // A front end of uid 65534 that submits a job: what its call returns
    // comes back through a pipe.
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    const Json spec = jobspec({"touch", file("submitted")});
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(out[0]);
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(2);
        std::string said;
        if (auto client = Client::connect(instance().uri()); !client) {
            said = "connect: " + client.error().str();
        } else if (auto reply = client->call("job.submit", {{"jobspec", spec}}); reply) {
            said = "accepted: " + to_compact(*reply);
        } else {
            said = "refused: " + reply.error().str();
        }
        const bool written =
            ::write(out[1], said.data(), said.size()) == static_cast<ssize_t>(said.size());
        ::_exit(written ? 0 : 3);
    }
    ::close(out[1]);
    std::string said;
    char block[4096];
    for (ssize_t n; (n = ::read(out[0], block, sizeof block)) > 0;)
        said.append(block, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(said, "refused: instance of uid 0: connection refused for uid 65534");

    EXPECT_EQ(call("job.list", Json::object()).at("jobs"), Json::array());
    EXPECT_EQ(submit(jobspec({"true"})), 1u);
    EXPECT_FALSE(exists(file("submitted")));
}

// --- Load ------------------------------------------------------------------------

class JobsLoad : public Jobs {};

// Under the sanitizers each job's shell is an instrumented process, tens of
// times slower to start: the plain build carries the 2,000 jobs, and 200
// check the same there.
#ifdef __SANITIZE_ADDRESS__
constexpr int kLoadJobs = 200;
#else
constexpr int kLoadJobs = 2000;
#endif

TEST_F(JobsLoad, EveryJobReachesInactiveWithItsOutput) {
    constexpr int kJobs = kLoadJobs;
    const auto begun = Clock::now();
    std::map<JobId, int> number;
    for (int i = 0; i < kJobs; ++i) {
        const JobId id = submit(jobspec({"echo", std::to_string(i)}));
        ASSERT_EQ(id, static_cast<JobId>(i + 1));
        number[id] = i;
    }
    const double submitting = seconds_since(begun);
    const Json waited = call("job.wait", {{"all", true}}).at("jobs");
    const double running = seconds_since(begun);
    EXPECT_LE(waited.size(), static_cast<std::size_t>(kJobs));
    for (const Json& summary : waited) {
        EXPECT_EQ(summary.at("state"), "INACTIVE") << to_compact(summary);
        EXPECT_EQ(summary.at("exit_code"), 0) << to_compact(summary);
    }

    const Json all = call("job.list", Json::object()).at("jobs");
    ASSERT_EQ(all.size(), static_cast<std::size_t>(kJobs));
    std::set<JobId> seen;
    for (const Json& summary : all) {
        seen.insert(summary.at("id").get<JobId>());
        EXPECT_EQ(summary.at("state"), "INACTIVE") << to_compact(summary);
        EXPECT_EQ(summary.at("exit_code"), 0) << to_compact(summary);
        EXPECT_TRUE(summary.at("exception").is_null()) << to_compact(summary);
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kJobs));
    int exact = 0;
    for (const auto& [id, i] : number) {
        const Attached attached = attach(id);
        const bool same = attached.output == Output{{{"stdout", 0}, std::to_string(i) + "\n"}} &&
                          attached.events == kRanToTheEnd;
        EXPECT_TRUE(same) << "job " << id;
        exact += same;
    }
    EXPECT_EQ(exact, kJobs);
    std::printf("%d jobs: submitted in %.2f s, all inactive after %.2f s, checked after %.2f s\n",
                kJobs, submitting, running, seconds_since(begun));
}

}  // namespace
}  // namespace gantry
