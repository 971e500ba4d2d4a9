// The shell with real tasks (sh and coreutils), real pipes and real signals:
// shell::run runs in a child of the test with its stdin, stdout and stderr
// on pipes the test reads, and its exit code is the child's.
#include "shell/shell.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pmi/server.h"
#include "support/leftovers.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"
#include "support/shell_jobs.h"

namespace gantry::shell {
namespace {

using test::read_file;
using test::sh_job;

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Outcome {
    int exit_code = -1;
    std::string out;
    std::string err;
    std::chrono::milliseconds wall{0};
};

// shell::run(job) in a child process. The test reads the child's stdout
// and stderr as they come (optionally waiting for a text, to signal the
// shell at the right moment) and feeds its stdin.
class ShellProcess {
public:
    // `body` runs in the child with the job and returns its exit code.
    using Body = std::function<int(const Job&)>;

    // Where the shell's stdout goes: a pipe, or a socket.
    enum class Stdout { kPipe, kSocket };

    explicit ShellProcess(const Job& job, std::optional<std::string> input = std::nullopt,
                          const Body& body = run, Stdout kind = Stdout::kPipe)
        : input_(std::move(input)), started_(Clock::now()) {
        int in[2], out[2], err[2];
        const bool made =
            pipe2(in, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0 &&
            (kind == Stdout::kPipe ? pipe2(out, O_CLOEXEC)
                                   : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out)) == 0;
        if (!made)
            throw std::runtime_error("pipe2");
        pid_ = fork();
        if (pid_ == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            dup2(err[1], 2);
            for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
                close(fd);  // the test's ends must not keep the pipes open
            _exit(body(job));
        }
        close(in[0]);
        close(out[1]);
        close(err[1]);
        in_ = in[1];
        out_ = out[0];
        err_ = err[0];
        fcntl(in_, F_SETFL, O_NONBLOCK);
        if (!input_) {
            close(in_);
            in_ = -1;
        }
    }
    ShellProcess(const ShellProcess&) = delete;
    ShellProcess& operator=(const ShellProcess&) = delete;
    ~ShellProcess() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        for (int fd : {in_, out_, err_})
            if (fd >= 0)
                close(fd);
    }

    // Reads until `text` is in stdout (or stderr), at most `timeout`.
    bool wait_for_out(const std::string& text, std::chrono::milliseconds timeout = 10s) {
        return pump_until([&] { return outcome_.out.find(text) != std::string::npos; }, timeout);
    }
    bool wait_for_err(const std::string& text, std::chrono::milliseconds timeout = 10s) {
        return pump_until([&] { return outcome_.err.find(text) != std::string::npos; }, timeout);
    }

    void signal(int signal) { kill(pid_, signal); }
    pid_t pid() const { return pid_; }

    // The test stops reading the shell's stdout (or stderr) and closes its
    // end: the shell's next write there fails with EPIPE.
    void close_stdout() { close_reader(out_); }
    void close_stderr() { close_reader(err_); }

    // Waits until a child of the shell runs `command` (its name in
    // /proc/PID/stat), so that a signal sent now finds it running.
    bool wait_for_task_command(const std::string& command) {
        const std::string wanted = "(" + command + ")";
        const auto deadline = Clock::now() + 10s;
        while (Clock::now() < deadline) {
            for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
                std::ifstream stat(entry.path() / "stat");
                std::string pid, name, state;
                long parent = 0;
                if (stat >> pid >> name >> state >> parent && parent == pid_ && name == wanted)
                    return true;
            }
            std::this_thread::sleep_for(5ms);
        }
        return false;
    }

    // Sleeps this long after each read of stdout: a slow reader.
    void read_slowly(std::chrono::microseconds pause) { pause_ = pause; }

    // Reads everything, then the exit code.
    Outcome finish() {
        pump_until([] { return false; }, 60s);
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        outcome_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        outcome_.wall =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
        return outcome_;
    }

private:
    static void close_reader(int& fd) {
        if (fd >= 0)
            close(fd);
        fd = -1;
    }

    template <class Done>
    bool pump_until(Done done, std::chrono::milliseconds timeout) {
        const auto deadline = Clock::now() + timeout;
        while (!done()) {
            if (out_ < 0 && err_ < 0)
                return false;
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left <= 0ms)
                return false;
            pollfd fds[3] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}, {in_, POLLOUT, 0}};
            if (poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR)
                return false;
            char buffer[65536];
            for (int i = 0; i < 2; ++i) {
                int& fd = i == 0 ? out_ : err_;
                if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                const ssize_t n = read(fd, buffer, sizeof buffer);
                if (n > 0) {
                    (i == 0 ? outcome_.out : outcome_.err).append(buffer, n);
                    if (i == 0 && pause_ > 0us)
                        std::this_thread::sleep_for(pause_);
                } else if (n == 0 || errno != EINTR) {
                    close(fd);
                    fd = -1;
                }
            }
            if (in_ >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
                const ssize_t n = write(in_, input_->data() + written_, input_->size() - written_);
                if (n > 0)
                    written_ += static_cast<std::size_t>(n);
                if ((n < 0 && errno != EAGAIN && errno != EINTR) || written_ == input_->size()) {
                    close(in_);
                    in_ = -1;
                }
            }
        }
        return true;
    }

    std::optional<std::string> input_;
    std::size_t written_ = 0;
    pid_t pid_ = -1;
    int in_ = -1;
    int out_ = -1;
    int err_ = -1;
    std::chrono::microseconds pause_{0};
    Outcome outcome_;
    Clock::time_point started_;
};

