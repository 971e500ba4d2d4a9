// `gantry run -H` and `--hostfile` across hosts, as mpirun runs there: a
// broker on each host through the launch agent (the hosts' own ssh here),
// one transient instance of them, the job's output, exit code and signals as
// on one machine, and nothing left on any host. The hosts are network
// namespaces with their own names, addresses and sshd
// (tests/cli/scripts/ssh_hosts.sh); the tests are skipped, loudly, where
// those cannot be made.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/ssh_hosts.h"

namespace gantry::test {
namespace {

// COMMAND's prelude: gantry, reaching the hosts through the test's ssh.
const std::string kPrelude = "export GANTRY_LAUNCH_AGENT=$GANTRY_TEST_SSH; g=" + gantry_binary() +
                             "; left() { for ns in $GANTRY_TEST_NETNS; do ip netns pids $ns; "
                             "done | xargs -r ps -o comm= -p | grep -v sshd; }; "
                             // Until both tasks have said `ready` in the file out.
                             "started() { until [ \"$(grep -c ready out 2>/dev/null)\" = 2 ]; "
                             "do sleep 0.05; done; }; ";

// Nothing but sshd is left in any host's namespace when COMMAND ends.
const std::string kNothingLeft = "; sleep 0.3; echo left: $(left)";

// `text`'s lines in sorted order: what two hosts write at once.
std::string sorted_lines(const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    std::erase(lines, "");
    std::sort(lines.begin(), lines.end());
    std::string sorted;
    for (const std::string& line : lines)
        sorted += line + "\n";
    return sorted;
}

class RunHosts : public SshHosts {
protected:
    // Runs `script` in the scratch directory, on `count` hosts.
    CommandResult run(const std::string& script, int count = 3) {
        return on_hosts("cd " + scratch_.path() + "; " + kPrelude + script + kNothingLeft, count);
    }
};

TEST_F(RunHosts, EachHostRunsItsTasksWithLabels) {
    const auto result =
        run("$g run -H host0,host1,host2 -n 3 --label-io hostname | sort; "
            "printf 'host2 slots=2\\nhost0 slots=1\\n' > hosts; "
            "$g run --hostfile hosts --label-io sh -c 'echo $(hostname) $GANTRY_NODE_ID' | sort");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    // Nodes are numbered in the order the hosts were named.
    EXPECT_EQ(result.out,
              "0: host0\n1: host1\n2: host2\n"
              "0: host2 0\n1: host2 0\n2: host0 1\n"
              "left:\n");
    expect_nothing_left();
}

// Hosts named by their addresses, not their names, and a hostfile that
// only this machine has (no shared file system takes it to the hosts):
// each host's shell maps the job with what rank 0 read to map it, not with
// its own names and files, and so runs its part.
TEST_F(RunHosts, HostsByAddressAndAHostfileOnlyThisMachineHas) {
    const auto result =
        run("set -- $GANTRY_TEST_ADDRESSES; $g run -H $1,$3 -n 2 --label-io hostname | sort; "
            "printf \"$2 slots=2\\n\" > $GANTRY_TEST_HERE_ONLY/hosts; "
            "$g run --hostfile $GANTRY_TEST_HERE_ONLY/hosts --label-io hostname | sort; "
            "$GANTRY_TEST_SSH host1 test -e $GANTRY_TEST_HERE_ONLY/hosts || echo not on host1");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "0: host0\n1: host2\n0: host1\n1: host1\nnot on host1\nleft:\n");
    expect_nothing_left();
}

// A launch agent that, as rsh, does not say over there where it came from
// (no SSH_CONNECTION): each host is told this machine's address on the
// route to it, found here for each host as named; a name that does not
// resolve here needs --overlay-address, and says so in one line (one such
// name: of several, the one heard from first is named).
TEST_F(RunHosts, AnAgentThatIsNotSsh) {
    const auto result =
        run("printf '#!/bin/sh\\nh=$1; shift\\nexec %s \"$h\" \"unset SSH_CONNECTION; $*\"\\n' "
            "$GANTRY_TEST_SSH > agent; chmod +x agent; export GANTRY_LAUNCH_AGENT=./agent; "
            "set -- $GANTRY_TEST_ADDRESSES; $g run -H $1,$2 -n 2 --label-io hostname | sort; "
            "$g run -H host0,$2 -n 2 hostname; echo exit $?; "
            "$g run -H host0,host1 -n 2 --overlay-address $GANTRY_TEST_LOCAL_ADDRESS --label-io "
            "hostname | sort");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err,
              "gantry: bootstrap: host host0: Name or service not known: give --overlay-address\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "0: host0\n1: host1\nexit 1\n0: host0\n1: host1\nleft:\n");
    expect_nothing_left();
}

// A tree of brokers deeper than one level (--fanout 1: a chain of the three
// hosts below rank 0): each broker is answered once its parent and its
// child have been heard from, whatever order they answer in, and the
// instance runs across all three.
TEST_F(RunHosts, AChainOfBrokersJoins) {
    const auto result =
        run("$g start -H host0,host1,host2 --fanout 1 $g run -N 3 -n 3 --label-io hostname | "
            "sort");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "0: host0\n1: host1\n2: host2\nleft:\n");
    expect_nothing_left();
}

