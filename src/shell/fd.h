// File descriptors the shell owns: closed when their owner goes, never twice.
#pragma once

#include <string>
#include <utility>

#include "util/error.h"

namespace gantry::shell {

// One owned file descriptor; -1 when empty. Move-only.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        reset(std::exchange(other.fd_, -1));
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1);

private:
    int fd_ = -1;
};

struct Pipe {
    Fd read;
    Fd write;
};

// "what: strerror(error)" in the shell's domain.
Error system_error(const std::string& what, int error);

// A pipe, both ends close-on-exec.
Result<Pipe> make_pipe();
// A connected AF_UNIX stream socket pair, both ends close-on-exec.
Result<Pipe> make_socket_pair();

// `fd` moved to a number of at least `lowest` (close-on-exec), so that a
// child can dup2 it onto 0-3 without clobbering another of its sources.
Result<Fd> at_least(Fd fd, int lowest);

// Sets O_NONBLOCK (and clears O_APPEND) on a pipe or socket the shell has just
// created; never on one it inherited: that would change the file
// description other processes share.
Status set_nonblocking(int fd);

}  // namespace gantry::shell
