#include "shell/readiness.h"

#include <sys/epoll.h>

#include <cerrno>

#include "shell/fd.h"

namespace gantry::shell {

Result<Readiness> Readiness::watch(asio::io_context& loop, int fd, Direction direction) {
    Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll)
        return system_error("cannot create an epoll instance", errno);
    epoll_event event{};
    event.events = direction == Direction::kRead ? EPOLLIN : EPOLLOUT;
    event.data.fd = fd;
    if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &event) != 0)
        return system_error("cannot wait for descriptor " + std::to_string(fd), errno);
    return Readiness(asio::posix::stream_descriptor(loop, epoll.release()));
}

void Readiness::async_wait(std::function<void(const asio::error_code&)> handler) {
    epoll_.async_wait(asio::posix::descriptor_base::wait_read, std::move(handler));
}

}  // namespace gantry::shell
