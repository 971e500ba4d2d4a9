// Everything a job starts, held so that it ends with the job: the job's
// cgroup where cgroup v2 allows one (shell/cgroup.h), else the process
// groups of the processes it started; and a watcher (shell/watcher.h) that
// ends them all if the calling process dies first. The shell holds a job's
// tasks this way, and an instance its initial program.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "shell/cgroup.h"
#include "shell/watcher.h"
#include "util/error.h"

namespace gantry::shell {

class Containment {
public:
    // Makes the cgroup `name` under this process's own (when `use_cgroup`
    // and this machine allows it) and starts the watcher (unless another
    // process, such as the broker of a job shell, does its work): before
    // the first process is started.
    static Result<std::unique_ptr<Containment>> start(const std::string& name, bool use_cgroup,
                                                      bool watched = true);

    Containment(const Containment&) = delete;
    Containment& operator=(const Containment&) = delete;
    // end(), unless it was called.
    ~Containment();

    // The cgroup's directory and cgroup.procs, open: where a child is
    // started (shell/clone_into.h), or, where it cannot be, where it writes
    // "0" before execve to join it. -1 without a cgroup.
    int cgroup_dir_fd() const { return cgroup_ ? cgroup_->dir_fd() : -1; }
    int cgroup_procs() const { return cgroup_ ? cgroup_->procs_fd() : -1; }
    // The cgroup's directory; empty without one.
    std::string cgroup_dir() const { return cgroup_ ? cgroup_->dir() : std::string(); }

    // A process that has started as the leader of a process group of its
    // own: without a cgroup, what ends is that group.
    void add_group(pid_t group);
    // A directory the calling process removes itself when it ends, which
    // the watcher removes if the process dies first.
    void add_directory(const std::string& path);

    // Kills whatever is left (the cgroup, which is then removed; else the
    // groups, after their leaders were reaped: a group's number cannot name
    // another group while a member lives, and an empty one is not reused
    // before the pid numbers come round again), then lets the watcher go.
    void end();

private:
    Containment(std::unique_ptr<JobCgroup> cgroup, std::unique_ptr<Watcher> watcher)
        : cgroup_(std::move(cgroup)), watcher_(std::move(watcher)) {}

    std::unique_ptr<JobCgroup> cgroup_;  // null: the groups instead
    std::unique_ptr<Watcher> watcher_;   // null: someone else ends what is left
    std::vector<pid_t> groups_;
    bool ended_ = false;
};

}  // namespace gantry::shell
