#include "shell/exit_status.h"

#include <sys/wait.h>

#include <cstring>

namespace gantry::shell {

int exit_code_of(int wait_status) {
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return WEXITSTATUS(wait_status);
}

std::string describe_end(int wait_status) {
    if (WIFSIGNALED(wait_status)) {
        const int signal = WTERMSIG(wait_status);
        return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
    }
    return "exited with exit code " + std::to_string(WEXITSTATUS(wait_status));
}

}  // namespace gantry::shell
