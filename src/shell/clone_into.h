// Starting a child process straight into a cgroup (clone3 with
// CLONE_INTO_CGROUP, Linux 5.7). Moving a process into a cgroup afterwards
// (a write to cgroup.procs) makes the kernel wait for an RCU grace period,
// 5 to 15 ms on a virtual machine: more than starting the task itself.
// Starting it there costs nothing more than a clone.
#pragma once

#include <sys/types.h>

namespace gantry::shell {

// What a clone into a cgroup came to.
struct CloneResult {
    pid_t pid = -1;  // the child's (in the parent); -1 on failure
    int error = 0;   // errno on failure
    // The kernel cannot clone into a cgroup (ENOSYS, EINVAL, E2BIG: before
    // 5.7, or no cgroup v2 for the descriptor): nothing was started, and
    // the caller falls back to moving the child in.
    bool unsupported = false;
};

// Like clone(fn, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, arg), the
// child starting in the cgroup whose directory is open as `cgroup_dir`:
// it runs fn(arg) on `stack` (of `stack_size` bytes, 16-byte aligned) in
// the caller's memory and exits with its return value unless it execs; the
// caller resumes once it has done either. x86-64 and arm64; elsewhere every
// call is `unsupported`.
CloneResult clone_vm_into_cgroup(int (*fn)(void*), void* arg, void* stack, unsigned long stack_size,
                                 int cgroup_dir);

// Like fork() (a copy of the caller, returning 0 in the child), the child
// starting in the cgroup whose directory is open as `cgroup_dir`. The child
// of a single-threaded caller only: glibc's fork handlers do not run, so it
// should do no more than set itself up and exec.
CloneResult fork_into_cgroup(int cgroup_dir);

}  // namespace gantry::shell