Outcome run_job(const Job& job, std::optional<std::string> input = std::nullopt) {
    ShellProcess shell(job, std::move(input));
    return shell.finish();
}

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path, std::ios::binary) << text;
    chmod(path.c_str(), mode);
}

// ---- exit codes ----

TEST(ShellExit, EveryTaskExitsZero) {
    const Outcome outcome = run_job(sh_job({"true", "true", "exit 0", "true"}));
    EXPECT_EQ(outcome.out, "");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellExit, OneTaskExitsFive) {
    const Outcome outcome = run_job(sh_job({"true", "true", "exit 5", "true"}));
    EXPECT_EQ(outcome.out, "");
    EXPECT_EQ(outcome.err, "gantry: task 2 (node0) exited with exit code 5\n");
    EXPECT_EQ(outcome.exit_code, 5);
}

TEST(ShellExit, FirstFailureInTimeOrderWins) {
    // Rank 1 dies at once; rank 0 fails later and must not hide it.
    const Outcome outcome = run_job(sh_job({"sleep 0.3; exit 3", "kill -SEGV $$"}));
    EXPECT_EQ(outcome.err, "gantry: task 1 (node0) killed by signal 11 (Segmentation fault)\n");
    EXPECT_EQ(outcome.exit_code, 139);
}

TEST(ShellExit, FailingTaskDoesNotStopOthersByDefault) {
    const Outcome outcome = run_job(sh_job({"exit 3", "sleep 0.2; echo done"}));
    EXPECT_EQ(outcome.out, "done\n");
    EXPECT_EQ(outcome.err, "gantry: task 0 (node0) exited with exit code 3\n");
    EXPECT_EQ(outcome.exit_code, 3);
}

TEST(ShellExit, KillOnBadExitEndsSleepingPeer) {
    Job job = sh_job({"exit 3", "sleep 30"});
    job.limits.kill_on_bad_exit = true;
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err, "gantry: task 0 (node0) exited with exit code 3\n");
    EXPECT_EQ(outcome.exit_code, 3);
    EXPECT_LT(outcome.wall, 5s);
}

// Two apps whose commands cannot run, and a third whose task would leave a
// mark if anything started.
TEST(ShellExit, CommandsThatCannotRunStopEverythingOncePerApp) {
    const test::ScratchDir dir;
    write_file(dir / "c", "#!/bin/sh\n", 0644);
    Job job = sh_job({"touch started", "true"});
    job.tasks[0].cwd = dir.path();
    job.tasks[1].app = 1;
    job.tasks[1].argv = {"./b"};
    job.tasks.push_back(job.tasks[1]);
    job.tasks.back().rank = 2;
    job.tasks.push_back(job.tasks[1]);
    job.tasks.back().rank = 3;
    job.tasks.back().app = 2;
    job.tasks.back().argv = {"./c", "x"};
    for (Task& task : job.tasks)
        task.cwd = dir.path();
    job.app_commands = {"sh -c touch started", "./b", "./c x"};
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out, "");
    EXPECT_EQ(outcome.err,
              "gantry: app 1 (./b): ./b: No such file or directory\n"
              "gantry: app 2 (./c x): ./c: Permission denied\n");
    EXPECT_EQ(outcome.exit_code, 127);
    EXPECT_FALSE(std::filesystem::exists(dir / "started"));
}

TEST(ShellExit, CommandNotExecutableIs126) {
    const test::ScratchDir dir;
    write_file(dir / "c", "#!/bin/sh\n", 0644);
    Job job = sh_job({"true"});
    job.tasks[0].argv = {dir / "c"};
    job.app_commands = {"c"};
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err, "gantry: app 0 (c): " + (dir / "c") + ": Permission denied\n");
    EXPECT_EQ(outcome.exit_code, 126);
}

TEST(ShellExit, CommandSearchedInTheTasksPath) {
    const test::ScratchDir dir;
    write_file(dir / "hello", "#!/bin/sh\necho hello from $0\n", 0755);
    Job job = sh_job({"true"});
    job.tasks[0].argv = {"hello"};
    job.tasks[0].env = {"PATH=/nonexistent:" + dir.path()};
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out, "hello from " + (dir / "hello") + "\n");
    EXPECT_EQ(outcome.exit_code, 0);

    job.tasks[0].env = {"PATH=/nonexistent"};
    const Outcome missing = run_job(job);
    EXPECT_EQ(missing.err, "gantry: app 0 (sh): hello: No such file or directory\n");
    EXPECT_EQ(missing.exit_code, 127);
}

// Found and executable, but execve refuses it: reported as the start of
// the job fails, after the tasks before it were started and are killed.
TEST(ShellExit, ExecFailureEndsTheJob) {
    const test::ScratchDir dir;
    write_file(dir / "bad",
               std::string("\x7f"
                           "ELF garbage",
                           12),
               0755);
    Job job = sh_job({"sleep 30", "true"});
    job.tasks[1].argv = {dir / "bad"};
    job.tasks[1].app = 1;
    job.app_commands = {"sleep 30", "bad"};
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err, "gantry: app 1 (bad): " + (dir / "bad") + ": Exec format error\n");
    EXPECT_EQ(outcome.exit_code, 126);
    EXPECT_LT(outcome.wall, 5s);
}

