// The front ends of an instance's jobs as real processes against a real
// `gantry start --daemon`: submit, attach (output, labels, stdin, signals,
// detaching), jobs, info, eventlog, wait, kill, cancel, purge, urgency, and
// their messages and exit codes.
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

Lines sorted(Lines lines) {
    std::sort(lines.begin(), lines.end());
    return lines;
}

const std::string kUid = std::to_string(::getuid());

// A daemon instance of its own for each test, shut down at its end.
class JobsCli : public InstanceTest {
protected:
    // A job that runs until killed, once it has set its traps: it creates
    // `ready` then, and exits 7 on SIGUSR1.
    std::string trapping_job(const std::string& ready) {
        return submit({"sh", "-c",
                       "trap 'echo got USR1; exit 7' USR1; trap 'echo got INT' INT; : > " + ready +
                           "; while :; do sleep 0.05; done"});
    }
    std::string canceled_by() const { return "exception: cancel: canceled by " + kUid; }
};

// --- submit and wait -------------------------------------------------------------

TEST_F(JobsCli, SubmitPrintsTheIdAndWaitExitsWithTheJobsExitCode) {
    EXPECT_EQ(submit({"sh", "-c", "exit 3"}), "1");
    EXPECT_EQ(submit({"true"}), "2");
    expect({"wait", "1"}, "", "", 3);
    expect({"wait", "2"}, "", "", 0);
    // An ended job is answered at once, as often as asked.
    expect({"wait", "1"}, "", "", 3);
}

