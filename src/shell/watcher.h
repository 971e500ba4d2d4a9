// The shell's watcher: a process that outlives the shell's own, so that
// the job's processes end even when the shell is killed (SIGKILL, an OOM
// kill, a crash) and cannot end them itself.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "shell/fd.h"
#include "util/error.h"

namespace gantry::shell {

// A child process that leaves the shell's session and process group
// (setsid: neither the terminal's signals nor a broker's kill of the
// shell's session reach it), ignores every signal it can, closes every
// descriptor but the read end of a pipe from the shell, and waits. When
// the pipe reaches end of file before the shell said done (the shell's
// process died), it kills what the job started: the job's cgroup
// (kill_cgroup: cgroup.kill, then rmdir), or without one SIGKILL to each
// task's process group it was told of. Then it exits.
class Watcher {
public:
    // Forks it, before the first task starts. `cgroup_dir`: the job's
    // cgroup; empty: the job has none, and watch_group() names what to kill.
    // Every signal is blocked across the fork, so that none of the caller's
    // handlers runs in the watcher before the watcher ignores them all.
    static Result<std::unique_ptr<Watcher>> start(const std::string& cgroup_dir);

    Watcher(const Watcher&) = delete;
    Watcher& operator=(const Watcher&) = delete;
    // Unless done() was said: closes the pipe, so the watcher kills what
    // is left, and reaps it.
    ~Watcher();

    // The process group of a task that has started (needed only without a
    // cgroup).
    void watch_group(pid_t group);
    // A directory the shell's process removes when it ends (its PMIx
    // server's): removed too when the process dies.
    void watch_directory(const std::string& path);
    // The job has ended and the shell has ended its processes itself: the
    // watcher exits without killing anything, and is reaped here.
    void done();

    pid_t pid() const { return pid_; }

private:
    Watcher(pid_t pid, Fd pipe) : pid_(pid), pipe_(std::move(pipe)) {}
    void tell(const std::string& line);
    void reap();

    pid_t pid_ = -1;
    Fd pipe_;  // the write end, close-on-exec: no task holds it
};

}  // namespace gantry::shell