TEST(ShellExit, MissingDirectoryEndsTheJob) {
    Job job = sh_job({"true"});
    job.tasks[0].cwd = "/nonexistent/dir";
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err,
              "gantry: task 0 (node0): cannot change directory to \"/nonexistent/dir\": No such "
              "file or directory\n");
    EXPECT_EQ(outcome.exit_code, 1);
}

// ---- what a task starts with ----

std::string own_cpu_list() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("Cpus_allowed_list:"))
            return line + "\n";
    return {};
}

TEST(ShellTask, BoundToItsCpusBeforeItStarts) {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    Job job = sh_job({"grep Cpus_allowed_list /proc/self/status"});
    EXPECT_EQ(run_job(job).out, own_cpu_list()) << "unbound: the shell's own cpus";
    for (IdSet::Id cpu : {0u, 1u}) {
        if (cpu >= cpus) {
            GTEST_SKIP() << "no cpu " << cpu;
        }
        job.tasks[0].cpus_os = IdSet{cpu};
        EXPECT_EQ(run_job(job).out, "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
    }
}

TEST(ShellTask, OnlyStdioAndPmiDescriptors) {
    // A descriptor the shell's process leaves open across exec must not leak.
    const int stray = open("/dev/null", O_RDONLY);
    ASSERT_GE(stray, 0);
    // ls's own directory descriptor is the 4.
    const Outcome outcome = run_job(sh_job({"exec ls /proc/self/fd"}));
    close(stray);
    EXPECT_EQ(outcome.out, "0\n1\n2\n3\n4\n");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellTask, PmiFdIsThree) {
    Job job = sh_job({"echo $PMI_FD; readlink /proc/self/fd/3 | cut -d: -f1"});
    job.tasks[0].env.push_back("PMI_FD=9");
    EXPECT_EQ(run_job(job).out, "3\nsocket\n");
}

TEST(ShellTask, OwnProcessGroup) {
    const Outcome outcome = run_job(sh_job({"ps -o pid= -o pgid= -p $$"}));
    std::istringstream fields(outcome.out);
    long pid = 0, pgid = 0;
    fields >> pid >> pgid;
    EXPECT_GT(pid, 0);
    EXPECT_EQ(pid, pgid);
}

// The shell raises its own soft limit of open files for its pipes; its
// tasks get the one it started with.
TEST(ShellTask, DirectoryUmaskAndLimits) {
    const test::ScratchDir dir;
    Job job = sh_job({"pwd; umask; ulimit -n; ulimit -S -c"});
    job.tasks[0].cwd = dir.path();
    job.umask = 027;
    job.soft_limits = {{RLIMIT_CORE, 0}};
    const auto lowered_nofile = [](const Job& job) {
        rlimit nofile{};
        getrlimit(RLIMIT_NOFILE, &nofile);
        nofile.rlim_cur = 256;
        setrlimit(RLIMIT_NOFILE, &nofile);
        return run(job);
    };
    ShellProcess shell(job, std::nullopt, lowered_nofile);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.out, dir.path() + "\n0027\n256\n0\n");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellTask, SoftLimitAboveHardLimitStopsEverything) {
    rlimit core{};
    getrlimit(RLIMIT_CORE, &core);
    if (core.rlim_max == RLIM_INFINITY)
        core.rlim_max = 1 << 20;
    Job job = sh_job({"true"});
    job.soft_limits = {{RLIMIT_CORE, core.rlim_max + 1}};
    const auto lowered_core = [&](const Job& job) {
        setrlimit(RLIMIT_CORE, &core);
        return run(job);
    };
    ShellProcess shell(job, std::nullopt, lowered_core);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err, "gantry: --rlimit: the soft limit " + std::to_string(core.rlim_max + 1) +
                               " of core is above its hard limit " + std::to_string(core.rlim_max) +
                               "\n");
    EXPECT_EQ(outcome.exit_code, 1);
}

// Another child of the shell's process (a test program's, a broker's) is
// neither reaped nor in the way.
TEST(ShellTask, OtherChildrenOfTheProcessAreLeftAlone) {
    const auto with_other_child = [](const Job& job) {
        const pid_t other = fork();
        if (other == 0)
            _exit(0);
        siginfo_t exited{};
        waitid(P_PID, other, &exited, WEXITED | WNOWAIT);  // a zombie now
        const int exit_code = run(job);
        const bool left = waitpid(other, nullptr, WNOHANG) == other;
        dprintf(2, "other child %s\n", left ? "left alone" : "reaped");
        return exit_code;
    };
    ShellProcess shell(sh_job({"sleep 0.1", "sleep 0.2", "exit 4"}), std::nullopt,
                       with_other_child);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err,
              "gantry: task 2 (node0) exited with exit code 4\nother child left alone\n");
    EXPECT_EQ(outcome.exit_code, 4);
}

TEST(ShellTask, SigpipeIsDefault) {
    // yes dies of SIGPIPE when head has what it wants, instead of looping on EPIPE.
    const Outcome outcome = run_job(sh_job({"yes | head -n 2"}));
    EXPECT_EQ(outcome.out, "y\ny\n");
    EXPECT_EQ(outcome.exit_code, 0);
}

// ---- PMI ----

