// Open MPI programs under `gantry run`: Debian's Open MPI 4.1 speaks PMIx
// only, which the shell serves beside PMI-1. ompi_probe
// (tests/cli/programs/ompi_probe.c) prints what each rank learned from
// gantry, as mpi_probe does for MPICH; its lines are compared with the
// map, and with what Open MPI's own mpirun gives the same program.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/command_args.h"
#include "support/machine.h"
#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

using Lines = std::vector<std::string>;

const std::string kOmpiProbe = GANTRY_OMPI_PROBE;
const std::string kPmixProbe = GANTRY_PMIX_PROBE;

Lines sorted_lines(const std::string& text) {
    Lines lines = lines_of(text);
    std::erase(lines, "");
    std::sort(lines.begin(), lines.end());
    return lines;
}

// The lines of gantry's own (`gantry: ...`) in `err`, sorted: what the
// tasks write there (Open MPI's help messages) left out.
Lines gantry_lines(const std::string& err) {
    Lines lines = sorted_lines(err);
    std::erase_if(lines, [](const std::string& line) { return !line.starts_with("gantry: "); });
    return lines;
}

std::string probe_line(int rank, int size, int appnum, int local_size) {
    return "rank=" + std::to_string(rank) + " size=" + std::to_string(size) +
           " appnum=" + std::to_string(appnum) + " local_size=" + std::to_string(local_size) +
           " sum=" + std::to_string(size * (size + 1) / 2);
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// This machine has 2 cores: more tasks than that need --oversubscribe.
TEST(OpenMpi, HelloOfFourTasks) {
    const auto result = run_gantry({"run", "--oversubscribe", "-n", "4", kOmpiProbe});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out), (Lines{probe_line(0, 4, 0, 4), probe_line(1, 4, 0, 4),
                                               probe_line(2, 4, 0, 4), probe_line(3, 4, 0, 4)}));
}

TEST(OpenMpi, MpmdJobHasOneWorldAndTwoAppnums) {
    const auto result =
        run_gantry({"run", "--oversubscribe", "-n", "2", kOmpiProbe, ":", "-n", "1", kOmpiProbe});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out),
              (Lines{probe_line(0, 3, 0, 3), probe_line(1, 3, 0, 3), probe_line(2, 3, 1, 3)}));
}

// The CPUs this process may use, as /proc/self/status lists them: those of
// an unbound task.
std::string cpus_here() {
    std::istringstream status(read_file("/proc/self/status"));
    const std::string key = "Cpus_allowed_list:\t";
    for (std::string line; std::getline(status, line);)
        if (line.starts_with(key))
            return line.substr(key.size());
    return "?";
}

