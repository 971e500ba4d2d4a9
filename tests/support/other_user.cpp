#include "support/other_user.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace gantry::test {

std::string connect_as_nobody(const std::string& socket_path) {
    int out[2];
    if (::pipe(out) != 0)
        return "pipe failed";
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(out[0]);
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(2);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
            ::_exit(3);
        char block[4096];
        ssize_t n;
        while ((n = ::read(fd, block, sizeof block)) > 0)
            if (::write(out[1], block, static_cast<std::size_t>(n)) != n)
                ::_exit(4);
        ::_exit(0);
    }
    ::close(out[1]);
    std::string text;
    char block[4096];
    ssize_t n;
    while ((n = ::read(out[0], block, sizeof block)) > 0)
        text.append(block, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "child failed: " + std::to_string(status);
    return text;
}

}  // namespace gantry::test
