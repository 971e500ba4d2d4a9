#include "broker/prepared_program.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>

#include "overlay/uri.h"
#include "util/file.h"

namespace gantry::broker {

namespace {

// The child: waits for its URI (none when the pipe closes without one),
// then runs. What it writes goes out before it exits.
[[noreturn]] void wait_and_run(int uri_fd, pid_t parent, int cgroup_procs,
                               const std::function<int(const std::string&)>& run) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
        ::_exit(1);
    ::setpgid(0, 0);
    if (cgroup_procs >= 0 && ::write(cgroup_procs, "0", 1) != 1)
        write_all(STDERR_FILENO, "gantry: initial program: cannot join its cgroup\n");
    // As a program the instance executed would start: the signals it
    // forwards and SIGPIPE at their default, none blocked, whatever this
    // process inherited (`gantry run ... &` in a script ignores SIGINT).
    for (const int signal : kForwardedSignals)
        ::signal(signal, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    std::string uri;
    const int failed = read_all(uri_fd, uri);
    ::close(uri_fd);
    if (failed != 0 || uri.empty())
        ::_exit(1);
    ::setenv(std::string(overlay::kUriVariable).c_str(), uri.c_str(), 1);
    ::unsetenv("GANTRY_JOB_ID");
    const int code = run(uri);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
}

}  // namespace

std::string initial_program_cgroup_name() {
    return "gantry-" + std::to_string(::getpid()) + "-initial";
}

Result<PreparedProgram> PreparedProgram::fork(std::function<int(const std::string& uri)> run) {
    auto containment = shell::Containment::start(initial_program_cgroup_name(), true);
    if (!containment)
        return containment.error();
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return Error("start", std::string("cannot make a pipe: ") + std::strerror(errno));
    // What this process buffered would otherwise be written twice.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int number = errno;
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        return Error("start",
                     std::string("cannot fork the initial program: ") + std::strerror(number));
    }
    if (pid == 0) {
        ::close(pipe_fds[1]);
        wait_and_run(pipe_fds[0], parent, (*containment)->cgroup_procs(), run);
    }
    ::close(pipe_fds[0]);
    ::setpgid(pid, pid);  // also here: a signal sent to its group now reaches it
    (*containment)->add_group(pid);
    return PreparedProgram(pid, pipe_fds[1], std::move(*containment));
}

PreparedProgram::PreparedProgram(PreparedProgram&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      uri_fd_(std::exchange(other.uri_fd_, -1)),
      containment_(std::move(other.containment_)) {}

PreparedProgram& PreparedProgram::operator=(PreparedProgram&& other) noexcept {
    if (this != &other) {
        drop();
        pid_ = std::exchange(other.pid_, -1);
        uri_fd_ = std::exchange(other.uri_fd_, -1);
        containment_ = std::move(other.containment_);
    }
    return *this;
}

PreparedProgram::~PreparedProgram() {
    drop();
}

void PreparedProgram::drop() {
    if (uri_fd_ < 0)
        return;
    ::close(std::exchange(uri_fd_, -1));
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    containment_.reset();
}

Status PreparedProgram::start(const std::string& uri) {
    if (uri_fd_ < 0)
        return Error("start", "the initial program was started already");
    // The pipe is empty and the URI short: this does not block.
    const int failed = write_all(uri_fd_, uri);
    ::close(std::exchange(uri_fd_, -1));
    if (failed != 0)
        return Error("start",
                     std::string("cannot start the initial program: ") + std::strerror(failed));
    return {};
}

}  // namespace gantry::broker