TEST_F(JobsCli, SubmitDryRunPrintsTheJobspecAndSubmitsNothing) {
    const auto result = gantry({"submit", "--dry-run", "-n", "2", "--job-name", "x", "true"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    const Json spec = Json::parse(result.out, nullptr, false);
    ASSERT_TRUE(spec.is_object()) << result.out;
    EXPECT_EQ(spec["apps"][0]["command"], Json::array({"true"}));
    EXPECT_EQ(spec["apps"][0]["ntasks"], 2);
    EXPECT_EQ(spec["attributes"]["name"], "x");
    expect({"jobs", "-a"}, "JOBID USER     NAME       ST NTASKS     TIME EXIT\n", "", 0);
}

TEST_F(JobsCli, SubmitErrors) {
    expect({"submit"}, "", "gantry: submit: no command to run (see gantry submit --help)\n", 2);
    const auto refused = run_gantry({"submit", "--uri", "unix:///nonexistent/socket", "true"});
    EXPECT_EQ(refused.err,
              "gantry: cannot connect to unix:///nonexistent/socket: No such file or directory\n");
    EXPECT_EQ(refused.exit_code, 1);
    // --uri first; after the command it is the command's own.
    const auto given = run_gantry({"submit", "--uri=" + uri_, "echo", "--uri", "x"});
    EXPECT_EQ(given.out, "1\n") << given.err;
    expect({"attach", "1"}, "--uri x\n", "", 0);
    const auto outside = run_program({"env", "-u", "GANTRY_URI", kGantry, "submit", "true"});
    EXPECT_EQ(outside.err, "gantry: not inside an instance (GANTRY_URI is not set); give --uri\n");
    EXPECT_EQ(outside.exit_code, 2);
}

TEST_F(JobsCli, RunInsideAnInstanceSubmitsAJobAndFollowsIt) {
    const auto run = gantry({"run", "-n", "2", "--label-io", "sh", "-c",
                             "echo out $GANTRY_TASK_RANK; exit $((3 - 3 * GANTRY_TASK_RANK))"});
    EXPECT_EQ(sorted(lines_of(run.out)), (Lines{"0: out 0", "1: out 1"}));
    EXPECT_EQ(run.exit_code, 3);
    // A job of the instance like any other: recorded, with its output.
    const Json job = info("1");
    EXPECT_EQ(job.value("state", ""), "INACTIVE");
    EXPECT_EQ(job.value("ntasks", 0), 2);
    EXPECT_EQ(job.value("exit_code", 0), 3);
    EXPECT_EQ(sorted(lines_of(gantry({"attach", "1"}).out)), (Lines{"0: out 0", "1: out 1"}));
    // MPMD, as outside.
    const auto mpmd =
        gantry({"run", "--label-io", "-n", "1", "echo", "a", ":", "-n", "1", "echo", "b"});
    EXPECT_EQ(sorted(lines_of(mpmd.out)), (Lines{"0: a", "1: b"}));
    EXPECT_EQ(mpmd.err, "");
    EXPECT_EQ(mpmd.exit_code, 0);
}

TEST_F(JobsCli, WaitAllReportsEachJobThatDidNotComplete) {
    const std::string go = dir_ / "go";
    const std::string wait_for_go = "while [ ! -e " + go + " ]; do sleep 0.05; done; ";
    const std::string ok = submit({"sh", "-c", wait_for_go + "exit 0"});
    const std::string bad = submit({"sh", "-c", wait_for_go + "exit 2"});
    const std::string held = submit({"--urgency", "0", "true"});
    Background waiter(command({"wait", "--all"}), dir_);
    // The waiter asks while all three are active (it reads the answer once
    // it has asked); they end after.
    ASSERT_TRUE(eventually([&] { return reading_a_socket(waiter.pid()); }));
    std::ofstream(go).close();
    expect({"cancel", held}, "", "", 0);
    const auto result = waiter.finish();
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(sorted(lines_of(result.err)), sorted({"gantry: job " + bad + ": exit code 2",
                                                    "gantry: job " + held + ": " + canceled_by()}));
    EXPECT_EQ(result.exit_code, 1);
    // The one that completed was waited for too, and is not reported.
    EXPECT_EQ(info(ok)["exit_code"], 0);
    // Nothing active: nothing to wait for.
    expect({"wait", "--all"}, "", "", 0);
    expect({"wait"}, "", "gantry: wait: give a job id or --all\n", 2);
}

// --- attach ---------------------------------------------------------------------

TEST_F(JobsCli, AttachAfterTheEndPrintsAllTheOutput) {
    const std::string id = submit({"sh", "-c", "echo one; echo two >&2; printf 'three\\nfour'"});
    expect({"wait", id}, "", "", 0);
    expect({"attach", id}, "one\nthree\nfour", "two\n", 0);
    expect({"attach", "--label-io", id}, "0: one\n0: three\n0: four", "0: two\n", 0);
    // Again: the output is kept.
    expect({"attach", id}, "one\nthree\nfour", "two\n", 0);
}

TEST_F(JobsCli, AttachLabelsWhenTheJobWasSubmittedWithLabelIo) {
    const std::string id =
        submit({"-n", "2", "--label-io", "sh", "-c",
                "echo out $GANTRY_TASK_RANK; echo err $GANTRY_TASK_RANK >&2; exit 4"});
    const auto result = gantry({"attach", id});
    EXPECT_EQ(sorted(lines_of(result.out)), (Lines{"0: out 0", "1: out 1"}));
    // The shell's own message (rank -1) comes unlabelled.
    Lines task_lines;
    for (const std::string& line : lines_of(result.err)) {
        if (line.starts_with("gantry: "))
            EXPECT_TRUE(line.starts_with("gantry: task ")) << line;
        else
            task_lines.push_back(line);
    }
    EXPECT_EQ(sorted(task_lines), (Lines{"0: err 0", "1: err 1"})) << result.err;
    EXPECT_EQ(result.exit_code, 4);
}

TEST_F(JobsCli, AttachWhileRunningForwardsStdinAndItsEnd) {
    const std::string id = submit({"sh", "-c", "echo first; read line; echo \"got $line\"; cat"});
    const auto result = gantry({"attach", id}, "hello\nrest\n");
    EXPECT_EQ(result.out, "first\ngot hello\nrest\n");
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
}

TEST_F(JobsCli, AttachFollowsAJobThatIsStillToRun) {
    const std::string id = submit({"--urgency", "hold", "sh", "-c", "echo late; exit 5"});
    Background attach(command({"attach", id}), dir_);
    // Its signal handlers are in place once it follows the job.
    ASSERT_TRUE(eventually([&] { return attach.catches(SIGINT); }));
    expect({"urgency", id, "default"}, "", "", 0);
    const auto result = attach.finish();
    EXPECT_EQ(result.out, "late\n");
    EXPECT_EQ(result.exit_code, 5);
}

TEST_F(JobsCli, AttachToAJobThatNeverRanExits1WithItsException) {
    const std::string id = submit({"--urgency", "0", "true"});
    expect({"cancel", id}, "", "", 0);
    expect({"attach", id}, "", "gantry: job " + id + ": " + canceled_by() + "\n", 1);
    expect({"wait", id}, "", "gantry: job " + id + ": " + canceled_by() + "\n", 1);
}

TEST_F(JobsCli, AttachForwardsSignals) {
    const std::string ready = dir_ / "ready";
    const std::string id = trapping_job(ready);
    ASSERT_TRUE(eventually([&] { return exists(ready); }));
    Background attach(command({"attach", "--no-stdin", id}), dir_);
    ASSERT_TRUE(eventually([&] { return attach.catches(SIGUSR1); }));
    attach.signal(SIGUSR1);
    const auto result = attach.finish();
    EXPECT_EQ(result.out, "got USR1\n");
    EXPECT_EQ(result.exit_code, 7);
}

TEST_F(JobsCli, AttachSigtermEndsTheJob) {
    const std::string id = submit({"sleep", "60"});
    ASSERT_TRUE(eventually([&] { return state(id) == "RUN"; }));
    Background attach(command({"attach", id}), dir_);
    ASSERT_TRUE(eventually([&] { return attach.catches(SIGTERM); }));
    attach.signal(SIGTERM);
    const auto result = attach.finish();
    EXPECT_EQ(result.exit_code, 143) << result.err;
    expect({"wait", id}, "", "", 143);
}

TEST_F(JobsCli, CtrlCTwiceDetachesAndTheJobGoesOn) {
    const std::string ready = dir_ / "ready";
    const std::string id = trapping_job(ready);
    ASSERT_TRUE(eventually([&] { return exists(ready); }));
    Background attach(command({"attach", id}), dir_);
    ASSERT_TRUE(eventually([&] { return attach.catches(SIGINT); }));
    attach.signal(SIGINT);
    // The first one reaches the job.
    ASSERT_TRUE(eventually([&] { return attach.out() == "got INT\n"; })) << attach.out();
    attach.signal(SIGINT);
    const auto result = attach.finish();
    EXPECT_EQ(result.err, "gantry: job " + id +
                              ": SIGINT sent; one more Ctrl-C within 2 s detaches\n"
                              "gantry: job " +
                              id + ": detached; it goes on (gantry attach " + id +
                              " follows it again)\n");
    EXPECT_EQ(result.exit_code, 130);
    EXPECT_EQ(state(id), "RUN");
    expect({"kill", "-s", "USR1", id}, "", "", 0);
    expect({"wait", id}, "", "", 7);
}

// --- jobs -----------------------------------------------------------------------

TEST_F(JobsCli, JobsTableAndJson) {
    const std::string done = submit({"--job-name", "done", "true"});
    expect({"wait", done}, "", "", 0);
    const std::string failed = submit({"sh", "-c", "exit 3"});
    expect({"wait", failed}, "", "", 3);
    const std::string running = submit({"-n", "1", "sleep", "60"});
    ASSERT_TRUE(eventually([&] { return state(running) == "RUN"; }));
    const std::string held = submit({"--urgency", "0", "sleep", "60"});
    const std::string canceled = submit({"--urgency", "0", "--job-name", "canceled", "true"});
    expect({"cancel", canceled}, "", "", 0);
    expect({"wait", canceled}, "", "gantry: job " + canceled + ": " + canceled_by() + "\n", 1);

    const std::string user =
        user_name() + std::string(user_name().size() < 8 ? 8 - user_name().size() : 0, ' ');
    const std::string time = " +[0-9.]+[smhd]";
    auto result = gantry({"jobs"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    Lines lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 3u) << result.out;
    EXPECT_EQ(lines[0], "JOBID USER     NAME       ST NTASKS     TIME EXIT");
    EXPECT_TRUE(
        std::regex_match(lines[1], std::regex("    4 " + user + " sleep       S      -" + time)))
        << lines[1];
    EXPECT_TRUE(
        std::regex_match(lines[2], std::regex("    3 " + user + " sleep       R      1" + time)))
        << lines[2];

    result = gantry({"jobs", "-a", "--no-header"});
    lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 5u) << result.out;
    EXPECT_TRUE(std::regex_match(
        lines[0], std::regex("    5 " + user + " canceled   CA      -" + time + "    -")))
        << lines[0];
    EXPECT_TRUE(std::regex_match(
        lines[3], std::regex("    2 " + user + " sh          F      1" + time + "    3")))
        << lines[3];
    EXPECT_TRUE(std::regex_match(
        lines[4], std::regex("    1 " + user + " done       CD      1" + time + "    0")))
        << lines[4];

    result = gantry({"jobs", "--state=inactive", "-n"});
    EXPECT_EQ(lines_of(result.out).size(), 3u) << result.out;
    result = gantry({"jobs", "--state", "RUN,sched", "--name", "sleep", "-n"});
    EXPECT_EQ(lines_of(result.out).size(), 2u) << result.out;
    result = gantry({"jobs", "-a", "--count", "1", "-n"});
    EXPECT_EQ(lines_of(result.out).size(), 1u) << result.out;
    expect({"jobs", "--state", "gone"}, "",
           "gantry: jobs: --state: unknown state \"gone\" (new, depend, sched, run, cleanup, "
           "inactive, pending, running, active)\n",
           2);

    result = gantry({"jobs", "-a", "--json"});
    lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 5u) << result.out;
    std::vector<int> ids;
    for (const std::string& line : lines) {
        const Json job = Json::parse(line, nullptr, false);
        ASSERT_TRUE(job.is_object()) << line;
        ids.push_back(job.value("id", 0));
        EXPECT_EQ(job.value("userid", -1), static_cast<int>(::getuid()));
    }
    EXPECT_EQ(ids, (std::vector<int>{5, 4, 3, 2, 1}));
    EXPECT_EQ(Json::parse(lines[3])["exit_code"], 3);
    EXPECT_EQ(Json::parse(lines[0])["exception"]["type"], "cancel");
    (void)held;
}

// --- info and eventlog ------------------------------------------------------------

TEST_F(JobsCli, InfoShowsSummaryTasksAndEvents) {
    const std::string id = submit({"-n", "2", "sh", "-c", "exit $GANTRY_TASK_RANK"});
    expect({"wait", id}, "", "", 1);
    const auto result = gantry({"info", id});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const Lines lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 25u) << result.out;
    EXPECT_EQ(lines[0], "id         " + id);
    EXPECT_EQ(lines[1], "name       sh");
    EXPECT_EQ(lines[2], "user       " + user_name() + " (uid " + kUid + ")");
    EXPECT_EQ(lines[3], "state      INACTIVE");
    EXPECT_EQ(lines[4], "result     failed");
    EXPECT_EQ(lines[5], "exit-code  1");
    EXPECT_EQ(lines[6], "urgency    16");
    EXPECT_EQ(lines[7], "ntasks     2");
    EXPECT_TRUE(std::regex_match(
        lines[8], std::regex("submitted  [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z")))
        << lines[8];
    EXPECT_EQ(lines[9], "command    -n 2 sh -c 'exit $GANTRY_TASK_RANK'");
    EXPECT_TRUE(lines[10].starts_with("R          rank0/core")) << lines[10];
    EXPECT_EQ(lines[11], "taskmap    [[0,1,2,1]]");
    EXPECT_EQ(lines[12], "tasks");
    EXPECT_EQ(lines[13], "  0       exited with exit code 0");
    EXPECT_EQ(lines[14], "  1       exited with exit code 1");
    EXPECT_EQ(lines[15], "eventlog");
    // Lines 16-22: each event, its time as an offset from the first.
    EXPECT_EQ(lines[16].substr(0, 11), "  0.000000 ") << lines[16];
    Lines events;
    for (std::size_t i = 16; i < 23; ++i) {
        EXPECT_TRUE(std::regex_match(lines[i], std::regex("  [0-9]+\\.[0-9]{6} [a-z].*")))
            << lines[i];
        events.push_back(lines[i].substr(lines[i].find(' ', 2) + 1));
    }
    EXPECT_EQ(events, (Lines{"submit urgency=16 userid=" + kUid, "depend", "alloc", "start",
                             "finish status=256", "release final=true ranks=\"all\"", "clean"}));
    EXPECT_EQ(lines[lines.size() - 2], "jobspec");
    EXPECT_TRUE(Json::parse(lines.back(), nullptr, false).is_object()) << lines.back();

    const Json json = info(id);
    for (const char* key :
         {"id", "name", "state", "urgency", "userid", "submit_time", "state_time", "ntasks",
          "exit_code", "exception", "jobspec", "R", "taskmap", "eventlog", "task_exits"})
        EXPECT_TRUE(json.contains(key)) << key;
    EXPECT_EQ(json["task_exits"].size(), 2u);

    // Tasks that ended alike are one line.
    const std::string alike = submit({"-n", "2", "true"});
    expect({"wait", alike}, "", "", 0);
    const auto alike_info = gantry({"info", alike});
    EXPECT_NE(alike_info.out.find("\ntasks\n  0-1     exited with exit code 0\neventlog\n"),
              std::string::npos)
        << alike_info.out;
}