// MPICH across the hosts: PMI over the instance's overlay, two ranks a host.
TEST_F(RunHosts, MpichRunsAcrossThreeHosts) {
    const auto result =
        run(std::string("set -o pipefail; $g run -H host0:2,host1:2,host2:2 -n 6 ") +
            GANTRY_MPI_PROBE + " | sort");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    std::string expected;
    for (int rank = 0; rank < 6; ++rank)
        expected += "rank=" + std::to_string(rank) + " size=6 appnum=0 local_size=2 sum=21\n";
    EXPECT_EQ(result.out, expected + "left:\n");
    expect_nothing_left();
}

// MPMD with an app's own -H; --display map shows the map --dry-run gives
// for the same hosts (these hosts have this machine's topology), a host
// named but given no task included.
TEST_F(RunHosts, MpmdWithPerAppHostsMapsAsTheDryRun) {
    const std::string args =
        "--display map -H host0,host1 -n 1 hostname : -H host2:2 -n 2 hostname";
    // The map of each, its job's name said as JOB, without the dry run's
    // warning.
    const std::string map_of =
        "() { sed -n '/JOB MAP/,/^==*$/p' $1 | sed 's/gantry[-@][^ ]*/JOB/g' | "
        "grep -v -e '^$' -e '^Warning: ' -e '^the nodes were given'; }; ";
    const auto result = run("map_of" + map_of + "$g run " + args + " > run.out; echo exit $?; " +
                            "$g run --dry-run " + args +
                            " > dry.out; map_of run.out > run.map; map_of dry.out > dry.map; "
                            "test -s run.map && cmp run.map dry.map && echo same map; "
                            "sed '/JOB MAP/,/^==*$/d' run.out | grep -v '^$' | sort");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "exit 0\nsame map\nhost0\nhost2\nhost2\nleft:\n");
    expect_nothing_left();
}

// Byte for byte both ways, UTF-8 text as it is and what is not UTF-8 (a
// 0xff, a NUL) in base64 over the overlay.
TEST_F(RunHosts, StdinGoesToRankZero) {
    const auto result =
        run("echo hello | $g run -H host1,host2 -n 2 --label-io cat; "
            "printf 'h\\303\\251llo\\n\\377\\000\\n' | $g run -H host1,host2 -n 2 --label-io cat "
            "| od -An -c | tr -s ' '");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "0: hello\n 0 : h 303 251 l l o \\n 0 : 377 \\0 \\n\nleft:\n");
    expect_nothing_left();
}

// The first failure's exit code; with --kill-on-bad-exit the other host's
// task is ended at once rather than waited for.
TEST_F(RunHosts, AFailingTaskOnTheSecondHost) {
    const auto result =
        run("$g run -H host0,host1 -n 2 -K sh -c "
            "'test $(hostname) = host1 && exit 3; exec sleep 30.5'; echo exit $?; "
            "$g run -H host0,host1 -n 2 sh -c 'test $(hostname) = host1 && exit 4; exit 0'; "
            "echo exit $?");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err,
              "gantry: task 1 (host1) exited with exit code 3\n"
              "gantry: task 0 (host0) killed by signal 15 (Terminated)\n"
              "gantry: task 1 (host1) exited with exit code 4\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "exit 3\nexit 4\nleft:\n");
    expect_nothing_left();
}

