// A task's wait status as the job's exit code and the words of its summary line.
#include "shell/exit_status.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace gantry::shell {
namespace {

// The wait status of a real child that runs `end`.
int status_of(void (*end)()) {
    const pid_t pid = fork();
    if (pid == 0) {
        end();
        _exit(99);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

TEST(ExitStatus, ExitCodesAndWords) {
    const int zero = status_of([] { _exit(0); });
    EXPECT_EQ(exit_code_of(zero), 0);
    EXPECT_EQ(describe_end(zero), "exited with exit code 0");

    const int five = status_of([] { _exit(5); });
    EXPECT_EQ(exit_code_of(five), 5);
    EXPECT_EQ(describe_end(five), "exited with exit code 5");

    const int killed = status_of([] { raise(SIGKILL); });
    EXPECT_EQ(exit_code_of(killed), 137);
    EXPECT_EQ(describe_end(killed), "killed by signal 9 (Killed)");

    const int terminated = status_of([] { raise(SIGTERM); });
    EXPECT_EQ(exit_code_of(terminated), 143);
    EXPECT_EQ(describe_end(terminated), "killed by signal 15 (Terminated)");
}

}  // namespace
}  // namespace gantry::shell
