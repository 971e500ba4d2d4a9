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
    EXPECT_EQ(line("brokers"), "brokers    3 (3 up: 0-2; fanout 2)");
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

}  // namespace
}  // namespace gantry::test
