// `gantry job` as real processes against a real `gantry start --daemon`:
// RFC 8's program methods (new, grow, map, exec, shrink, terminate), their
// refusals and exit codes, and RFC 8's names for the commands that already
// do the rest (list, getinfo, signal, wait, reap). Reference:
// docs/commands/job.md.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
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

// The USER column of `gantry jobs`, 8 wide.
std::string user_column() {
    const std::string user = user_name();
    return user + std::string(user.size() < 8 ? 8 - user.size() : 0, ' ');
}

const std::string kTime = " +[0-9.]+[smhd]";

const std::string kUid = std::to_string(::getuid());

// The events of an exec of one task, and of its end.
std::string exec_event(const std::string& ranks) {
    return "exec ranks=\"" + ranks + "\" taskmap=[[0,1,1,1]]";
}
std::string exec_end_event(const std::string& ranks, int status) {
    return "exec.end ranks=\"" + ranks + "\" status=" + std::to_string(status);
}

// A daemon instance of its own for each test; each test builds its programs
// on cores 0 and 1 only, which every machine the tests run on has.
class JobCmd : public InstanceTest {
protected:
    // An R document of rank 0 (this machine) with `cores`.
    static std::string R(const std::string& cores) {
        const auto result = run_gantry({"R", "encode", "--ranks", "0", "--cores", cores});
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return result.out;
    }
    // `gantry job new`; the program's id.
    std::string new_program(const std::string& name = "") {
        std::vector<std::string> args = {"job", "new"};
        if (!name.empty())
            args.insert(args.end(), {"--name", name});
        const auto result = gantry(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.err, "");
        EXPECT_TRUE(std::regex_match(result.out, std::regex("[1-9][0-9]*\n"))) << result.out;
        return result.out.substr(0, result.out.find('\n'));
    }
    // `gantry job grow ID -` with the R of `cores`; it must print `held`.
    void grow(const std::string& id, const std::string& cores, const std::string& held) {
        expect({"job", "grow", id, "-"}, held + "\n", "", 0, R(cores));
    }
    void map(const std::string& id, const std::vector<std::string>& command) {
        std::vector<std::string> args = {"job", "map", id};
        args.insert(args.end(), command.begin(), command.end());
        expect(args, "", "", 0);
    }
    // map then exec: the exec must print `ranks`. Then waits for the
    // exec's `start`, which the shell posts once the tasks run, after exec
    // has answered: so that what the test does next comes after it in the
    // eventlog.
    void start(const std::string& id, const std::vector<std::string>& command,
               const std::string& ranks) {
        map(id, command);
        expect({"job", "exec", id}, ranks + "\n", "", 0);
        // job.exec answers once its tasks have started.
        const Lines names = event_names(info(id));
        EXPECT_EQ(std::count(names.begin(), names.end(), "start"),
                  std::count(names.begin(), names.end(), "exec"))
            << testing::PrintToString(events(id));
    }
    // The program's events without their times: `exec.end ranks="0" status=0`.
    Lines events(const std::string& id) { return untimed_events(gantry({"eventlog", id}).out); }
    // Whether the program has that event yet: for waiting; each test
    // compares the whole eventlog at its end.
    bool has_event(const std::string& id, const std::string& event) {
        const Lines all = events(id);
        return std::find(all.begin(), all.end(), event) != all.end();
    }
    // The events of a program: job.new's, then `after`.
    static Lines program_events(const Lines& after) {
        Lines all = {"submit urgency=16 userid=" + kUid, "depend", "alloc"};
        all.insert(all.end(), after.begin(), after.end());
        return all;
    }
    // The event of a grow or shrink of `cores`.
    static std::string resize_event(const std::string& name, const std::string& cores) {
        return name + " R=" + Json::parse(R(cores)).dump();
    }
    // A shell command line that creates `file` then waits until `go` exists.
    std::string touch_then_wait(const std::string& file) const {
        return "touch " + file + "; while [ ! -e " + go_ + " ]; do sleep 0.05; done";
    }
    static std::string no_tasks(const std::string& id) {
        return "gantry: job " + id + ": has no tasks to start (job.map first)\n";
    }
    static std::string no_resources(const std::string& id) {
        return "gantry: job " + id + ": has no resources (job.grow first)\n";
    }
    static std::string no_free_resources(const std::string& id) {
        return "gantry: job " + id +
               ": has no free resources: its running tasks hold them all (job.grow first)\n";
    }

