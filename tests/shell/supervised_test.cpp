// The shell run by a supervisor, with real tasks: shell::run runs in a child
// of the test with its supervisor_fd on a socket pair, and the test plays
// the broker on the other end, reading records and sending control
// messages. The child's stdout and stderr are a pipe that must stay empty.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shell/records.h"
#include "shell/shell.h"
#include "support/scratch.h"
#include "support/shell_jobs.h"

namespace gantry::shell {
namespace {

using test::exit_of;
using test::message;
using test::output;
using test::read_file;
using test::sh_job;
using test::started;

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using records::Record;
using Kind = records::Record::Kind;

// For failure messages: a record as its bytes.
std::string show(const std::vector<Record>& list) {
    std::string text;
    for (const Record& record : list)
        text += quote(records::encode(record), 200) + "\n";
    return text;
}

// shell::run(job) in a child process whose supervisor is the test.
class SupervisedShell {
public:
    explicit SupervisedShell(Job job) {
        int pair[2], stdio[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0 ||
            pipe2(stdio, O_CLOEXEC) != 0)
            throw std::runtime_error("socketpair");
        pid_ = fork();
        if (pid_ == 0) {
            const int null = open("/dev/null", O_RDONLY);
            dup2(null, 0);
            dup2(stdio[1], 1);
            dup2(stdio[1], 2);
            for (int fd : {null, pair[0], stdio[0], stdio[1]})
                close(fd);  // the test's ends must not stay open here
            job.supervisor_fd = pair[1];
            _exit(run(job));
        }
        close(pair[1]);
        close(stdio[1]);
        socket_ = pair[0];
        stdio_ = stdio[0];
    }
    SupervisedShell(const SupervisedShell&) = delete;
    SupervisedShell& operator=(const SupervisedShell&) = delete;
    ~SupervisedShell() {
        // Closing the socket kills the tasks; SIGKILL to the shell if it
        // does not end (it would leave its tasks behind).
        close_socket();
        if (pid_ > 0 && !wait_exit(10s)) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        if (stdio_ >= 0)
            close(stdio_);
    }

