// Waiting for a child process on the broker's loop: its pidfd becomes
// readable when it exits, and only then is it reaped, by pid, so that the
// broker never reaps (or waits for) a child that is not its to watch.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include "util/error.h"

namespace gantry::broker {

class ChildExit {
public:
    // Calls `ended` with the child's wait status once it has exited and is
    // reaped. Fails when the pidfd cannot be opened (the child is left alone).
    static Result<ChildExit> watch(asio::io_context& loop, pid_t pid,
                                   std::function<void(int wait_status)> ended);
    ChildExit(ChildExit&&) = default;
    ChildExit& operator=(ChildExit&&) = default;

private:
    ChildExit(asio::io_context& loop, int pidfd, pid_t pid, std::function<void(int)> ended);
    // Shared with the pending wait, so that a moved ChildExit keeps working;
    // the wait holds it weakly: destroying the ChildExit cancels it.
    struct State {
        asio::posix::stream_descriptor pidfd;
        pid_t pid;
        std::function<void(int)> ended;
    };
    void wait();
    static void wait_on(const std::shared_ptr<State>& state);

    std::shared_ptr<State> state_;
};

}  // namespace gantry::broker
