// The hosts that launching over ssh is tested on: network namespaces, each
// with its own host name, address and OpenSSH daemon, reached from this
// machine's namespace with a generated ssh configuration
// (tests/cli/scripts/ssh_hosts.sh makes and removes them). These tests hold
// the hosts themselves to what the launch tests take as given, with real
// daemons and MPICH's hydra as the launcher; each then checks that nothing
// of them is left. Skipped, loudly, where namespaces cannot be made or
// sshd is not installed.
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/scratch.h"
#include "support/ssh_hosts.h"

namespace gantry::test {
namespace {

std::set<std::string> line_set(const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    std::erase(lines, "");
    return {lines.begin(), lines.end()};
}

TEST_F(SshHosts, EachHostAnswersToItsName) {
    const auto result = on_hosts("$GANTRY_TEST_SSH host1 hostname");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "host1\n");
    expect_nothing_left();
}

// Each host has its own address on the bridge, and is reached there from
// this machine's address on it.
TEST_F(SshHosts, EachHostHasItsOwnAddress) {
    const auto result =
        on_hosts("echo $GANTRY_TEST_HOSTS; echo $GANTRY_TEST_ADDRESSES $GANTRY_TEST_LOCAL_ADDRESS" +
                 kSubnetAsS +
                 "; for h in host0 host1 host2; do "
                 "  $GANTRY_TEST_SSH $h 'hostname; ip -4 -brief address show scope global | "
                 "awk \"{print \\$3}\"; echo $SSH_CONNECTION | cut -d \" \" -f 1,3'" +
                 kSubnetAsS + "; done");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out,
              "host0,host1,host2\n"
              "S.1 S.2 S.3 S.254\n"
              "host0\nS.1/24\nS.254 S.1\n"
              "host1\nS.2/24\nS.254 S.2\n"
              "host2\nS.3/24\nS.254 S.3\n");
    expect_nothing_left();
}

// While the hosts are up, this machine has one route more, to the bridge's
// /24 by its link there (scope link), and its address there in the local
// table; nothing else of its routing changes, and that goes with the hosts.
TEST_F(SshHosts, TheLaunchingHostGainsOneRouteOnly) {
    // The link that has this machine's address on the bridge, said as LINK.
    const auto result = on_hosts(
        "link=$(ip -o -4 address show to $GANTRY_TEST_LOCAL_ADDRESS | awk '{print $2}'); "
        "{ ip -4 route show table all; ip -6 route show table all; }" +
        kSubnetAsS + " | sed \"s/ dev $link / dev LINK /\"");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    ASSERT_EQ(result.exit_code, 0);
    const auto before = line_set(routes_before_);
    const auto during = line_set(result.out);
    std::vector<std::string> added;
    std::vector<std::string> removed;
    std::set_difference(during.begin(), during.end(), before.begin(), before.end(),
                        std::back_inserter(added));
    std::set_difference(before.begin(), before.end(), during.begin(), during.end(),
                        std::back_inserter(removed));
    EXPECT_EQ(added, (std::vector<std::string>{
                         "S.0/24 dev LINK proto kernel scope link src S.254 ",
                         "local S.254 dev LINK table local proto kernel scope host src S.254 "}));
    EXPECT_EQ(removed, std::vector<std::string>{});
    expect_nothing_left();
}

// MPICH's hydra launches over this ssh as over any: one proxy per host,
// six ranks, two a host, which find each other across the bridge. Hydra's
// proxies call back to the address given by -localhost: the name of this
// machine would resolve to an address the hosts cannot reach.
TEST_F(SshHosts, HydraRunsMpiAcrossThreeHosts) {
    const std::string hydra =
        "mpiexec.hydra -launcher ssh -launcher-exec $GANTRY_TEST_SSH "
        "-localhost $GANTRY_TEST_LOCAL_ADDRESS -hosts $GANTRY_TEST_HOSTS -n 6 ";
    const auto result = on_hosts("set -o pipefail; " + hydra + "hostname | sort && " + hydra +
                                 GANTRY_MPI_PROBE + " | sort");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    std::string expected = "host0\nhost0\nhost1\nhost1\nhost2\nhost2\n";
    for (int rank = 0; rank < 6; ++rank)
        expected += "rank=" + std::to_string(rank) + " size=6 appnum=0 local_size=2 sum=21\n";
    EXPECT_EQ(result.out, expected);
    expect_nothing_left();
}

// A host whose link is down is said to be unreachable when ConnectTimeout
// (2 s) runs out: ssh's exit code 255 and its one line, while the other
// hosts still answer.
TEST_F(SshHosts, AHostCutOffIsUnreachableWithinConnectTimeout) {
    const auto result = on_hosts(
        "set -- $GANTRY_TEST_NETNS; ns=$3; set -- $GANTRY_TEST_LINKS; "
        "ip -n $ns link set $3 down; "
        "start=$(date +%s%N); "
        "$GANTRY_TEST_SSH host2 true 2>&1" +
        kSubnetAsS +
        "; echo \"exit ${PIPESTATUS[0]} after $((($(date +%s%N) - start) / 1000000000)) s\"; "
        "$GANTRY_TEST_SSH host1 hostname");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    // ssh ends the lines it writes to stderr with "\r\n", a terminal or not.
    EXPECT_EQ(result.out,
              "ssh: connect to host S.3 port 22: Connection timed out\r\n"
              "exit 255 after 2 s\n"
              "host1\n");
    expect_nothing_left();
}

TEST_F(SshHosts, TheCommandsExitCodeIsTheScripts) {
    const auto result = on_hosts("exit 5", 1);
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.exit_code, 5);
    expect_nothing_left();
}

// A signal that ends the script while COMMAND runs (a timeout's TERM, a
// terminal's HUP or INT) ends COMMAND and what it started too, and leaves
// nothing either.
TEST_F(SshHosts, ASignalLeavesNothing) {
    for (const auto& [signal, code] :
         std::vector<std::pair<std::string, int>>{{"TERM", 143}, {"HUP", 129}, {"INT", 130}}) {
        SCOPED_TRACE(signal);
        const auto started = std::chrono::steady_clock::now();
        const auto result = on_hosts("kill -" + signal + " $PPID; sleep 31.75", 1);
        if (result.exit_code == kSkipped)
            GTEST_SKIP() << result.out;
        EXPECT_EQ(result.err, "");
        EXPECT_EQ(result.out, "");
        EXPECT_EQ(result.exit_code, code);
        EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
        EXPECT_EQ(run_program({"pgrep", "-f", "sleep 31.75"}).out, "");
        expect_nothing_left();
    }
}

}  // namespace
}  // namespace gantry::test
