#include "shell/watcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <string_view>
#include <vector>

#include "shell/cgroup.h"

namespace gantry::shell {
namespace {

constexpr std::string_view kDone = "done";
constexpr std::string_view kGroup = "group ";
constexpr std::string_view kDirectory = "directory ";

// Out of the shell's session and deaf to signals: what ends the shell (a
// terminal's ^C or hang-up, a broker's kill of the shell's session, a
// signal to its process group) must not end the one that cleans up after it.
void detach() {
    ::setsid();
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int signal = 1; signal < NSIG; ++signal)
        if (signal != SIGKILL && signal != SIGSTOP)
            ::sigaction(signal, &ignore, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Holds nothing of the shell's: no pipe of a task's, no socket of the
// broker's, no terminal stays open because of it, and no file system is
// kept busy by its directory.
void close_all_but(int fd) {
    if (fd > 0)
        ::close_range(0, static_cast<unsigned>(fd) - 1, 0);
    ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
    if (::chdir("/") != 0) {
        // Where it was, then: an unmount there waits for the job's end.
    }
}

void kill_groups(const std::vector<pid_t>& groups) {
    for (const pid_t group : groups)
        ::killpg(group, SIGKILL);
}

// The watcher's life: reads the shell's lines until "done" (exits) or the
// end of the pipe (the shell is gone: kills, then exits).
[[noreturn]] void watch(int from_shell, const std::string& cgroup_dir) {
    detach();
    close_all_but(from_shell);
    std::vector<pid_t> groups;
    std::vector<std::string> directories;
    std::string unread;
    char bytes[512];
    while (true) {
        const ssize_t n = ::read(from_shell, bytes, sizeof bytes);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        unread.append(bytes, static_cast<std::size_t>(n));
        for (std::size_t end; (end = unread.find('\n')) != std::string::npos;
             unread.erase(0, end + 1)) {
            const std::string_view line(unread.data(), end);
            if (line == kDone)
                ::_exit(0);
            pid_t group = 0;
            if (line.starts_with(kGroup) &&
                std::from_chars(line.data() + kGroup.size(), line.data() + line.size(), group).ec ==
                    std::errc())
                groups.push_back(group);
            else if (line.starts_with(kDirectory))
                directories.emplace_back(line.substr(kDirectory.size()));
        }
    }
    if (!cgroup_dir.empty())
        kill_cgroup(cgroup_dir);
    else
        kill_groups(groups);
    for (const std::string& directory : directories) {
        std::error_code ignored;
        std::filesystem::remove_all(directory, ignored);
    }
    ::_exit(0);
}

}  // namespace

Result<std::unique_ptr<Watcher>> Watcher::start(const std::string& cgroup_dir) {
    auto pipe = make_pipe();
    if (!pipe)
        return pipe.error();
    sigset_t all, previous;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &previous);
    const pid_t pid = ::fork();
    if (pid == 0)
        watch(pipe->read.get(), cgroup_dir);
    const int fork_error = errno;
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (pid < 0)
        return system_error("cannot start the watcher", fork_error);
    return std::unique_ptr<Watcher>(new Watcher(pid, std::move(pipe->write)));
}

Watcher::~Watcher() {
    pipe_.reset();
    reap();
}

void Watcher::watch_group(pid_t group) {
    tell(std::string(kGroup) + std::to_string(group) + "\n");
}

void Watcher::watch_directory(const std::string& path) {
    tell(std::string(kDirectory) + path + "\n");
}

void Watcher::done() {
    tell(std::string(kDone) + "\n");
    pipe_.reset();
    reap();
}

// A line of a few bytes: one write, atomic on a pipe. A watcher that has
// died makes it fail (EPIPE; SIGPIPE is ignored while the shell runs).
void Watcher::tell(const std::string& line) {
    if (!pipe_)
        return;
    while (::write(pipe_.get(), line.data(), line.size()) < 0 && errno == EINTR) {
    }
}

void Watcher::reap() {
    if (pid_ <= 0)
        return;
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

}  // namespace gantry::shell