pmi::JobInfo pmi_info(std::uint32_t size) {
    pmi::JobInfo info;
    info.kvsname = "kvs_job1";
    info.size = size;
    info.universe_size = size;
    info.appnum_of_rank.assign(size, 0);
    return info;
}

TEST(ShellPmi, InitExchangeThroughSh) {
    Job job = sh_job(
        {"printf 'cmd=init pmi_version=1 pmi_subversion=1\\n' >&3; read l <&3; echo \"$l\""});
    job.pmi = pmi_info(1);
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellPmi, AbortEndsTheJobWithItsCode) {
    Job job = sh_job({"sleep 30", "printf 'cmd=abort exitcode=7\\n' >&3; sleep 30"});
    job.pmi = pmi_info(2);
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err,
              "gantry: task 1 (node0) called MPI_Abort / PMI abort with exit code 7\n");
    EXPECT_EQ(outcome.exit_code, 7);
    EXPECT_LT(outcome.wall, 5s);
}

TEST(ShellPmi, ProtocolErrorKillsTheTask) {
    const std::string line(2000, 'x');
    pmi::Server server(pmi_info(1));
    const auto expected = server.receive(0, line + "\n").protocol_error;
    ASSERT_TRUE(expected);
    Job job = sh_job({"printf '" + line + "\\n' >&3; sleep 30"});
    job.pmi = pmi_info(1);
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err, "gantry: task 0 (node0): " + *expected +
                               "\ngantry: task 0 (node0) killed by signal 9 (Killed)\n");
    EXPECT_EQ(outcome.exit_code, 137);
}

const std::string kInit = "printf 'cmd=init pmi_version=1 pmi_subversion=1\\n' >&3; read l <&3; ";

// The owner of the barrier (on many nodes, the broker) hands back what
// other nodes put: a task sees it after the barrier, not before.
class OwnerWithAnotherNodesPut final : public PmiOwner {
public:
    void barrier(pmi::KeyValues puts, Complete complete) override {
        puts["elsewhere"] = "from-node-1";
        complete(puts);
    }
};

TEST(ShellPmi, TheBarriersOwnerMergesWhatOtherNodesPut) {
    const std::string get =
        "printf 'cmd=get kvsname=kvs_job1 key=elsewhere\\n' >&3; read l <&3; "
        "echo \"$l\"; ";
    Job job = sh_job({kInit + get + "printf 'cmd=barrier_in\\n' >&3; read l <&3; echo \"$l\"; " +
                      get + "printf 'cmd=finalize\\n' >&3; read l <&3"});
    job.pmi = pmi_info(2);  // rank 1 is on the other node
    job.pmi_owner = std::make_shared<OwnerWithAnotherNodesPut>();
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out,
              "cmd=get_result rc=-1 msg=key_elsewhere_not_found value=unknown\n"
              "cmd=barrier_out\n"
              "cmd=get_result rc=0 msg=success value=from-node-1\n");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellPmi, ExitWithoutFinalizeWhilePeersRunFails) {
    Job job = sh_job({kInit + "exit 0", "sleep 30"});
    job.pmi = pmi_info(2);
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err, "gantry: task 0 (node0) exited without finalizing PMI (MPI_Finalize)\n");
    EXPECT_EQ(outcome.exit_code, 1);
    EXPECT_LT(outcome.wall, 5s);
}

TEST(ShellPmi, FinalizedTaskMayLeaveFirst) {
    Job job =
        sh_job({kInit + "printf 'cmd=finalize\\n' >&3; read l <&3; echo \"$l\"", "sleep 0.3"});
    job.pmi = pmi_info(2);
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out, "cmd=finalize_ack\n");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(outcome.exit_code, 0);
}

// ---- output ----

// The line rank R repeats: distinct per rank, 64 bytes with its newline.
std::string rank_line(std::uint32_t rank) {
    std::string line = "rank" + std::to_string(rank) + "-";
    while (line.size() < 63)
        line += static_cast<char>('a' + line.size() % 26);
    return line;
}

// Every line of `out` must be one whole expected line ("R: " before it
// when labelled), and each rank must have `per_rank` of them.
void expect_whole_lines(const std::string& out, std::uint32_t ranks, std::size_t per_rank,
                        bool labelled) {
    std::vector<std::string> expected;
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        expected.push_back((labelled ? std::to_string(rank) + ": " : "") + rank_line(rank));
    std::vector<std::size_t> count(ranks, 0);
    std::size_t strangers = 0;
    const std::string_view text(out);
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = text.substr(start, end - start);
        // The rank is the first number of the line: the label's or the text's.
        const std::size_t digits = line.find_first_of("0123456789");
        const std::uint32_t rank =
            digits == std::string_view::npos ? ranks : std::atoi(line.data() + digits);
        if (rank < ranks && line == expected[rank])
            ++count[rank];
        else
            ++strangers;
        start = end + 1;
    }
    EXPECT_EQ(strangers, 0u) << "split or mixed lines";
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        EXPECT_EQ(count[rank], per_rank) << "rank " << rank;
}

