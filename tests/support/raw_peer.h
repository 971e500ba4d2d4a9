// A Unix-socket connection made by hand, for tests that send an instance
// what the blocking client never would; every read waits 10 s at most.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace gantry::test {

class RawPeer {
public:
    explicit RawPeer(const std::string& path) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    }
    ~RawPeer() { ::close(fd_); }
    bool connected() const { return connected_; }
    void send(const std::string& bytes) {
        ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(bytes.size()));
    }
    // Sends what the broker takes before it closes.
    void send_some(const std::string& bytes) {
        (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    }
    void close_writing() { ::shutdown(fd_, SHUT_WR); }
    // Everything until the broker closes the connection.
    std::string read_to_end() {
        std::string text;
        while (read_some(text)) {
        }
        return text;
    }
    // One line with its '\n'; empty at the end or on a timeout.
    std::string read_line() {
        for (;;) {
            if (const auto newline = pending_.find('\n'); newline != std::string::npos) {
                std::string line = pending_.substr(0, newline + 1);
                pending_.erase(0, newline + 1);
                return line;
            }
            if (!read_some(pending_))
                return "";
        }
    }

private:
    bool read_some(std::string& into) {
        pollfd ready{fd_, POLLIN, 0};
        if (::poll(&ready, 1, 10000) != 1)
            return false;
        char block[4096];
        const ssize_t n = ::read(fd_, block, sizeof block);
        if (n <= 0)
            return false;
        into.append(block, static_cast<std::size_t>(n));
        return true;
    }

    int fd_ = -1;
    bool connected_ = false;
    std::string pending_;
};

}  // namespace gantry::test