TEST_F(JobsCli, EventlogNamesTimesAndJson) {
    const std::string id = submit({"true"});
    expect({"wait", id}, "", "", 0);
    auto result = gantry({"eventlog", id});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    for (const std::string& line : lines_of(result.out))
        EXPECT_TRUE(std::regex_match(line, std::regex("[0-9]+\\.[0-9]{6} [a-z]+( [a-z_]+=.*)?")))
            << line;
    EXPECT_TRUE(result.out.starts_with("0.000000 submit ")) << result.out;
    EXPECT_EQ(untimed_events(result.out),
              (Lines{"submit urgency=16 userid=" + kUid, "depend", "alloc", "start",
                     "finish status=0", "release final=true ranks=\"all\"", "clean"}));

    result = gantry({"eventlog", "-T", "iso", id});
    EXPECT_TRUE(std::regex_search(
        result.out, std::regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z submit ")))
        << result.out;
    result = gantry({"eventlog", "--time-format=raw", id});
    EXPECT_TRUE(std::regex_search(result.out, std::regex("^[0-9]{10}\\.[0-9]{6} submit ")))
        << result.out;

    result = gantry({"eventlog", "--json", id});
    const Lines lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 7u) << result.out;
    const Json first = Json::parse(lines[0], nullptr, false);
    EXPECT_EQ(first["seq"], 1);
    EXPECT_EQ(first["name"], "submit");
    EXPECT_EQ(first["context"]["urgency"], 16);
    EXPECT_TRUE(first["time"].is_number());
}

TEST_F(JobsCli, EventlogFollowsUntilClean) {
    const std::string id = submit({"--urgency", "0", "true"});
    Background follow(command({"eventlog", "--follow", id}), dir_);
    ASSERT_TRUE(eventually([&] { return follow.out().find(" submit ") != std::string::npos; }));
    expect({"urgency", id, "16"}, "", "", 0);
    const auto result = follow.finish();
    EXPECT_EQ(result.exit_code, 0) << result.err;
    // `alloc` after `urgency`: held until raised.
    EXPECT_EQ(untimed_events(result.out),
              (Lines{"submit urgency=0 userid=" + kUid, "depend", "urgency urgency=16", "alloc",
                     "start", "finish status=0", "release final=true ranks=\"all\"", "clean"}));
}

// --- kill, cancel, purge, urgency ----------------------------------------------

TEST_F(JobsCli, KillSendsTheSignalByNameOrNumber) {
    const std::string ready = dir_ / "ready";
    const std::string id = trapping_job(ready);
    ASSERT_TRUE(eventually([&] { return exists(ready); }));
    expect({"kill", "--signal=SIGUSR1", id}, "", "", 0);
    expect({"wait", id}, "", "", 7);
    const std::string sleeper = submit({"sleep", "60"});
    ASSERT_TRUE(eventually([&] { return state(sleeper) == "RUN"; }));
    expect({"kill", "-s", "9", sleeper}, "", "", 0);
    expect({"wait", sleeper}, "", "", 137);
    // kill(1)'s spellings.
    const std::string killed = submit({"sleep", "60"});
    ASSERT_TRUE(eventually([&] { return state(killed) == "RUN"; }));
    expect({"kill", "-9", killed}, "", "", 0);
    expect({"wait", killed}, "", "", 137);
    const std::string hung_up = submit({"sleep", "60"});
    ASSERT_TRUE(eventually([&] { return state(hung_up) == "RUN"; }));
    expect({"kill", "-SIGHUP", hung_up}, "", "", 0);
    expect({"wait", hung_up}, "", "", 129);
    expect({"kill", "-BOGUS", id}, "",
           "gantry: kill: bad signal \"BOGUS\" (a name such as TERM or USR1, or 1-64)\n", 2);
    const std::string held = submit({"--urgency", "0", "true"});
    expect({"kill", held}, "", "gantry: job " + held + ": is not running (SCHED)\n", 1);
    expect({"kill", id}, "", "gantry: job " + id + ": has ended\n", 1);
    expect({"kill", "-s", "FOO", id}, "",
           "gantry: kill: bad signal \"FOO\" (a name such as TERM or USR1, or 1-64)\n", 2);
    expect({"kill", "-s", "0", id}, "",
           "gantry: kill: bad signal \"0\" (a name such as TERM or USR1, or 1-64)\n", 2);
}

TEST_F(JobsCli, CancelPendingAndRunningJobs) {
    const std::string running = submit({"sleep", "60"});
    ASSERT_TRUE(eventually([&] { return state(running) == "RUN"; }));
    const std::string held = submit({"--urgency", "0", "true"});
    expect({"cancel", held, running}, "", "", 0);
    expect({"wait", held}, "", "gantry: job " + held + ": " + canceled_by() + "\n", 1);
    // A running job's note says how long its end may take.
    expect({"wait", running}, "",
           "gantry: job " + running + ": " + canceled_by() +
               "; its tasks get SIGTERM, then SIGKILL after its kill timeout (5s)\n",
           143);
    EXPECT_EQ(info(held)["exit_code"], nullptr);
    // Each id is tried; the failures are reported.
    const std::string other = submit({"--urgency", "0", "true"});
    expect({"cancel", held, other, "99"}, "",
           "gantry: job " + held + ": has ended\ngantry: job 99: no such job\n", 1);
    EXPECT_TRUE(eventually([&] { return state(other) == "INACTIVE"; }));
}

TEST_F(JobsCli, PurgeInactiveJobs) {
    const std::string a = submit({"true"});
    const std::string b = submit({"true"});
    const std::string c = submit({"true"});
    for (const auto& id : {a, b, c})
        expect({"wait", id}, "", "", 0);
    const std::string held = submit({"--urgency", "0", "true"});
    expect({"purge", a}, "purged 1 inactive job\n", "", 0);
    expect({"info", a}, "", "gantry: job " + a + ": no such job\n", 1);
    expect({"purge", held}, "purged 0 inactive jobs\n",
           "gantry: job " + held + ": is still active\n", 1);
    expect({"purge"}, "purged 2 inactive jobs\n", "", 0);
    // Only the held one remains.
    const auto left = gantry({"jobs", "-a", "-n"});
    EXPECT_EQ(lines_of(left.out).size(), 1u) << left.out;
    // Ids are not reused.
    EXPECT_EQ(submit({"true"}), "5");
}

TEST_F(JobsCli, UrgencyOfAPendingJob) {
    const std::string id = submit({"--urgency", "0", "true"});
    expect({"urgency", id, "40"}, "",
           "gantry: urgency: bad urgency \"40\" (0-31, hold, default or expedite)\n", 2);
    expect({"urgency", id, "expedite"}, "", "", 0);
    expect({"wait", id}, "", "", 0);
    expect({"urgency", id, "3"}, "", "gantry: job " + id + ": has ended\n", 1);
}

// --- ids, instances, help --------------------------------------------------------

TEST_F(JobsCli, BadIdsAreUsageErrorsAndUnknownJobsRuntimeErrors) {
    for (const std::string name :
         {"attach", "info", "eventlog", "wait", "kill", "cancel", "purge"}) {
        expect({name, "x"}, "", "gantry: " + name + ": bad job id \"x\"\n", 2);
        expect({name, "1.5"}, "", "gantry: " + name + ": bad job id \"1.5\"\n", 2);
        expect({name, "0"}, "", "gantry: " + name + ": bad job id \"0\" (ids start at 1)\n", 2);
    }
    for (const std::string name : {"info", "wait", "kill", "cancel", "purge"}) {
        const auto unknown = gantry({name, "99"});
        EXPECT_EQ(unknown.err, "gantry: job 99: no such job\n") << name;
        EXPECT_EQ(unknown.exit_code, 1) << name;
    }
    expect({"urgency", "x", "3"}, "", "gantry: urgency: bad job id \"x\"\n", 2);
    expect({"urgency", "99", "3"}, "", "gantry: job 99: no such job\n", 1);
    // kill(1)'s -9 is the signal, and 7 the job, in both spellings.
    expect({"kill", "-9", "7"}, "", "gantry: job 7: no such job\n", 1);
    expect({"kill", "-s", "9", "7"}, "", "gantry: job 7: no such job\n", 1);
}

TEST_F(JobsCli, BadOptionValuesSayWhatTheOptionNeeds) {
    expect({"eventlog", "-T", "bogus", "1"}, "",
           "gantry: eventlog: -T needs one of offset, iso or raw, not \"bogus\"\n", 2);
    expect({"eventlog", "--time-format=ISO", "1"}, "",
           "gantry: eventlog: --time-format needs one of offset, iso or raw, not \"ISO\"\n", 2);
    expect({"jobs", "-c", "0"}, "", "gantry: jobs: -c needs a positive number, not \"0\"\n", 2);
    expect({"jobs", "--count", "x"}, "",
           "gantry: jobs: --count needs a positive number, not \"x\"\n", 2);
    expect({"wait", "--bogus"}, "",
           "gantry: wait: unknown option \"--bogus\" (see gantry wait --help)\n", 2);
    expect({"info"}, "", "gantry: info: missing ID (see gantry info --help)\n", 2);
    expect({"info", "1", "2"}, "",
           "gantry: info: unexpected argument \"2\" (see gantry info --help)\n", 2);
}

TEST_F(JobsCli, AttachAndEventlogOfAnUnknownJobSayNoSuchJob) {
    expect({"attach", "99"}, "", "gantry: job 99: no such job\n", 1);
    expect({"eventlog", "99"}, "", "gantry: job 99: no such job\n", 1);
}

TEST_F(JobsCli, OutsideAnInstance) {
    for (const std::string name :
         {"attach", "info", "eventlog", "wait", "kill", "cancel", "purge"}) {
        const auto result = run_program({"env", "-u", "GANTRY_URI", kGantry, name, "1"});
        EXPECT_EQ(result.err,
                  "gantry: not inside an instance (GANTRY_URI is not set); give --uri\n")
            << name;
        EXPECT_EQ(result.exit_code, 2) << name;
    }
    const auto jobs = run_gantry({"jobs", "--uri", "unix:///nonexistent/socket"});
    EXPECT_EQ(jobs.err,
              "gantry: cannot connect to unix:///nonexistent/socket: No such file or directory\n");
    EXPECT_EQ(jobs.exit_code, 1);
    const auto given = run_program({"env", "-u", "GANTRY_URI", kGantry, "jobs", "--uri", uri_});
    EXPECT_EQ(given.out, "JOBID USER     NAME       ST NTASKS     TIME EXIT\n") << given.err;
    // --uri before the command is the command's.
    const auto before = run_program({"env", "-u", "GANTRY_URI", kGantry, "--uri", uri_, "jobs"});
    EXPECT_EQ(before.out, "JOBID USER     NAME       ST NTASKS     TIME EXIT\n") << before.err;
    const auto joined =
        run_program({"env", "-u", "GANTRY_URI", kGantry, "--uri=" + uri_, "jobs", "--no-header"});
    EXPECT_EQ(joined.out, "") << joined.err;
    EXPECT_EQ(joined.exit_code, 0);
    const auto info = run_program(
        {"env", "-u", "GANTRY_URI", kGantry, "--uri", uri_, "instance", "info", "--json"});
    EXPECT_EQ(Json::parse(info.out, nullptr, false).value("uri", ""), uri_) << info.err;
    const auto exec =
        run_program({"env", "-u", "GANTRY_URI", kGantry, "--uri", uri_, "job", "exec", "99"});
    EXPECT_EQ(exec.err, "gantry: job 99: no such job\n");
    EXPECT_EQ(exec.exit_code, 1);
}

TEST(JobsCliHelp, EveryCommandHasHelpWithExamples) {
    for (const std::string name : {"submit", "attach", "jobs", "info", "eventlog", "wait", "kill",
                                   "cancel", "purge", "urgency"}) {
        const auto result = run_gantry({name, "--help"});
        EXPECT_EQ(result.exit_code, 0) << name << ": " << result.err;
        EXPECT_NE(result.out.find("Examples:"), std::string::npos) << name;
        EXPECT_NE(result.out.find("Exit status"), std::string::npos) << name;
        const auto listed = run_gantry({"--help"});
        EXPECT_NE(listed.out.find("\n  " + name + " "), std::string::npos) << name;
    }
}

}  // namespace
}  // namespace gantry::test
