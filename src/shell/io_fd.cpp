#include "shell/io_fd.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace gantry::shell {
namespace {

// A new open file description of the same pipe, terminal or device, so
// that O_NONBLOCK on it changes nothing for the processes sharing `fd`.
Fd reopen(int fd, int access) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    return Fd(::open(path.c_str(), access | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
}

IoFd stdio(int fd, int access) {
    struct stat st;
    if (::fstat(fd, &st) != 0)
        return {Fd(), -1, IoMode::kClosed};
    if (S_ISREG(st.st_mode))
        return {Fd(), fd, IoMode::kFile};
    if (S_ISSOCK(st.st_mode))
        return {Fd(), fd, IoMode::kSocket};
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        if (Fd own = reopen(fd, access)) {
            const int number = own.get();
            return {std::move(own), number, IoMode::kNonblocking};
        }
    }
    return {Fd(), fd, IoMode::kBlocking};
}

}  // namespace

IoFd opened_file(Fd file) {
    struct stat st;
    if (::fstat(file.get(), &st) == 0 && S_ISREG(st.st_mode)) {
        const int number = file.get();
        return {std::move(file), number, IoMode::kFile};
    }
    // The shell opened this description itself: O_NONBLOCK on it is ours to set.
    const int flags = ::fcntl(file.get(), F_GETFL);
    const bool nonblocking = flags >= 0 && ::fcntl(file.get(), F_SETFL, flags | O_NONBLOCK) == 0;
    const int number = file.get();
    return {std::move(file), number, nonblocking ? IoMode::kNonblocking : IoMode::kBlocking};
}

IoFd writable_stdio(int fd) {
    return stdio(fd, O_WRONLY);
}

IoFd readable_stdio(int fd) {
    return stdio(fd, O_RDONLY);
}

bool same_file(int a, int b) {
    struct stat sa, sb;
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

ssize_t read_some(const IoFd& io, char* buffer, std::size_t size) {
    switch (io.mode) {
        case IoMode::kClosed:
            return 0;
        case IoMode::kSocket:
            return ::recv(io.fd, buffer, size, MSG_DONTWAIT);
        case IoMode::kBlocking: {
            // One read after poll reports input does not block.
            pollfd ready{io.fd, POLLIN, 0};
            if (::poll(&ready, 1, 0) == 0) {
                errno = EAGAIN;
                return -1;
            }
            return ::read(io.fd, buffer, size);
        }
        case IoMode::kNonblocking:
        case IoMode::kFile:
            break;
    }
    return ::read(io.fd, buffer, size);
}

ssize_t write_some(const IoFd& io, const char* bytes, std::size_t size) {
    switch (io.mode) {
        case IoMode::kClosed:
            return static_cast<ssize_t>(size);
        case IoMode::kSocket:
            return ::send(io.fd, bytes, size, MSG_DONTWAIT | MSG_NOSIGNAL);
        case IoMode::kNonblocking:
        case IoMode::kFile:
        case IoMode::kBlocking:
            break;
    }
    return ::write(io.fd, bytes, size);
}

void wait_writable(const IoFd& io) {
    pollfd ready{io.fd, POLLOUT, 0};
    while (::poll(&ready, 1, -1) < 0 && errno == EINTR) {
    }
}

}  // namespace gantry::shell
