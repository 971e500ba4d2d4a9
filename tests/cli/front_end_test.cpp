// What becomes of an instance's jobs when their front ends are signalled,
// killed or lose their output, or when the instance shuts down under them;
// scripts and resources refused before they can fail later. Real gantry
// processes, real signals and pipes, against a real `gantry start --daemon`.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/instance.h"
#include "support/machine.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

using Json = nlohmann::json;

const std::string kUid = std::to_string(::getuid());
const std::string kFrontEndGone =
    "its front end (gantry run, gantry alloc) is gone: an interactive job does not start "
    "without it";
constexpr int kExitInstanceGone = 69;

std::string signal_name(int signal) {
    return std::string("SIG") + ::sigabbrev_np(signal);
}

std::vector<std::string> joined(std::vector<std::string> first,
                                const std::vector<std::string>& second) {
    first.insert(first.end(), second.begin(), second.end());
    return first;
}

// Whether process `pid` holds a socket: a front end that has one has
// connected to the instance.
bool holds_a_socket(pid_t pid) {
    const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    std::error_code failure;
    for (const auto& entry : std::filesystem::directory_iterator(fds, failure))
        if (std::filesystem::read_symlink(entry.path(), failure).string().starts_with("socket:"))
            return true;
    return false;
}

class FrontEnds : public InstanceTest {
protected:
    // Once `front` follows job `id`, still pending, with its handler for
    // `signal` in place.
    void await_pending(const Background& front, const std::string& id, int signal) {
        ASSERT_TRUE(eventually([&] { return front.catches(signal); }));
        ASSERT_EQ(state(id), "SCHED");
    }
    // A shell command line that runs `gantry ARGS` inside the instance.
    std::string shell_command(const std::vector<std::string>& args) const {
        std::string line;
        for (const std::string& word : command(args))
            line += (line.empty() ? "'" : " '") + word + "'";
        return line;
    }
};

// --- Signals while the job is pending ------------------------------------------

TEST_F(FrontEnds, RunAndAllocCancelTheirPendingJobOnSigintSigtermAndSighup) {
    int jobs = 0;
    for (const std::string front_end : {"run", "alloc"}) {
        for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
            SCOPED_TRACE(front_end + " " + signal_name(signal));
            const std::string id = std::to_string(++jobs);
            Background front(command({front_end, "--urgency", "hold", "true"}), dir_);
            await_pending(front, id, signal);
            front.signal(signal);
            const auto result = front.finish();
            EXPECT_EQ(result.err, "gantry: job " + id + ": " + signal_name(signal) +
                                      ": canceling the pending job\n"
                                      "gantry: job " +
                                      id + ": exception: cancel: canceled by " + kUid + "\n");
            EXPECT_EQ(result.exit_code, 128 + signal);
            EXPECT_EQ(state(id), "INACTIVE");
        }
    }
}

TEST_F(FrontEnds, AttachDetachesFromAPendingJobOnASignalAndLeavesItQueued) {
    const std::string id = submit({"--urgency", "hold", "true"});
    Background attach(command({"attach", id}), dir_);
    await_pending(attach, id, SIGTERM);
    attach.signal(SIGTERM);
    const auto result = attach.finish();
    const std::string detached = "gantry: job " + id +
                                 ": SIGTERM: detached; the job stays queued (gantry attach " + id +
                                 " follows it again)\n";
    EXPECT_EQ(result.err, detached);
    EXPECT_EQ(result.exit_code, 128 + SIGTERM);
    EXPECT_EQ(state(id), "SCHED");
    // timeout(1) ends a waiting attach with its SIGTERM.
    const auto timed = run_program(joined({"timeout", "3"}, command({"attach", id})));
    EXPECT_EQ(timed.err, detached);
    EXPECT_EQ(timed.exit_code, 124);
    EXPECT_EQ(state(id), "SCHED");
}

// --- Front ends that are killed --------------------------------------------------

