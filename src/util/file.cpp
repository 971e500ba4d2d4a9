#include "util/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gantry {
namespace {

Error file_error(std::string domain, std::string_view what, std::string_view name, int error) {
    return Error(std::move(domain),
                 std::string(what) + " " + quote(name) + ": " + std::strerror(error));
}

}  // namespace

int read_all(int fd, std::string& text) {
    char block[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, block, sizeof block);
        if (n > 0)
            text.append(block, static_cast<std::size_t>(n));
        else if (n == 0)
            return 0;
        else if (errno != EINTR)
            return errno;
    }
}

int write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n > 0)
            bytes.remove_prefix(static_cast<std::size_t>(n));
        else if (n == 0)
            return EIO;
        else if (errno != EINTR)
            return errno;
    }
    return 0;
}

std::optional<std::string> unreadable_reason(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return std::string(std::strerror(errno));
    // A directory opens; reading it is what fails.
    char byte;
    const ssize_t n = ::read(fd, &byte, 0);
    const int error = n < 0 ? errno : 0;
    ::close(fd);
    if (error != 0 && error != EAGAIN)
        return std::string(std::strerror(error));
    return std::nullopt;
}

Result<std::string> read_named_file(std::string domain, std::string_view what,
                                    const std::string& path, std::string_view as_given) {
    const std::string_view name = as_given.empty() ? std::string_view(path) : as_given;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return file_error(std::move(domain), what, name, errno);
    std::string text;
    const int error = read_all(fd, text);
    ::close(fd);
    if (error != 0)
        return file_error(std::move(domain), what, name, error);
    return text;
}

}  // namespace gantry