    void send(const std::string& bytes) {
        ASSERT_EQ(write(socket_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    }

    void close_socket() {
        if (socket_ >= 0)
            close(socket_);
        socket_ = -1;
    }

    // Reads records until `done` holds for those read so far, at most `timeout`.
    bool read_until(const std::function<bool(const std::vector<Record>&)>& done,
                    std::chrono::milliseconds timeout = 30s) {
        const auto deadline = Clock::now() + timeout;
        while (!done(records_)) {
            if (socket_ < 0 || at_end_)
                return false;
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left <= 0ms)
                return false;
            pollfd fds[2] = {{socket_, POLLIN, 0}, {stdio_, POLLIN, 0}};
            if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
                return false;
            if (fds[1].revents)
                read_stdio();
            if (fds[0].revents)
                read_socket();
        }
        return true;
    }

    bool read_until_kind(Kind kind) {
        return read_until([kind](const std::vector<Record>& read) {
            return std::any_of(read.begin(), read.end(),
                               [kind](const Record& record) { return record.kind == kind; });
        });
    }

    bool read_until_output(const std::string& text) {
        return read_until([this, &text](const std::vector<Record>&) {
            return output_of(Kind::kStdout, 0).find(text) != std::string::npos;
        });
    }

    // Reads every record, then the shell's exit code.
    int finish() {
        read_until([](const std::vector<Record>&) { return false; }, 60s);
        while (stdio_ >= 0 && read_stdio()) {
        }
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    // Waits for the shell to end without reading (a generous deadline, in
    // small steps); its exit code is then exit_code().
    bool wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = Clock::now() + timeout;
        while (Clock::now() < deadline) {
            int status = 0;
            const pid_t done = waitpid(pid_, &status, WNOHANG);
            if (done == pid_) {
                pid_ = -1;
                exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return true;
            }
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }
    int exit_code() const { return exit_code_; }

    const std::vector<Record>& records() const { return records_; }
    // What the shell wrote on its own stdout and stderr: nothing, supervised.
    const std::string& stdio() const { return stdio_text_; }

    // Every byte of one rank's stream, in order.
    std::string output_of(Kind kind, std::uint32_t rank) const {
        std::string bytes;
        for (const Record& record : records_)
            if (record.kind == kind && record.rank == rank)
                bytes += record.bytes;
        return bytes;
    }

    // Sleeps after each read of the socket: a slow broker.
    void read_slowly(std::chrono::microseconds pause) { pause_ = pause; }

private:
    void read_socket() {
        char buffer[4096];
        const ssize_t n = read(socket_, buffer, pause_ > 0us ? 4096 : sizeof buffer);
        if (n <= 0) {
            at_end_ = n == 0 || errno != EINTR;
            return;
        }
        reader_.append({buffer, static_cast<std::size_t>(n)});
        while (true) {
            auto next = reader_.next();
            if (!next) {
                ADD_FAILURE() << next.error().str();
                at_end_ = true;
                return;
            }
            if (!*next)
                break;
            records_.push_back(std::move(**next));
        }
        if (pause_ > 0us)
            std::this_thread::sleep_for(pause_);
    }

    // False at end of file.
    bool read_stdio() {
        char buffer[4096];
        const ssize_t n = read(stdio_, buffer, sizeof buffer);
        if (n > 0) {
            stdio_text_.append(buffer, static_cast<std::size_t>(n));
            return true;
        }
        if (n < 0 && errno == EINTR)
            return true;
        close(stdio_);
        stdio_ = -1;
        return false;
    }

    pid_t pid_ = -1;
    int socket_ = -1;
    int stdio_ = -1;
    bool at_end_ = false;
    int exit_code_ = -1;
    records::Reader reader_;
    std::vector<Record> records_;
    std::string stdio_text_;
    std::chrono::microseconds pause_{0};
};

std::vector<Record> of_rank(const std::vector<Record>& list, std::uint32_t rank) {
    std::vector<Record> found;
    for (const Record& record : list)
        if (record.kind != Kind::kStarted && record.kind != Kind::kMessage && record.rank == rank)
            found.push_back(record);
    return found;
}

std::vector<Record> messages_in(const std::vector<Record>& list) {
    std::vector<Record> found;
    for (const Record& record : list)
        if (record.kind == Kind::kMessage)
            found.push_back(record);
    return found;
}

const Record* exit_record(const std::vector<Record>& list, std::uint32_t rank) {
    for (const Record& record : list)
        if (record.kind == Kind::kExit && record.rank == rank)
            return &record;
    return nullptr;
}

// `size` bytes of every value, newlines among them, none repeating soon.
std::string pattern(std::size_t size) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<char>((i * 7 + i / 251) % 256);
    return bytes;
}

// ---- output and ends ----

TEST(Supervised, TwoTasksOutputStartedAndExits) {
    const std::string script = "echo out-$RANK; echo err-$RANK >&2";
    SupervisedShell shell(sh_job({script, script}));
    EXPECT_EQ(shell.finish(), 0);
    const std::vector<Record>& read = shell.records();
    ASSERT_FALSE(read.empty());
    EXPECT_EQ(read.front(), started()) << show(read);
    EXPECT_EQ(read.size(), 7u) << show(read);
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
        const std::vector<Record> mine = of_rank(read, rank);
        ASSERT_EQ(mine.size(), 3u) << show(read);
        // Output first, in any order between the streams, then the end.
        const std::vector<Record> written = {
            output(Kind::kStdout, rank, "out-" + std::to_string(rank) + "\n"),
            output(Kind::kStderr, rank, "err-" + std::to_string(rank) + "\n")};
        EXPECT_TRUE(
            std::is_permutation(mine.begin(), mine.begin() + 2, written.begin(), written.end()))
            << show(read);
        EXPECT_EQ(mine[2], exit_of(rank, 0));
    }
    EXPECT_EQ(messages_in(read), std::vector<Record>());
    EXPECT_EQ(shell.stdio(), "");
}

TEST(Supervised, LabelIsLeftToTheFrontEnds) {
    Job job = sh_job({"echo hello; echo oops >&2", "echo hello"});
    job.output.label = true;
    SupervisedShell shell(job);
    EXPECT_EQ(shell.finish(), 0);
    EXPECT_EQ(shell.output_of(Kind::kStdout, 0), "hello\n");
    EXPECT_EQ(shell.output_of(Kind::kStderr, 0), "oops\n");
    EXPECT_EQ(shell.output_of(Kind::kStdout, 1), "hello\n");
    EXPECT_EQ(shell.stdio(), "");
}

TEST(Supervised, FailingTaskGivesItsStatusThenTheMessage) {
    SupervisedShell shell(sh_job({"exit 3"}));
    EXPECT_EQ(shell.finish(), 3);
    EXPECT_EQ(shell.records(),
              (std::vector<Record>{started(), exit_of(0, 3 << 8),
                                   message("gantry: task 0 (node0) exited with exit code 3\n")}))
        << show(shell.records());
    EXPECT_EQ(shell.stdio(), "");
}

TEST(Supervised, CommandNotFoundIsAMessageAndNothingStarts) {
    Job job = sh_job({"true"});
    job.tasks[0].argv = {"gantry-no-such-command"};
    job.app_commands = {"gantry-no-such-command"};
    SupervisedShell shell(job);
    EXPECT_EQ(shell.finish(), 127);
    EXPECT_EQ(shell.records(),
              std::vector<Record>{message("gantry: app 0 (gantry-no-such-command): "
                                          "gantry-no-such-command: No such file or directory\n")})
        << show(shell.records());
    EXPECT_EQ(shell.stdio(), "");
}

TEST(Supervised, OutputFileIsWrittenNotSent) {
    const test::ScratchDir dir;
    Job job = sh_job({"echo o; echo e >&2", "echo o"});
    job.output.output_template = dir / "out-{{taskid}}";
    job.output.label = true;  // files are labelled as ever
    SupervisedShell shell(job);
    EXPECT_EQ(shell.finish(), 0);
    EXPECT_EQ(shell.records().size(), 3u) << show(shell.records());  // started, two exits
    EXPECT_EQ(read_file(dir / "out-0"), "0: o\n0: e\n");
    EXPECT_EQ(read_file(dir / "out-1"), "1: o\n");
}

TEST(Supervised, ErrorFileAloneLeavesStdoutToRecords) {
    const test::ScratchDir dir;
    Job job = sh_job({"echo o; echo e >&2"});
    job.output.error_template = dir / "err";
    SupervisedShell shell(job);
    EXPECT_EQ(shell.finish(), 0);
    EXPECT_EQ(shell.output_of(Kind::kStdout, 0), "o\n");
    EXPECT_EQ(shell.output_of(Kind::kStderr, 0), "");
    EXPECT_EQ(read_file(dir / "err"), "e\n");
}

TEST(Supervised, UnbufferedBytesGoAsTheyCome) {
    Job job = sh_job({"printf a; sleep 0.3; printf 'b\\n'"});
    job.output.unbuffered = true;
    SupervisedShell shell(job);
    EXPECT_EQ(shell.finish(), 0);
    std::vector<std::string> pieces;
    for (const Record& record : shell.records())
        if (record.kind == Kind::kStdout)
            pieces.push_back(record.bytes);
    EXPECT_EQ(pieces, (std::vector<std::string>{"a", "b\n"}));
}

TEST(Supervised, BufferedPiecesMakeOneLine) {
    SupervisedShell shell(sh_job({"printf a; sleep 0.3; printf 'b\\n'"}));
    EXPECT_EQ(shell.finish(), 0);
    EXPECT_EQ(of_rank(shell.records(), 0),
              (std::vector<Record>{output(Kind::kStdout, 0, "ab\n"), exit_of(0, 0)}));
}

TEST(Supervised, OneMegabyteArrivesExactAndInOrder) {
    const test::ScratchDir dir;
    const std::string bytes = pattern(1000000);
    std::ofstream(dir / "data", std::ios::binary) << bytes;
    SupervisedShell shell(sh_job({"cat " + dir / "data"}));
    EXPECT_EQ(shell.finish(), 0);
    const std::string got = shell.output_of(Kind::kStdout, 0);
    EXPECT_EQ(got.size(), bytes.size());
    EXPECT_TRUE(got == bytes);
    EXPECT_EQ(shell.stdio(), "");
}

TEST(Supervised, SlowBrokerLosesNothing) {
    // More than the socket's queue holds: the task waits for the broker.
    const test::ScratchDir dir;
    const std::string bytes = pattern(3 << 20);
    std::ofstream(dir / "data", std::ios::binary) << bytes;
    SupervisedShell shell(sh_job({"cat " + dir / "data", "cat " + dir / "data" + " >&2"}));
    shell.read_slowly(50us);
    EXPECT_EQ(shell.finish(), 0);
    EXPECT_TRUE(shell.output_of(Kind::kStdout, 0) == bytes);
    EXPECT_TRUE(shell.output_of(Kind::kStderr, 1) == bytes);
}

// ---- control messages ----

TEST(Supervised, SignalReachesEveryTask) {
    SupervisedShell shell(sh_job({"sleep 1000", "sleep 1000"}));
    ASSERT_TRUE(shell.read_until_kind(Kind::kStarted));
    shell.send("signal 15\n");
    EXPECT_EQ(shell.finish(), 128 + SIGTERM);
    for (std::uint32_t rank = 0; rank < 2; ++rank) {
        const Record* end = exit_record(shell.records(), rank);
        ASSERT_NE(end, nullptr) << show(shell.records());
        EXPECT_TRUE(WIFSIGNALED(end->wait_status));
        EXPECT_EQ(WTERMSIG(end->wait_status), SIGTERM);
    }
    const std::vector<Record> said = messages_in(shell.records());
    ASSERT_EQ(said.size(), 1u) << show(shell.records());
    EXPECT_TRUE(said[0].bytes.ends_with(" (node0) killed by signal 15 (Terminated)\n"))
        << said[0].bytes;
    EXPECT_EQ(shell.stdio(), "");
}

TEST(Supervised, SignalKillIsSentToo) {
    SupervisedShell shell(sh_job({"trap '' TERM; sleep 1000"}));
    ASSERT_TRUE(shell.read_until_kind(Kind::kStarted));
    shell.send("signal 9\n");
    EXPECT_EQ(shell.finish(), 128 + SIGKILL);
    const Record* end = exit_record(shell.records(), 0);
    ASSERT_NE(end, nullptr);
    EXPECT_EQ(WTERMSIG(end->wait_status), SIGKILL);
}

TEST(Supervised, TerminateKillsWhatIgnoresTerm) {
    Job job = sh_job({"trap '' TERM; echo ready; sleep 1000"});
    job.limits.kill_timeout = 200ms;
    SupervisedShell shell(job);
    ASSERT_TRUE(shell.read_until_output("ready\n"));
    shell.send("terminate\n");
    EXPECT_EQ(shell.finish(), 128 + SIGKILL);
    const Record* end = exit_record(shell.records(), 0);
    ASSERT_NE(end, nullptr) << show(shell.records());
    EXPECT_TRUE(WIFSIGNALED(end->wait_status));
    EXPECT_EQ(WTERMSIG(end->wait_status), SIGKILL);
    EXPECT_EQ(messages_in(shell.records()),
              std::vector<Record>{message("gantry: task 0 (node0) killed by signal 9 (Killed)\n")});
}

TEST(Supervised, MalformedControlKillsTheJob) {
    SupervisedShell shell(sh_job({"sleep 1000"}));
    ASSERT_TRUE(shell.read_until_kind(Kind::kStarted));
    shell.send("hello\n");
    EXPECT_EQ(shell.finish(), 128 + SIGKILL);
    EXPECT_EQ(shell.records(),
              (std::vector<Record>{
                  started(),
                  message("gantry: from the instance: records: bad control message \"hello\" at "
                          "byte 0: killing the job\n"),
                  exit_of(0, SIGKILL),
                  message("gantry: task 0 (node0) killed by signal 9 (Killed)\n"),
              }))
        << show(shell.records());
}

TEST(Supervised, ClosedSocketKillsTheTasks) {
    SupervisedShell shell(sh_job({"echo $$; exec sleep 1000"}));
    ASSERT_TRUE(shell.read_until_output("\n"));
    const pid_t task = std::atoi(shell.output_of(Kind::kStdout, 0).c_str());
    ASSERT_GT(task, 0);
    ASSERT_EQ(kill(task, 0), 0);
    shell.close_socket();
    ASSERT_TRUE(shell.wait_exit(60s));
    EXPECT_EQ(shell.exit_code(), 128 + SIGKILL);
    // The shell reaps its tasks before it returns: this one is gone.
    EXPECT_EQ(kill(task, 0), -1);
    EXPECT_EQ(errno, ESRCH);
}

TEST(Supervised, ClosedSocketBeforeTheTasksStartStillKillsThem) {
    SupervisedShell shell(sh_job({"sleep 1000", "sleep 1000"}));
    shell.close_socket();
    ASSERT_TRUE(shell.wait_exit(60s));
    EXPECT_EQ(shell.exit_code(), 128 + SIGKILL);
}

}  // namespace
}  // namespace gantry::shell
