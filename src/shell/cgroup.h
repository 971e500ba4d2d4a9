// A job's own cgroup (v2): every process its tasks start stays in it, even
// one that leaves the task's process group or session (`setsid cmd &`), so
// that the job's end can kill them all and leave nothing behind.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "shell/fd.h"

namespace gantry::shell {

// The calling process's cgroup v2 directory: its `0::` line of
// /proc/self/cgroup under the cgroup2 mount of /proc/self/mountinfo
// (/sys/fs/cgroup, or /sys/fs/cgroup/unified in hybrid mode); empty when
// there is no cgroup v2 hierarchy to find.
std::optional<std::string> own_cgroup_dir();

// Ends every process in cgroup directory `dir` and its descendants and
// removes them: SIGKILL through cgroup.kill, a bounded wait (10 s) until
// cgroup.events says `populated 0`, then rmdir, the deepest first. True
// when `dir` is gone. Used by the shell at the job's end and by its
// watcher (shell/watcher.h) when the shell dies.
bool kill_cgroup(const std::string& dir);

// The name of a job's cgroup, under its shell's own cgroup:
// gantry-<shell's pid>-<job id> (the id's odd characters as '_').
std::string job_cgroup_name(pid_t shell, std::string_view job_id);

class JobCgroup {
public:
    // A directory `name` under the calling process's own cgroup (`name.2`,
    // `name.3`... when taken), or null when cgroup v2 cannot be used here:
    // not mounted, no cgroup.kill (Linux before 5.14), or the process may
    // not create the directory or move processes into it. No controller
    // is needed.
    static std::unique_ptr<JobCgroup> create(std::string_view name);

    JobCgroup(const JobCgroup&) = delete;
    JobCgroup& operator=(const JobCgroup&) = delete;
    // Kills what is left and removes the directory, unless kill_all() did.
    ~JobCgroup();

    const std::string& dir() const { return dir_; }
    // Its cgroup.procs, open for writing (close-on-exec): a task's child
    // process writes "0" there before execve to join the job's cgroup,
    // where it cannot be started in it (shell/clone_into.h).
    int procs_fd() const { return procs_.get(); }
    // The directory, open (close-on-exec): where clone3 starts a child.
    int dir_fd() const { return dir_fd_.get(); }

    // kill_cgroup(dir()): every process of the job ends and the directory
    // goes. True when it is gone.
    bool kill_all();

private:
    JobCgroup(std::string dir, Fd dir_fd, Fd procs)
        : dir_(std::move(dir)), dir_fd_(std::move(dir_fd)), procs_(std::move(procs)) {}

    std::string dir_;
    Fd dir_fd_;
    Fd procs_;
    bool removed_ = false;
};

}  // namespace gantry::shell
