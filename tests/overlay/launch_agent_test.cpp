// Brokers started through a launch agent: the agent's words, the command
// line it hands the remote shell, and the processes: one line from each,
// a host that fails or stays silent named in one line, the lifeline, and
// nothing left once finished. The agent here is a real command that runs
// the command line on this machine (sh -c), as any agent may.
#include "overlay/launch_agent.h"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::overlay {
namespace {

using namespace std::chrono_literals;

TEST(LaunchAgent, TheAgentsWords) {
    EXPECT_EQ(parse_launch_agent("ssh").value(), (std::vector<std::string>{"ssh"}));
    EXPECT_EQ(parse_launch_agent("  ssh -p 2222\t-o BatchMode=yes ").value(),
              (std::vector<std::string>{"ssh", "-p", "2222", "-o", "BatchMode=yes"}));
    EXPECT_EQ(parse_launch_agent(" ").error().str(),
              "launch: the launch agent \" \" names no command");
}

TEST(LaunchAgent, TheCommandLineForTheRemoteShell) {
    EXPECT_EQ(shell_command({"/usr/bin/gantry", "start", "--join", "1/4", "--node-name", "n1"}),
              "/usr/bin/gantry start --join 1/4 --node-name n1");
    EXPECT_EQ(shell_command({"/opt/my dir/gantry", "it's", "", "a;b", "$HOME"}),
              "'/opt/my dir/gantry' 'it'\\''s' '' 'a;b' '$HOME'");
}

class Launched : public ::testing::Test {
protected:
    // An agent that runs the command line here, host aside.
    std::vector<std::string> agent() {
        const std::string path = scratch_ / "agent";
        std::ofstream(path) << "#!/bin/sh\nshift\nexec sh -c \"$1\"\n";
        test::run_program({"chmod", "+x", path});
        return {path};
    }
    test::ScratchDir scratch_{"launch-agent-test"};
};

TEST_F(Launched, OneLineFromEachHostInOrder) {
    auto hosts =
        LaunchedHosts::start(agent(), {{"h1", {"sh", "-c", "sleep 0.2; echo one; cat > /dev/null"}},
                                       {"h2", {"sh", "-c", "echo two; cat > /dev/null"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    EXPECT_EQ((*hosts)->size(), 2u);
    EXPECT_EQ((*hosts)->host(1), "h2");
    const auto lines = (*hosts)->read_lines(5s);
    ASSERT_TRUE(lines) << lines.error().str();
    EXPECT_EQ(*lines, (std::vector<std::string>{"one", "two"}));
    // What is written goes to the broker's stdin; closing it ends `cat`.
    EXPECT_TRUE((*hosts)->write(0, "neighbours\n"));
    const auto started = std::chrono::steady_clock::now();
    (*hosts)->finish(5s);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

TEST_F(Launched, AnAgentThatEndsFirstIsNamedWithItsLastWords) {
    auto hosts = LaunchedHosts::start(
        agent(), {{"h1", {"sh", "-c", "echo one; cat > /dev/null"}},
                  {"h2", {"sh", "-c", "echo warning >&2; echo 'no route to h2' >&2; exit 255"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    const auto lines = (*hosts)->read_lines(5s);
    ASSERT_FALSE(lines);
    EXPECT_EQ(lines.error().str(),
              "launch: host h2: the launch agent ended (exit 255) before its broker started: no "
              "route to h2");
}

// An agent that cannot be run is said at once; the agents started before
// it are ended.
TEST_F(Launched, AnAgentThatCannotRun) {
    const auto hosts = LaunchedHosts::start({"/nonexistent/agent"}, {{"h1", {"true"}}});
    ASSERT_FALSE(hosts);
    EXPECT_EQ(hosts.error().str(),
              "launch: host h1: cannot run the launch agent /nonexistent/agent: No such file or "
              "directory");
}

// A silent host is named when the time runs out; finishing kills what is
// left, the agent's whole process group.
TEST_F(Launched, ASilentHostIsNamedAndKilled) {
    const std::string pid_file = scratch_ / "pid";
    auto hosts = LaunchedHosts::start(
        agent(), {{"h1", {"sh", "-c", "echo $$ > " + pid_file + "; trap '' TERM; sleep 30.125"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    EXPECT_EQ((*hosts)->read_lines(300ms).error().str(),
              "launch: host h1: no broker answered within 300ms");
    (*hosts)->finish(100ms);
    EXPECT_EQ(test::run_program({"pgrep", "-f", "sleep 30.125"}).out, "");
}

TEST_F(Launched, StderrIsPassedOnOnceStarted) {
    auto hosts = LaunchedHosts::start(
        agent(), {{"h1", {"sh", "-c", "echo early >&2; echo line; sleep 0.2; echo late >&2"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    ASSERT_TRUE((*hosts)->read_lines(5s));
    testing::internal::CaptureStderr();
    (*hosts)->pass_errors_on();
    (*hosts)->finish(5s);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "early\nlate\n");
}

}  // namespace
}  // namespace gantry::overlay
