// Starting one task: its command looked up before anything starts, and a
// child process that shares the shell's memory until execve (no page table
// is copied) and makes nothing but system calls on the way.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shell/shell.h"

namespace gantry::shell {

// Where a command name leads: the file to execute, or why nothing can run.
struct CommandPath {
    std::string path;
    int error = 0;  // errno: ENOENT when nothing was found, EACCES when not executable
};

// Looks `name` up as execvp does. A name with '/' is used as is; any other
// is tried in each directory of `search_path` in turn (an empty entry is
// the current directory), the first executable file winning (a directory
// of that name is passed over, as the shells do). A relative
// result is relative to `cwd` (the task's directory; empty: the shell's),
// where the task will run it.
CommandPath find_command(std::string_view name, std::string_view search_path, std::string_view cwd);

// PATH among "NAME=VALUE" entries, or the search path execvp uses without one.
std::string_view search_path_of(const std::vector<std::string>& env);

// The exit code of a task that could not start: 127 when its command does
// not exist, 126 when it exists but cannot run.
int exit_code_of_start_error(int error);

// The child's steps before the task's program runs; the first to fail is
// reported with its errno.
enum class StartStep {
    kNone,
    kClone,
    kCgroup,
    kAffinity,
    kProcessGroup,
    kStdio,
    kDirectory,
    kLimit,
    kExec,
};

struct StartResult {
    pid_t pid = -1;
    StartStep failed = StartStep::kNone;  // when not kNone the child is already reaped
    int error = 0;
};

// A cgroup as the spawner puts tasks in it: its directory, where clone3
// starts them (shell/clone_into.h), and its cgroup.procs, which a task
// writes itself into where the kernel cannot do that; both open, -1: none.
struct CgroupFds {
    int dir = -1;
    int procs = -1;
};

// The descriptors a task starts with (each >= 4, so that none is
// overwritten while the child moves them to 0, 1, 2 and 3).
struct TaskFds {
    int in = -1;
    int out = -1;
    int err = -1;
    int pmi = -1;  // -1: no PMI-1 (no fd 3, no PMI_FD)
};

// Everything the same for every task of a job, prepared once: its stack for
// the children, the soft limits, the umask.
class Spawner {
public:
    // `nofile_at_start`: the shell's soft RLIMIT_NOFILE before it raised it,
    // given back to the tasks before the job's own limits. `cgroup`: the
    // job's cgroup, where each task starts (none: both -1).
    Spawner(const Job& job, std::optional<rlim_t> nofile_at_start, CgroupFds cgroup = {});
    Spawner(const Spawner&) = delete;
    Spawner& operator=(const Spawner&) = delete;
    ~Spawner();

    // Starts `task` running the program at `path`: SIGKILL when the
    // calling thread dies (PR_SET_PDEATHSIG; a child whose parent died
    // before that exits at once), the job's cgroup, cpu binding, own process
    // group, stdio and PMI at fd 3 (PMI_FD=3 added to its environment),
    // every other descriptor closed, directory, umask, limits, signals
    // reset, execve. `extra_env` ("NAME=VALUE") is added to the task's
    // environment, in place of its variables of the same names. The caller
    // blocks signals around a series of starts.
    StartResult start(const Task& task, const std::string& path, TaskFds fds,
                      std::span<const std::string> extra_env = {});

private:
    void* stack_ = nullptr;
    std::size_t stack_size_ = 0;
    std::optional<mode_t> umask_;
    CgroupFds cgroup_;
    bool clone_into_cgroup_ = true;  // until the kernel says it cannot
    std::vector<std::pair<int, rlimit>> limits_;
    // Reused between starts: the arrays handed to the child.
    std::vector<char*> argv_;
    std::vector<char*> envp_;
    std::vector<unsigned long> cpu_mask_;
};

}  // namespace gantry::shell
