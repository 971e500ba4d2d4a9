// The exec service with real job shells (`gantry job-shell`) and real
// tasks: the four events in their order, the output and task ends naming
// the job and the shell's rank, and the refusal of ranks no broker serves.
#include "broker/exec_service.h"

#include <signal.h>
#include <sys/wait.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <asio/io_context.hpp>

#include "broker/instance.h"
#include "formats/jobspec.h"
#include "shell/map_inputs.h"
#include "shell/map_io.h"
#include "support/run_command.h"

namespace gantry::broker {
namespace {

using Strings = std::vector<std::string>;

// What an execution told, in order.
struct Heard {
    Strings events;  // "started", "released 0", "exception: ...", "finished W"
    std::map<std::uint32_t, std::string> stdout_of_task;
    std::string messages;
    std::map<std::uint32_t, int> task_ends;
    std::vector<std::pair<JobId, std::uint32_t>> senders;  // (job, shell rank) of each output
};

class ExecServiceTest : public ::testing::Test {
protected:
    void SetUp() override {
        auto machine = Topology::local();
        ASSERT_TRUE(machine) << machine.error().str();
        auto inventory = local_inventory(*machine);
        ASSERT_TRUE(inventory) << inventory.error().str();
        inventory_ = *inventory;
        auto topologies = local_topologies(inventory_, *machine);
        ASSERT_TRUE(topologies) << topologies.error().str();
        service_ = make_local_exec_service(loop_, test::gantry_binary(), 0, *topologies);
    }

    // A job of `ntasks` tasks of `command`, unbound, on the whole inventory.
    static Json jobspec(const Strings& command, std::uint32_t ntasks) {
        Jobspec spec;
        Jobspec::App app;
        app.command = command;
        app.ntasks = ntasks;
        app.bind_to = "none";
        spec.apps.push_back(app);
        spec.job.oversubscribe = true;
        return spec.to_json();
    }

    // Job 7's request, with what a broker reads on this machine to map it.
    static ExecRequest request(const ResourceSet& R, const Json& spec) {
        const auto parsed = Jobspec::from_json(spec);
        return ExecRequest{7, R, spec,
                           shell::map_inputs_to_json(shell::read_map_inputs(parsed.value()))};
    }

    ExecEvents listen(Heard& heard) {
        return ExecEvents{
            [&heard] { heard.events.push_back("started"); },
            [&heard](std::uint32_t rank) {
                heard.events.push_back("released " + std::to_string(rank));
            },
            [&heard](std::string_view, const Error& error) {
                heard.events.push_back("exception: " + error.str());
            },
            [&heard, this](int status) {
                heard.events.push_back("finished " + std::to_string(status));
                loop_.stop();
            },
            [&heard](const ShellOutput& output) {
                heard.senders.emplace_back(output.job, output.shell_rank);
                if (output.kind == ShellOutput::Kind::kStdout)
                    heard.stdout_of_task[output.task_rank] += output.bytes;
                else if (output.kind == ShellOutput::Kind::kMessage)
                    heard.messages += output.bytes;
            },
            [&heard](const TaskEnd& end) {
                EXPECT_EQ(end.job, JobId{7});
                EXPECT_EQ(end.shell_rank, 0U);
                heard.task_ends[end.task_rank] = end.wait_status;
            },
        };
    }

    asio::io_context loop_;
    ResourceSet inventory_;
    std::unique_ptr<ExecService> service_;
};

TEST_F(ExecServiceTest, StartedThenReleasedPerRankThenFinishedWithTheJobsStatus) {
    Heard heard;
    auto execution = service_->start(
        request(inventory_, jobspec({"sh", "-c", "echo task $PMI_RANK"}, 2)), listen(heard));
    ASSERT_TRUE(execution) << execution.error().str();
    loop_.run();
    EXPECT_EQ(heard.events, (Strings{"started", "released 0", "finished 0"}));
    EXPECT_EQ(heard.stdout_of_task,
              (std::map<std::uint32_t, std::string>{{0, "task 0\n"}, {1, "task 1\n"}}));
    EXPECT_EQ(heard.task_ends, (std::map<std::uint32_t, int>{{0, 0}, {1, 0}}));
    for (const auto& [job, rank] : heard.senders) {
        EXPECT_EQ(job, JobId{7});
        EXPECT_EQ(rank, 0U);
    }
}

// The failing task's status, whichever task fails and whichever ends last
// (two failing at once would race: the shell's first is the first reaped).
TEST_F(ExecServiceTest, TheFailingTaskGivesTheFinishedStatus) {
    for (const int failing : {0, 1}) {
        Heard heard;
        const std::string script =
            "[ $PMI_RANK = " + std::to_string(failing) + " ] && exit $((PMI_RANK + 3)); exit 0";
        auto execution =
            service_->start(request(inventory_, jobspec({"sh", "-c", script}, 2)), listen(heard));
        ASSERT_TRUE(execution) << execution.error().str();
        loop_.restart();
        loop_.run();
        const int status = (failing + 3) << 8;
        EXPECT_EQ(heard.events,
                  (Strings{"started", "released 0", "finished " + std::to_string(status)}));
        EXPECT_EQ(heard.task_ends[static_cast<std::uint32_t>(failing)], status);
        EXPECT_EQ(heard.task_ends[static_cast<std::uint32_t>(1 - failing)], 0);
    }
}

TEST_F(ExecServiceTest, TerminateEndsTheTasksAndStillFinishes) {
    Heard heard;
    auto execution = service_->start(
        request(inventory_, jobspec({"sh", "-c", "echo up; exec sleep 300"}, 1)), listen(heard));
    ASSERT_TRUE(execution) << execution.error().str();
    // Terminated once its task has said it runs.
    while (heard.stdout_of_task[0] != "up\n" && !loop_.stopped())
        loop_.run_one();
    (*execution)->terminate();
    loop_.run();
    ASSERT_EQ(heard.events.size(), 3U);
    EXPECT_EQ(heard.events[0], "started");
    EXPECT_EQ(heard.events[1], "released 0");
    EXPECT_EQ(heard.task_ends, (std::map<std::uint32_t, int>{{0, SIGTERM}}));
    EXPECT_EQ(heard.events[2], "finished " + std::to_string((128 + SIGTERM) << 8));
}

TEST_F(ExecServiceTest, ARankWhereNoBrokerRunsIsRefused) {
    auto R = ResourceSet::from_json(Json::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-2","children":{"core":"0"}}]}})"));
    ASSERT_TRUE(R) << R.error().str();
    Heard heard;
    auto execution = service_->start(request(*R, jobspec({"true"}, 1)), listen(heard));
    ASSERT_FALSE(execution);
    EXPECT_EQ(execution.error().str(),
              "job 7: R names ranks 1-2, where no broker runs (this instance has one broker, "
              "rank 0)");
    EXPECT_TRUE(heard.events.empty());
}

}  // namespace
}  // namespace gantry::broker
