// gantry alloc and gantry batch as real processes against a real
// `gantry start --daemon`: child instances run as jobs of their parent, two
// levels deep, batch scripts, refusals and signals passed on to the child's
// initial program.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/eventlog.h"
#include "support/instance.h"
#include "support/machine.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

using Json = nlohmann::json;
using Lines = std::vector<std::string>;

const std::string kGantry = gantry_binary();

// The job shell's line on stderr about a task that failed.
std::string task_exited(int code) {
    return "gantry: task 0 (" + host_name() + ") exited with exit code " + std::to_string(code) +
           "\n";
}

// A line of `gantry jobs` for job `id`, whatever its user and time.
std::regex job_line(int id, const std::string& name, const std::string& state, int ntasks,
                    const std::string& exit) {
    const std::string name_column =
        name + std::string(name.size() < 10 ? 10 - name.size() : 0, ' ');
    const std::string state_column =
        std::string(state.size() < 2 ? 2 - state.size() : 0, ' ') + state;
    return std::regex("    " + std::to_string(id) + " \\S+ +" + name_column + " " + state_column +
                      "      " + std::to_string(ntasks) + " +[0-9.]+[smhd]" +
                      (exit.empty() ? "" : " +" + exit));
}

const std::string kHeader = "JOBID USER     NAME       ST NTASKS     TIME EXIT";

void write_script(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0700);
}

// A daemon instance of its own for each test: the parent of the child
// instances that gantry alloc and gantry batch start.
class AllocCmd : public InstanceTest {
protected:
    // `gantry` in PATH as for a user, since what alloc and batch run calls
    // it by name, and SCRATCH naming the test's directory, since they run
    // with this environment.
    void SetUp() override {
        InstanceTest::SetUp();
        if (HasFatalFailure())
            return;
        daemon_.set_environment({"PATH=" + path_, "SCRATCH=" + dir_.path()});
        cores_ = daemon_.info().value("cores", 0);
    }

    // Whether the parent's cores are all free again: a job that needs all
    // of them runs (waited for with a limit, not by `gantry run`, which
    // would wait for ever).
    void expect_all_cores_free() {
        const std::string id =
            daemon_.submit({"-n", std::to_string(cores_), "--label-io", "sh", "-c",
                            "[ $GANTRY_TASK_RANK != 0 ] || echo all cores"});
        EXPECT_TRUE(eventually([&] { return state(id) == "INACTIVE"; }))
            << "job " << id << " on all the cores is " << state(id);
        expect({"attach", id}, "0: all cores\n", "", 0);
    }