    const std::string go_ = dir_ / "go";
    const std::string host_ = host_name();
};

// --- a program's life ------------------------------------------------------------

// The session of docs/commands/job.md: two execs side by side, the first
// one's core taken back, then the end.
TEST_F(JobCmd, TwoExecsSideBySideThenShrinkEndsTheFirstAndTerminateTheProgram) {
    const std::string id = new_program("steps");
    EXPECT_EQ(id, "1");
    grow(id, "0-1", "rank0/core[0-1]");
    const std::string server = dir_ / "server";
    start(id, {"-n", "1", "sh", "-c", "echo server up; touch " + server + "; exec sleep 300"}, "0");
    // Its output is out before its core is taken back.
    ASSERT_TRUE(eventually([&] { return exists(server); }));
    const std::string client = dir_ / "client";
    start(
        id,
        {"-n", "1", "sh", "-c",
         "echo \"client: rank $GANTRY_TASK_RANK of $GANTRY_JOB_SIZE\"; " + touch_then_wait(client)},
        "1");
    ASSERT_TRUE(eventually([&] { return exists(client); }));
    EXPECT_EQ(info(id).value("state", ""), "RUN");
    // NTASKS counts the tasks of both execs.
    const Lines listed = lines_of(gantry({"job", "list"}).out);
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_TRUE(std::regex_match(
        listed[1], std::regex("    1 " + user_column() + " steps       R      2" + kTime)))
        << listed[1];

    // The server ran on core 0, the first free one.
    // job.shrink answers once the tasks it ended have ended.
    expect({"job", "shrink", id, "-"}, "rank0/core1\n", "", 0, R("0"));
    EXPECT_TRUE(has_event(id, "exec.end ranks=\"0\" status=36608"))
        << testing::PrintToString(events(id));
    // The client went on: it ends as it was told to, on its own.
    std::ofstream(go_).close();
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"1\" status=0"); }))
        << testing::PrintToString(events(id));
    EXPECT_EQ(info(id).value("state", ""), "RUN");

    // The first failure is the program's: the server's SIGTERM.
    expect({"job", "terminate", id}, "", "", 143);
    expect({"wait", id}, "", "", 143);
    expect({"job", "wait", id}, "", "", 143);
    const Lines jobs = lines_of(gantry({"jobs", "-a"}).out);
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0], "JOBID USER     NAME       ST NTASKS     TIME EXIT");
    EXPECT_TRUE(std::regex_match(
        jobs[1], std::regex("    1 " + user_column() + " steps       F      2" + kTime + "  143")))
        << jobs[1];
    expect({"attach", "--label-io", id}, "0: server up\n1: client: rank 0 of 1\n",
           "gantry: task 0 (" + host_ + ") killed by signal 15 (Terminated)\n", 143);

    const Json record = info(id);
    EXPECT_EQ(record.value("state", ""), "INACTIVE");
    EXPECT_EQ(record.value("exit_code", -1), 143);
    // The record's jobspec is job.new's: no apps.
    EXPECT_EQ(record["jobspec"]["apps"], Json::array());
    EXPECT_EQ(events(id),
              program_events({resize_event("grow", "0-1"), "map apps=1", exec_event("0"), "start",
                              "map apps=1", exec_event("1"), "start", resize_event("shrink", "0"),
                              exec_end_event("0", 36608), exec_end_event("1", 0),
                              "finish status=36608", "release final=true ranks=\"all\"", "clean"}));
}

