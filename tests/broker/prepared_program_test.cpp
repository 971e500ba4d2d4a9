// The initial program forked before its instance: it runs only once handed
// a URI, and a dropped one, or one whose parent dies, ends.
#include "broker/prepared_program.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "util/file.h"

namespace gantry::broker {
namespace {

// A pipe whose reading end the test keeps; the program writes to the other.
struct Pipe {
    Pipe() { EXPECT_EQ(::pipe(fds), 0); }
    ~Pipe() {
        ::close(fds[0]);
        close_writer();
    }
    void close_writer() {
        if (fds[1] >= 0)
            ::close(fds[1]);
        fds[1] = -1;
    }
    std::string read_rest() {
        close_writer();
        std::string text;
        EXPECT_EQ(read_all(fds[0], text), 0);
        return text;
    }
    int fds[2] = {-1, -1};
};

int exit_code_of(pid_t pid) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(PreparedProgram, RunsWithItsUriOnceStartedInAGroupOfItsOwn) {
    Pipe out;
    const int writer = out.fds[1];
    // A job id of an enclosing instance's job names no job of the new one.
    ::setenv("GANTRY_JOB_ID", "f2", 1);
    auto program = PreparedProgram::fork([writer](const std::string& uri) {
        struct sigaction interrupt {};
        sigaction(SIGINT, nullptr, &interrupt);
        const char* variable = std::getenv("GANTRY_URI");
        const char* job = std::getenv("GANTRY_JOB_ID");
        write_all(writer, "uri " + uri + " GANTRY_URI " + (variable ? variable : "unset") +
                              " GANTRY_JOB_ID " + (job ? job : "unset") +
                              (interrupt.sa_handler == SIG_DFL ? " sigint default" : ""));
        return 7;
    });
    ::unsetenv("GANTRY_JOB_ID");
    ASSERT_TRUE(program) << program.error().str();
    const pid_t pid = program->pid();
    EXPECT_EQ(::getpgid(pid), pid);
    ASSERT_TRUE(program->start("unix:///run/x/socket"));
    EXPECT_EQ(exit_code_of(pid), 7);
    EXPECT_EQ(out.read_rest(),
              "uri unix:///run/x/socket GANTRY_URI unix:///run/x/socket GANTRY_JOB_ID unset "
              "sigint default");
    EXPECT_FALSE(program->start("again"));
}

// `gantry run ... &` in a script ignores SIGINT; the program does not.
TEST(PreparedProgram, SignalsIgnoredHereAreAtTheirDefaultThere) {
    Pipe out;
    const int writer = out.fds[1];
    ::signal(SIGINT, SIG_IGN);
    auto program = PreparedProgram::fork([writer](const std::string&) {
        struct sigaction interrupt {};
        sigaction(SIGINT, nullptr, &interrupt);
        write_all(writer, interrupt.sa_handler == SIG_DFL ? "default" : "ignored");
        return 0;
    });
    ::signal(SIGINT, SIG_DFL);
    ASSERT_TRUE(program);
    const pid_t pid = program->pid();
    ASSERT_TRUE(program->start("u"));
    EXPECT_EQ(exit_code_of(pid), 0);
    EXPECT_EQ(out.read_rest(), "default");
}

TEST(PreparedProgram, DroppedItRunsNothingAndIsWaitedFor) {
    Pipe out;
    const int writer = out.fds[1];
    pid_t pid = -1;
    {
        auto program = PreparedProgram::fork([writer](const std::string&) {
            write_all(writer, "ran");
            return 0;
        });
        ASSERT_TRUE(program);
        pid = program->pid();
    }
    EXPECT_EQ(out.read_rest(), "");
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);  // reaped already
    EXPECT_EQ(errno, ECHILD);
}

// Whether `pid` still runs: a process that is gone or a zombie does not.
bool runs(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, name, state;
    if (!(stat >> pid_field >> name >> state))
        return false;
    return state != "Z" && state != "X";
}

TEST(PreparedProgram, DiesWithItsParentKilledWhileItWaits) {
    Pipe pids;
    const pid_t parent = ::fork();
    ASSERT_GE(parent, 0);
    if (parent == 0) {
        auto program = PreparedProgram::fork([](const std::string&) { return 0; });
        if (!program)
            ::_exit(1);
        write_all(pids.fds[1], std::to_string(program->pid()));
        ::close(pids.fds[1]);
        ::pause();
        ::_exit(0);
    }
    // One read: the program holds the pipe's writing end too (it is a
    // fork of the process that wrote), so no end of file comes.
    char text[32] = {};
    ASSERT_GT(::read(pids.fds[0], text, sizeof text - 1), 0);
    const pid_t program = std::stoi(text);
    EXPECT_TRUE(runs(program));
    ::kill(parent, SIGKILL);
    EXPECT_EQ(exit_code_of(parent), 128 + SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (runs(program) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_FALSE(runs(program));
}

}  // namespace
}  // namespace gantry::broker
