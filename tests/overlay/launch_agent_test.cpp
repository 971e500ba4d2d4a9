// Brokers started through a launch agent: the agent's words, the command
// line it hands the remote shell, and the processes: one line from each, as
// they come, in an event loop; a host that fails or stays silent named in
// one line, the lifeline, and nothing left once finished. The agent here is a real command that
// runs the command line on this machine (sh -c), as any agent may.
#include "overlay/launch_agent.h"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <asio/io_context.hpp>

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

// What the brokers' lines came to: each host's line, the order the hosts
// were heard in, and the end (done, or the error).
struct Heard {
    std::vector<std::string> lines;
    std::vector<std::size_t> order;
    bool done = false;
    std::optional<std::string> error;
};

// Reads the lines in a loop of its own until done or failed.
Heard read_lines(LaunchedHosts& hosts, std::chrono::milliseconds timeout) {
    asio::io_context loop;
    Heard heard;
    heard.lines.resize(hosts.size());
    const auto reader = hosts.read_lines(loop, timeout,
                                         {[&heard](std::size_t index, const std::string& line) {
                                              heard.lines[index] = line;
                                              heard.order.push_back(index);
                                          },
                                          [&heard, &loop] {
                                              heard.done = true;
                                              loop.stop();
                                          },
                                          [&heard, &loop](const Error& error) {
                                              heard.error = error.str();
                                              loop.stop();
                                          }});
    loop.run();
    return heard;
}

// What pgrep -f finds of `pattern` once the processes sent SIGKILL have
// had a moment (up to 1 s) to exit.
std::string left_running(const std::string& pattern) {
    std::string found;
    for (int i = 0; i < 100; ++i) {
        found = test::run_program({"pgrep", "-f", pattern}).out;
        if (found.empty())
            break;
        std::this_thread::sleep_for(10ms);
    }
    return found;
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

// Each line as it comes: the host that answers first is heard first.
TEST_F(Launched, OneLineFromEachHostAsTheyCome) {
    auto hosts =
        LaunchedHosts::start(agent(), {{"h1", {"sh", "-c", "sleep 0.2; echo one; cat > /dev/null"}},
                                       {"h2", {"sh", "-c", "echo two; cat > /dev/null"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    EXPECT_EQ((*hosts)->size(), 2u);
    EXPECT_EQ((*hosts)->host(1), "h2");
    const Heard heard = read_lines(**hosts, 5s);
    EXPECT_EQ(heard.error, std::nullopt);
    EXPECT_TRUE(heard.done);
    EXPECT_EQ(heard.lines, (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(heard.order, (std::vector<std::size_t>{1, 0}));
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
    const Heard heard = read_lines(**hosts, 5s);
    EXPECT_FALSE(heard.done);
    EXPECT_EQ(heard.error,
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
    EXPECT_EQ(read_lines(**hosts, 300ms).error, "launch: host h1: no broker answered within 300ms");
    (*hosts)->finish(100ms);
    EXPECT_EQ(left_running("sleep 30.125"), "");
}

// An agent whose broker never answered is ended at once when the launch
// is given up, without the grace the others get to wind down.
TEST_F(Launched, AHostThatNeverAnsweredGetsNoGrace) {
    auto hosts = LaunchedHosts::start(agent(), {{"h1", {"sh", "-c", "echo one; cat > /dev/null"}},
                                                {"h2", {"sh", "-c", "sleep 30.375"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    EXPECT_EQ(read_lines(**hosts, 300ms).error, "launch: host h2: no broker answered within 300ms");
    const auto started = std::chrono::steady_clock::now();
    (*hosts)->finish(10s);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    EXPECT_EQ(left_running("sleep 30.375"), "");
}

TEST_F(Launched, StderrIsPassedOnOnceStarted) {
    auto hosts = LaunchedHosts::start(
        agent(), {{"h1", {"sh", "-c", "echo early >&2; echo line; sleep 0.2; echo late >&2"}}});
    ASSERT_TRUE(hosts) << hosts.error().str();
    ASSERT_TRUE(read_lines(**hosts, 5s).done);
    testing::internal::CaptureStderr();
    (*hosts)->pass_errors_on();
    (*hosts)->finish(5s);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "early\nlate\n");
}

}  // namespace
}  // namespace gantry::overlay