// ompi_probe's `cpus` lines for the job of `options` as its dry run's
// launch plan binds it.
Lines planned_cpus(const std::vector<std::string>& options) {
    const auto plan = run_gantry(
        concat({"run", "--dry-run", "--display", "plan"}, with_command(options, {"true"})));
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    Lines lines;
    for (const std::string& node : lines_of(plan.out)) {
        if (node.empty())
            continue;
        const auto plan_of_node = nlohmann::json::parse(node);
        for (const auto& task : plan_of_node["tasks"]) {
            const std::string bound = task["cpus_os"].get<std::string>();
            lines.push_back("rank=" + std::to_string(task["rank"].get<int>()) +
                            " cpus=" + (bound.empty() ? cpus_here() : bound));
        }
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

// What MPI_Init leaves of the binding: the launcher's, which Open MPI
// keeps when it did not start the tasks itself.
TEST(OpenMpi, BindingSeenInsideIsTheMap) {
    const auto bound = run_gantry({"run", "--bind-to", "core", "-n", "2", kOmpiProbe, "cpus"});
    EXPECT_EQ(bound.err, "");
    EXPECT_EQ(bound.exit_code, 0);
    EXPECT_EQ(sorted_lines(bound.out), (Lines{"rank=0 cpus=0", "rank=1 cpus=1"}));

    const std::vector<std::vector<std::string>> cases = {
        {"--bind-to", "core", "-n", "2", "CMD"},
        {"-n", "2", "--map-by", "core", "--bind-to", "none", "CMD"},
        {"-n", "1", "--map-by", "core", "--bind-to", "core", "CMD", ":", "-n", "1", "--bind-to",
         "none", "CMD"},
        {"-n", "1", "--map-by", "package", "CMD", ":", "-n", "1", "--map-by", "core", "CMD"}};
    for (const auto& options : cases) {
        const auto run = run_gantry(concat({"run"}, with_command(options, {kOmpiProbe, "cpus"})));
        EXPECT_EQ(run.exit_code, 0) << run.err;
        EXPECT_EQ(sorted_lines(run.out), planned_cpus(options)) << testing::PrintToString(options);
    }
}

TEST(OpenMpi, AbortEndsTheJobWithItsCode) {
    const auto result = run_gantry({"run", "-n", "2", kOmpiProbe, "abort", "7"});
    EXPECT_EQ(result.exit_code, 7) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(gantry_lines(result.err), (Lines{"gantry: task 1 (" + host_name() +
                                               ") called MPI_Abort / PMIx_Abort with exit code 7"}))
        << result.err;
}

// Rank 0 waits in a barrier that rank 1 will never enter. (The time limit
// turns a job that would wait for ever into a failure, exit code 143.)
TEST(OpenMpi, TaskKilledBySignalEndsTheJob) {
    const auto result = run_gantry({"run", "--time-limit", "30s", "-n", "2", kOmpiProbe, "kill"});
    EXPECT_EQ(result.exit_code, 137) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(gantry_lines(result.err),
              (Lines{"gantry: task 1 (" + host_name() + ") killed by signal 9 (Killed)"}))
        << result.err;
}

// Four brokers of 2 cores each, posing as nodes: each node's shell serves
// PMIx to its 4 tasks, and the fence crosses nodes over the overlay.
TEST(OpenMpi, FourTasksOnEachOfFourBrokers) {
    const auto result = run_gantry({"start", "--test-size=4", "--", gantry_binary(), "run", "-N",
                                    "4", "-n", "16", "--oversubscribe", kOmpiProbe});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    Lines expected;
    for (int rank = 0; rank < 16; ++rank)
        expected.push_back(probe_line(rank, 16, 0, 4));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted_lines(result.out), expected);
}

// A get of what a task of another node put, with no fence before it (PMIx
// direct modex): the asking node's shell has that node's shell asked,
// through the brokers. Each rank reads the key of a rank of the other node.
TEST(OpenMpi, DirectModexAcrossBrokers) {
    const auto result = run_gantry({"start", "--test-size=2", "--", gantry_binary(), "run", "-N",
                                    "2", "-n", "4", kPmixProbe, "nofence"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    Lines lines = sorted_lines(result.out);
    for (std::string& line : lines)
        line.erase(std::min(line.size(), line.find(" locality=")));
    EXPECT_EQ(lines, (Lines{"rank=0 size=4 appnum=0 local_size=2 local_rank=0 node_rank=0 nodeid=0 "
                            "peers=0,1 host=node0 fence=none next=from-2",
                            "rank=1 size=4 appnum=0 local_size=2 local_rank=1 node_rank=1 nodeid=0 "
                            "peers=0,1 host=node0 fence=none next=from-3",
                            "rank=2 size=4 appnum=0 local_size=2 local_rank=0 node_rank=0 nodeid=1 "
                            "peers=2,3 host=node1 fence=none next=from-0",
                            "rank=3 size=4 appnum=0 local_size=2 local_rank=1 node_rank=1 nodeid=1 "
                            "peers=2,3 host=node1 fence=none next=from-1"}));
}

// A get of a key the task on the other node never puts fails once that
// task has ended, rather than waiting for the job's end: rank 0 reads
// nothing of rank 2 (the others read nothing).
TEST(OpenMpi, DirectModexOfAKeyNeverPutFails) {
    const auto result = run_gantry({"start", "--test-size=2", "--", gantry_binary(), "run", "-N",
                                    "2", "-n", "4", kPmixProbe, "noput"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    Lines next;
    for (const std::string& line : sorted_lines(result.out))
        next.push_back(line.substr(0, line.find(' ')) + line.substr(line.find(" next=")));
    for (std::string& line : next)
        line.erase(std::min(line.size(), line.find(" locality=")));
    EXPECT_EQ(next,
              (Lines{"rank=0 next=-", "rank=1 next=skip", "rank=2 next=skip", "rank=3 next=skip"}));
}

// Open MPI's asynchronous modex without collecting data has MPI_Init
// fence nothing: each peer's address comes by direct modex. One task per
// node: Open MPI 4.1 with PMIx 4.2 sometimes fails a get of a peer on its
// own node that has not committed yet, under its own mpirun too.
TEST(OpenMpi, AsyncModexAcrossBrokers) {
    const auto result = run_gantry({"start", "--test-size=2", "--", gantry_binary(), "run", "-N",
                                    "2", "-n", "2", "-x", "OMPI_MCA_pmix_base_async_modex=1", "-x",
                                    "OMPI_MCA_pmix_base_collect_data=0", kOmpiProbe});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out), (Lines{probe_line(0, 2, 0, 1), probe_line(1, 2, 0, 1)}));
}

// Open MPI's own launcher gives the same program the same world. (As root
// it runs nothing without --allow-run-as-root.)
TEST(OpenMpi, SameLinesAsUnderMpirun) {
    struct Case {
        std::vector<std::string> job;
        Lines lines;
    };
    const Case cases[] = {
        {{"-n", "4", kOmpiProbe},
         {probe_line(0, 4, 0, 4), probe_line(1, 4, 0, 4), probe_line(2, 4, 0, 4),
          probe_line(3, 4, 0, 4)}},
        {{"-n", "2", kOmpiProbe, ":", "-n", "1", kOmpiProbe},
         {probe_line(0, 3, 0, 3), probe_line(1, 3, 0, 3), probe_line(2, 3, 1, 3)}}};
    for (const auto& c : cases) {
        const auto gantry = run_gantry(concat({"run", "--oversubscribe"}, c.job));
        const auto mpirun = run_program(
            concat({"mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"}, c.job));
        EXPECT_EQ(gantry.exit_code, 0) << gantry.err;
        EXPECT_EQ(mpirun.exit_code, 0) << mpirun.err;
        EXPECT_EQ(sorted_lines(gantry.out), c.lines);
        EXPECT_EQ(sorted_lines(mpirun.out), c.lines);
    }
}

// --mpi=pmi1 serves PMI-1 only: Open MPI finds no PMIx server, and each
// task runs alone, rank 0 of 1.
TEST(OpenMpi, Pmi1GivesEachTaskAWorldOfItsOwn) {
    // A singleton leaves its session directory (ompi.HOST.UID/pid.N) in
    // TMPDIR: this test's.
    const ScratchDir tmp("gantry-ompi-singletons");
    const auto result =
        run_gantry({"run", "--mpi=pmi1", "-n", "2", "-x", "TMPDIR=" + tmp.path(), kOmpiProbe});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(sorted_lines(result.out), (Lines{probe_line(0, 1, 0, 1), probe_line(0, 1, 0, 1)}));
}

// MPICH's PMI-1 is served as before beside PMIx.
TEST(OpenMpi, MpichRunsBesideIt) {
    const auto result = run_gantry({"run", "-n", "2", GANTRY_MPI_PROBE});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out), (Lines{probe_line(0, 2, 0, 2), probe_line(1, 2, 0, 2)}));
}

// The PMIx library is loaded when a server starts, not with every gantry
// process. The task's parent is the process that serves it: the shell, or
// on one machine `gantry run` itself; inside an instance, the broker is
// the initial program's parent.
TEST(OpenMpi, OnlyAProcessServingPmixLoadsTheLibrary) {
    const std::string parent_has_it =
        "grep -q libpmix /proc/$PPID/maps && echo loaded || echo not loaded";
    for (const auto& [mpi, expected] : std::map<std::string, std::string>{
             {"--mpi=pmix", "loaded\n"}, {"--mpi=pmi1", "not loaded\n"}}) {
        const auto result = run_gantry({"run", mpi, "-n", "1", "sh", "-c", parent_has_it});
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.out, expected) << mpi;
    }
    const auto broker = run_gantry({"start", "sh", "-c", parent_has_it});
    EXPECT_EQ(broker.exit_code, 0) << broker.err;
    EXPECT_EQ(broker.out, "not loaded\n");
}

}  // namespace
}  // namespace gantry::test
