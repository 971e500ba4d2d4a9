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

// `bootstrap`: "config" (one `gantry start --config` per host) or "hydra"
// (mpiexec.hydra starts the brokers, which bootstrap by its PMI).
CommandResult on_three_hosts(std::vector<std::string> command,
                             const std::string& bootstrap = "config") {
    // A bound, so that a hang fails the test rather than stalling it; the
    // script removes what it made when timeout ends it.
    std::vector<std::string> argv = {
        "timeout",      "120",
        "env",          "GANTRY_TEST_BOOTSTRAP=" + bootstrap,
        "bash",         std::string(GANTRY_TEST_SCRIPTS) + "/netns_hosts.sh",
        gantry_binary()};
    argv.insert(argv.end(), command.begin(), command.end());
    return run_program(argv);
}

// Nothing of the test's namespaces (gtPID-hub, gtPID-I) is left, whatever
// happened; other tests' namespaces may come and go meanwhile.
void expect_no_namespace_left() {
    const auto list = run_program({"ip", "netns", "list"});
    for (const std::string& line : lines_of(list.out))
        EXPECT_FALSE(line.starts_with("gt") && line.find("-hub") != std::string::npos) << line;
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

// Brokers that MPICH's launcher starts on three hosts bootstrap by its PMI:
// each publishes an address of its host that the others reach (not
// loopback), and MPI runs across them.
TEST(Hosts, UnderHydraTheBrokersOfThreeHostsAreOneInstance) {
    const auto result =
        on_three_hosts({"sh", "-c",
                        gantry_binary() + " instance info | grep '^brokers'; " + gantry_binary() +
                            " run -N 3 -n 6 " + GANTRY_MPI_PROBE + " | sort"},
                       "hydra");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    std::string expected = "brokers    3 (3 up: 0-2; fanout 32)\n";
    for (int rank = 0; rank < 6; ++rank)
        expected += "rank=" + std::to_string(rank) + " size=6 appnum=0 local_size=2 sum=21\n";
    EXPECT_EQ(result.out, expected);
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

// Properties of the configuration: jobs that --requires them go to the
// hosts that have them.
TEST(Hosts, ConfiguredPropertiesPlaceJobs) {
    const std::string g = gantry_binary();
    setenv("GANTRY_TEST_PROPERTIES", R"({"gpu": "host[1-2]", "login": "host0"})", 1);
    const auto result = on_three_hosts({"sh", "-c",
                                        g + " run -N 2 --requires gpu hostname | sort; " + g +
                                            " run -n 1 --requires 'not gpu' hostname; " + g +
                                            " run -N 3 --requires gpu true"});
    unsetenv("GANTRY_TEST_PROPERTIES");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.out, "host1\nhost2\nhost0\n");
    EXPECT_EQ(result.err, "gantry: scheduler: 3 nodes requested, the job's constraint allows 2\n");
    EXPECT_EQ(result.exit_code, 1);
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

// Rank 0 killed (-9): the other brokers notice and end. Started again on
// its state directory, with the others, it keeps every record: the jobs
// that ran, the one still held, and the numbering.
TEST(Hosts, RankZeroRestartedOnItsStateKeepsEveryRecord) {
    const std::string g = gantry_binary();
    const std::string up = "until " + g +
                           " instance info 2>/dev/null | grep -q '^brokers *3 (3 up'; do sleep "
                           "0.05; done; ";
    const std::string script =
        "set -e; ns=($GANTRY_TEST_NETNS); " + up + g +
        " run -N 3 -n 3 --label-io hostname | sort; " + g + " submit --urgency hold true; " +
        "pid=$(" + g + " instance info | awk '$1 == \"pid\" {print $2}'); kill -9 $pid; " +
        "while pgrep -f \"start --config $GANTRY_TEST_CONFIG\" >/dev/null; do sleep 0.05; done; "
        "echo every broker ended; "
        "ip netns exec ${ns[0]} unshare --uts sh -c 'hostname host0; exec \"$0\" start --config "
        "\"$1\" --daemon --state-dir \"$2\"' " +
        g + " $GANTRY_TEST_CONFIG $GANTRY_TEST_STATE >/dev/null; " +
        "for i in 1 2; do ip netns exec ${ns[$i]} unshare --uts sh -c "
        "'hostname host'$i'; exec \"$0\" start --config \"$1\"' " +
        g + " $GANTRY_TEST_CONFIG 2>/dev/null & done; " + up + g +
        " jobs -a -o '{id:>5} {name:<8} {status}'; " + g +
        " run -N 3 -n 3 --label-io hostname | sort";
    setenv("GANTRY_TEST_RANK0", "daemon", 1);
    setenv("GANTRY_TEST_START_OPTIONS", "--lost-after 500ms", 1);
    setenv("GANTRY_TEST_KILLS", "1", 1);
    const auto result = on_three_hosts({"bash", "-c", script});
    unsetenv("GANTRY_TEST_RANK0");
    unsetenv("GANTRY_TEST_START_OPTIONS");
    unsetenv("GANTRY_TEST_KILLS");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "0: host0\n1: host1\n2: host2\n2\nevery broker ended\n"
              "JOBID NAME     STATUS\n"
              "    2 true     SCHED\n"
              "    1 hostname COMPLETED\n"
              "0: host0\n1: host1\n2: host2\n");
    EXPECT_EQ(result.err, "");
    expect_no_namespace_left();
}

// A host cut off the network (its link taken down) is lost like a dead
// one: its node goes down within the bound, jobs go to the others, and its
// broker, cut off from rank 0, ends.
TEST(Hosts, APartitionedHostIsLost) {
    const std::string g = gantry_binary();
    const std::string script =
        "set -e; ns2=${GANTRY_TEST_NETNS##* }; link2=${GANTRY_TEST_LINKS##* }; "
        "ip -n $ns2 link set $link2 down; "
        "until " +
        g + " instance info | grep -q '^brokers *3 (2 up'; do sleep 0.05; done; " +
        "echo down: $(" + g + " resource list | awk '$1 == \"down\" {print $5}'); " + g +
        " run -N 2 -n 2 --label-io hostname | sort; "
        "while kill -0 $(cat $GANTRY_TEST_PIDS/host2.pid) 2>/dev/null; do sleep 0.05; done; "
        "echo host2 ended";
    setenv("GANTRY_TEST_START_OPTIONS", "--lost-after 500ms", 1);
    setenv("GANTRY_TEST_KILLS", "1", 1);
    const auto result = on_three_hosts({"sh", "-c", script});
    unsetenv("GANTRY_TEST_START_OPTIONS");
    unsetenv("GANTRY_TEST_KILLS");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "down: host2\n0: host0\n1: host1\nhost2 ended\n");
    EXPECT_EQ(result.err, "gantry: instance: rank 2 lost: no word from rank 2 in 500 ms\n");
    expect_no_namespace_left();
}

}  // namespace
}  // namespace gantry::test
