#include "broker/child.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace gantry::broker {

Result<ChildExit> ChildExit::watch(asio::io_context& loop, pid_t pid,
                                   std::function<void(int wait_status)> ended) {
    // The system call itself: glibc 2.36's <sys/pidfd.h> lacks extern "C".
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0)
        return Error("instance", std::string("cannot watch process ") + std::to_string(pid) +
                                     " (pidfd_open): " + std::strerror(errno));
    ChildExit child(loop, pidfd, pid, std::move(ended));
    child.wait();
    return child;
}

ChildExit::ChildExit(asio::io_context& loop, int pidfd, pid_t pid, std::function<void(int)> ended)
    : state_(std::make_shared<State>(
          State{asio::posix::stream_descriptor(loop, pidfd), pid, std::move(ended)})) {}

void ChildExit::wait() {
    wait_on(state_);
}

void ChildExit::wait_on(const std::shared_ptr<State>& state) {
    std::weak_ptr<State> weak = state;
    state->pidfd.async_wait(asio::posix::stream_descriptor::wait_read,
                            [weak](const asio::error_code& failure) {
                                const auto state = weak.lock();
                                if (!state || failure == asio::error::operation_aborted)
                                    return;
                                int status = 0;
                                const pid_t reaped = ::waitpid(state->pid, &status, WNOHANG);
                                if (reaped == 0 || (reaped < 0 && errno == EINTR)) {
                                    wait_on(state);
                                    return;
                                }
                                state->pidfd.close();
                                auto ended = std::move(state->ended);
                                ended(reaped < 0 ? 0 : status);
                            });
}

}  // namespace gantry::broker
