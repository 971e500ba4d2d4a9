// Brokers on hosts of their own: network namespaces made by the test, each
// with its own host name and address on a bridge, one broker each, joined
// by a configuration file (tests/cli/scripts/netns_hosts.sh makes and
// removes them). Skipped, loudly, where namespaces cannot be made.
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace gantry::test {
namespace {

constexpr int kSkipped = 77;

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    std::erase(lines, "");
    std::sort(lines.begin(), lines.end());
    return lines;
}

CommandResult on_three_hosts(std::vector<std::string> command) {
    // A bound, so that a hang fails the test rather than stalling it; the
    // script removes what it made when timeout ends it.
    std::vector<std::string> argv = {"timeout", "120", "bash",
                                     std::string(GANTRY_TEST_SCRIPTS) + "/netns_hosts.sh",
                                     gantry_binary()};
    argv.insert(argv.end(), command.begin(), command.end());
    return run_program(argv);
}

// Nothing of the test's namespaces is left, whatever happened.
void expect_no_namespace_left() {
    const auto list = run_program({"ip", "netns", "list"});
    EXPECT_EQ(list.out.find("-hub"), std::string::npos) << list.out;
}

TEST(Hosts, EachBrokerOnItsHostRunsItsTasks) {
    const auto result =
        on_three_hosts({gantry_binary(), "run", "-N", "3", "-n", "3", "--label-io", "hostname"});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"0: host0", "1: host1", "2: host2"}));
    expect_no_namespace_left();
}

TEST(Hosts, MpiAcrossHosts) {
    const auto result =
        on_three_hosts({gantry_binary(), "run", "-N", "3", "-n", "6", GANTRY_MPI_PROBE});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    std::vector<std::string> expected;
    for (int rank = 0; rank < 6; ++rank)
        expected.push_back("rank=" + std::to_string(rank) + " size=6 appnum=0 local_size=2 sum=21");
    EXPECT_EQ(sorted_lines(result.out), expected);
    expect_no_namespace_left();
}

TEST(Hosts, TheInitialProgramsExitCode) {
    const auto result = on_three_hosts({"sh", "-c", "exit 5"});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 5);
    expect_no_namespace_left();
}

// A broker killed (-9) is lost and its node goes down; the same broker
// started again on its host joins again, and a job runs on all three.
TEST(Hosts, ALostBrokerStartedAgainRejoins) {
    const std::string g = gantry_binary();
    const std::string script =
        "set -e; ns2=${GANTRY_TEST_NETNS##* }; "
        "kill -9 $(cat $GANTRY_TEST_PIDS/host2.pid); "
        "until " +
        g +
        " instance info | grep -q '^brokers *3 (2 up'; do sleep 0.05; done; "
        "echo down: $(" +
        g +
        " resource list | awk '$1 == \"down\" {print $5}'); "
        "ip netns exec $ns2 unshare --uts sh -c 'hostname host2; exec \"$0\" start --config "
        "\"$1\" --lost-after 500ms' " +
        g +
        " $GANTRY_TEST_CONFIG 2>/dev/null & "
        "until " +
        g + " instance info | grep -q '^brokers *3 (3 up'; do sleep 0.05; done; " + g +
        " run -N 3 -n 3 --label-io hostname | sort";
    setenv("GANTRY_TEST_START_OPTIONS", "--lost-after 500ms", 1);
    setenv("GANTRY_TEST_KILLS", "1", 1);
    const auto result = on_three_hosts({"sh", "-c", script});
    unsetenv("GANTRY_TEST_START_OPTIONS");
    unsetenv("GANTRY_TEST_KILLS");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "down: host2\n0: host0\n1: host1\n2: host2\n");
    EXPECT_EQ(result.err,
              "gantry: instance: rank 2 lost: no word from rank 2 in 500 ms\n"
              "gantry: instance: rank 2 is back\n");
    expect_no_namespace_left();
}

}  // namespace
}  // namespace gantry::test
