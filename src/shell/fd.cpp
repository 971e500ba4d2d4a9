#include "shell/fd.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gantry::shell {

void Fd::reset(int fd) {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = fd;
}

Error system_error(const std::string& what, int error) {
    return Error("shell", what + ": " + std::strerror(error));
}

Result<Pipe> make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return system_error("cannot create a pipe", errno);
    return Pipe{Fd(fds[0]), Fd(fds[1])};
}

Result<Pipe> make_socket_pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return system_error("cannot create a socket pair", errno);
    return Pipe{Fd(fds[0]), Fd(fds[1])};
}

Result<Fd> at_least(Fd fd, int lowest) {
    if (fd.get() >= lowest)
        return fd;
    const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, lowest);
    if (moved < 0)
        return system_error("cannot duplicate a descriptor", errno);
    return Fd(moved);
}

Status set_nonblocking(int fd) {
    // A fresh pipe or socket has no other status flag to keep: one call.
    if (::fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        return system_error("cannot make a descriptor non-blocking", errno);
    return {};
}

}  // namespace gantry::shell