// docs/records.md: a program's R follows grow and shrink, and its task map
// is that of every exec so far.
TEST_F(JobCmd, InfoShowsWhatTheProgramHoldsAndTheTaskMapOfEveryExec) {
    const std::string id = new_program();
    grow(id, "0-1", "rank0/core[0-1]");
    const std::string first = dir_ / "first";
    const std::string second = dir_ / "second";
    start(id, {"-n", "1", "sh", "-c", touch_then_wait(first)}, "0");
    start(id, {"-n", "1", "sh", "-c", touch_then_wait(second)}, "1");
    ASSERT_TRUE(eventually([&] { return exists(first) && exists(second); }));
    Json record = info(id);
    EXPECT_EQ(record.value("state", ""), "RUN");
    EXPECT_EQ(record["R"], Json::parse(R("0-1")));
    EXPECT_EQ(record["taskmap"], Json::parse("[[0,1,2,1]]"));
    expect({"job", "shrink", id, "-"}, "rank0/core1\n", "", 0, R("0"));
    EXPECT_EQ(info(id)["R"], Json::parse(R("1")));
    std::ofstream(go_).close();
    expect({"job", "terminate", id}, "", "", 143);
    record = info(id);
    EXPECT_EQ(record["R"], Json::parse(R("1")));
    EXPECT_EQ(record["taskmap"], Json::parse("[[0,1,2,1]]"));
}

TEST_F(JobCmd, TerminateExitsWithTheFirstFailingExecsCode) {
    const std::string id = new_program();
    grow(id, "0", "rank0/core0");
    // One core: each exec starts once the one before has ended.
    start(id, {"sh", "-c", "exit 0"}, "0");
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"0\" status=0"); }));
    start(id, {"sh", "-c", "exit 3"}, "1");
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"1\" status=768"); }));
    start(id, {"sh", "-c", "exit 5"}, "2");
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"2\" status=1280"); }));
    EXPECT_EQ(info(id).value("state", ""), "RUN");
    expect({"job", "terminate", id}, "", "", 3);
    expect({"wait", id}, "", "", 3);
    EXPECT_EQ(events(id),
              program_events({resize_event("grow", "0"), "map apps=1", exec_event("0"), "start",
                              exec_end_event("0", 0), "map apps=1", exec_event("1"), "start",
                              exec_end_event("1", 768), "map apps=1", exec_event("2"), "start",
                              exec_end_event("2", 1280), "finish status=768",
                              "release final=true ranks=\"all\"", "clean"}));
    // An ended program takes no more methods.
    expect({"job", "exec", id}, "", "gantry: job " + id + ": has ended\n", 1);
    expect({"job", "terminate", id}, "", "gantry: job " + id + ": has ended\n", 1);
}

TEST_F(JobCmd, TerminateOfProgramsWhoseExecsAllExitedZeroExits0) {
    const std::string id = new_program();
    grow(id, "0", "rank0/core0");
    start(id, {"true"}, "0");
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"0\" status=0"); }));
    expect({"job", "terminate", id}, "", "", 0);
    expect({"wait", id}, "", "", 0);
    EXPECT_EQ(events(id), program_events({resize_event("grow", "0"), "map apps=1", exec_event("0"),
                                          "start", exec_end_event("0", 0), "finish status=0",
                                          "release final=true ranks=\"all\"", "clean"}));
}

TEST_F(JobCmd, TerminateOfAProgramThatNeverRanATaskExits1) {
    const std::string id = new_program();
    grow(id, "0", "rank0/core0");
    expect({"job", "terminate", id}, "", "", 1);
    expect({"wait", id}, "", "", 1);
    const Lines jobs = lines_of(gantry({"jobs", "-a", "--no-header"}).out);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_TRUE(std::regex_match(
        jobs[0], std::regex("    1 " + user_column() + " program     F      -" + kTime + "    -")))
        << jobs[0];
    // Its core went back: another program gets it.
    const std::string other = new_program();
    grow(other, "0", "rank0/core0");
}

// --- refusals ---------------------------------------------------------------------

