// `gantry run` starting real tasks on this machine: MPI programs through
// PMI-1, binding seen from inside the tasks, environment, exit codes, stdin,
// and nothing left behind when the job or gantry ends.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/command_args.h"
#include "support/instance.h"
#include "support/leftovers.h"
#include "support/machine.h"
#include "support/run_command.h"
#include "support/scratch.h"
#include "support/vectors.h"

namespace gantry::test {
namespace {

using Lines = std::vector<std::string>;

Lines sorted_lines(const std::string& text) {
    Lines lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

const std::string kProbe = GANTRY_MPI_PROBE;

std::string probe_line(int rank, int size, int appnum, int sum) {
    return "rank=" + std::to_string(rank) + " size=" + std::to_string(size) +
           " appnum=" + std::to_string(appnum) + " local_size=" + std::to_string(size) +
           " sum=" + std::to_string(sum);
}

TEST(RunLaunch, MpiProgramsOfOneFourAndEightTasks) {
    for (const int n : {1, 4, 8}) {
        const auto result = run_gantry({"run", "--oversubscribe", "-n", std::to_string(n), kProbe});
        ASSERT_EQ(result.exit_code, 0) << n << ": " << result.err;
        Lines expected;
        for (int rank = 0; rank < n; ++rank)
            expected.push_back(probe_line(rank, n, 0, n * (n + 1) / 2));
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(sorted_lines(result.out), expected) << n;
        EXPECT_EQ(result.err, "") << n;
    }
}

TEST(RunLaunch, MpiMpmdJobHasOneWorldAndTwoAppnums) {
    const auto result =
        run_gantry({"run", "--oversubscribe", "-n", "2", kProbe, ":", "-n", "3", kProbe});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted_lines(result.out),
              (Lines{probe_line(0, 5, 0, 15), probe_line(1, 5, 0, 15), probe_line(2, 5, 1, 15),
                     probe_line(3, 5, 1, 15), probe_line(4, 5, 1, 15)}));
}

TEST(RunLaunch, MpiAbortEndsTheJobWithItsCode) {
    const auto result = run_gantry({"run", "-n", "2", kProbe, "abort"});
    EXPECT_EQ(result.exit_code, 7) << result.err;
    EXPECT_NE(result.err.find("gantry: task 1 (" + host_name() + ")"), std::string::npos)
        << result.err;
}

// The cpus each rank is bound to in the dry run's launch plan (`all` when
// unbound), against what each task reads in /proc/self/status.
std::map<int, std::string> planned_cpus(const std::vector<std::string>& options,
                                        const std::string& all) {
    const auto plan = run_gantry(
        concat({"run", "--dry-run", "--display", "plan"}, with_command(options, {"true"})));
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    std::map<int, std::string> cpus;
    std::istringstream in(plan.out);
    for (std::string line; std::getline(in, line);) {
        const auto node = nlohmann::json::parse(line);
        for (const auto& task : node["tasks"]) {
            const std::string bound = task["cpus_os"].get<std::string>();
            cpus[task["rank"].get<int>()] = bound.empty() ? all : bound;
        }
    }
    return cpus;
}

std::map<int, std::string> seen_cpus(const std::vector<std::string>& options) {
    const auto run = run_gantry(
        concat({"run", "--label-io"},
               with_command(options, {"grep", "Cpus_allowed_list", "/proc/self/status"})));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::map<int, std::string> cpus;
    for (const std::string& line : sorted_lines(run.out))
        cpus[std::stoi(line.substr(0, line.find(':')))] = line.substr(line.find('\t') + 1);
    return cpus;
}

TEST(RunLaunch, AffinityInsideEachTaskIsTheMap) {
    const std::string all = "0-" + std::to_string(sysconf(_SC_NPROCESSORS_ONLN) - 1);
    const std::vector<std::vector<std::string>> cases = {
        {"-n", "2", "--map-by", "core", "--bind-to", "core", "CMD"},
        {"-n", "2", "--map-by", "core", "--bind-to", "none", "CMD"},
        {"-n", "2", "--map-by", "hwthread", "CMD"},
        {"-n", "2", "--map-by", "l2cache", "CMD"},
        {"-n", "2", "--map-by", "package", "CMD"},
        {"-n", "1", "--map-by", "numa", "CMD"},
        {"-n", "4", "--map-by", "core:OVERSUBSCRIBE", "CMD"},
        {"-n", "1", "--map-by", "core", "CMD", ":", "-n", "1", "--map-by", "package", "CMD"}};
    for (const auto& options : cases)
        EXPECT_EQ(seen_cpus(options), planned_cpus(options, all)) << options[3];
}

TEST(RunLaunch, TaskEnvironment) {
    const std::string script =
        "echo $GANTRY_TASK_RANK/$GANTRY_JOB_SIZE/$GANTRY_JOB_NNODES/$GANTRY_TASK_LOCAL_RANK/"
        "$GANTRY_TASK_LOCAL_SIZE/$GANTRY_NODE_ID/$GANTRY_APP_INDEX/$GANTRY_APP_RANK "
        "$PMI_RANK/$PMI_SIZE/$PMI_SPAWNED/$PMI_FD $MPI_LOCALRANKID/$MPI_LOCALNRANKS "
        "$GANTRY_TASK_MAP A=$A B=$B C=${C-unset}";
    const auto result = run_gantry(
        {"run", "--env", "A=1", "--env", "C=3", "--env-remove", "C",   "-n", "1",  "sh",
         "-c",  script,  ":",   "-n",    "1",   "--env",        "B=2", "sh", "-c", script},
        "");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string map = R"({"version":1,"map":[[0,1,2,1]]})";
    EXPECT_EQ(sorted_lines(result.out),
              (Lines{"0/2/1/0/2/0/0/0 0/2/0/3 0/2 " + map + " A=1 B= C=unset",
                     "1/2/1/1/2/0/1/0 1/2/0/3 1/2 " + map + " A=1 B=2 C=unset"}));
}

// --mpi: PMI-1 on fd 3 (PMI_FD), PMIx through the server's variables. A
// shell may run a PMIx client, so it gets both by default; printenv links
// no MPI and gets PMI-1 alone.
TEST(RunLaunch, MpiChoosesTheInterfaces) {
    const std::string script =
        "echo ${PMI_FD-none} ${PMIX_NAMESPACE:+pmix} ${OMPI_MCA_ess-none}; "
        "[ -e /proc/self/fd/3 ] && echo fd3 || echo no-fd3";
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{}, "3 pmix ^singleton\nfd3\n"},
        {{"--mpi=pmi1"}, "3 none\nfd3\n"},
        {{"--mpi=pmix"}, "none pmix ^singleton\nno-fd3\n"},
        {{"--mpi", "none"}, "none none\nno-fd3\n"},
    };
    for (const auto& [options, expected] : cases) {
        std::vector<std::string> args{"run", "-n", "1"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"sh", "-c", script});
        const auto result = run_gantry(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.out, expected) << options.size();
    }
    const auto plain = run_gantry({"run", "-n", "1", "printenv", "PMIX_NAMESPACE"});
    EXPECT_EQ(plain.exit_code, 1);
    EXPECT_EQ(plain.out, "");
}

