#include "overlay/launch_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>

#include "util/duration.h"
#include "util/spawn.h"

namespace gantry::overlay {

namespace {

constexpr std::string_view kDomain = "launch";

Error error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

void close_fd(int& fd) {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// What ended an agent, from its wait status.
std::string status_text(int status) {
    if (WIFEXITED(status))
        return "exit " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

// The last line of `text` that holds anything.
std::string last_line(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.remove_suffix(1);
    const auto newline = text.rfind('\n');
    return std::string(newline == std::string_view::npos ? text : text.substr(newline + 1));
}

// Reads what is there; false at the end (or an error).
bool read_some(int fd, std::string& into) {
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
        into.append(buffer, static_cast<std::size_t>(n));
        return true;
    }
    return n < 0 && (errno == EINTR || errno == EAGAIN);
}

void write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
}

bool safe_word(std::string_view word) {
    if (word.empty())
        return false;
    for (const char c : word)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./:=,+@%", c)))
            return false;
    return true;
}

}  // namespace

Result<std::vector<std::string>> parse_launch_agent(std::string_view text) {
    std::vector<std::string> words;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t begin = text.find_first_not_of(" \t", start);
        if (begin == std::string_view::npos)
            break;
        const std::size_t end = std::min(text.find_first_of(" \t", begin), text.size());
        words.emplace_back(text.substr(begin, end - begin));
        start = end;
    }
    if (words.empty())
        return error("the launch agent \"" + std::string(text) + "\" names no command");
    return words;
}

std::string shell_command(const std::vector<std::string>& argv) {
    std::string line;
    for (const std::string& word : argv) {
        if (!line.empty())
            line += ' ';
        if (safe_word(word)) {
            line += word;
            continue;
        }
        line += '\'';
        for (const char c : word)
            line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += '\'';
    }
    return line;
}

Result<std::unique_ptr<LaunchedHosts>> LaunchedHosts::start(const std::vector<std::string>& agent,
                                                            std::vector<Launch> launches) {
    std::unique_ptr<LaunchedHosts> launched(new LaunchedHosts());
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP})
        sigaddset(&interrupts, signal);
    ::pthread_sigmask(SIG_BLOCK, &interrupts, nullptr);
    launched->interrupts_ = ::signalfd(-1, &interrupts, SFD_CLOEXEC | SFD_NONBLOCK);
    if (launched->interrupts_ < 0)
        return error(std::string("signalfd: ") + std::strerror(errno));
    for (Launch& launch : launches) {
        int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
        if (::pipe2(in, O_CLOEXEC) != 0)
            return error(std::string("pipe: ") + std::strerror(errno));
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
            const int saved = errno;
            for (const int fd : {in[0], in[1], out[0], out[1]})
                if (fd >= 0)
                    ::close(fd);
            return error(std::string("pipe: ") + std::strerror(saved));
        }
        std::vector<std::string> words = agent;
        words.push_back(launch.host);
        words.push_back(shell_command(launch.argv));
        // A process group of its own: a Ctrl-C at the terminal is the
        // instance's to pass on, not the agent's to die of.
        const auto spawned = spawn_process(words.front(), words,
                                           SpawnOptions{.descriptors = {{in[0], STDIN_FILENO},
                                                                        {out[1], STDOUT_FILENO},
                                                                        {err[1], STDERR_FILENO}},
                                                        .new_process_group = true,
                                                        .search_path = true});
        ::close(in[0]);
        ::close(out[1]);
        ::close(err[1]);
        Host host;
        host.host = std::move(launch.host);
        host.input = in[1];
        host.output = out[0];
        host.errors = err[0];
        if (!spawned) {
            close_fd(host.input);
            close_fd(host.output);
            close_fd(host.errors);
            return error("host " + host.host + ": cannot run the launch agent " + agent.front() +
                         ": " + spawned.error().message());
        }
        host.pid = *spawned;
        host.group = *spawned;
        launched->hosts_.push_back(std::move(host));
    }
    return launched;
}

LaunchedHosts::~LaunchedHosts() {
    finish(std::chrono::milliseconds(0));
    close_fd(interrupts_);
}

std::string LaunchedHosts::why_ended(Host& host) {
    // The agent closed its stdout: it has ended, or is about to.
    int status = 0;
    std::string text = "the launch agent ended";
    if (host.pid > 0 && ::waitpid(host.pid, &status, 0) == host.pid) {
        host.pid = -1;
        text += " (" + status_text(status) + ")";
    }
    // Its last words, all of them by now.
    if (host.errors >= 0) {
        while (read_some(host.errors, host.error_buffer)) {
        }
        close_fd(host.errors);
    }
    const std::string said = last_line(host.error_buffer);
    return text + " before its broker started" + (said.empty() ? "" : ": " + said);
}