    const std::string path_ = std::filesystem::path(kGantry).parent_path().string() + ":" +
                              (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    int cores_ = 0;
};

// --- two levels deep ----------------------------------------------------------

// Several `gantry start` tasks of one job, each bound to a core, are the
// brokers of one instance (they bootstrap by the job's PMI): each broker
// owns its task's core, not the whole job's, and its tasks run there.
TEST_F(AllocCmd, TheStartTasksOfAJobAreOneInstanceEachBrokerOwningItsCores) {
    if (cores_ < 2)
        GTEST_SKIP() << "needs 2 cores, the instance holds " << cores_;
    const auto run = gantry({"run", "-n", "2", "gantry", "start", "sh", "-c",
                             "gantry instance info --json | grep -o '\"cores\":[0-9]*'; "
                             "gantry run grep Cpus_allowed_list: /proc/self/status"});
    EXPECT_EQ(run.err, "");
    EXPECT_EQ(run.exit_code, 0);
    std::vector<std::string> lines = lines_of(run.out);
    std::sort(lines.begin(), lines.end());
    ASSERT_EQ(lines.size(), 3u) << run.out;
    EXPECT_EQ(lines[0], "\"cores\":2");
    // The inner job's two tasks ran on the two brokers' different cores.
    EXPECT_TRUE(std::regex_match(lines[1], std::regex("Cpus_allowed_list:\t[0-9]+"))) << lines[1];
    EXPECT_TRUE(std::regex_match(lines[2], std::regex("Cpus_allowed_list:\t[0-9]+"))) << lines[2];
    EXPECT_NE(lines[1], lines[2]);
}

TEST_F(AllocCmd, TwoLevelsDeepEachLevelIsAnInstanceOfItsPartNumberedFromZero) {
    if (cores_ < 2)
        GTEST_SKIP() << "needs 2 cores, the instance holds " << cores_;
    // The outer script quotes the inner one in single quotes: it has none.
    const std::string inner =
        "echo $GANTRY_URI > $SCRATCH/inner.uri; "
        "gantry instance info --json > $SCRATCH/inner.json; "
        "gantry R encode --local | gantry R decode --short; "
        "gantry run sh -c \"echo inner job on \\$GANTRY_TASK_RANK\"; "
        "gantry jobs -a > $SCRATCH/inner.jobs; "
        "exit 5";
    const std::string outer =
        "echo $GANTRY_URI > $SCRATCH/outer.uri; "
        "gantry instance info --json > $SCRATCH/outer.json; "
        "gantry R encode --local | gantry R decode --short; "
        "gantry run -n 2 --label-io echo outer job | sort; "
        "gantry alloc -n 1 sh -c '" +
        inner +
        "'; "
        "echo inner alloc: $?; "
        "gantry info 2 | grep ^R; "
        "gantry jobs -a > $SCRATCH/outer.jobs; "
        "exit 4";
    const auto result = gantry({"alloc", "-n", "2", "sh", "-c", outer});
    EXPECT_EQ(result.out,
              "rank0/core[0-1]\n"
              "0: outer job\n"
              "1: outer job\n"
              "rank0/core0\n"
              "inner job on 0\n"
              "inner alloc: 5\n"
              "R          rank0/core0\n");
    // Each level's job shell says its task failed, the inner one first.
    EXPECT_EQ(result.err, task_exited(5) + task_exited(4));
    EXPECT_EQ(result.exit_code, 4);

    // Each level is an instance of its own, of the size allocated to it.
    const std::string outer_uri = read_file(dir_ / "outer.uri");
    const std::string inner_uri = read_file(dir_ / "inner.uri");
    EXPECT_NE(outer_uri, uri_ + "\n");
    EXPECT_NE(inner_uri, uri_ + "\n");
    EXPECT_NE(inner_uri, outer_uri);
    const Json outer_info = Json::parse(read_file(dir_ / "outer.json"), nullptr, false);
    const Json inner_info = Json::parse(read_file(dir_ / "inner.json"), nullptr, false);
    ASSERT_TRUE(outer_info.is_object()) << read_file(dir_ / "outer.json");
    ASSERT_TRUE(inner_info.is_object()) << read_file(dir_ / "inner.json");
    EXPECT_EQ(outer_info.value("uri", "") + "\n", outer_uri);
    EXPECT_EQ(outer_info.value("size", 0), 1);
    EXPECT_EQ(outer_info.value("cores", 0), 2);
    EXPECT_EQ(inner_info.value("uri", "") + "\n", inner_uri);
    EXPECT_EQ(inner_info.value("size", 0), 1);
    EXPECT_EQ(inner_info.value("cores", 0), 1);

    // Each level lists what ran in it, the level below as one job.
    const Lines inner_jobs = lines_of(read_file(dir_ / "inner.jobs"));
    ASSERT_EQ(inner_jobs.size(), 2u) << read_file(dir_ / "inner.jobs");
    EXPECT_EQ(inner_jobs[0], kHeader);
    EXPECT_TRUE(std::regex_match(inner_jobs[1], job_line(1, "sh", "CD", 1, "0"))) << inner_jobs[1];
    const Lines outer_jobs = lines_of(read_file(dir_ / "outer.jobs"));
    ASSERT_EQ(outer_jobs.size(), 3u) << read_file(dir_ / "outer.jobs");
    EXPECT_EQ(outer_jobs[0], kHeader);
    EXPECT_TRUE(std::regex_match(outer_jobs[1], job_line(2, "sh", "F", 1, "5"))) << outer_jobs[1];
    EXPECT_TRUE(std::regex_match(outer_jobs[2], job_line(1, "echo", "CD", 2, "0")))
        << outer_jobs[2];
    const auto parent_jobs = gantry({"jobs", "-a"});
    const Lines lines = lines_of(parent_jobs.out);
    ASSERT_EQ(lines.size(), 2u) << parent_jobs.out;
    EXPECT_EQ(lines[0], kHeader);
    EXPECT_TRUE(std::regex_match(lines[1], job_line(1, "sh", "F", 1, "4"))) << lines[1];
    EXPECT_EQ(info("1")["R"]["execution"]["R_lite"],
              Json::parse(R"([{"children":{"core":"0-1"},"rank":"0"}])"));

    expect_all_cores_free();
}

// --- the child instance -----------------------------------------------------------

TEST_F(AllocCmd, AllocTakesTheFreeCoreAsCoreZeroAndWaitsForCoresInUse) {
    if (cores_ < 2)
        GTEST_SKIP() << "needs 2 cores, the instance holds " << cores_;
    // Canceled below; its time bounds the test if the scheduler misbehaves.
    const auto sleeper = gantry({"submit", "sleep", "30"});
    ASSERT_EQ(sleeper.out, "1\n") << sleeper.err;
    ASSERT_TRUE(eventually([&] { return state("1") == "RUN"; }));
    const std::string held = info("1")["R"]["execution"]["R_lite"][0]["children"].value("core", "");

    // One core: the free one, core 0 of the child whichever it is.
    const auto one =
        gantry({"alloc", "-n", "1", "sh", "-c",
                "gantry R encode --local | gantry R decode --short; echo ${GANTRY_JOB_ID-unset}"});
    EXPECT_EQ(one.out, "rank0/core0\nunset\n");
    EXPECT_EQ(one.err, "");
    EXPECT_EQ(one.exit_code, 0);
    const std::string got = info("2")["R"]["execution"]["R_lite"][0]["children"].value("core", "");
    EXPECT_NE(got, held);
    EXPECT_TRUE(got == "0" || got == "1") << got;

    // All the cores: it waits, without a word, until job 1 gives its core
    // back.
    Background both(command({"alloc", "-n", std::to_string(cores_), "echo", "got them all"}), dir_);
    ASSERT_TRUE(eventually([&] { return state("3") == "SCHED"; }));
    const auto queued = gantry({"jobs"});
    EXPECT_TRUE(std::regex_search(queued.out, std::regex("\n    3 \\S+ +echo +S "))) << queued.out;
    EXPECT_EQ(both.out(), "");
    expect({"cancel", "1"}, "", "", 0);
    const auto result = both.finish();
    EXPECT_EQ(result.out, "got them all\n");
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    // Job 3 got the cores once job 1 had given its core back: however late
    // it would have started, an alloc while job 1 ran comes before job 1's
    // release.
    const Json sleeper_record = info("1");
    const Json both_record = info("3");
    EXPECT_EQ(event_names(sleeper_record), (Lines{"submit", "depend", "alloc", "start", "exception",
                                                  "finish", "release", "clean"}));
    EXPECT_EQ(event_names(both_record),
              (Lines{"submit", "depend", "alloc", "start", "finish", "release", "clean"}));
    EXPECT_GE(event_time(both_record, "alloc"), event_time(sleeper_record, "release"));
}

TEST_F(AllocCmd, NodesAloneAllocateWholeNodes) {
    expect({"alloc", "-N", "1", "sh", "-c", "gantry instance info | grep -e size -e cores"},
           "size       1\ncores      " + std::to_string(cores_) + "\n", "", 0);
    EXPECT_EQ(info("1")["jobspec"]["resources"].value("exclusive", false), true);
}

TEST_F(AllocCmd, AllocPassesStdinEnvironmentAndWorkingDirectoryToCmd) {
    const auto result =
        run_program({"env", "GANTRY_URI=" + uri_, "ALLOC_TEST_VALUE=passed", kGantry, "alloc",
                     "--job-name", "named", "sh", "-c",
                     "read line; echo \"got $line\"; cat; echo \"$ALLOC_TEST_VALUE\"; pwd"},
                    "hello\nrest\n");
    EXPECT_EQ(result.out,
              "got hello\nrest\npassed\n" + std::filesystem::current_path().string() + "\n");
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    const auto jobs = gantry({"jobs", "-a", "--no-header"});
    EXPECT_TRUE(std::regex_match(jobs.out, std::regex("    1 \\S+ +named +CD +1 +[0-9.]+s +0\n")))
        << jobs.out;
}

// --- gantry batch -------------------------------------------------------------

TEST_F(AllocCmd, BatchPrintsTheIdAtOnceAndTheScriptRunsInAChildInstance) {
    if (cores_ < 2)
        GTEST_SKIP() << "needs 2 cores, the instance holds " << cores_;
    const std::string script = dir_ / "steps.sh";
    // It waits for `go`, so that batch can only have returned before it ended.
    write_script(script,
                 "#!/bin/sh\n"
                 "while [ ! -e \"$(dirname \"$0\")/go\" ]; do sleep 0.05; done\n"
                 "echo \"args: $*\"\n"
                 "gantry instance info | grep cores\n"
                 "read line || echo 'stdin: at its end'\n"
                 "gantry submit -n 2 --label-io sh -c 'echo step $GANTRY_TASK_RANK' >/dev/null\n"
                 "gantry run -n 1 --dependency afterok:1 echo ran inside\n"
                 "gantry attach 1 | sort\n"
                 "echo to stderr >&2\n"
                 "exit 6\n");
    expect({"batch", "-n", "2", script, "a", "b"}, "1\n", "", 0);
    EXPECT_TRUE(eventually([&] { return state("1") == "RUN"; }));
    std::ofstream(dir_ / "go").close();
    expect({"wait", "1"}, "", "", 6);
    expect({"attach", "1"},
           "args: a b\n"
           "cores      2\n"
           "stdin: at its end\n"
           "ran inside\n"
           "0: step 0\n"
           "1: step 1\n",
           "to stderr\n" + task_exited(6), 6);
    const auto jobs = gantry({"jobs", "-a", "--no-header"});
    const Lines lines = lines_of(jobs.out);
    ASSERT_EQ(lines.size(), 1u) << jobs.out;
    EXPECT_TRUE(std::regex_match(lines[0], job_line(1, "steps.sh", "F", 1, "6"))) << lines[0];
    expect_all_cores_free();
}

TEST_F(AllocCmd, BatchHeldStaysInSchedUntilItsUrgencyIsRaised) {
    expect({"batch", "--urgency", "hold", "sh", "-c", "echo held ran"}, "1\n", "", 0);
    // A job submitted after it runs and ends while it is still held.
    expect({"run", "-n", "1", "echo", "after"}, "after\n", "", 0);
    EXPECT_EQ(state("1"), "SCHED");
    EXPECT_EQ(info("1").value("urgency", -1), 0);
    expect({"urgency", "1", "default"}, "", "", 0);
    expect({"wait", "1"}, "", "", 0);
    expect({"attach", "1"}, "held ran\n", "", 0);
    EXPECT_EQ(info("1").value("urgency", -1), 16);
    // `alloc` after `urgency`: held until raised, however late it would
    // have started otherwise.
    EXPECT_EQ(event_names(info("1")), (Lines{"submit", "depend", "urgency", "alloc", "start",
                                             "finish", "release", "clean"}));
}

// --- refusals -----------------------------------------------------------------

TEST_F(AllocCmd, RequestsThatCanNeverFitAreRefusedAtOnce) {
    const std::string too_many = std::to_string(cores_ + 1);
    const std::string reason = "gantry: scheduler: " + too_many +
                               " tasks of 1 core requested, the instance holds " +
                               std::to_string(cores_) + "\n";
    expect({"alloc", "-n", too_many, "true"}, "", reason, 1);
    expect({"batch", "-n", too_many, "true"}, "", reason, 1);
    expect({"alloc", "-N", "2", "-n", "2", "true"}, "",
           "gantry: scheduler: 2 nodes requested, the instance has 1\n", 1);
    // Nothing was queued.
    expect({"jobs", "-a"}, kHeader + "\n", "", 0);
}

TEST_F(AllocCmd, OutsideAnInstance) {
    for (const std::string name : {"alloc", "batch"}) {
        const auto unset = run_program({"env", "-u", "GANTRY_URI", kGantry, name, "true"});
        EXPECT_EQ(unset.out, "") << name;
        EXPECT_EQ(unset.err, "gantry: not inside an instance (GANTRY_URI is not set); give --uri\n")
            << name;
        EXPECT_EQ(unset.exit_code, 2) << name;
        const auto gone = run_gantry({name, "--uri", "unix:///nonexistent/socket", "true"});
        EXPECT_EQ(gone.out, "") << name;
        EXPECT_EQ(gone.err,
                  "gantry: cannot connect to unix:///nonexistent/socket: No such file or "
                  "directory\n")
            << name;
        EXPECT_EQ(gone.exit_code, 1) << name;
    }
    // --uri names the instance where GANTRY_URI is not set.
    const auto given =
        run_program({"env", "-u", "GANTRY_URI", kGantry, "alloc", "--uri", uri_, "echo", "in"});
    EXPECT_EQ(given.out, "in\n") << given.err;
    EXPECT_EQ(given.exit_code, 0);
}

// srun's and flux's spellings of the request, values attached or after '='.
TEST_F(AllocCmd, RequestSpellings) {
    for (const std::vector<std::string>& request : {std::vector<std::string>{"-n=2", "-c1"},
                                                    {"--ntasks=2", "--cpus-per-task", "1"},
                                                    {"-n2", "--gpus-per-task=0"}}) {
        std::vector<std::string> args{"alloc"};
        args.insert(args.end(), request.begin(), request.end());
        args.insert(args.end(), {"sh", "-c", "gantry instance info --json | jq -r .cores"});
        expect(args, "2\n", "", 0);
    }
}

TEST_F(AllocCmd, BadOptionsExit2) {
    expect({"alloc", "--nslots", "x", "true"}, "",
           "gantry: alloc: --nslots needs a positive number, not \"x\"\n", 2);
    expect({"alloc", "-n", "x", "true"}, "",
           "gantry: alloc: -n needs a positive number, not \"x\"\n", 2);
    expect({"alloc", "-n", "0", "true"}, "",
           "gantry: alloc: -n needs a positive number, not \"0\"\n", 2);
    expect({"alloc", "-c", "0", "true"}, "",
           "gantry: alloc: -c needs a positive number, not \"0\"\n", 2);
    expect({"alloc", "-N", "-1", "true"}, "",
           "gantry: alloc: -N needs a positive number, not \"-1\"\n", 2);
    expect({"alloc", "-g", "x", "true"}, "",
           "gantry: alloc: -g needs a number of 0 or more, not \"x\"\n", 2);
    expect({"alloc", "-n"}, "", "gantry: alloc: -n needs a value\n", 2);
    expect({"alloc", "--exclusive=maybe", "true"}, "",
           "gantry: alloc: --exclusive takes no value, not \"maybe\"\n", 2);
    expect({"alloc", "--urgency", "40", "true"}, "",
           "gantry: alloc: --urgency needs 0-31, hold, default or expedite, not \"40\"\n", 2);
    expect({"alloc", "-t", "bogus", "true"}, "",
           "gantry: alloc: bad time limit (minutes as 30, [D-]H:M:S as 1:00:00 or 2-00:00:00, or "
           "90s, 1.5h, 1d) in \"bogus\"\n",
           2);
    expect({"alloc", "--bogus", "true"}, "",
           "gantry: alloc: unknown option \"--bogus\" (see gantry alloc --help)\n", 2);
    expect({"batch"}, "", "gantry: batch: missing SCRIPT (see gantry batch --help)\n", 2);
    expect({"batch", "-n", "1"}, "", "gantry: batch: missing SCRIPT (see gantry batch --help)\n",
           2);
    // Options after CMD are CMD's.
    expect({"alloc", "echo", "--bogus", "-n", "3"}, "--bogus -n 3\n", "", 0);
}

// --- signals and time limits ----------------------------------------------------

TEST_F(AllocCmd, SigtermReachesTheInitialProgramAndAllocExitsWithItsCode) {
    const std::string ready = dir_ / "ready";
    // The loop's sleep ignores SIGTERM: dash would say "Terminated" when the
    // signal (sent to the whole process group) killed one, and whether one
    // is running then is chance; the signal may still come before the
    // subshell ignores it, so what dash would say of it goes nowhere.
    Background alloc(
        command({"alloc", "sh", "-c",
                 "trap 'echo got TERM; exit 3' TERM; : > " + ready +
                     "; while :; do (trap '' TERM; exec sleep 0.05); done 2>/dev/null"}),
        dir_);
    ASSERT_TRUE(eventually([&] { return exists(ready); }));
    ASSERT_TRUE(eventually([&] { return alloc.catches(SIGTERM); }));
    alloc.signal(SIGTERM);
    const auto result = alloc.finish();
    EXPECT_EQ(result.out, "got TERM\n");
    EXPECT_EQ(result.err, task_exited(3));
    EXPECT_EQ(result.exit_code, 3);
    expect({"wait", "1"}, "", "", 3);
    expect_all_cores_free();
}

TEST_F(AllocCmd, AFirstSigintReachesTheInitialProgramAndAllocGoesOn) {
    const std::string ready = dir_ / "ready";
    Background alloc(command({"alloc", "sh", "-c",
                              "trap 'echo got INT' INT; trap 'echo got TERM; exit 3' TERM; : > " +
                                  ready + "; while :; do sleep 0.05; done 2>/dev/null"}),
                     dir_);
    ASSERT_TRUE(eventually([&] { return exists(ready); }));
    ASSERT_TRUE(eventually([&] { return alloc.catches(SIGINT) && alloc.catches(SIGTERM); }));
    alloc.signal(SIGINT);
    ASSERT_TRUE(eventually([&] { return alloc.out() == "got INT\n"; })) << alloc.out();
    alloc.signal(SIGTERM);
    const auto result = alloc.finish();
    EXPECT_EQ(result.out, "got INT\ngot TERM\n");
    EXPECT_EQ(result.err,
              "gantry: job 1: SIGINT sent; one more Ctrl-C within 2 s detaches\n" + task_exited(3));
    EXPECT_EQ(result.exit_code, 3);
}

TEST_F(AllocCmd, Sigusr1AndSigusr2ReachTheInitialProgram) {
    for (const int number : {SIGUSR1, SIGUSR2}) {
        SCOPED_TRACE(number);
        const std::string name = number == SIGUSR1 ? "USR1" : "USR2";
        const std::string pid_file = dir_ / ("pid." + name);
        Background alloc(command({"alloc", "sh", "-c",
                                  "trap 'echo got " + name + "; exit 7' " + name + "; echo $$ > " +
                                      pid_file + ".new; mv " + pid_file + ".new " + pid_file +
                                      "; while :; do sleep 0.05; done 2>/dev/null"}),
                         dir_);
        ASSERT_TRUE(eventually([&] { return exists(pid_file); }));
        ASSERT_TRUE(eventually([&] { return alloc.catches(number); }));
        alloc.signal(number);
        const auto result = alloc.finish();
        EXPECT_EQ(result.out, "got " + name + "\n");
        EXPECT_EQ(result.err, task_exited(7));
        EXPECT_EQ(result.exit_code, 7);
        // A child instance that died of the signal leaves its initial
        // program running, in a process group of its own: it is ended here
        // so that a failure leaves nothing behind.
        const pid_t program = std::stoi(read_file(pid_file));
        if (!ended(program)) {
            ADD_FAILURE() << "the initial program outlived gantry alloc";
            ::kill(-program, SIGKILL);
        }
    }
}

TEST_F(AllocCmd, TimeLimitTerminatesTheChildInstance) {
    expect({"alloc", "-t", "1s", "sleep", "10"}, "",
           "gantry: job hit its time limit of 1s\n" + task_exited(143), 143);
    expect({"wait", "1"}, "", "", 143);
}

TEST(AllocCmdHelp, AllocAndBatchHaveHelpWithExamples) {
    for (const std::string name : {"alloc", "batch"}) {
        const auto result = run_gantry({name, "--help"});
        EXPECT_EQ(result.exit_code, 0) << name << ": " << result.err;
        EXPECT_EQ(result.err, "") << name;
        EXPECT_NE(result.out.find("Examples:"), std::string::npos) << name;
        EXPECT_NE(result.out.find("Exit status"), std::string::npos) << name;
    }
}

}  // namespace
}  // namespace gantry::test