// A PMIx server's directory left by a process that died is removed by the
// next server that starts; its own is removed when it ends.
TEST(RunLaunch, PmixServerDirectoriesAreRemoved) {
    const test::ScratchDir scratch("gantry-pmix-dirs");
    const std::string stale = scratch / "gantry-pmix-4194303";  // no live process has this pid
    ASSERT_EQ(::mkdir(stale.c_str(), 0700), 0);
    const auto result = run_program({"env", "TMPDIR=" + scratch.path(), gantry_binary(), "run",
                                     "--mpi=pmix", "-n", "1", "true"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_FALSE(test::exists(stale));
    EXPECT_EQ(run_program({"ls", "-A", scratch.path()}).out, "");
}

TEST(RunLaunch, TaskSettings) {
    const auto result =
        run_gantry({"run", "-n", "1", "--cwd", "/tmp", "--umask", "027", "--rlimit",
                    "core=0,nofile=100", "sh", "-c", "pwd; umask; ulimit -c; ulimit -n"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "/tmp\n0027\n0\n100\n");
}

TEST(RunLaunch, ExitCodesAndTheSummaryLine) {
    expect_gantry({"run", "-n", "2", "sh", "-c", "exit $((GANTRY_TASK_RANK * 5))"}, "", "",
                  "gantry: task 1 (" + host_name() + ") exited with exit code 5\n", 5);
    expect_gantry({"run", "-n", "1", "sh", "-c", "kill -SEGV $$"}, "", "",
                  "gantry: task 0 (" + host_name() + ") killed by signal 11 (Segmentation fault)\n",
                  139);
    expect_gantry({"run", "-n", "2", "/nonexistent/x"}, "", "",
                  "gantry: app 0 (/nonexistent/x): /nonexistent/x: No such file or directory\n",
                  127);
    const std::string data = write_temp_file("not-executable", "data\n");
    chmod(data.c_str(), 0644);
    expect_gantry({"run", "-n", "1", "true", ":", "-n", "1", data}, "", "",
                  "gantry: app 1 (" + data + "): " + data + ": Permission denied\n", 126);
    expect_gantry({"run", "-n", "2", "true"}, "", "", "", 0);
}

TEST(RunLaunch, StdinGoesToRankZeroOrToAll) {
    expect_gantry({"run", "-n", "2", "--label-io", "cat"}, "hello\n", "0: hello\n", "", 0);
    const auto all =
        run_gantry({"run", "-n", "2", "--label-io", "--input", "all", "cat"}, "a\nb\n");
    EXPECT_EQ(sorted_lines(all.out), (Lines{"0: a", "0: b", "1: a", "1: b"}));
    expect_gantry({"run", "-n", "2", "--label-io", "--input", "1", "cat"}, "x\n", "1: x\n", "", 0);
}

// localhost, 127.0.0.1 and the host name are all this machine, where gantry
// run starts tasks.
TEST(RunLaunch, ThisMachinesNamesRunHere) {
    const auto result =
        run_gantry({"run", "-H", "localhost:1,127.0.0.1:1", "-n", "2", "--oversubscribe",
                    "--label-io", "--", "sh", "-c", "echo $GANTRY_JOB_NNODES"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_TRUE(result.out == "0: 1\n1: 1\n" || result.out == "1: 1\n0: 1\n") << result.out;
}

TEST(RunLaunch, TimeLimit) {
    const auto result = run_gantry({"run", "-n", "1", "--time-limit", "300ms", "sleep", "30"});
    EXPECT_EQ(result.exit_code, 143);
    EXPECT_NE(result.err.find("gantry: job hit its time limit of 300ms"), std::string::npos)
        << result.err;
}

TEST(RunLaunch, BadLaunchOptions) {
    // Only an instance's scheduler acts on -N, -c...: refused by name, -c
    // with the option that does it here.
    expect_gantry({"run", "-c", "2", "-n", "1", "true"}, "", "",
                  "gantry: run: -c needs an instance (gantry start, or GANTRY_URI); without one, "
                  "--map-by slot:PE=N gives each task N cores\n",
                  2);
    expect_gantry({"run", "-N1", "true"}, "", "",
                  "gantry: run: -N needs an instance (gantry start, or GANTRY_URI)\n", 2);
    expect_gantry({"run", "-n", "1", "--time-limit", "5x", "true"}, "", "",
                  "gantry: run: bad time limit (minutes as 30, [D-]H:M:S as 1:00:00 or 2-00:00:00, "
                  "or 90s, 1.5h, 1d) in \"5x\"\n",
                  2);
    expect_gantry({"run", "-n", "2", "--input", "2", "true"}, "", "",
                  "gantry: run: --input: the job's ranks are 0-1 in \"2\"\n", 2);
    expect_gantry({"run", "-n", "1", "--rlimit", "cores=1", "true"}, "", "",
                  "gantry: run: --rlimit: unknown limit \"cores\" (core, nofile, stack, cpu, as, "
                  "...) in \"cores=1\"\n",
                  2);
    expect_gantry({"run", "-n", "1", "--umask", "9", "true"}, "", "",
                  "gantry: run: --umask takes an octal mask such as 022 in \"9\"\n", 2);
    expect_gantry({"run", "-n", "1", "--cwd", "/nonexistent", "true"}, "", "",
                  "gantry: run: --cwd: no such directory in \"/nonexistent\"\n", 2);
    expect_gantry({"run", "-n", "1", "--env", "1A=2", "true"}, "", "",
                  "gantry: run: --env: bad variable name \"1A\" in \"1A=2\"\n", 2);
    expect_gantry({"run", "-n", "1", "--topology", "package:1 core:2 pu:1", "true"}, "", "",
                  "gantry: run: --topology simulates nodes, where nothing can run; add --dry-run\n",
                  2);
    // Another host is reached through the launch agent (here one that
    // does not exist, so that nothing leaves this machine).
    expect_gantry(
        {"run", "-H", "elsewhere", "--launch-agent", "/nonexistent/agent", "-n", "1", "true"}, "",
        "",
        "gantry: launch: host elsewhere: cannot run the launch agent /nonexistent/agent: No "
        "such file or directory\n",
        1);
}

// ---- nothing left behind ----

// `gantry run ... | head -1`: when the reader of gantry's stdout goes, the
// job ends as a pipeline's writer would, exit code 141. (The time limit
// ends a job that would run for ever otherwise.)
TEST(RunLaunch, ClosedStdoutEndsTheJob) {
    const auto result =
        run_program({"bash", "-c",
                     gantry_binary() + " run --time-limit 60s -n 1 yes | head -1; echo "
                                       "\"${PIPESTATUS[0]}\""});
    EXPECT_EQ(result.out, "y\n141\n");
    EXPECT_EQ(result.err, "gantry: stdout was closed: ending the job\n");
    EXPECT_EQ(result.exit_code, 0);
}

// A task's `cmd &` ends with the job. The task says the job's id, which
// names its cgroup: gantry-<pid>-<id>.
TEST(RunLaunch, BackgroundProcessEndsWithTheJob) {
    const Leftovers sleeper(unique_sleep_argument());
    const auto result = run_gantry(
        {"run", "-n", "1", "sh", "-c", "sleep " + sleeper.marker() + " & echo $GANTRY_JOB_ID"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    ASSERT_EQ(lines_of(result.out).size(), 1u) << result.out;
    const std::string id = lines_of(result.out)[0];
    ASSERT_EQ(id.find_first_not_of("0123456789"), std::string::npos) << id;
    const LeftoverCgroups cgroups("gantry-" + id + "-" + id);
    EXPECT_TRUE(sleeper.gone());
    EXPECT_EQ(cgroups.names(), std::vector<std::string>{});
}

// One that leaves its session and process group is caught by the cgroup.
TEST(RunLaunch, ProcessThatLeftItsSessionEndsWithTheJob) {
    if (!cgroups_usable())
        GTEST_SKIP() << kNoCgroups;
    const Leftovers sleeper(unique_sleep_argument());
    expect_gantry({"run", "-n", "1", "sh", "-c", "setsid sleep " + sleeper.marker() + " & echo bg"},
                  "", "bg\n", "", 0);
    EXPECT_TRUE(sleeper.gone());
}

// gantry forwards SIGTERM, which the task ignores, then is killed
// (`timeout -k 4 1 gantry run ...`, kill -9): the task and its children die
// with it.
TEST(RunLaunch, KilledGantryLeavesNoTask) {
    const ScratchDir dir;
    const Leftovers sleeper(unique_sleep_argument());
    Background gantry({gantry_binary(), "run", "-n", "1", "sh", "-c",
                       "trap '' TERM; sleep " + sleeper.marker() + "; echo late"},
                      dir);
    const LeftoverCgroups cgroups("gantry-" + std::to_string(gantry.pid()) + "-");
    ASSERT_TRUE(sleeper.started());
    ASSERT_TRUE(gantry.catches(SIGTERM));
    gantry.signal(SIGTERM);
    gantry.signal(SIGKILL);
    const auto result = gantry.finish();
    EXPECT_EQ(result.exit_code, 137);
    EXPECT_EQ(result.out, "");
    EXPECT_TRUE(sleeper.gone());
    EXPECT_TRUE(cgroups.gone());
}

}  // namespace
}  // namespace gantry::test