TEST(ShellOutput, LinesOfManyTasksStayWhole) {
    std::vector<std::string> scripts;
    for (std::uint32_t rank = 0; rank < 8; ++rank)
        scripts.push_back("yes " + rank_line(rank) + " | head -n 100000");
    Job job = sh_job(scripts);
    const Outcome plain = run_job(job);
    EXPECT_EQ(plain.exit_code, 0);
    EXPECT_EQ(plain.out.size(), 8u * 100000 * 64);
    expect_whole_lines(plain.out, 8, 100000, false);

    job.output.label = true;
    const Outcome labelled = run_job(job);
    EXPECT_EQ(labelled.exit_code, 0);
    expect_whole_lines(labelled.out, 8, 100000, true);
}

TEST(ShellOutput, LastLineWithoutNewlineIsDelivered) {
    Job job = sh_job({"printf 'a\\nb'; printf 'c\\nd' >&2"});
    EXPECT_EQ(run_job(job).out, "a\nb");
    job.output.label = true;
    const Outcome labelled = run_job(job);
    EXPECT_EQ(labelled.out, "0: a\n0: b");
    EXPECT_EQ(labelled.err, "0: c\n0: d");
}

// A child of the task keeps its stdout open: the job ends with the task.
TEST(ShellOutput, PipeHeldByTheTasksChildDoesNotHoldTheJob) {
    const Outcome outcome = run_job(sh_job({"(sleep 5; echo late) & echo done"}));
    EXPECT_EQ(outcome.out, "done\n");
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_LT(outcome.wall, 4s);
}

TEST(ShellOutput, StderrStaysOnStderr) {
    const Outcome outcome = run_job(sh_job({"echo out; echo err >&2"}));
    EXPECT_EQ(outcome.out, "out\n");
    EXPECT_EQ(outcome.err, "err\n");
}

// The task writes half a line and waits for the test to see it.
TEST(ShellOutput, UnbufferedPassesBytesOnAsTheyCome) {
    const test::ScratchDir dir;
    Job job = sh_job(
        {"printf ab; while [ ! -e " + (dir / "go") + " ]; do sleep 0.01; done; printf 'cd\\nef'"});
    job.output.unbuffered = true;
    job.output.label = true;
    ShellProcess shell(job);
    EXPECT_TRUE(shell.wait_for_out("0: ab"));
    write_file(dir / "go", "", 0644);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.out, "0: abcd\n0: ef");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellOutput, FilePerTask) {
    const test::ScratchDir dir;
    Job job = sh_job({"echo out0; echo err0 >&2", "echo out1; echo err1 >&2"});
    job.output.output_template = dir / "out-{{id}}-{{node}}-{{taskid}}.txt";
    job.output.error_template = dir / "err-{{taskid}}.txt";
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out, "");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(read_file(dir / "out-job1-node0-0.txt"), "out0\n");
    EXPECT_EQ(read_file(dir / "out-job1-node0-1.txt"), "out1\n");
    EXPECT_EQ(read_file(dir / "err-0.txt"), "err0\n");
    EXPECT_EQ(read_file(dir / "err-1.txt"), "err1\n");
}

TEST(ShellOutput, OutputAloneTakesStderrToo) {
    const test::ScratchDir dir;
    write_file(dir / "out-1.txt", "old contents, longer than the new\n", 0644);
    Job job = sh_job({"echo out0; echo err0 >&2", "echo out1; echo err1 >&2"});
    job.output.output_template = dir / "out-{{taskid}}.txt";
    job.umask = 027;
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(sorted_lines(read_file(dir / "out-0.txt")),
              (std::vector<std::string>{"err0", "out0"}));
    EXPECT_EQ(sorted_lines(read_file(dir / "out-1.txt")),
              (std::vector<std::string>{"err1", "out1"}));
    struct stat st {};
    stat((dir / "out-0.txt").c_str(), &st);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(ShellOutput, SharedFileGetsWholeLines) {
    const test::ScratchDir dir;
    std::vector<std::string> scripts;
    for (std::uint32_t rank = 0; rank < 4; ++rank)
        scripts.push_back("yes " + rank_line(rank) + " | head -n 20000");
    Job job = sh_job(scripts);
    job.output.output_template = dir / "all-{{id}}.txt";
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.exit_code, 0);
    expect_whole_lines(read_file(dir / "all-job1.txt"), 4, 20000, false);
}

TEST(ShellOutput, FileThatCannotOpenStopsEverything) {
    const test::ScratchDir dir;
    Job job = sh_job({"touch " + (dir / "started")});
    job.output.error_template = "/nonexistent/err-{{taskid}}";
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err,
              "gantry: --error: cannot open \"/nonexistent/err-0\": No such file or directory\n");
    EXPECT_EQ(outcome.exit_code, 1);
    EXPECT_FALSE(std::filesystem::exists(dir / "started"));
}

// Whether O_NONBLOCK is set on the shell's fd 0, 1 and 2, after `run`: the
// shell must not change the file descriptions it shares with others.
int run_and_report_flags(const Job& job) {
    const int exit_code = run(job);
    for (int fd = 0; fd < 3; ++fd)
        dprintf(2, "fd %d %s\n", fd,
                (fcntl(fd, F_GETFL) & O_NONBLOCK) ? "non-blocking" : "blocking");
    return exit_code;
}

