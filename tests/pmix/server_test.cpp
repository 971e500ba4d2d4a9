// The PMIx server with real PMIx clients: pmix_probe (tests/pmix/programs),
// started with the environment the server gives each rank.
#include "pmix/server.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <set>

#include "support/run_command.h"

extern char** environ;

namespace gantry::pmix {
namespace {

// The events a job's server reported; a fence completes at once with this
// node's data, as for a job on one node.
struct Recorder {
    std::mutex mutex;
    std::set<std::uint32_t> connected;
    std::set<std::uint32_t> finalized;
    std::vector<std::pair<std::uint32_t, int>> aborts;
    std::atomic<int> fences = 0;

    Events events() {
        Events events;
        events.connected = [this](std::uint32_t rank) {
            const std::lock_guard lock(mutex);
            connected.insert(rank);
        };
        events.finalized = [this](std::uint32_t rank) {
            const std::lock_guard lock(mutex);
            finalized.insert(rank);
        };
        events.abort = [this](std::uint32_t rank, int status, const std::string&) {
            const std::lock_guard lock(mutex);
            aborts.emplace_back(rank, status);
        };
        events.fence = [this](std::string data, Events::FenceDone done) {
            ++fences;
            done(std::move(data));
        };
        return events;
    }
};

JobInfo two_ranks(const std::string& nspace) {
    JobInfo info;
    info.nspace = nspace;
    info.universe_size = 2;
    info.app_of_rank = {0, 1};
    info.node_of_rank = {0, 0};
    info.node_names = {"node0"};
    return info;
}

// Runs pmix_probe as every rank of `job` at once, with `args`; returns its
// output lines without their locality (machine-dependent), sorted.
std::vector<std::string> run_ranks(const Job& job, std::uint32_t ranks,
                                   const std::vector<std::string>& args) {
    int out[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    std::vector<pid_t> pids;
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        std::vector<std::string> env;
        for (char** entry = environ; *entry; ++entry)
            env.emplace_back(*entry);
        const auto added = job.task_environment(rank);
        EXPECT_TRUE(added.ok()) << added.error().str();
        env.insert(env.end(), added->begin(), added->end());
        std::vector<char*> envp;
        for (std::string& entry : env)
            envp.push_back(entry.data());
        envp.push_back(nullptr);
        std::vector<std::string> argv_text{GANTRY_PMIX_PROBE};
        argv_text.insert(argv_text.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& arg : argv_text)
            argv.push_back(arg.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        pid_t pid = -1;
        EXPECT_EQ(
            ::posix_spawn(&pid, GANTRY_PMIX_PROBE, &actions, nullptr, argv.data(), envp.data()), 0);
        posix_spawn_file_actions_destroy(&actions);
        pids.push_back(pid);
    }
    ::close(out[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<std::size_t>(n));
    ::close(out[0]);
    for (const pid_t pid : pids)
        ::waitpid(pid, nullptr, 0);
    std::vector<std::string> lines = test::lines_of(text);
    for (std::string& line : lines) {
        EXPECT_NE(line.find(" locality=SK"), std::string::npos) << line;
        line.erase(line.find(" locality="));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST(PmixServer, TellsEachRankItsPlaceAndCarriesTheFence) {
    Recorder recorder;
    auto job = Job::start(two_ranks("gantry_test_1"), recorder.events());
    ASSERT_TRUE(job.ok()) << job.error().str();
    EXPECT_EQ(run_ranks(**job, 2, {}),
              (std::vector<std::string>{
                  "rank=0 size=2 appnum=0 local_size=2 local_rank=0 node_rank=0 nodeid=0 "
                  "peers=0,1 host=node0 fence=SUCCESS next=from-1",
                  "rank=1 size=2 appnum=1 local_size=2 local_rank=1 node_rank=1 nodeid=0 "
                  "peers=0,1 host=node0 fence=SUCCESS next=from-0"}));
    EXPECT_EQ(recorder.connected, (std::set<std::uint32_t>{0, 1}));
    EXPECT_EQ(recorder.finalized, (std::set<std::uint32_t>{0, 1}));
    // A fence of this node's tasks alone never leaves the library; the
    // fences of a job on several nodes are tested in cli/openmpi_test.
    EXPECT_EQ(recorder.fences.load(), 0);
    EXPECT_TRUE(recorder.aborts.empty());
}

TEST(PmixServer, ReportsAnAbortAndATaskThatDoesNotFinalize) {
    Recorder recorder;
    auto job = Job::start(two_ranks("gantry_test_2"), recorder.events());
    ASSERT_TRUE(job.ok()) << job.error().str();
    run_ranks(**job, 2, {"abort", "7"});
    EXPECT_EQ(recorder.aborts, (std::vector<std::pair<std::uint32_t, int>>{{1, 7}}));

    Recorder second;
    auto next = Job::start(two_ranks("gantry_test_3"), second.events());
    ASSERT_TRUE(next.ok()) << next.error().str();
    run_ranks(**next, 2, {"exit"});
    EXPECT_EQ(second.connected, (std::set<std::uint32_t>{0, 1}));
    EXPECT_EQ(second.finalized, (std::set<std::uint32_t>{0}));
}

TEST(PmixServer, RemovesTheJobsDirectory) {
    Recorder recorder;
    std::string directory;
    {
        auto job = Job::start(two_ranks("gantry_test_4"), recorder.events());
        ASSERT_TRUE(job.ok()) << job.error().str();
        directory = (*job)->directory();
        EXPECT_EQ(directory, server_directory_of(::getpid()) + "/gantry_test_4");
        EXPECT_EQ(::access(directory.c_str(), F_OK), 0);
    }
    EXPECT_NE(::access(directory.c_str(), F_OK), 0);
}

// Direct modex, on the node of the task asked for: what the task put,
// which the server keeps after the task has ended.
TEST(PmixServer, ServesWhatATaskPutToAnotherNode) {
    Recorder recorder;
    auto job = Job::start(two_ranks("gantry_test_7"), recorder.events());
    ASSERT_TRUE(job.ok()) << job.error().str();
    EXPECT_EQ(run_ranks(**job, 2, {}).size(), 2u);
    std::promise<std::optional<std::string>> served;
    (*job)->serve_modex(
        0, [&served](std::optional<std::string> data) { served.set_value(std::move(data)); });
    auto answer = served.get_future();
    ASSERT_EQ(answer.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    const std::optional<std::string> data = answer.get();
    ASSERT_TRUE(data.has_value());
    EXPECT_NE(data->find("probe.key"), std::string::npos);
    EXPECT_NE(data->find("from-0"), std::string::npos);
    EXPECT_EQ(data->find("from-1"), std::string::npos);
    // What a task has committed, as the server holds it.
    EXPECT_TRUE((*job)->has_key(0, "probe.key"));
    EXPECT_TRUE((*job)->has_key(1, "probe.key"));
    EXPECT_FALSE((*job)->has_key(0, "no.such.key"));
}

// A task's get of what a task of another node put, before any fence, goes
// to Events::direct_modex; answered with nothing, the get fails at once.
TEST(PmixServer, AsksForAnotherNodesDataAndFailsCleanlyWithout) {
    Recorder recorder;
    std::mutex mutex;
    std::vector<std::pair<std::uint32_t, std::string>> asked;
    Events events = recorder.events();
    events.direct_modex = [&](std::uint32_t rank, std::string key, Events::ModexDone done) {
        {
            const std::lock_guard lock(mutex);
            asked.emplace_back(rank, std::move(key));
        }
        done(std::nullopt);
    };
    JobInfo info = two_ranks("gantry_test_8");
    info.node_names = {"node0", "node1"};
    info.node_of_rank = {0, 1};
    auto job = Job::start(info, std::move(events));
    ASSERT_TRUE(job.ok()) << job.error().str();
    EXPECT_EQ(run_ranks(**job, 1, {"nofence"}),
              (std::vector<std::string>{
                  "rank=0 size=2 appnum=0 local_size=1 local_rank=0 node_rank=0 nodeid=0 "
                  "peers=0 host=node0 fence=none next=-"}));
    const std::lock_guard lock(mutex);
    // The get names the key it needs.
    EXPECT_EQ(asked, (std::vector<std::pair<std::uint32_t, std::string>>{{1, "probe.key"}}));
}

TEST(PmixServer, RefusesABadJob) {
    Recorder recorder;
    JobInfo info = two_ranks("gantry_test_5");
    info.node_of_rank = {0, 3};
    EXPECT_EQ(Job::start(info, recorder.events()).error().str(),
              "pmix: a rank is on node 3, not one of the job's 1");
    info = two_ranks("");
    EXPECT_EQ(Job::start(info, recorder.events()).error().str(),
              "pmix: a namespace of 1 to 255 bytes is needed, not ''");
    info = two_ranks("gantry_test_6");
    auto job = Job::start(info, recorder.events());
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(Job::start(info, recorder.events()).error().str(),
              "pmix: namespace gantry_test_6 is already registered");
}

}  // namespace
}  // namespace gantry::pmix
