// Processes a job may leave behind, found by a marker among their arguments
// (`sleep 30.71`: no other process on the machine has it), and the job
// cgroups a shell may leave, for tests that check that nothing outlives a
// job. Header-only; the cgroup functions need the shell library.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "shell/cgroup.h"
#include "support/process.h"

namespace gantry::test {

// An argument of `sleep` (a duration it accepts) that no other process on
// the machine has: the marker of one test's processes.
inline std::string unique_sleep_argument() {
    static int count = 0;
    return "30." + std::to_string(::getpid()) + "0" + std::to_string(++count);
}

// The arguments in a /proc/PID/cmdline file, each ended by '\0'; "" when
// the process has gone (plain reads: a stream would throw on ESRCH).
inline std::string command_line(const std::filesystem::path& file) {
    std::string text;
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return text;
    char bytes[4096];
    for (ssize_t n; (n = ::read(fd, bytes, sizeof bytes)) > 0;)
        text.append(bytes, static_cast<std::size_t>(n));
    ::close(fd);
    return text;
}

// The processes, zombies aside, with `marker` as one of their arguments.
inline std::vector<pid_t> processes_with_argument(const std::string& marker) {
    std::vector<pid_t> found;
    std::error_code failure;
    // increment(failure): a process that goes meanwhile is no exception.
    for (std::filesystem::directory_iterator entry("/proc", failure), end; !failure && entry != end;
         entry.increment(failure)) {
        const std::string name = entry->path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const std::string cmdline = command_line(entry->path() / "cmdline");
        std::size_t start = 0;
        for (std::size_t stop; (stop = cmdline.find('\0', start)) != std::string::npos;
             start = stop + 1)
            if (cmdline.compare(start, stop - start, marker) == 0) {
                const pid_t pid = std::stoi(name);
                if (!ended(pid))
                    found.push_back(pid);
                break;
            }
    }
    return found;
}

// The processes of one test, by their marker; whatever of them still runs
// when the test ends, however it ends, is killed.
class Leftovers {
public:
    explicit Leftovers(std::string marker) : marker_(std::move(marker)) {}
    Leftovers(const Leftovers&) = delete;
    Leftovers& operator=(const Leftovers&) = delete;
    ~Leftovers() {
        for (const pid_t pid : processes_with_argument(marker_))
            ::kill(pid, SIGKILL);
    }

    const std::string& marker() const { return marker_; }
    bool running() const { return !processes_with_argument(marker_).empty(); }
    // Waits (bounded) until one of them runs: the job has got that far.
    bool started() const {
        return eventually([this] { return running(); });
    }
    // Waits (bounded) until none is left.
    bool gone() const {
        return eventually([this] { return !running(); });
    }

private:
    std::string marker_;
};

// Whether this machine lets a shell give its job a cgroup: one made and
// removed as the shell does (shell/cgroup.h).
inline bool cgroups_usable() {
    return shell::JobCgroup::create("gantry-probe-" + std::to_string(::getpid())) != nullptr;
}

// The names of the cgroups under this process's own that contain `part`:
// a shell in a child of this process makes its jobs' cgroups there
// (gantry-<shell's pid>-<job id>).
inline std::vector<std::string> cgroups_containing(const std::string& part) {
    std::vector<std::string> names;
    const auto dir = shell::own_cgroup_dir();
    std::error_code failure;
    if (dir)
        for (std::filesystem::directory_iterator entry(*dir, failure), end;
             !failure && entry != end; entry.increment(failure)) {
            const std::string name = entry->path().filename().string();
            if (entry->is_directory(failure) && name.find(part) != std::string::npos)
                names.push_back(name);
        }
    return names;
}

// The cgroups whose names contain `part` (see cgroups_containing), killed and
// removed when the test ends however it ends: the shell should have left
// none, and a failing test must not leave one either.
class LeftoverCgroups {
public:
    explicit LeftoverCgroups(std::string part) : part_(std::move(part)) {}
    LeftoverCgroups(const LeftoverCgroups&) = delete;
    LeftoverCgroups& operator=(const LeftoverCgroups&) = delete;
    ~LeftoverCgroups() {
        const auto dir = shell::own_cgroup_dir();
        if (dir)
            for (const std::string& name : cgroups_containing(part_))
                shell::kill_cgroup(*dir + "/" + name);
    }

    std::vector<std::string> names() const { return cgroups_containing(part_); }
    // Waits (bounded) until none is left.
    bool gone() const {
        return eventually([this] { return names().empty(); });
    }

private:
    std::string part_;
};

// The message of a test that cannot check what only a cgroup catches.
inline constexpr const char* kNoCgroups =
    "cgroup v2 cannot be written here (no cgroup2 mount in /proc/self/mountinfo, or no "
    "permission to make a cgroup under this process's own): a process that leaves its "
    "session is not caught";

}  // namespace gantry::test