// A slow reader on a socket makes the shell wait for room on it.
TEST(ShellOutput, SocketStdoutWithSlowReaderKeepsItsFlags) {
    std::vector<std::string> scripts;
    for (std::uint32_t rank = 0; rank < 4; ++rank)
        scripts.push_back("yes " + rank_line(rank) + " | head -n 20000");
    Job job = sh_job(scripts);
    job.input = Input{};
    job.input.ranks = IdSet{0};
    ShellProcess shell(job, std::string(100, 'x'), run_and_report_flags,
                       ShellProcess::Stdout::kSocket);
    shell.read_slowly(200us);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err, "fd 0 blocking\nfd 1 blocking\nfd 2 blocking\n");
    EXPECT_EQ(outcome.exit_code, 0);
    expect_whole_lines(outcome.out, 4, 20000, false);
}

// The test reads its end slowly: the shell must stop reading the task
// (which then blocks in write) rather than lose or hoard bytes.
TEST(ShellOutput, SlowReaderLosesNothing) {
    const std::size_t kBytes = 50'000'000;  // 781250 lines of 64 bytes
    ShellProcess shell(sh_job({"yes " + rank_line(0) + " | head -c " + std::to_string(kBytes)}));
    shell.read_slowly(100us);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.exit_code, 0);
    ASSERT_EQ(outcome.out.size(), kBytes);
    const std::string line = rank_line(0) + "\n";
    std::size_t wrong = 0;
    for (std::size_t at = 0; at < kBytes; at += line.size())
        wrong += outcome.out.compare(at, line.size(), line) != 0;
    EXPECT_EQ(wrong, 0u);
}

// ---- stdin ----

TEST(ShellInput, RankZeroByDefaultOthersSeeEndOfFile) {
    Job job = sh_job({"wc -c", "wc -c", "wc -c"});
    job.input = Input{};
    job.output.label = true;
    const Outcome outcome = run_job(job, "hello\nworld\n");
    EXPECT_EQ(sorted_lines(outcome.out), (std::vector<std::string>{"0: 12", "1: 0", "2: 0"}));
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellInput, EveryReceiverGetsTheSameBytes) {
    std::string input;
    for (int i = 0; input.size() < 3'000'000; ++i)
        input += "line " + std::to_string(i) + "\n";
    const std::string sum = test::run_program({"cksum"}, input).out;
    Job job = sh_job({"cksum", "cksum", "cksum"});
    job.input = Input{};
    job.input.ranks = IdSet::range(0, 2);
    const Outcome outcome = run_job(job, input);
    EXPECT_EQ(outcome.out, sum + sum + sum);
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellInput, ReceiverThatLeavesIsDropped) {
    const std::string input(2'000'000, 'x');
    Job job = sh_job({"head -c 10 >/dev/null; echo left", "sleep 0.2; wc -c"});
    job.input = Input{};
    job.input.ranks = IdSet{0, 1};
    const Outcome outcome = run_job(job, input);
    EXPECT_EQ(sorted_lines(outcome.out), (std::vector<std::string>{"2000000", "left"}));
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellInput, FromAFile) {
    const test::ScratchDir dir;
    write_file(dir / "in", "from a file\n", 0644);
    Job job = sh_job({"cat", "cat"});
    job.input.source = Input::Source::kFile;
    job.input.file = dir / "in";
    job.input.ranks = IdSet{1};
    EXPECT_EQ(run_job(job).out, "from a file\n");

    job.input.file = dir / "missing";
    const Outcome missing = run_job(job);
    EXPECT_EQ(missing.err, "gantry: --input: cannot open \"" + (dir / "missing") +
                               "\": No such file or directory\n");
    EXPECT_EQ(missing.exit_code, 1);
}

TEST(ShellInput, NoneGivesEveryTaskEndOfFile) {
    Job job = sh_job({"cat; echo end"});
    EXPECT_EQ(run_job(job, "ignored\n").out, "end\n");
}

// ---- signals and limits ----

// Says ready, then waits for a signal; its stderr is closed because sh
// reports a child killed by a signal there ("Terminated").
const std::string kWaitQuietly = "exec 2>/dev/null; echo ready; while :; do sleep 0.05; done";

TEST(ShellSignals, TermReachesTheTasks) {
    ShellProcess shell(sh_job({"trap 'exit 7' TERM; " + kWaitQuietly}));
    ASSERT_TRUE(shell.wait_for_out("ready"));
    shell.signal(SIGTERM);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err, "gantry: task 0 (node0) exited with exit code 7\n");
    EXPECT_EQ(outcome.exit_code, 7);
}

TEST(ShellSignals, Usr1IsForwarded) {
    ShellProcess shell(sh_job({"trap 'echo got-usr1; exit 0' USR1; " + kWaitQuietly}));
    ASSERT_TRUE(shell.wait_for_out("ready"));
    shell.signal(SIGUSR1);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.out, "ready\ngot-usr1\n");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellSignals, OneInterruptIsForwardedAndTheJobGoesOn) {
    ShellProcess shell(sh_job({"trap '' INT; echo ready; sleep 0.5; echo done"}));
    ASSERT_TRUE(shell.wait_for_out("ready"));
    shell.signal(SIGINT);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.out, "ready\ndone\n");
    EXPECT_EQ(outcome.err, "gantry: interrupt (one more within 2 s kills the job)\n");
    EXPECT_EQ(outcome.exit_code, 0);
}

TEST(ShellSignals, InterruptEndsTasksThatDoNotCatchIt) {
    // sh -c catches SIGINT until it has started its command: wait for sleep.
    ShellProcess shell(sh_job({"exec sleep 30"}));
    ASSERT_TRUE(shell.wait_for_task_command("sleep"));
    shell.signal(SIGINT);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err,
              "gantry: interrupt (one more within 2 s kills the job)\n"
              "gantry: task 0 (node0) killed by signal 2 (Interrupt)\n");
    EXPECT_EQ(outcome.exit_code, 130);
}

