#include "overlay/launch_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>

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

// Each agent's stdout until its broker's line, and its stderr (held in
// error_buffer) until every line is in, watched in the event loop through
// descriptors that are let go of, never closed, when the reading ends: the
// agents' pipes stay LaunchedHosts'. The handlers of waits still pending
// then find the state gone.
class LaunchedHosts::Reader final : public LaunchedHosts::LineReader {
public:
    Reader(LaunchedHosts& launched, asio::io_context& loop, std::chrono::milliseconds timeout,
           LineHandlers handlers)
        : state_(std::make_shared<State>(launched, loop, timeout, std::move(handlers))) {
        State::start(state_);
    }
    ~Reader() override { state_->stop(); }

private:
    using Descriptor = asio::posix::stream_descriptor;

    struct State {
        State(LaunchedHosts& launched, asio::io_context& loop, std::chrono::milliseconds timeout,
              LineHandlers handlers)
            : launched(launched), handlers(std::move(handlers)), timeout(timeout), timer(loop) {
            for (Host& host : launched.hosts_) {
                outputs.emplace_back(std::make_unique<Descriptor>(loop, host.output));
                errors.emplace_back(
                    host.errors >= 0 ? std::make_unique<Descriptor>(loop, host.errors) : nullptr);
            }
        }

        static void start(const std::shared_ptr<State>& self) {
            for (std::size_t i = 0; i < self->outputs.size(); ++i) {
                watch_output(self, i);
                watch_errors(self, i);
            }
            self->timer.expires_after(self->timeout);
            self->timer.async_wait([weak = std::weak_ptr(self)](const asio::error_code& failure) {
                if (const auto self = weak.lock(); self && !failure && !self->stopped)
                    self->time_out();
            });
        }

        static void watch_output(const std::shared_ptr<State>& self, std::size_t index) {
            self->outputs[index]->async_wait(
                Descriptor::wait_read,
                [weak = std::weak_ptr(self), index](const asio::error_code& failure) {
                    if (const auto self = weak.lock(); self && !failure && !self->stopped)
                        self->output_ready(self, index);
                });
        }

        static void watch_errors(const std::shared_ptr<State>& self, std::size_t index) {
            if (!self->errors[index])
                return;
            self->errors[index]->async_wait(
                Descriptor::wait_read,
                [weak = std::weak_ptr(self), index](const asio::error_code& failure) {
                    if (const auto self = weak.lock(); self && !failure && !self->stopped)
                        self->errors_ready(self, index);
                });
        }

        void output_ready(const std::shared_ptr<State>& self, std::size_t index) {
            Host& host = launched.hosts_[index];
            const bool open = read_some(host.output, host.read);
            const auto newline = host.read.find('\n');
            if (newline == std::string::npos) {
                if (!open) {
                    stop();
                    handlers.failed(error("host " + host.host + ": " + launched.why_ended(host)));
                    return;
                }
                watch_output(self, index);
                return;
            }
            const std::string line = host.read.substr(0, newline);
            host.read.erase(0, newline + 1);
            host.answered = true;
            // What follows on the stream is not the launcher's to read.
            let_go(outputs[index]);
            handlers.line(index, line);
            if (stopped || !std::all_of(launched.hosts_.begin(), launched.hosts_.end(),
                                        [](const Host& each) { return each.answered; }))
                return;
            stop();
            handlers.done();
        }

        void errors_ready(const std::shared_ptr<State>& self, std::size_t index) {
            Host& host = launched.hosts_[index];
            if (read_some(host.errors, host.error_buffer)) {
                watch_errors(self, index);
                return;
            }
            let_go(errors[index]);
            close_fd(host.errors);
        }

        void time_out() {
            for (const Host& host : launched.hosts_)
                if (!host.answered) {
                    const std::string said = last_line(host.error_buffer);
                    stop();
                    handlers.failed(error("host " + host.host + ": no broker answered within " +
                                          format_duration(timeout) +
                                          (said.empty() ? "" : ": " + said)));
                    return;
                }
        }

        static void let_go(std::unique_ptr<Descriptor>& descriptor) {
            if (descriptor) {
                asio::error_code ignored;
                descriptor->cancel(ignored);
                (void)descriptor->release();
            }
            descriptor.reset();
        }

        void stop() {
            stopped = true;
            timer.cancel();
            for (auto& descriptor : outputs)
                let_go(descriptor);
            for (auto& descriptor : errors)
                let_go(descriptor);
        }

        LaunchedHosts& launched;
        LineHandlers handlers;
        std::chrono::milliseconds timeout;
        asio::steady_timer timer;
        std::vector<std::unique_ptr<Descriptor>> outputs;
        std::vector<std::unique_ptr<Descriptor>> errors;
        bool stopped = false;
    };

    std::shared_ptr<State> state_;
};

std::unique_ptr<LaunchedHosts::LineReader> LaunchedHosts::read_lines(
    asio::io_context& loop, std::chrono::milliseconds timeout, LineHandlers handlers) {
    return std::make_unique<Reader>(*this, loop, timeout, std::move(handlers));
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

void LaunchedHosts::close_lifelines() {
    for (Host& host : hosts_) {
        close_fd(host.input);
        if (!host.answered && host.pid > 0 && !host.terminated) {
            ::kill(-host.group, SIGTERM);
            host.terminated = true;
        }
    }
}

void LaunchedHosts::finish(std::chrono::milliseconds grace) {
    close_lifelines();
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
    for (Host& host : hosts_)
        if (host.pid > 0) {
            ::kill(-host.group, SIGTERM);
            host.terminated = true;
        }
    if (std::any_of(hosts_.begin(), hosts_.end(),
                    [](const Host& host) { return host.terminated; })) {
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