TEST_F(JobCmd, GrowRefusals) {
    const std::string id = new_program();
    expect({"job", "grow", id, "-"}, "",
           "gantry: job.grow: not in the instance: rank0/core[1000-1001]\n", 1, R("1000-1001"));
    grow(id, "0", "rank0/core0");
    expect({"job", "grow", id, "-"}, "",
           "gantry: job.grow: the job holds some of it already: R: append: rank 0 has core0 in "
           "both sets\n",
           1, R("0-1"));
    const std::string other = new_program();
    expect({"job", "grow", other, "-"}, "",
           "gantry: job.grow: busy: scheduler: restore: job " + other +
               ": rank 0: core0 already allocated\n",
           1, R("0-1"));
    // A refused grow changes nothing: core 1 is still free, core 0 still
    // the first program's.
    grow(other, "1", "rank0/core1");
    expect({"job", "shrink", other, "-"}, "", "gantry: job.shrink: the job holds none of it\n", 1,
           R("0"));
    expect({"job", "shrink", id, "-"}, "(nothing)\n", "", 0, R("0-1"));
    grow(other, "0", "rank0/core[0-1]");
}

TEST_F(JobCmd, ExecRefusals) {
    const std::string id = new_program();
    expect({"job", "exec", id}, "", no_tasks(id), 1);
    grow(id, "0", "rank0/core0");
    map(id, {"-n", "2", "true"});
    expect({"job", "exec", id}, "",
           "gantry: map: app 0 (-n 2 true): there are not enough slots available: 2 tasks do not "
           "fit in the 1 free slot of " +
               host_ + "; add :OVERSUBSCRIBE to the job's --map-by or give fewer tasks\n",
           1);
    // That refusal dropped the apps.
    expect({"job", "exec", id}, "", no_tasks(id), 1);

    const std::string running = dir_ / "running";
    start(id, {"sh", "-c", touch_then_wait(running)}, "0");
    ASSERT_TRUE(eventually([&] { return exists(running); }));
    map(id, {"true"});
    expect({"job", "exec", id}, "", no_free_resources(id), 1);
}

TEST_F(JobCmd, ExecWithoutResourcesIsRefused) {
    const std::string id = new_program();
    map(id, {"true"});
    expect({"job", "exec", id}, "", no_resources(id), 1);
    expect({"job", "shrink", id, "-"}, "", "gantry: job.shrink: the job holds none of it\n", 1,
           R("0"));
    // Shrunk to nothing, it has no resources again.
    grow(id, "0", "rank0/core0");
    expect({"job", "shrink", id, "-"}, "(nothing)\n", "", 0, R("0"));
    map(id, {"true"});
    expect({"job", "exec", id}, "", no_resources(id), 1);
}

// docs/commands/job.md: "A refusal drops the pending apps: map them again
// (after a grow, say)." The execs after the refusals below would start an
// app left pending.
TEST_F(JobCmd, AnExecRefusedForWantOfResourcesKeepsThePendingApps) {
    const std::string id = new_program();
    const std::string ran = dir_ / "ran";
    map(id, {"touch", ran});
    expect({"job", "exec", id}, "", no_resources(id), 1);
    grow(id, "0", "rank0/core0");
    expect({"job", "exec", id}, "0\n", "", 0);
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"0\" status=0"); }));
    EXPECT_TRUE(exists(ran));
    expect({"job", "terminate", id}, "", "", 0);
    // The refused exec left nothing in the eventlog.
    EXPECT_EQ(events(id), program_events({"map apps=1", resize_event("grow", "0"), exec_event("0"),
                                          "start", exec_end_event("0", 0), "finish status=0",
                                          "release final=true ranks=\"all\"", "clean"}));
}

TEST_F(JobCmd, AnExecRefusedForWantOfFreeResourcesKeepsThePendingApps) {
    const std::string id = new_program();
    grow(id, "0", "rank0/core0");
    const std::string running = dir_ / "running";
    start(id, {"sh", "-c", touch_then_wait(running)}, "0");
    ASSERT_TRUE(eventually([&] { return exists(running); }));
    const std::string ran = dir_ / "ran";
    map(id, {"touch", ran});
    expect({"job", "exec", id}, "", no_free_resources(id), 1);
    EXPECT_FALSE(exists(ran));
    std::ofstream(go_).close();
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"0\" status=0"); }));
    expect({"job", "exec", id}, "1\n", "", 0);
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"1\" status=0"); }));
    EXPECT_TRUE(exists(ran));
    expect({"job", "terminate", id}, "", "", 0);
    EXPECT_EQ(events(id),
              program_events({resize_event("grow", "0"), "map apps=1", exec_event("0"), "start",
                              "map apps=1", exec_end_event("0", 0), exec_event("1"), "start",
                              exec_end_event("1", 0), "finish status=0",
                              "release final=true ranks=\"all\"", "clean"}));
}

