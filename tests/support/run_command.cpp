#include "support/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace gantry::test {
namespace {

struct Pipe {
    int read = -1;
    int write = -1;
    Pipe() {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw std::system_error(errno, std::generic_category(), "pipe2");
        read = fds[0];
        write = fds[1];
    }
};

// Feeds `input` and drains stdout and stderr together so that neither side
// blocks on a full pipe.
void exchange(int in_fd, int out_fd, int err_fd, const std::string& input, CommandResult& result) {
    std::size_t written = 0;
    if (input.empty()) {
        close(in_fd);
        in_fd = -1;
    } else {
        fcntl(in_fd, F_SETFL, O_NONBLOCK);
    }
    while (out_fd >= 0 || err_fd >= 0 || in_fd >= 0) {
        pollfd fds[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            throw std::system_error(errno, std::generic_category(), "poll");
        }
        char buf[65536];
        for (int i = 0; i < 2; ++i) {
            int& fd = i == 0 ? out_fd : err_fd;
            if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) {
                (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                close(fd);
                fd = -1;
            }
        }
        if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t n = ::write(in_fd, input.data() + written, input.size() - written);
            if (n > 0)
                written += static_cast<std::size_t>(n);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                written = input.size();
            if (written == input.size()) {
                close(in_fd);
                in_fd = -1;
            }
        }
    }
}

}  // namespace

std::string gantry_binary() {
    return GANTRY_BINARY;
}

CommandResult run_program(const std::vector<std::string>& argv, const std::string& input) {
    Pipe in, out, err;
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    if (pid == 0) {
        dup2(in.read, 0);
        dup2(out.write, 1);
        dup2(err.write, 2);
        signal(SIGPIPE, SIG_DFL);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(in.read);
    close(out.write);
    close(err.write);
    CommandResult result;
    exchange(in.write, out.read, err.read, input, result);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

CommandResult run_gantry(const std::vector<std::string>& args, const std::string& input) {
    std::vector<std::string> argv{gantry_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, input);
}

void expect_gantry(const std::vector<std::string>& args, const std::string& input,
                   const std::string& out, const std::string& err, int exit_code) {
    std::string line = "gantry";
    for (const auto& arg : args)
        line += " " + arg;
    if (!input.empty())
        line += " < " + testing::PrintToString(input);
    SCOPED_TRACE(line);
    const auto result = run_gantry(args, input);
    EXPECT_EQ(result.out, out);
    EXPECT_EQ(result.err, err);
    EXPECT_EQ(result.exit_code, exit_code);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

}  // namespace gantry::test