Result<std::vector<std::string>> LaunchedHosts::read_lines(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::string> lines(hosts_.size());
    std::vector<bool> done(hosts_.size(), false);
    std::size_t left = hosts_.size();
    while (left > 0) {
        std::vector<pollfd> fds;
        std::vector<std::pair<std::size_t, bool>> owners;  // host, is stdout
        for (std::size_t i = 0; i < hosts_.size(); ++i) {
            if (!done[i] && hosts_[i].output >= 0) {
                fds.push_back({hosts_[i].output, POLLIN, 0});
                owners.emplace_back(i, true);
            }
            if (hosts_[i].errors >= 0) {
                fds.push_back({hosts_[i].errors, POLLIN, 0});
                owners.emplace_back(i, false);
            }
        }
        const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (remaining.count() <= 0) {
            for (std::size_t i = 0; i < hosts_.size(); ++i)
                if (!done[i]) {
                    const std::string said = last_line(hosts_[i].error_buffer);
                    return error("host " + hosts_[i].host + ": no broker answered within " +
                                 format_duration(timeout) + (said.empty() ? "" : ": " + said));
                }
        }
        fds.push_back({interrupts_, POLLIN, 0});  // the last: no host's
        const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(remaining.count()));
        if (ready < 0 && errno != EINTR)
            return error(std::string("poll: ") + std::strerror(errno));
        if (signalfd_siginfo info{};
            fds.back().revents != 0 && ::read(interrupts_, &info, sizeof info) == sizeof info) {
            interrupted_by_ = static_cast<int>(info.ssi_signo);
            const char* name = ::sigabbrev_np(interrupted_by_);
            return error(std::string("interrupted by SIG") + (name ? name : "?"));
        }
        for (std::size_t k = 0; ready > 0 && k < owners.size(); ++k) {
            if (fds[k].revents == 0)
                continue;
            Host& host = hosts_[owners[k].first];
            if (!owners[k].second) {
                if (!read_some(host.errors, host.error_buffer))
                    close_fd(host.errors);
                continue;
            }
            const bool open = read_some(host.output, host.read);
            const auto newline = host.read.find('\n');
            if (newline != std::string::npos) {
                lines[owners[k].first] = host.read.substr(0, newline);
                host.read.erase(0, newline + 1);
                done[owners[k].first] = true;
                --left;
            } else if (!open) {
                return error("host " + host.host + ": " + why_ended(host));
            }
        }
    }
    return lines;
}

Status LaunchedHosts::write(std::size_t index, std::string_view text) {
    Host& host = hosts_[index];
    while (!text.empty()) {
        const ssize_t n = ::write(host.input, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return error("host " + host.host +
                         ": the broker's launch agent took no input: " + std::strerror(errno));
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

void LaunchedHosts::pass_errors_on() {
    int stop[2];
    if (relay_.joinable() || ::pipe2(stop, O_CLOEXEC) != 0)
        return;
    relay_stop_ = stop[1];
    std::map<int, std::string> pending;  // fd: what came so far
    for (Host& host : hosts_) {
        write_all(STDERR_FILENO, host.error_buffer);
        host.error_buffer.clear();
        if (host.errors >= 0) {
            pending[host.errors];
            host.errors = -1;  // the relay's now
        }
    }
    relay_ = std::thread([stop = stop[0], pending = std::move(pending)]() mutable {
        bool stopping = false;
        while (!pending.empty()) {
            std::vector<pollfd> fds{{stop, POLLIN, 0}};
            for (const auto& [fd, text] : pending)
                fds.push_back({fd, POLLIN, 0});
            // Once told to stop, only what is already there is passed on.
            if (::poll(fds.data(), fds.size(), stopping ? 0 : -1) <= 0 && stopping)
                break;
            if (fds[0].revents != 0)
                stopping = true;
            for (std::size_t k = 1; k < fds.size(); ++k) {
                if (fds[k].revents == 0)
                    continue;
                std::string& text = pending[fds[k].fd];
                const bool open = read_some(fds[k].fd, text);
                // Whole lines, so that two hosts' lines do not mix.
                const auto last = text.rfind('\n');
                if (last != std::string::npos) {
                    write_all(STDERR_FILENO, std::string_view(text).substr(0, last + 1));
                    text.erase(0, last + 1);
                }
                if (!open) {
                    write_all(STDERR_FILENO, text);
                    ::close(fds[k].fd);
                    pending.erase(fds[k].fd);
                }
            }
        }
        for (const auto& [fd, text] : pending) {
            write_all(STDERR_FILENO, text);
            ::close(fd);
        }
        ::close(stop);
    });
}

// Returns when an agent still running ends, or after `timeout`: the run
// ends as soon as its agents have (a pidfd of each says so), with no
// polling interval to wait out.
void LaunchedHosts::wait_for_an_end(std::chrono::milliseconds timeout) const {
    std::vector<pollfd> ends;
    for (const Host& host : hosts_)
        if (host.pid > 0)
            if (const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, host.pid, 0));
                pidfd >= 0)
                ends.push_back(pollfd{pidfd, POLLIN, 0});
    if (ends.empty())
        ::usleep(1000);  // no pidfds (a kernel before 5.3): look again soon
    else
        ::poll(ends.data(), ends.size(), static_cast<int>(timeout.count()));
    for (const pollfd& end : ends)
        ::close(end.fd);
}

void LaunchedHosts::finish(std::chrono::milliseconds grace) {
    for (Host& host : hosts_)
        close_fd(host.input);
    const auto reap = [this](bool block) {
        bool all = true;
        for (Host& host : hosts_) {
            if (host.pid <= 0)
                continue;
            int status = 0;
            if (::waitpid(host.pid, &status, block ? 0 : WNOHANG) == host.pid)
                host.pid = -1;
            else
                all = false;
        }
        return all;
    };
    const auto wait_until = [&](std::chrono::steady_clock::time_point deadline) {
        while (!reap(false)) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                return;
            wait_for_an_end(left);
        }
    };
    wait_until(std::chrono::steady_clock::now() + grace);
    bool any = false;
    for (const Host& host : hosts_)
        if (host.pid > 0) {
            ::kill(-host.group, SIGTERM);
            any = true;
        }
    if (any) {
        wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(1));
        // An agent that went on TERM may leave what it started: its group
        // goes whole.
        for (const Host& host : hosts_)
            if (host.group > 0)
                ::kill(-host.group, SIGKILL);
    }
    reap(true);
    if (relay_.joinable()) {
        ::close(relay_stop_);  // the relay sees the end of this pipe
        relay_stop_ = -1;
        relay_.join();
    }
    for (Host& host : hosts_) {
        close_fd(host.output);
        close_fd(host.errors);
    }
}

}  // namespace gantry::overlay
