// gantry under Slurm: `srun --mpi=pmi2 -n 3 gantry start` makes one
// instance of three brokers, which find each other over Slurm's PMI-2, on a
// cluster of one node made for each test (tests/cli/scripts/slurm_cluster.sh
// starts and removes its daemons). Skipped, loudly, where the daemons
// cannot be started.
#include <unistd.h>

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

// `srun --mpi=pmi2 -n 3 -O gantry start COMMAND...` in a cluster of its own
// (-O: three tasks on a node that may have fewer cores).
CommandResult under_srun(std::vector<std::string> command) {
    // A bound, so that a hang fails the test rather than stalling it; the
    // script stops the daemons when timeout ends it.
    std::vector<std::string> argv = {
        "timeout", "120",           "bash", std::string(GANTRY_TEST_SCRIPTS) + "/slurm_cluster.sh",
        "srun",    "--mpi=pmi2",    "-n",   "3",
        "-O",      gantry_binary(), "start"};
    argv.insert(argv.end(), command.begin(), command.end());
    return run_program(argv);
}

TEST(Slurm, TheTasksAreOneInstance) {
    const auto result =
        under_srun({gantry_binary(), "run", "-N", "3", "-n", "3", GANTRY_MPI_PROBE});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out),
              (std::vector<std::string>{"rank=0 size=3 appnum=0 local_size=1 sum=6",
                                        "rank=1 size=3 appnum=0 local_size=1 sum=6",
                                        "rank=2 size=3 appnum=0 local_size=1 sum=6"}));
}

TEST(Slurm, InstanceInfoCountsThreeBrokers) {
    const auto result = under_srun({gantry_binary(), "instance", "info"});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    const auto lines = lines_of(result.out);
    const auto line = [&](const std::string& field) {
        for (const auto& text : lines)
            if (text.starts_with(field + " "))
                return text;
        return "no " + field + " in " + result.out;
    };
    // One node per broker, each broker a task of the one step.
    EXPECT_EQ(line("size"), "size       3");
    EXPECT_EQ(line("brokers"), "brokers    3 (3 up: 0-2; fanout 32)");
    EXPECT_EQ(line("jobs"), "jobs       0 pending, 0 running, 0 inactive");
}

// gantry start's exit code is its initial program's, on rank 0; srun exits
// with its tasks' highest and names the task that failed.
TEST(Slurm, TheInitialProgramsExitCode) {
    const auto result = under_srun({"sh", "-c", "exit 5"});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::string short_name = std::string(host).substr(0, std::string(host).find('.'));
    EXPECT_EQ(result.err, "srun: error: " + short_name + ": task 0: Exited with exit code 5\n");
    EXPECT_EQ(result.exit_code, 5);
    EXPECT_EQ(result.out, "");
}

// `gantry run` inside `salloc`, with no -H: one srun starts a broker on the
// allocation's node, and the job is mapped on its hosts and slots (its
// tasks on each node: one unless -n says more), as mpirun inside an
// allocation maps it.
TEST(Slurm, RunInsideAnAllocationUsesItsNodesAndSlots) {
    const std::string g = gantry_binary();
    const std::string script = "salloc -Q -N1 " + g + " run --label-io -n 1 " + GANTRY_MPI_PROBE +
                               "; echo exit $?; " + "salloc -Q -N1 " + g +
                               " run -n 2 true; echo exit $?; " + "salloc -Q -N1 -n 2 " + g +
                               " run sh -c 'echo $GANTRY_TASK_RANK of $GANTRY_JOB_SIZE; "
                               // Task 0's failure first, the one the run names.
                               "[ $GANTRY_TASK_RANK = 0 ] || sleep 0.3; exit 3' | sort; "
                               "echo exit ${PIPESTATUS[0]}";
    const auto result =
        run_program({"timeout", "120", "bash",
                     std::string(GANTRY_TEST_SCRIPTS) + "/slurm_cluster.sh", "bash", "-c", script});
    if (result.exit_code == kSkipped)
        GTEST_SKIP() << result.out;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::string short_name = std::string(host).substr(0, std::string(host).find('.'));
    // srun's lines and the tasks' (which srun passes on) may come in either order.
    EXPECT_EQ(sorted_lines(result.err),
              sorted_lines("gantry: map: app 0 (-n 2 true): there are not enough slots available: "
                           "2 tasks do not fit in the 1 free slot of " +
                           short_name +
                           "; add :OVERSUBSCRIBE to the job's --map-by or give fewer tasks\n"
                           "srun: error: " +
                           short_name + ": task 0: Exited with exit code 1\n" +
                           "srun: error: " + short_name + ": task 0: Exited with exit code 3\n" +
                           "gantry: task 0 (" + short_name + ") exited with exit code 3\n"));
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out,
              "0: rank=0 size=1 appnum=0 local_size=1 sum=1\nexit 0\nexit 1\n"
              "0 of 2\n1 of 2\nexit 3\n");
}

}  // namespace
}  // namespace gantry::test
