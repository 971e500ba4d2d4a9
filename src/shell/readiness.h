// Waiting until a descriptor the shell shares with other processes (its
// own stdin, stdout or stderr) can be read or written, without touching it.
// Asio puts every descriptor it waits for in non-blocking mode (FIONBIO),
// which would change the file description for everyone sharing it (a
// terminal's other programs, the caller of gantry); so the wait is on an
// epoll instance of the shell's own that holds the shared descriptor.
#pragma once

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include <functional>
#include <optional>

#include "util/error.h"

namespace gantry::shell {

class Readiness {
public:
    enum class Direction { kRead, kWrite };

    // Errors: the descriptor cannot be polled (a regular file, a closed fd).
    static Result<Readiness> watch(asio::io_context& loop, int fd, Direction direction);

    // Calls `handler` once the descriptor is ready (level-triggered: at once
    // if it already is); with an error when cancelled.
    void async_wait(std::function<void(const asio::error_code&)> handler);

private:
    explicit Readiness(asio::posix::stream_descriptor epoll) : epoll_(std::move(epoll)) {}
    asio::posix::stream_descriptor epoll_;  // owns the epoll instance
};

}  // namespace gantry::shell