// Ctrl-C reaches every task on every host; the run ends as they do.
TEST_F(RunHosts, SigintReachesEveryTask) {
    const auto result =
        run("$g run -H host0,host1 -n 2 sh -c 'echo ready; exec sleep 30.25' > out & "
            "started; kill -INT $!; wait $!; s=$?; cat out; echo exit $s");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(sorted_lines(result.err),
              "gantry: job 1: SIGINT sent\n"
              "gantry: task 0 (host0) killed by signal 2 (Interrupt)\n"
              "gantry: task 1 (host1) killed by signal 2 (Interrupt)\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "ready\nready\nexit 130\nleft:\n");
    expect_nothing_left();
}

// kill -9 of gantry run: each broker's lifeline ends, and with it the
// broker and its tasks, on every host.
TEST_F(RunHosts, KillNineOfTheRunLeavesNothing) {
    const auto result =
        // Its temporary state directory, which SIGKILL leaves, in the
        // scratch directory.
        run("TMPDIR=$PWD $g run -H host0,host1 -n 2 sh -c 'echo ready; exec sleep 30.75' > out & "
            "started; kill -9 $!; wait $! 2>/dev/null; s=$?; cat out; echo exit $s; sleep 1");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "ready\nready\nexit 137\nleft:\n");
    EXPECT_EQ(run_program({"pgrep", "-f", "sleep 30.75"}).out, "");
    expect_nothing_left();
}

// kill -9 of gantry run while the hosts are reached, one broker joined and
// the other host's still to start (its command there waits first): the
// joined broker's lifeline ends, and so does the other's as soon as it
// starts; nothing is left on either host.
TEST_F(RunHosts, KillNineWhileTheHostsAreReachedLeavesNothing) {
    const auto result =
        run("printf '#!/bin/sh\\nh=$1; shift\\n[ \"$h\" = host1 ] && set -- \"sleep 1.25; $*\"\\n"
            "exec \"%s\" \"$h\" \"$@\"\\n' $GANTRY_TEST_SSH > agent; chmod +x agent; "
            "set -- $GANTRY_TEST_NETNS; ns=$1; "
            "TMPDIR=$PWD $g run --launch-agent ./agent -H host0,host1 -n 2 true & "
            "until ip netns pids $ns | xargs -r ps -o comm= -p | grep -qx gantry; do sleep 0.05; "
            "done; sleep 0.3; kill -9 $!; wait $! 2>/dev/null; echo exit $?; sleep 2.5");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "exit 137\nleft:\n");
    expect_nothing_left();
}

// Ctrl-C or SIGTERM while the hosts are still being reached (agents that
// take their time) ends the run at once, as the job would have ended, with
// the agents: none is left to connect later.
TEST_F(RunHosts, ASignalWhileTheHostsAreReachedEndsTheLaunchAtOnce) {
    const auto result =
        run("d=30.75; printf '#!/bin/sh\\nsleep %s\\nexec \"$GANTRY_TEST_SSH\" \"$@\"\\n' $d "
            "> agent; chmod +x agent; "
            "for s in INT TERM; do "
            "env --default-signal=INT $g run --launch-agent ./agent -H host0,host1 -n 2 true & "
            "until [ \"$(pgrep -fxc \"sleep $d\")\" = 2 ]; do sleep 0.05; done; "
            "kill -$s $!; wait $!; echo exit $?; "
            "pgrep -fx \"sleep $d\" || echo no agent left; done");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err,
              "gantry: SIGINT before every broker joined: the initial program did not run\n"
              "gantry: SIGTERM before every broker joined: the initial program did not run\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "exit 130\nno agent left\nexit 143\nno agent left\nleft:\n");
    expect_nothing_left();
}

// A host that cannot be reached is named in one line: a name ssh cannot
// resolve, a host cut off that does not answer within --launch-timeout.
TEST_F(RunHosts, AnUnreachableHostIsNamedInOneLine) {
    const auto result =
        run("$g run -H host0,nosuch -n 2 true; echo exit $?; "
            "set -- $GANTRY_TEST_NETNS; ns=$2; set -- $GANTRY_TEST_LINKS; "
            "ip -n $ns link set $2 down; "
            "$g run -H host0,host1 --launch-timeout 1s -n 2 true; echo exit $?");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err,
              "gantry: launch: host nosuch: the launch agent ended (exit 255) before its broker "
              "started: ssh: Could not resolve hostname nosuch: Name or service not known\n"
              "gantry: launch: host host1: no broker answered within 1s\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "exit 1\nexit 1\nleft:\n");
    expect_nothing_left();
}