TEST(ShellSignals, SecondInterruptKills) {
    ShellProcess shell(sh_job({"trap '' INT; echo ready; sleep 30"}));
    ASSERT_TRUE(shell.wait_for_out("ready"));
    shell.signal(SIGINT);
    ASSERT_TRUE(shell.wait_for_err("interrupt"));
    shell.signal(SIGINT);
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err,
              "gantry: interrupt (one more within 2 s kills the job)\n"
              "gantry: killing the job (second interrupt)\n"
              "gantry: task 0 (node0) killed by signal 9 (Killed)\n");
    EXPECT_EQ(outcome.exit_code, 137);
}

TEST(ShellLimits, TimeLimitTerminates) {
    Job job = sh_job({"sleep 30"});
    job.limits.time_limit = 500ms;
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err,
              "gantry: job hit its time limit of 500ms\n"
              "gantry: task 0 (node0) killed by signal 15 (Terminated)\n");
    EXPECT_EQ(outcome.exit_code, 143);
    EXPECT_LT(outcome.wall, 5s);
}

TEST(ShellLimits, TimeLimitKillsWhatIgnoresTerm) {
    Job job = sh_job({"trap '' TERM; sleep 30"});
    job.limits.time_limit = 500ms;
    job.limits.kill_timeout = 300ms;
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.err,
              "gantry: job hit its time limit of 500ms\n"
              "gantry: task 0 (node0) killed by signal 9 (Killed)\n");
    EXPECT_EQ(outcome.exit_code, 137);
    EXPECT_GE(outcome.wall, 800ms);
    EXPECT_LT(outcome.wall, 5s);
}

// ---- a closed stdout or stderr ----

// A job that would run for ever if a closed output did not end it: a time
// limit ends it instead, and the test fails rather than hangs.
Job job_bounded_by_a_time_limit(const std::string& script) {
    Job job = sh_job({script});
    job.limits.time_limit = 60s;
    return job;
}

// The reader of gantry's stdout goes (`gantry run yes | head -1`): the job
// ends as a pipeline's writer would, with one line on stderr.
TEST(ShellOutput, ClosedStdoutEndsTheJobAsSigpipeWould) {
    ShellProcess shell(job_bounded_by_a_time_limit("yes"));
    ASSERT_TRUE(shell.wait_for_out("y\n"));
    shell.close_stdout();
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err, "gantry: stdout was closed: ending the job\n");
    EXPECT_EQ(outcome.exit_code, 141);
}

// SIGPIPE first, SIGKILL after the kill timeout; the job's code stays 141.
TEST(ShellOutput, ClosedStdoutKillsWhatIgnoresSigpipe) {
    Job job = job_bounded_by_a_time_limit("trap '' PIPE; yes");
    job.limits.kill_timeout = 300ms;
    ShellProcess shell(job);
    ASSERT_TRUE(shell.wait_for_out("y\n"));
    shell.close_stdout();
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.err, "gantry: stdout was closed: ending the job\n");
    EXPECT_EQ(outcome.exit_code, 141);
}

// Nowhere to say it when stderr is what was closed.
TEST(ShellOutput, ClosedStderrEndsTheJobSilently) {
    ShellProcess shell(job_bounded_by_a_time_limit("yes >&2"));
    ASSERT_TRUE(shell.wait_for_err("y\n"));
    shell.close_stderr();
    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.out, "");
    EXPECT_EQ(outcome.exit_code, 141);
}

// ---- nothing left behind ----

// A job id of its own for each job, which its cgroup's name ends with (the
// final letter: no id is the start of another).
std::string unique_job_id() {
    static int count = 0;
    return "cleanup" + std::to_string(getpid()) + "n" + std::to_string(++count) + "e";
}

// The cgroups job `id` leaves, removed at the end of the test.
test::LeftoverCgroups cgroups_of_job(const std::string& id) {
    return test::LeftoverCgroups("-" + id);
}

const char* mode_name(bool cgroup) {
    return cgroup ? "with a cgroup" : "with process groups";
}

// The job ends when its task has exited, and takes the task's background
// child with it: with its cgroup, or without one (job_cgroup false, or no
// cgroup v2 here) with the task's process group.
TEST(ShellCleanup, BackgroundChildOfATaskEndsWithTheJob) {
    for (const bool cgroup : {true, false}) {
        const test::Leftovers sleeper(test::unique_sleep_argument());
        Job job = sh_job({"sleep " + sleeper.marker() + " & echo bg"});
        job.id = unique_job_id();
        job.job_cgroup = cgroup;
        const auto cgroups = cgroups_of_job(job.id);
        const Outcome outcome = run_job(job);
        EXPECT_EQ(outcome.out, "bg\n") << mode_name(cgroup);
        EXPECT_EQ(outcome.err, "") << mode_name(cgroup);
        EXPECT_EQ(outcome.exit_code, 0) << mode_name(cgroup);
        EXPECT_TRUE(sleeper.gone()) << mode_name(cgroup);
        EXPECT_EQ(cgroups.names(), std::vector<std::string>{}) << mode_name(cgroup);
    }
}

