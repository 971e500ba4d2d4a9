// A configured instance's brokers given bad input: each says so in one line
// and nothing is left (tests/cli/scripts/two_configured_brokers.sh runs two
// brokers posing as hosts ha and hb on this host's loopback).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace gantry::test {
namespace {

constexpr int kSkipped = 77;

CommandResult two_brokers(const std::string& port, const std::string& test_case) {
    return run_program({"timeout", "60", "bash",
                        std::string(GANTRY_TEST_SCRIPTS) + "/two_configured_brokers.sh",
                        gantry_binary(), port, test_case});
}

// A broker whose certificate is not the instance's never joins: both ends
// name the failed handshake at once, rank 1 exits 1. Rank 0, still waiting
// for it, ends on SIGTERM as its initial program would have (143), saying
// that the program never ran.
TEST(Configured, ABrokerWithAnotherCertificateIsRefusedAtTheHandshake) {
    const auto result = two_brokers("8071", "other-certificate");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "rank 1: 1\nrank 0: 143\n");
    EXPECT_EQ(result.err,
              "gantry: broker 1: rank 0 at tcp://127.0.0.1:8071 ended the CURVE handshake: it "
              "does not hold the key this broker expects of it (another instance's "
              "certificate?)\n"
              "gantry: instance: a connection on tcp://127.0.0.1:8071 failed the CURVE "
              "handshake: its broker expects another key of this one (another instance's "
              "certificate?)\n"
              "gantry: SIGTERM before every broker joined: the initial program did not run\n");
}

// A second broker for a rank that is up is refused by its parent.
TEST(Configured, TwoBrokersClaimingOneRank) {
    const auto result = two_brokers("8072", "same-rank");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "second rank 1: 1\nrank 0: 143\nfirst rank 1: 0\n");
    EXPECT_EQ(result.err, "gantry: broker 1: rank 1 is already up\n");
}

// A host that the configuration does not name has no rank.
TEST(Configured, AHostTheConfigurationDoesNotName) {
    const auto result = run_program(
        {"bash", "-c",
         "set -e; dir=$(mktemp -d); trap 'rm -rf $dir' EXIT; \"$0\" keygen $dir/c; "
         "echo '{\"hosts\": \"ha,hb\", \"port\": 8073, \"certificate\": \"'$dir/c'\"}' "
         ">$dir/i.json; "
         "unshare --uts true 2>/dev/null || { echo SKIP: cannot make UTS namespaces; exit 77; }; "
         "unshare --uts sh -c 'hostname hc; exec \"$0\" start --config \"$1\" true' \"$0\" "
         "$dir/i.json 2>&1 | sed \"s|$dir|DIR|\"; exit ${PIPESTATUS[0]}",
         gantry_binary()});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.out,
              "gantry: start: --config DIR/i.json: host \"hc\" is not among the "
              "configuration's hosts (ha,hb)\n");
    EXPECT_EQ(result.exit_code, 2);
}

}  // namespace
}  // namespace gantry::test