TEST_F(JobCmd, SubmittedJobsAreRunByTheInstanceNotByProgramMethods) {
    const std::string running = dir_ / "running";
    const auto submitted = gantry({"submit", "sh", "-c", touch_then_wait(running)});
    ASSERT_EQ(submitted.out, "1\n") << submitted.err;
    const std::string refusal =
        "gantry: job 1: was submitted, not made by job.new: the instance runs it\n";
    expect({"job", "grow", "1", "-"}, "", refusal, 1, R("0"));
    expect({"job", "map", "1", "true"}, "", refusal, 1);
    expect({"job", "exec", "1"}, "", refusal, 1);
    expect({"job", "shrink", "1", "-"}, "", refusal, 1, R("0"));
    // terminate is a cancel of a submitted job.
    ASSERT_TRUE(eventually([&] { return exists(running); }));
    expect({"job", "terminate", "1"}, "", "", 143);
    expect(
        {"wait", "1"}, "",
        "gantry: job 1: exception: cancel: terminated by uid " + std::to_string(::getuid()) + "\n",
        143);
}

TEST_F(JobCmd, UnknownIdsAndBadArguments) {
    const std::string unknown = "gantry: job 9: no such job\n";
    expect({"job", "grow", "9", "-"}, "", unknown, 1, R("0"));
    expect({"job", "map", "9", "true"}, "", unknown, 1);
    expect({"job", "exec", "9"}, "", unknown, 1);
    expect({"job", "shrink", "9", "-"}, "", unknown, 1, R("0"));
    expect({"job", "terminate", "9"}, "", unknown, 1);

    const auto usage = gantry({"job", "--help"});
    EXPECT_EQ(usage.exit_code, 0);
    EXPECT_TRUE(usage.out.starts_with("Usage: gantry job METHOD [ARGS]\n")) << usage.out;
    expect({"job"}, "", usage.out, 2);
    expect({"job", "x"}, "",
           "gantry: job: unknown method \"x\" (new, grow, map, exec, shrink, wait, signal, "
           "terminate, reap, list, getinfo)\n",
           2);
    expect({"job", "exec", "abc"}, "", "gantry: job exec: bad job id \"abc\"\n", 2);
    expect({"job", "map", "abc", "true"}, "", "gantry: job map: bad job id \"abc\"\n", 2);
    // Messages of the run options name the command typed.
    expect({"job", "map", "3"}, "",
           "gantry: job map: no command to run (see gantry job map --help)\n", 2);
    expect({"job", "exec", "0"}, "", "gantry: job exec: bad job id \"0\" (ids start at 1)\n", 2);
    expect({"job", "grow", "1", "/nonexistent/R.json"}, "",
           "gantry: job grow: cannot read the R file in \"/nonexistent/R.json\"\n", 2);
    expect({"job", "grow", "1", "-"}, "",
           "gantry: job grow: R: invalid JSON at offset 2 in \"{\\n\" in \"-\"\n", 2, "{\n");
    expect({"job", "map"}, "",
           "gantry: job map: needs a program id and a command (see gantry job map --help)\n", 2);
    // Nothing was made by any of these.
    expect({"jobs", "-a", "--no-header"}, "", "", 0);
}

// A program that is ending refuses the program methods until it has ended.
TEST_F(JobCmd, AProgramThatIsEndingRefusesProgramMethods) {
    const std::string id = new_program();
    grow(id, "0", "rank0/core0");
    const std::string ready = dir_ / "ready";
    const std::string termed = dir_ / "termed";
    // The task outlives its SIGTERM until told to go; the long kill timeout
    // keeps SIGKILL away meanwhile.
    start(id,
          {"--kill-timeout", "600", "sh", "-c",
           "trap 'touch " + termed + "' TERM; " + touch_then_wait(ready)},
          "0");
    ASSERT_TRUE(eventually([&] { return exists(ready); }));
    Background terminate(daemon_.command({"job", "terminate", id}), dir_);
    ASSERT_TRUE(eventually([&] { return exists(termed); }));
    const std::string ending = "gantry: job " + id + ": is ending\n";
    expect({"job", "map", id, "true"}, "", ending, 1);
    expect({"job", "exec", id}, "", ending, 1);
    expect({"job", "grow", id, "-"}, "", ending, 1, R("1"));
    expect({"job", "shrink", id, "-"}, "", ending, 1, R("0"));
    std::ofstream(go_).close();
    const auto result = terminate.finish();
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
}