// A process that leaves its task's session and process group is caught by
// the cgroup only.
TEST(ShellCleanup, ProcessThatLeftItsSessionEndsWithTheCgroup) {
    if (!test::cgroups_usable())
        GTEST_SKIP() << test::kNoCgroups;
    const test::Leftovers sleeper(test::unique_sleep_argument());
    Job job = sh_job({"setsid sleep " + sleeper.marker() + " & echo bg"});
    job.id = unique_job_id();
    const auto cgroups = cgroups_of_job(job.id);
    const Outcome outcome = run_job(job);
    EXPECT_EQ(outcome.out, "bg\n");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_TRUE(sleeper.gone());
    EXPECT_EQ(cgroups.names(), std::vector<std::string>{});
}

// The shell's process is killed (SIGKILL: it can do nothing about it): the
// task dies with it (PR_SET_PDEATHSIG) and the watcher kills what the task
// started, then removes the job's cgroup.
TEST(ShellCleanup, KilledShellLeavesNothingBehind) {
    for (const bool cgroup : {true, false}) {
        const test::Leftovers sleeper(test::unique_sleep_argument());
        Job job = sh_job({"exec sleep " + sleeper.marker(),
                          "trap '' TERM; sleep " + sleeper.marker() + " & echo ready; wait"});
        job.id = unique_job_id();
        job.job_cgroup = cgroup;
        const auto cgroups = cgroups_of_job(job.id);
        ShellProcess shell(job);
        ASSERT_TRUE(shell.wait_for_out("ready")) << mode_name(cgroup);
        ASSERT_TRUE(test::eventually([&] {
            return test::processes_with_argument(sleeper.marker()).size() == 2;
        })) << mode_name(cgroup);
        shell.signal(SIGKILL);
        EXPECT_EQ(shell.finish().exit_code, 137) << mode_name(cgroup);
        EXPECT_TRUE(sleeper.gone()) << mode_name(cgroup);
        EXPECT_TRUE(cgroups.gone()) << mode_name(cgroup);
    }
}

TEST(ShellCleanup, KilledShellLeavesNoProcessThatLeftItsSession) {
    if (!test::cgroups_usable())
        GTEST_SKIP() << test::kNoCgroups;
    const test::Leftovers sleeper(test::unique_sleep_argument());
    Job job = sh_job({"setsid sleep " + sleeper.marker() + " & echo ready; wait"});
    job.id = unique_job_id();
    const auto cgroups = cgroups_of_job(job.id);
    ShellProcess shell(job);
    ASSERT_TRUE(shell.wait_for_out("ready"));
    ASSERT_TRUE(sleeper.started());
    shell.signal(SIGKILL);
    EXPECT_EQ(shell.finish().exit_code, 137);
    EXPECT_TRUE(sleeper.gone());
    EXPECT_TRUE(cgroups.gone());
}

// Fields of /proc/PID/stat after the command name: state, parent, process
// group, session.
struct ProcessIds {
    pid_t parent = -1;
    pid_t group = -1;
    pid_t session = -1;
};

std::optional<ProcessIds> ids_of(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto paren = text.rfind(')');
    if (paren == std::string::npos)
        return std::nullopt;
    std::istringstream fields(text.substr(paren + 1));
    std::string state;
    ProcessIds ids;
    if (!(fields >> state >> ids.parent >> ids.group >> ids.session))
        return std::nullopt;
    return ids;
}

// The shell's watcher: its child in a session of its own.
std::optional<pid_t> watcher_of(pid_t shell) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const pid_t pid = std::stoi(name);
        const auto ids = ids_of(pid);
        if (ids && ids->parent == shell && ids->session == pid)
            return pid;
    }
    return std::nullopt;
}

std::uint64_t ignored_signals(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("SigIgn:"))
            return std::stoull(line.substr(7), nullptr, 16);
    return 0;
}

// What a terminal, a broker or a signal to the shell's group does to the
// shell does not reach its watcher, and it holds nothing of the shell's
// open: one descriptor, its pipe. It is gone when the job ends.
TEST(ShellCleanup, WatcherIsOnItsOwnAndHoldsOnlyItsPipe) {
    const test::ScratchDir dir;
    const std::string go = dir / "go";
    ShellProcess shell(sh_job({"echo ready; until [ -e " + go + " ]; do sleep 0.01; done"}));
    ASSERT_TRUE(shell.wait_for_out("ready"));
    const auto watcher = watcher_of(shell.pid());
    ASSERT_TRUE(watcher);
    const auto ids = ids_of(*watcher);
    ASSERT_TRUE(ids);
    EXPECT_NE(ids->session, ids_of(shell.pid())->session);
    std::vector<std::string> fds;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(*watcher) + "/fd"))
        fds.push_back(std::filesystem::read_symlink(entry.path()).string());
    ASSERT_EQ(fds.size(), 1u);
    EXPECT_TRUE(fds[0].starts_with("pipe:")) << fds[0];
    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGPIPE})
        EXPECT_TRUE((ignored_signals(*watcher) >> (signal - 1)) & 1) << strsignal(signal);
    write_file(go, "", 0644);

    const Outcome outcome = shell.finish();
    EXPECT_EQ(outcome.out, "ready\n");
    EXPECT_EQ(outcome.err, "");
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_TRUE(test::ended(*watcher));
}

}  // namespace
}  // namespace gantry::shell
