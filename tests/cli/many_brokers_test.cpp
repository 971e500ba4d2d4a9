// An instance of several brokers on this host (`gantry start --test-size`),
// each posing as a node: they bootstrap by gantry's own PMI, join over the
// overlay, and run the shells of their nodes' tasks.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/rset.h"
#include "support/instance.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"
#include "support/vectors.h"
#include "topo/topology.h"

namespace gantry::test {
namespace {

// The cores each broker of --test-size finds: the whole machine's.
unsigned cores_here() {
    const auto result = run_gantry({"R", "encode", "--local"});
    const auto R = ResourceSet::parse(result.out);
    return R ? static_cast<unsigned>(R->ncores()) : 0;
}

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    std::erase(lines, "");
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST(ManyBrokers, TasksRunOnTheNodesOfTheirRanks) {
    const auto result = run_gantry(
        {"start", "--test-size=4", "--", gantry_binary(), "run", "-N", "4", "-n", "8", "sh", "-c",
         "echo $GANTRY_TASK_RANK $GANTRY_NODE_ID $GANTRY_TASK_LOCAL_RANK $GANTRY_JOB_SIZE"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"0 0 0 8", "1 0 1 8", "2 1 0 8", "3 1 1 8", "4 2 0 8",
                                        "5 2 1 8", "6 3 0 8", "7 3 1 8"}));
}

// -N without -n: a task on each node (one per slot of each), as srun -N
// and flux run -N place them; whole nodes hold more cores than slots.
TEST(ManyBrokers, NodesWithoutNtasksRunATaskOnEach) {
    const std::string echo = "echo $GANTRY_NODE_ID $GANTRY_JOB_SIZE $GANTRY_TASK_LOCAL_SIZE";
    const auto result =
        run_gantry({"start", "--test-size=3", "--", "sh", "-c",
                    gantry_binary() + " run -N 3 sh -c '" + echo + "' | sort; " + gantry_binary() +
                        " run -N 2 -c 2 sh -c '" + echo + "' | sort"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "0 3 1\n1 3 1\n2 3 1\n0 2 1\n1 2 1\n");
    EXPECT_EQ(result.err, "");
}

// --oversubscribe with -N: the tasks share the slots of those nodes.
TEST(ManyBrokers, OversubscribedTasksShareTheirNodes) {
    const auto result =
        run_gantry({"start", "--test-size=4", "--", gantry_binary(), "run", "-N", "2", "-n", "12",
                    "--oversubscribe", "sh", "-c", "echo $GANTRY_NODE_ID $GANTRY_JOB_NNODES"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::vector<std::string> expected(6, "0 2");
    expected.insert(expected.end(), 6, "1 2");
    EXPECT_EQ(sorted_lines(result.out), expected);
}

// Each node's tasks run under the lean job shell built beside gantry (no
// ZeroMQ, no SQLite: each shell starts sooner), named `gantry job-shell`.
TEST(ManyBrokers, TasksRunUnderTheLeanJobShell) {
    const std::string shell =
        gantry_binary().substr(0, gantry_binary().rfind('/')) + "/gantry-job-shell";
    const auto result = run_gantry(
        {"start", "--test-size=2", "--", gantry_binary(), "run", "-N", "2", "-n", "2", "sh", "-c",
         "echo $(readlink /proc/$PPID/exe) $(tr '\\0' ' ' < /proc/$PPID/cmdline)"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, shell + " gantry job-shell\n" + shell + " gantry job-shell\n");
}

TEST(ManyBrokers, EachBrokerIsANodeWithItsHostName) {
    const auto result =
        run_gantry({"start", "--test-size=3", "--test-hosts=n[1-3]", "--", gantry_binary(), "run",
                    "-N", "3", "-n", "3", "sh", "-c", "echo $GANTRY_TASK_RANK $GANTRY_NODE_ID"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out), (std::vector<std::string>{"0 0", "1 1", "2 2"}));
    const auto listed =
        run_gantry({"start", "--test-size=3", "--test-hosts=n[1-3]", "--", "sh", "-c",
                    gantry_binary() + " instance info | grep -E '^(size|cores|brokers)'"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(listed.out, "size       3\ncores      " + std::to_string(3 * cores_here()) +
                              "\nbrokers    3 (3 up: 0-2; fanout 32)\n");
}

TEST(ManyBrokers, TheJobsExitCodeIsItsFailingTasksAcrossNodes) {
    const auto result =
        run_gantry({"start", "--test-size=3", "--", gantry_binary(), "run", "-N", "3", "-n", "3",
                    "sh", "-c", "test $GANTRY_TASK_RANK != 2 || exit 7"});
    EXPECT_EQ(result.exit_code, 7) << result.err;
}

// The ends of a node's tasks go up the tree together; each is recorded,
// with its own status, and after the task's output.
TEST(ManyBrokers, EveryTaskEndIsRecordedAcrossNodes) {
    const std::string g = gantry_binary();
    const auto result = run_gantry(
        {"start", "--test-size=4", "--", "sh", "-c",
         g + " run -N 4 -n 32 --oversubscribe sh -c 'echo $GANTRY_TASK_RANK; exit " +
             "$((GANTRY_TASK_RANK % 4))' 2>/dev/null | sort -n | tr '\\n' ' '; echo; " + g +
             " info $(" + g + " jobs -a -n -o '{id}') | sed -n '/^tasks/,/^eventlog/p'"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::string expected;
    for (int task = 0; task < 32; ++task)
        expected += std::to_string(task) + " ";
    expected +=
        "\ntasks\n"
        "  0,4,8,12,16,20,24,28  exited with exit code 0\n"
        "  1,5,9,13,17,21,25,29  exited with exit code 1\n"
        "  2,6,10,14,18,22,26,30 exited with exit code 2\n"
        "  3,7,11,15,19,23,27,31 exited with exit code 3\n"
        "eventlog\n";
    EXPECT_EQ(result.out, expected);
}

TEST(ManyBrokers, TheInitialProgramsExitCodeIsTheInstances) {
    const auto result = run_gantry({"start", "--test-size=2", "sh", "-c", "exit 3"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 3);
}

// A signal to `gantry start --test-size` goes to its initial program, as on
// one broker, and to no other broker: the program's job gets it on every
// node, and the instance ends with the program, in order (no broker lost,
// no task killed but by the signal).
TEST(ManyBrokers, ASignalReachesTheInitialProgramAlone) {
    const ScratchDir dir("gantry-signalled");
    const std::string ready = dir / "ready";
    const std::string g = gantry_binary();
    Background start(
        {g, "start", "--test-size=2", g, "run", "-N", "2", "-n", "2", "--label-io", "sh", "-c",
         "trap 'echo got INT; exit $((GANTRY_TASK_RANK * 3))' INT; : > " + ready +
             ".$GANTRY_TASK_RANK; while :; do sleep 0.05; done"},
        dir);
    ASSERT_TRUE(eventually([&] {
        return std::filesystem::exists(ready + ".0") && std::filesystem::exists(ready + ".1");
    }));
    ASSERT_TRUE(eventually([&] { return start.catches(SIGINT); }));
    start.signal(SIGINT);
    const auto result = start.finish();
    EXPECT_EQ(sorted_lines(result.out), (std::vector<std::string>{"0: got INT", "1: got INT"}));
    EXPECT_EQ(result.err,
              "gantry: job 1: SIGINT sent; one more Ctrl-C within 2 s detaches\n"
              "gantry: task 1 (node1) exited with exit code 3\n");
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_EQ(run_program({"pgrep", "-f", dir.path()}).out, "");
}

TEST(ManyBrokers, OutputAndStdinCrossNodes) {
    const auto result = run_gantry(
        {"start", "--test-size=2", "--", gantry_binary(), "run", "-N", "2", "-n", "2", "--label-io",
         "sh", "-c", "if [ $GANTRY_TASK_RANK = 0 ]; then cat; else echo from-1 >&2; fi"},
        "typed\n");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "0: typed\n");
    EXPECT_EQ(result.err, "1: from-1\n");
}

// A reader that takes nothing until the tasks are done gets every byte
// they wrote, under an instance of one broker and across an overlay (rank
// 1's output goes up no faster than rank 0 takes it): 80 MB, more than a
// client may leave unread, which once ended the front end with "lost the
// connection to the instance" (the rest is sent as the reader takes it).
TEST(ManyBrokers, AReaderSlowerThanTheOutputMissesNothing) {
    const ScratchDir dir;
    // Each task writes 40 MB, then says so in a file; the reader starts
    // once both have (a minute at most).
    const std::string script =
        "g=" + gantry_binary() + "; d=" + dir.path() +
        "\n"
        "tasks() { echo \"yes | head -c 40000000; touch $d/$1.\\$GANTRY_TASK_RANK\"; }\n"
        "later() { for i in $(seq 600); do [ -e $d/$1.0 ] && [ -e $d/$1.1 ] && break; "
        "sleep 0.1; done; wc -c; }\n"
        "$g start -- $g run -n 2 --oversubscribe sh -c \"$(tasks one)\" | later one\n"
        "echo \"exit ${PIPESTATUS[0]}\"\n"
        "$g start --test-size=2 -- $g run -N 2 -n 2 sh -c \"$(tasks two)\" | later two\n"
        "echo \"exit ${PIPESTATUS[0]}\"\n";
    const auto result = run_program({"bash", "-c", script});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out, "80000000\nexit 0\n80000000\nexit 0\n");
}

// Stdin that its task reads only later arrives whole and in order, from the
// broker of its node (rank 0 of one broker) and through the overlay (the
// job on rank 1 alone); the brokers' queue once moved the bytes it was
// writing as more came (the sums differed).
TEST(ManyBrokers, StdinReadLateArrivesWhole) {
    const ScratchDir dir;
    const std::string script = "g=" + gantry_binary() + "; f=" + dir.path() +
                               "/in\n"
                               "head -c 3000000 /dev/urandom > $f; md5sum < $f\n"
                               "$g start -- $g run -n 1 sh -c 'sleep 1; md5sum' < $f\n"
                               "$g start --test-size=2 -- $g run -n 1 --requires host:node1 "
                               "sh -c 'sleep 1; md5sum' < $f\n";
    const auto result = run_program({"bash", "-c", script});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    const auto sums = lines_of(result.out);
    ASSERT_EQ(sums.size(), 3u) << result.out;
    EXPECT_EQ(sums[1], sums[0]);
    EXPECT_EQ(sums[2], sums[0]);
}

// kill -9 of rank 1's broker while a job runs there: its node is lost within
// --lost-after, the job gets a node-failure exception and its tasks on rank
// 0 are killed; nothing it started is left.
// (Each wait in these scripts gives up after about a minute, so that a
// broker lost too early fails the test rather than hanging it.)
// (The brokers killed are found as the children of the instance's launcher,
// the parent of rank 0, whose child the script is: those of another test
// running beside are left alone.)
TEST(ManyBrokers, ABrokerKilledFailsItsJobsAndLeavesNothing) {
    const std::string g = gantry_binary();
    const std::string script =
        "id=$(" + g +
        " submit -N 2 -n 2 sleep 31.25); "
        "until " +
        g +
        " info $id | grep -q '^state *RUN'; do sleep 0.02; w=$((${w:-0}+1)); [ $w -lt 3000 ] || "
        "break; done; "
        "for p in $(pgrep -P $(ps -o ppid= -p $PPID)); do "
        "  tr '\\0' '\\n' < /proc/$p/environ | grep -qx PMI_RANK=1 && kill -9 $p; "
        "done; " +
        g + " wait $id; echo wait $?; " + g + " info $id | grep -E '^(state|exception)'; " + g +
        " resource list | grep -E '^ *(free|down)'; " + g + " instance info | grep ^brokers; " + g +
        " run -N 1 -n 1 sh -c 'echo $GANTRY_TASK_RANK ran'";
    const auto result =
        run_gantry({"start", "--test-size=2", "--lost-after=1s", "sh", "-c", script});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "wait 137\n"
              "state      INACTIVE\n"
              "exception  node-failure: no word from rank 1 in 1000 ms\n"
              "      free      1        " +
                  std::to_string(cores_here()) +
                  "        0 node0\n"
                  "      down      1        " +
                  std::to_string(cores_here()) +
                  "        0 node1\n"
                  "brokers    2 (1 up: 0; 1 down: 1; fanout 32)\n"
                  "0 ran\n");
    EXPECT_EQ(result.err,
              "gantry: instance: rank 1 lost: no word from rank 1 in 1000 ms\n"
              "gantry: job 1: exception: node-failure: no word from rank 1 in 1000 ms\n");
    EXPECT_EQ(run_program({"pgrep", "-f", "sleep 31.25"}).out, "");
}

// `gantry overlay status` draws the tree: rank 1 killed, its subtree is lost
// with it, and each lost rank says where the tree broke.
TEST(ManyBrokers, OverlayStatusShowsTheTreeAndWhereItBroke) {
    const std::string g = gantry_binary();
    const std::string script =
        g +
        " overlay status; echo status $?; "
        "for p in $(pgrep -P $(ps -o ppid= -p $PPID)); do "
        "  tr '\\0' '\\n' < /proc/$p/environ | grep -qx PMI_RANK=1 && kill -9 $p; "
        "done; "
        "until " +
        g +
        " instance info | grep -q '^brokers *5 (2 up'; do sleep 0.02; w=$((${w:-0}+1)); [ $w -lt "
        "3000 ] || break; done; " +
        g + " overlay status; echo status $?; " + g + " instance info | grep ^brokers";
    const auto result = run_gantry(
        {"start", "--test-size=5", "--fanout=2", "--lost-after=400ms", "sh", "-c", script});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "0 node0: up\n"
              "├─ 1 node1: up\n"
              "│  ├─ 3 node3: up\n"
              "│  └─ 4 node4: up\n"
              "└─ 2 node2: up\n"
              "status 0\n"
              "0 node0: up\n"
              "├─ 1 node1: lost (no word from rank 1 in 400 ms)\n"
              "│  ├─ 3 node3: lost (no word from rank 1 in 400 ms)\n"
              "│  └─ 4 node4: lost (no word from rank 1 in 400 ms)\n"
              "└─ 2 node2: up\n"
              "status 1\n"
              "brokers    5 (2 up: 0,2; 3 down: 1,3-4; fanout 2)\n");
    EXPECT_EQ(sorted_lines(result.err),
              (std::vector<std::string>{
                  "gantry: broker 3: no word from the parent (rank 1) in 400 ms; its tasks are "
                  "killed",
                  "gantry: broker 4: no word from the parent (rank 1) in 400 ms; its tasks are "
                  "killed",
                  "gantry: instance: ranks 1,3-4 lost: no word from rank 1 in 400 ms"}));
}

TEST(ManyBrokers, OverlayStatusOfOneBroker) {
    const auto result = run_gantry({"start", "--", gantry_binary(), "overlay", "status", "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "{\"fanout\":null,\"ranks\":[{\"host\":\"" + local_hostname() +
                              "\",\"parent\":null,\"rank\":0,\"state\":\"up\"}],\"size\":1}\n");
}

// `gantry alloc -N 2` in an instance of four brokers: a broker on each
// allocated node, bootstrapped by the job's PMI into a child instance of
// two, whose own jobs span both nodes.
TEST(ManyBrokers, AllocOnTwoNodesIsAChildInstanceOfTwoBrokers) {
    const std::string g = gantry_binary();
    const auto result =
        run_gantry({"start", "--test-size=4", "--", g, "alloc", "-N", "2", "sh", "-c",
                    g + " instance info | grep ^brokers; " + g + " overlay status; " + g +
                        " run -N 2 -n 4 --label-io sh -c 'echo node $GANTRY_NODE_ID' | sort"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "brokers    2 (2 up: 0-1; fanout 32)\n"
              "0 node0: up\n"
              "└─ 1 node1: up\n"
              "0: node 0\n1: node 0\n2: node 1\n3: node 1\n");
    EXPECT_EQ(result.err, "");
}

// --map-by ppr:1:node without -n: one task on each node, as mpirun derives.
TEST(ManyBrokers, PprWithoutNtasksDerivesTheCount) {
    const auto result =
        run_gantry({"start", "--test-size=3", "--", gantry_binary(), "run", "-N", "3", "--map-by",
                    "ppr:1:node", "--label-io", "sh", "-c", "echo $GANTRY_NODE_ID"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out), (std::vector<std::string>{"0: 0", "1: 1", "2: 2"}));
}

// An MPICH program on seven brokers (--fanout 2: a tree three deep), then on three
// nodes without rank 0 (held by another job): each barrier is gathered up
// the tree, through brokers that do not run the job, and sent back down.
TEST(ManyBrokers, MpiBarriersGoUpAndDownTheTree) {
    const std::string g = gantry_binary();
    const std::string script = g + " run -N 7 -n 7 " + GANTRY_MPI_PROBE + " | sort; id=$(" + g +
                               " submit -N 1 --exclusive sleep 30); until " + g +
                               " info $id | grep -q '^state *RUN'; do sleep 0.02; "
                               "w=$((${w:-0}+1)); [ $w -lt 3000 ] || break; done; " +
                               g + " info $id | grep ^R; mpi=$(" + g + " submit -N 3 -n 3 " +
                               GANTRY_MPI_PROBE + "); " + g + " attach $mpi | sort; " + g +
                               " info $mpi | grep ^R; " + g + " cancel $id";
    const auto result = run_gantry({"start", "--test-size=7", "--fanout=2", "sh", "-c", script});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::string expected;
    for (int rank = 0; rank < 7; ++rank)
        expected += "rank=" + std::to_string(rank) + " size=7 appnum=0 local_size=1 sum=28\n";
    expected += "R          rank0/core[0-" + std::to_string(cores_here() - 1) + "]\n";
    for (int rank = 0; rank < 3; ++rank)
        expected += "rank=" + std::to_string(rank) + " size=3 appnum=0 local_size=1 sum=6\n";
    expected += "R          rank[1-3]/core0\n";
    EXPECT_EQ(result.out, expected);
    EXPECT_EQ(result.err, "");
}

// An MPICH program across nodes: each node's shell serves PMI to its own
// tasks, and the barriers are gathered over the overlay.
TEST(ManyBrokers, MpiAcrossNodes) {
    const auto result = run_gantry({"start", "--test-size=4", "--", gantry_binary(), "run", "-N",
                                    "3", "-n", "5", GANTRY_MPI_PROBE});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank=0 size=5 appnum=0 local_size=2 sum=15",
                                        "rank=1 size=5 appnum=0 local_size=2 sum=15",
                                        "rank=2 size=5 appnum=0 local_size=2 sum=15",
                                        "rank=3 size=5 appnum=0 local_size=2 sum=15",
                                        "rank=4 size=5 appnum=0 local_size=1 sum=15"}));
}

// MPI_Abort on one node ends the job's tasks on the others: the job's exit
// code is the abort's.
TEST(ManyBrokers, MpiAbortOnOneNodeEndsTheJob) {
    const auto result = run_gantry({"start", "--test-size=3", "--", gantry_binary(), "run", "-N",
                                    "3", "-n", "3", GANTRY_MPI_PROBE, "abort"});
    EXPECT_EQ(result.exit_code, 7) << result.err;
    EXPECT_NE(result.err.find("gantry: task 1 (node1) called MPI_Abort / PMI abort with exit "
                              "code 7\n"),
              std::string::npos)
        << result.err;
}

// kill -9 of rank 0: the other brokers lose their parent, kill their tasks
// and exit; nothing is left. Host names of this test's own (rzk0...) tell
// its brokers from those of tests running beside it. The liveness bound is
// short, yet long enough that a machine busy with other tests (and the
// sanitizers' build) does not lose a broker before the job runs.
TEST(ManyBrokers, RankZeroKilledLeavesNothing) {
    const std::string g = gantry_binary();
    const std::string script =
        g +
        " submit -N 3 -n 3 sleep 41.75 >/dev/null; "
        "until " +
        g +
        " info 1 | grep -q '^state *RUN'; do sleep 0.02; w=$((${w:-0}+1)); [ $w -lt 3000 ] || "
        "break; done; "
        "for p in $(pgrep -f 'start --test-hosts rzk'); do "
        "  tr '\\0' '\\n' < /proc/$p/environ | grep -qx PMI_RANK=0 && kill -9 $p; "
        "done; sleep 30";
    // Where rank 0 had its temporary state directory, which SIGKILL leaves.
    const ScratchDir tmp("gantry-rzk");
    const auto result =
        run_program({"env", "TMPDIR=" + tmp.path(), g, "start", "--test-size=3",
                     "--test-hosts=rzk[0-2]", "--lost-after=2s", "sh", "-c", script});
    EXPECT_EQ(result.exit_code, 137);
    EXPECT_EQ(sorted_lines(result.err),
              (std::vector<std::string>{
                  "gantry: broker 1: no word from the parent (rank 0) in 2000 ms; its tasks are "
                  "killed",
                  "gantry: broker 2: no word from the parent (rank 0) in 2000 ms; its tasks are "
                  "killed"}));
    EXPECT_EQ(run_program({"pgrep", "-f", "sleep 41.75|start --test-hosts rzk"}).out, "");
}

// Started by MPICH's launcher, the `gantry start` tasks bootstrap by its
// PMI into one instance of 3 brokers, and an MPI job runs across them.
TEST(ManyBrokers, UnderHydraTheTasksAreOneInstance) {
    const auto result = run_program({"mpiexec.hydra", "-launcher", "fork", "-hosts", "localhost",
                                     "-n", "3", gantry_binary(), "start", gantry_binary(), "run",
                                     "-N", "3", "-n", "3", GANTRY_MPI_PROBE});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank=0 size=3 appnum=0 local_size=1 sum=6",
                                        "rank=1 size=3 appnum=0 local_size=1 sum=6",
                                        "rank=2 size=3 appnum=0 local_size=1 sum=6"}));
}

// Nodes bigger than this machine, as R describes them (16 cores each):
// scheduled and mapped as real ones, their tasks run unbound (every CPU
// this process may use).
TEST(ManyBrokers, SimulatedBigNodesRunUnbound) {
    const std::string g = gantry_binary();
    const std::string script =
        "R=$(mktemp); trap 'rm -f $R' EXIT; " + g + " R encode -r 0-1 -c 0-15 -H 'big[0-1]' >$R; " +
        g + " start --test-size=2 --resources $R sh -c '" + g + " resource list -s free; " + g +
        " run -N 2 -n 32 sh -c \"grep Cpus_allowed_list /proc/self/status\" | sort | uniq -c'";
    const auto result = run_program({"sh", "-c", script});
    const std::string allowed =
        run_program({"sh", "-c", "grep Cpus_allowed_list /proc/self/status"}).out;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "     STATE NNODES   NCORES    NGPUS NODELIST\n"
              "      free      2       32        0 big[0-1]\n"
              "     32 " +
                  allowed);
    EXPECT_EQ(result.err, "");
}

// --requires: jobs go only to the nodes whose properties (from the
// instance's R), host names or ranks its query allows; a request those
// nodes can never hold is refused at once.
TEST(ManyBrokers, RequiresPlacesJobsOnTheNodesItAllows) {
    const std::string g = gantry_binary();
    const std::string script =
        "R=$(mktemp); trap 'rm -f $R' EXIT; " + g + " R encode -r 0-2 -c 0-1 -H 'n[0-2]' | " + g +
        " R set-property gpu:1-2 big:0 >$R; " + g + " start --test-size=3 --resources $R sh -c '" +
        g + " resource list -n -s free -o \"{nodelist} {properties}\"; " + g +
        " run -N 2 --requires gpu true; " + g + " run -n 1 --requires -gpu true; " + g +
        " run -n 1 --requires \"gpu and not host:n1\" true; " + g +
        " run -n 4 --requires \"big | rank:2\" true; " + g + " run --requires gpu true; " + g +
        " jobs -a -n -o \"{ntasks} {nodelist}\"; " + g +
        " run -N 2 --requires big true; echo exit $?; " + g +
        " run --requires \"gpu |\" true; echo exit $?'";
    const auto result = run_program({"sh", "-c", script});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    // Without -n, a task on each slot of the nodes the constraint allows.
    EXPECT_EQ(result.out,
              "n[0-2]   big,gpu\n4      n[1-2]\n4      n[0,2]\n1      n2\n1      n0\n"
              "2      n[1-2]\nexit 1\nexit 2\n");
    EXPECT_EQ(result.err,
              "gantry: scheduler: 2 nodes requested, the job's constraint allows 1\n"
              "gantry: run: --requires: constraint: expected a term after 'or', found the end of "
              "the query at offset 5 in \"gpu |\"\n");
}

// --topology gives every node a topology this machine lacks: 2 packages
// of 4 cores of 2 PUs. Jobs are mapped on it (one task per package here),
// and their tasks run unbound.
TEST(ManyBrokers, TopologyGivesEachNodeASimulatedOne) {
    const std::string g = gantry_binary();
    const auto result = run_gantry(
        {"start", "--test-size=2", "--topology", "package:2 core:4 pu:2", "sh", "-c",
         g + " resource list -s free; " + g +
             " run -N 2 -n 4 --map-by package --label-io sh -c 'echo $GANTRY_NODE_ID' | sort; " +
             g + " run -N 2 -n 16 sh -c 'grep Cpus_allowed_list /proc/self/status' | uniq -c"});
    const std::string allowed =
        run_program({"sh", "-c", "grep Cpus_allowed_list /proc/self/status"}).out;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out,
              "     STATE NNODES   NCORES    NGPUS NODELIST\n"
              "      free      2       16        0 node[0-1]\n"
              "0: 0\n1: 0\n2: 1\n3: 1\n"
              "     16 " +
                  allowed);
    EXPECT_EQ(result.err, "");
}

// Simulated GPUs: nodes with the four GPUs of a topology file; each task of
// -g 1 is given its own (CUDA_VISIBLE_DEVICES) though this machine has none.
TEST(ManyBrokers, TopologyWithGpusGivesSimulatedGpus) {
    GANTRY_REQUIRE_VECTORS();
    const std::string topology =
        (*vectors_dir() / "prrte-offline" / "topologies" / "turin-4gpu-nvml.xml").string();
    const std::string g = gantry_binary();
    const auto result = run_gantry(
        {"start", "--test-size=2", "--topology", topology, "sh", "-c",
         g + " resource list -s free -o '{nnodes} {ngpus}'; " + g +
             " run -N 2 -n 4 -g 1 --label-io sh -c 'echo $CUDA_VISIBLE_DEVICES' | sort"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "NNODES NGPUS\n2      8\n0: 0\n1: 1\n2: 0\n3: 1\n");
    EXPECT_EQ(result.err, "");
}

TEST(ManyBrokers, TopologyNeedsTestSizeAndALoadableOne) {
    expect_gantry({"start", "--topology", "package:2 core:4", "true"}, "", "",
                  "gantry: start: --topology: only with --test-size (a real node has its own)\n",
                  2);
    const auto bad = run_gantry({"start", "--test-size=2", "--topology", "nonsense:3", "true"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(bad.err.starts_with("gantry: start: --topology: ")) << bad.err;
    EXPECT_EQ(bad.out, "");
}

// A launcher that gives no task PMI rank 0 (here a task told it is rank 1
// of 2, alone in its job): the broker says whose address is missing.
TEST(ManyBrokers, ALauncherWithoutRankZero) {
    const auto result =
        run_gantry({"run", "-n", "1", "sh", "-c", "PMI_RANK=1 PMI_SIZE=2 exec \"$0\" start true",
                    gantry_binary()});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "gantry: bootstrap: no broker published rank 0's address (gantry.broker.0): the "
              "launcher gave no task PMI rank 0 of 2\n"
              "gantry: task 0 (" +
                  local_hostname() + ") exited with exit code 1\n");
}

TEST(ManyBrokers, TestHostsMustNameEachBroker) {
    expect_gantry({"start", "--test-size=3", "--test-hosts=a,b", "true"}, "", "",
                  "gantry: start: --test-hosts names 2 hosts, --test-size is 3\n", 2);
}

}  // namespace
}  // namespace gantry::test