// --- RFC 8's names for the other commands ----------------------------------------

TEST_F(JobCmd, ListGetinfoSignalWaitAndReapAreTheCommandsTheyStandFor) {
    const std::string id = new_program("aliases");
    grow(id, "0", "rank0/core0");
    const std::string ready = dir_ / "ready";
    const std::string got = dir_ / "got";
    start(id,
          {"sh", "-c",
           "trap 'echo got USR1; touch " + got + "; exit 7' USR1; : > " + ready +
               "; while :; do sleep 0.05; done"},
          "0");
    ASSERT_TRUE(eventually([&] { return exists(ready); }));

    auto list = gantry({"job", "list"});
    EXPECT_EQ(list.err, "");
    EXPECT_EQ(list.exit_code, 0);
    Lines lines = lines_of(list.out);
    ASSERT_EQ(lines.size(), 2u) << list.out;
    EXPECT_EQ(lines[0], "JOBID USER     NAME       ST NTASKS     TIME EXIT");
    EXPECT_TRUE(std::regex_match(
        lines[1], std::regex("    1 " + user_column() + " aliases     R      1" + kTime)))
        << lines[1];

    auto getinfo = gantry({"job", "getinfo", "--json", id});
    EXPECT_EQ(getinfo.exit_code, 0) << getinfo.err;
    EXPECT_EQ(getinfo.out, gantry({"info", "--json", id}).out);
    EXPECT_EQ(Json::parse(getinfo.out, nullptr, false).value("state", ""), "RUN");

    expect({"job", "signal", "-s", "USR1", id}, "", "", 0);
    ASSERT_TRUE(eventually([&] { return exists(got); }));
    ASSERT_TRUE(eventually([&] { return has_event(id, "exec.end ranks=\"0\" status=1792"); }))
        << testing::PrintToString(events(id));
    expect({"job", "terminate", id}, "", "", 7);
    expect({"job", "wait", id}, "", "", 7);
    // The signal is no event of its own.
    EXPECT_EQ(events(id), program_events({resize_event("grow", "0"), "map apps=1", exec_event("0"),
                                          "start", exec_end_event("0", 1792), "finish status=1792",
                                          "release final=true ranks=\"all\"", "clean"}));

    getinfo = gantry({"job", "getinfo", id});
    EXPECT_EQ(getinfo.exit_code, 0) << getinfo.err;
    EXPECT_EQ(getinfo.out, gantry({"info", id}).out);
    lines = lines_of(getinfo.out);
    ASSERT_GE(lines.size(), 15u) << getinfo.out;
    EXPECT_EQ(lines[0], "id         " + id);
    EXPECT_EQ(lines[1], "name       aliases");
    EXPECT_EQ(lines[3], "state      INACTIVE");
    EXPECT_EQ(lines[5], "exit-code  7");
    EXPECT_NE(getinfo.out.find("\ntasks\n  0       exited with exit code 7\neventlog\n"),
              std::string::npos)
        << getinfo.out;

    list = gantry({"job", "list", "--no-header"});
    EXPECT_TRUE(std::regex_match(list.out, std::regex("    1 " + user_column() +
                                                      " aliases     F      1" + kTime + "    7\n")))
        << list.out;

    expect({"job", "reap", id}, "purged 1 inactive job\n", "", 0);
    expect({"job", "getinfo", id}, "", "gantry: job " + id + ": no such job\n", 1);
    expect({"job", "list", "--no-header"}, "", "", 0);
}

}  // namespace
}  // namespace gantry::test