TEST_F(FrontEnds, AJobWhoseRunOrAllocWasKilledWhilePendingNeverStarts) {
    int jobs = 0;
    for (const std::string front_end : {"run", "alloc"}) {
        SCOPED_TRACE(front_end);
        const std::string id = std::to_string(++jobs);
        const std::string marker = dir_ / ("started-" + id);
        Background front(command({front_end, "--urgency", "hold", "touch", marker}), dir_);
        await_pending(front, id, SIGTERM);
        front.signal(SIGKILL);
        ASSERT_TRUE(eventually([&] { return state(id) == "INACTIVE"; })) << state(id);
        const Json job = info(id);
        EXPECT_EQ(job["exception"], (Json{{"type", "cancel"}, {"note", kFrontEndGone}}));
        EXPECT_EQ(job["exit_code"], nullptr);
        EXPECT_FALSE(exists(marker));
    }
    // A job submitted without a front end is not bound to one.
    const std::string queued = submit({"--urgency", "hold", "true"});
    EXPECT_EQ(state(queued), "SCHED");
}

TEST_F(FrontEnds, AnInteractiveJobWhoseFrontEndIsKilledWhileRunningGetsTheEndOfItsStdin) {
    // A stdin that stays open as long as this test holds the FIFO.
    const std::string fifo = dir_ / "stdin";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    Background alloc(command({"alloc", "sh", "-c", "cat; echo stdin ended"}), dir_, fifo);
    ASSERT_TRUE(eventually([&] { return state("1") == "RUN"; })) << state("1");
    ASSERT_TRUE(eventually([&] { return alloc.catches(SIGTERM); }));
    alloc.signal(SIGKILL);
    // Like a shell whose terminal hung up, it ends; its output is kept.
    ASSERT_TRUE(eventually([&] { return state("1") == "INACTIVE"; })) << state("1");
    EXPECT_EQ(info("1")["exit_code"], 0);
    expect({"attach", "1"}, "stdin ended\n", "", 0);
    ::close(writer);
}

TEST_F(FrontEnds, AnInteractiveJobPendingWhenTheInstanceShutDownIsCanceledAtItsRestart) {
    Background run(command({"run", "--urgency", "hold", "true"}), dir_);
    await_pending(run, "1", SIGTERM);
    expect({"shutdown"}, "", "", 0);
    const auto result = run.finish();
    EXPECT_EQ(result.err,
              "gantry: job 1: the instance shut down before the job ended; a pending job waits "
              "again when the instance restarts on its state directory\n");
    EXPECT_EQ(result.exit_code, kExitInstanceGone);

    DaemonInstance again(dir_ / "state");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.job_state("1"), "INACTIVE");
    EXPECT_EQ(again.job("1")["exception"], (Json{{"type", "cancel"}, {"note", kFrontEndGone}}));
}

// --- The instance shuts down under a waiting front end ---------------------------

TEST_F(FrontEnds, AttachWaitAndEventlogExit69WhenTheInstanceShutsDown) {
    const std::string id = submit({"--urgency", "hold", "true"});
    Background attach(command({"attach", id}), dir_);
    await_pending(attach, id, SIGTERM);
    Background wait(command({"wait", id}), dir_);
    Background eventlog(command({"eventlog", "--follow", id}), dir_);
    ASSERT_TRUE(eventually([&] { return holds_a_socket(wait.pid()); }));
    ASSERT_TRUE(eventually([&] { return holds_a_socket(eventlog.pid()); }));
    expect({"shutdown"}, "", "", 0);
    const std::string shut_down = "gantry: job " + id +
                                  ": the instance shut down before the job ended; a pending job "
                                  "waits again when the instance restarts on its state directory\n";
    const auto attached = attach.finish();
    EXPECT_EQ(attached.err, shut_down);
    EXPECT_EQ(attached.exit_code, kExitInstanceGone);
    // `wait` may not have been read before the broker stopped reading: then
    // its connection is closed unanswered. The same exit code says both.
    const auto waited = wait.finish();
    EXPECT_TRUE(waited.err == shut_down ||
                waited.err == "gantry: lost the connection to the instance at " + uri_ + "\n")
        << waited.err;
    EXPECT_EQ(waited.exit_code, kExitInstanceGone);
    const auto followed = eventlog.finish();
    EXPECT_TRUE(followed.err == shut_down ||
                followed.err == "gantry: lost the connection to the instance at " + uri_ + "\n")
        << followed.err;
    EXPECT_EQ(followed.exit_code, kExitInstanceGone);
}

// --- A closed standard output ----------------------------------------------------