// A host that drops out mid-job (its link taken down) is lost within the
// liveness bound; the job ends with a node-failure exception, its task on
// the other host is killed, and the broker cut off ends by itself.
TEST_F(RunHosts, AHostDroppingOutEndsTheJob) {
    const auto result =
        run("$g run -H host0,host1 -n 2 sh -c 'echo ready; exec sleep 30.5' > out & started; "
            "set -- $GANTRY_TEST_NETNS; ns=$2; set -- $GANTRY_TEST_LINKS; "
            "ip -n $ns link set $2 down; wait $!; s=$?; cat out; echo exit $s; sleep 6");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err,
              "gantry: instance: rank 2 lost: no word from rank 2 in 5000 ms\n"
              "gantry: job 1: exception: node-failure: no word from rank 2 in 5000 ms\n"
              "gantry: task 0 (host0) killed by signal 15 (Terminated)\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "ready\nready\nexit 137\nleft:\n");
    expect_nothing_left();
}

// --prefix says where gantry is on the hosts.
TEST_F(RunHosts, PrefixNamesWhereGantryIs) {
    const auto result =
        run("mkdir -p p/bin; ln -s $g p/bin/gantry; "
            "$g run --prefix $PWD/p -H host1 -n 1 hostname; echo exit $?; "
            "$g run --prefix /nonexistent -H host1 -n 1 true; echo exit $?");
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err,
              "gantry: launch: host host1: the launch agent ended (exit 127) before its broker "
              "started: bash: line 1: /nonexistent/bin/gantry: No such file or directory\n");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "host1\nexit 0\nexit 1\nleft:\n");
    expect_nothing_left();
}

// What needs no other host: bad uses of -H and --join, each one line; -H
// naming only this machine is an instance of it alone.
TEST(StartOnHosts, BadUsesAreOneLine) {
    const auto both = run_gantry({"start", "-H", "a", "--config", "c.toml", "true"});
    EXPECT_EQ(both.err,
              "gantry: start: --config and -H/--hostfile are two ways to find the brokers; give "
              "one\n");
    EXPECT_EQ(both.exit_code, 2);
    const auto rank = run_gantry({"start", "--join", "0/2"});
    EXPECT_EQ(rank.err,
              "gantry: start: --join: expected RANK/SIZE with 0 < RANK < SIZE, got \"0/2\"\n");
    EXPECT_EQ(rank.exit_code, 2);
    const auto hosts = run_gantry({"start", "-H", "a,,b", "true"});
    EXPECT_EQ(hosts.exit_code, 2);
    EXPECT_EQ(std::count(hosts.err.begin(), hosts.err.end(), '\n'), 1) << hosts.err;
    const auto agent = run_gantry({"start", "-H", "a", "--launch-agent", " ", "true"});
    EXPECT_EQ(agent.err, "gantry: launch: the launch agent \" \" names no command\n");
    EXPECT_EQ(agent.exit_code, 2);
    const auto timeout = run_gantry({"start", "-H", "a", "--launch-timeout", "soon", "true"});
    EXPECT_EQ(timeout.exit_code, 2);
    EXPECT_TRUE(timeout.err.starts_with("gantry: start: --launch-timeout: ")) << timeout.err;
    EXPECT_EQ(std::count(timeout.err.begin(), timeout.err.end(), '\n'), 1) << timeout.err;
    const auto daemon = run_gantry({"start", "-H", "a", "--daemon"});
    EXPECT_EQ(daemon.err,
              "gantry: start: --daemon: the brokers -H starts end with their launcher\n");
    EXPECT_EQ(daemon.exit_code, 2);
}

TEST(StartOnHosts, AJoiningBrokerWhoseLauncherIsGone) {
    // Its stdin at its end at once: the launcher gave it nothing.
    const auto result =
        run_program({"sh", "-c", gantry_binary() + " start --join 1/2 < /dev/null"});
    EXPECT_EQ(result.err,
              "gantry: bootstrap: the launcher closed its stream before giving this broker's "
              "neighbours\n");
    EXPECT_EQ(result.exit_code, 1);
}

TEST(StartOnHosts, OnlyThisMachineIsAnInstanceOfOne) {
    const auto result = run_gantry(
        {"start", "-H", "localhost", "sh", "-c", gantry_binary() + " instance info | grep ^size"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out, "size       1\n");
    EXPECT_EQ(result.exit_code, 0);
}

}  // namespace
}  // namespace gantry::test
