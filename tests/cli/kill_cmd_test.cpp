// `gantry kill` and `gantry cancel` against a real instance: the signal's
// spellings, and canceling jobs by selection (--all, --states, --user) with
// the counts they report.
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/eventlog.h"
#include "support/instance.h"
#include "support/machine.h"
#include "support/process.h"

namespace gantry::test {
namespace {

const std::string kUid = std::to_string(::getuid());

class KillCmd : public InstanceTest {
protected:
    // A job that runs until killed, once it is running.
    std::string running_job() {
        const std::string id = submit({"sleep", "60"});
        EXPECT_TRUE(eventually([&] { return state(id) == "RUN"; })) << id;
        return id;
    }
    // A job that stays in the queue (held) until raised or canceled.
    std::string held_job() { return submit({"--urgency", "0", "true"}); }
    std::string result_of(const std::string& id) {
        EXPECT_TRUE(eventually([&] { return state(id) == "INACTIVE"; })) << id;
        const auto exception = info(id)["exception"];
        return exception.is_object() ? exception.value("type", "") : "none";
    }
};

// --- kill -s ------------------------------------------------------------------

TEST_F(KillCmd, SignalOptionTakesANameWithOrWithoutSigOrANumber) {
    struct Case {
        std::vector<std::string> options;
        int exit_code;
    };
    const Case cases[] = {
        {{"-s", "9"}, 137},    {{"-s", "KILL"}, 137},    {{"-s", "SIGKILL"}, 137},
        {{"-s", "kill"}, 137}, {{"--signal", "9"}, 137}, {{"--signal=SIGKILL"}, 137},
        {{"-s", "HUP"}, 129},  {{"-sKILL"}, 137},        {{"-9"}, 137},
        {{"-KILL"}, 137},      {{"-SIGKILL"}, 137},
    };
    for (const Case& c : cases) {
        const std::string id = running_job();
        std::vector<std::string> args = {"kill"};
        args.insert(args.end(), c.options.begin(), c.options.end());
        args.push_back(id);
        expect(args, "", "", 0);
        expect({"wait", id}, "", "", c.exit_code);
    }
}

TEST_F(KillCmd, BadSignalsAreUsageErrors) {
    const std::string id = running_job();
    const std::string bad = " (a name such as TERM or USR1, or 1-64)\n";
    expect({"kill", "-s", "SIGFOO", id}, "", "gantry: kill: bad signal \"SIGFOO\"" + bad, 2);
    expect({"kill", "-s", "65", id}, "", "gantry: kill: bad signal \"65\"" + bad, 2);
    expect({"kill", "-s", "-9", id}, "", "gantry: kill: bad signal \"-9\"" + bad, 2);
    expect({"kill", "-s", "", id}, "", "gantry: kill: bad signal \"\"" + bad, 2);
    EXPECT_EQ(state(id), "RUN");
}

// --- cancel --all ---------------------------------------------------------------

TEST_F(KillCmd, CancelAllCancelsEveryActiveJobAndSaysHowMany) {
    const std::string done = submit({"true"});
    expect({"wait", done}, "", "", 0);
    const std::string running = running_job();
    const std::string held_a = held_job();
    const std::string held_b = held_job();
    expect({"cancel", "--all"}, "", "gantry: cancel: canceled 3 jobs\n", 0);
    for (const auto& id : {running, held_a, held_b})
        EXPECT_EQ(result_of(id), "cancel") << id;
    EXPECT_EQ(result_of(done), "none");
    // Nothing is left to cancel: no error.
    expect({"cancel", "--all"}, "", "gantry: cancel: matched 0 jobs\n", 0);
    expect({"cancel", "--all", "-q"}, "", "", 0);
    expect({"cancel", "--all", "--quiet"}, "", "", 0);
}

TEST_F(KillCmd, CancelAllOfOneJobSaysJob) {
    const std::string held = held_job();
    expect({"cancel", "--all", "--dry-run"}, "", "gantry: cancel: would cancel 1 job\n", 0);
    EXPECT_EQ(state(held), "SCHED");
    expect({"cancel", "--all"}, "", "gantry: cancel: canceled 1 job\n", 0);
    EXPECT_EQ(result_of(held), "cancel");
}

TEST_F(KillCmd, CancelByStates) {
    const std::string running = running_job();
    const std::string held = held_job();
    expect({"cancel", "-n", "--states=running"}, "", "gantry: cancel: would cancel 1 job\n", 0);
    expect({"cancel", "--states=pending"}, "", "gantry: cancel: canceled 1 job\n", 0);
    EXPECT_EQ(result_of(held), "cancel");
    EXPECT_EQ(state(running), "RUN");
    expect({"cancel", "-S", "SCHED,depend"}, "", "gantry: cancel: matched 0 jobs\n", 0);
    expect({"cancel", "-S", "run"}, "", "gantry: cancel: canceled 1 job\n", 0);
    EXPECT_EQ(result_of(running), "cancel");
}

TEST_F(KillCmd, CancelByUser) {
    const std::string a = held_job();
    const std::string b = held_job();
    // Another user has no jobs here: the instance lets in its owner only.
    expect({"cancel", "--user", ::getuid() == 0 ? "1" : "0"}, "",
           "gantry: cancel: matched 0 jobs\n", 0);
    expect({"cancel", "-n", "-u", user_name()}, "", "gantry: cancel: would cancel 2 jobs\n", 0);
    expect({"cancel", "-n", "-u", kUid}, "", "gantry: cancel: would cancel 2 jobs\n", 0);
    expect({"cancel", "-u", "all"}, "", "gantry: cancel: canceled 2 jobs\n", 0);
    EXPECT_EQ(result_of(a), "cancel");
    EXPECT_EQ(result_of(b), "cancel");
}

TEST_F(KillCmd, JobsAlreadyEndingAreNotCountedAgain) {
    // A job that takes its whole kill timeout to end: it stays RUN, ending.
    const std::string ready = dir_ / "ready";
    const std::string stubborn =
        submit({"sh", "-c", "trap '' TERM; touch " + ready + "; while :; do sleep 0.05; done"});
    ASSERT_TRUE(eventually([&] { return ::access(ready.c_str(), F_OK) == 0; }));
    // Its `start` is in before the cancel's exception.
    const std::vector<std::string> started = {"submit", "depend", "alloc", "start"};
    ASSERT_TRUE(eventually([&] { return event_names(info(stubborn)) == started; }));
    expect({"cancel", "--all"}, "", "gantry: cancel: canceled 1 job\n", 0);
    EXPECT_EQ(state(stubborn), "RUN");
    expect({"cancel", "--all"}, "", "gantry: cancel: matched 0 jobs\n", 0);
    EXPECT_EQ(result_of(stubborn), "cancel");
    // Canceled once: one exception.
    EXPECT_EQ(event_names(info(stubborn)),
              (std::vector<std::string>{"submit", "depend", "alloc", "start", "exception", "finish",
                                        "release", "clean"}));
}

TEST_F(KillCmd, CancelSelectionErrors) {
    const std::string held = held_job();
    expect({"cancel"}, "", "gantry: cancel: give job ids or --all (see gantry cancel --help)\n", 2);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"cancel", "--all", held},
          std::vector<std::string>{"cancel", "-S", "pending", held},
          std::vector<std::string>{"cancel", "-u", "all", held}})
        expect(args, "", "gantry: cancel: give job ids or --all, --states, --user, not both\n", 2);
    expect({"cancel", "-n", held}, "",
           "gantry: cancel: --dry-run goes with --all, --states or --user\n", 2);
    expect({"cancel", "-S", "bogus"}, "",
           "gantry: cancel: --states: unknown state \"bogus\" (new, depend, sched, run, "
           "cleanup, inactive, pending, running, active)\n",
           2);
    expect({"cancel", "-S", "inactive"}, "",
           "gantry: cancel: --states: inactive jobs cannot be canceled\n", 2);
    expect({"cancel", "-u", "no-such-user-here"}, "",
           "gantry: cancel: --user: no such user \"no-such-user-here\"\n", 2);
    EXPECT_EQ(state(held), "SCHED");
}

}  // namespace
}  // namespace gantry::test