TEST_F(FrontEnds, RunAndAttachWhoseOutputIsClosedEndTheJobWithSigpipe) {
    const auto run = run_program({"sh", "-c", shell_command({"run", "yes"}) + " | head -1"});
    EXPECT_EQ(run.out, "y\n") << run.err;
    EXPECT_EQ(run.exit_code, 0);
    ASSERT_TRUE(eventually([&] { return state("1") == "INACTIVE"; })) << state("1");
    EXPECT_EQ(info("1")["exit_code"], 128 + SIGPIPE);

    const std::string id = submit({"yes"});
    const auto attach = run_program({"sh", "-c", shell_command({"attach", id}) + " | head -1"});
    EXPECT_EQ(attach.out, "y\n") << attach.err;
    ASSERT_TRUE(eventually([&] { return state(id) == "INACTIVE"; })) << state(id);
    EXPECT_EQ(info(id)["exit_code"], 128 + SIGPIPE);
}

TEST_F(FrontEnds, AJobThatIgnoresSigpipeIsCanceledAfterItsKillTimeout) {
    const auto run = run_program(
        {"sh", "-c",
         shell_command({"run", "--kill-timeout", "0.2s", "sh", "-c", "trap \"\" PIPE; yes"}) +
             " | head -1"});
    EXPECT_EQ(run.out, "y\n");
    ASSERT_TRUE(eventually([&] { return state("1") == "INACTIVE"; })) << state("1");
    const Json job = info("1");
    EXPECT_EQ(job["exception"]["type"], "cancel");
    EXPECT_EQ(job["exit_code"], 128 + SIGTERM);
}

// --- Refused before they can fail later -----------------------------------------

TEST_F(FrontEnds, BatchRefusesAScriptThatCannotRun) {
    expect({"batch", "nosuchscript"}, "",
           "gantry: batch: nosuchscript: No such file or directory\n", 2);
    const std::string plain = dir_ / "plain.sh";
    std::ofstream(plain) << "echo never\n";
    expect({"batch", plain}, "", "gantry: batch: " + plain + ": Permission denied\n", 2);
    EXPECT_EQ(info("1"), Json::object());  // nothing was submitted
    ::chmod(plain.c_str(), 0755);
    expect({"batch", plain}, "1\n", "", 0);
    expect({"wait", "1"}, "", "", 0);
    expect({"attach", "1"}, "never\n", "", 0);
}

TEST_F(FrontEnds, SubmitInputFeedsStdinFromAFileWithoutAFrontEnd) {
    const std::string input = dir_ / "input.txt";
    std::ofstream(input) << "line one\nline two\n";
    const std::string id = submit({"--input", input, "cat"});
    expect({"wait", id}, "", "", 0);
    expect({"attach", id}, "line one\nline two\n", "", 0);
    const std::string short_form = submit({"-i", input, "wc", "-l"});
    expect({"wait", short_form}, "", "", 0);
    expect({"attach", short_form}, "2\n", "", 0);
}

// --- Ranks without a broker --------------------------------------------------------

class RanksWithoutABroker : public testing::Test {
protected:
    void SetUp() override {
        const auto encoded = run_gantry(
            {"R", "encode", "--ranks", "0-1", "--cores", "0-1", "--hosts", host_name() + ",n1"});
        ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
        std::ofstream(R_) << encoded.out;
    }
    ScratchDir dir_;
    const std::string R_ = dir_ / "R.json";
};

TEST_F(RanksWithoutABroker, StartRefusesThemUnlessSimulated) {
    expect_gantry({"start", "--resources", R_, "true"}, "", "",
                  "gantry: start: --resources " + R_ +
                      ": R names rank 1, where no broker runs (this instance has one broker, rank "
                      "0); --simulate-ranks accepts them for scheduling only\n",
                  2);
}

TEST_F(RanksWithoutABroker, AJobGivenOneFailsAtOnceNamingIt) {
    // Not even rank 0's task runs: the job fails before any shell starts.
    const std::string run =
        gantry_binary() + " run -N 2 -n 2 --label-io sh -c 'echo $GANTRY_TASK_RANK'; echo $?";
    const auto result =
        run_gantry({"start", "--resources", R_, "--simulate-ranks", "sh", "-c", run});
    EXPECT_EQ(result.err,
              "gantry: job 1: exception: exec: job 1: R names rank 1, where no broker runs (this "
              "instance has one broker, rank 0)\n");
    EXPECT_EQ(result.out, "1\n");
    EXPECT_EQ(result.exit_code, 0);
}

}  // namespace
}  // namespace gantry::test
