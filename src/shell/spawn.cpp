#include "shell/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>

#include "shell/clone_into.h"

namespace gantry::shell {
namespace {

// execvp's search path when the environment has no PATH.
constexpr std::string_view kDefaultSearchPath = "/bin:/usr/bin";
constexpr std::string_view kPmiFdEntry = "PMI_FD=3";
constexpr int kPmiFd = 3;

// The child runs on a stack of its own; it needs little (the system call
// wrapper, and a lazy symbol binding at worst).
constexpr std::size_t kChildStackSize = 64 * 1024;

// Signals the shell catches or ignores: a task starts with their default
// action (a caught one is reset by execve anyway; reset first so that no
// handler of the shell's can run in the child, and SIGPIPE because an
// ignored signal would stay ignored across execve).
constexpr int kSignalsToReset[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD};

// The kernel's struct sigaction for rt_sigaction (the layout of x86-64 and
// arm64; glibc's struct differs). A null handler is SIG_DFL.
struct KernelSigaction {
    void* handler;
    unsigned long flags;
    void* restorer;
    std::uint64_t mask;
};
constexpr KernelSigaction kDefaultAction{nullptr, 0, nullptr, 0};
constexpr std::uint64_t kNoSignals = 0;

// What the child reads, all prepared by the parent, and where it reports.
struct ChildArgs {
    const char* path;
    char* const* argv;
    char* const* envp;
    const char* cwd;                // null: stay
    const unsigned long* cpu_mask;  // null: leave the affinity as it is
    std::size_t cpu_mask_bytes;
    int fds[4];  // become 0, 1, 2, 3
    int umask;   // negative: keep
    const std::pair<int, rlimit>* limits;
    std::size_t limit_count;
    int cgroup_procs;  // negative: no cgroup to join
    pid_t parent;      // the shell's process, which the task must not outlive
    volatile StartStep failed;
    volatile int error;
};

// In the child: shares the parent's memory and runs on the stack given to
// clone, so it is not instrumented and calls nothing but syscall(2).
[[gnu::no_sanitize("address", "undefined")]] int child_failed(ChildArgs* args, StartStep step) {
    args->error = errno;
    args->failed = step;
    return 127;
}

[[gnu::no_sanitize("address", "undefined")]] int start_child(void* raw) {
    ChildArgs* const args = static_cast<ChildArgs*>(raw);
    for (const int signal : kSignalsToReset)
        syscall(SYS_rt_sigaction, signal, &kDefaultAction, nullptr, sizeof kNoSignals);
    // The task dies with the shell, however the shell dies (its children
    // are the watcher's business, shell/watcher.h). A shell that died before
    // this line left the child to another parent: nobody to run it for.
    syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (syscall(SYS_getppid) != args->parent)
        return 127;
    // Into the job's cgroup before anything else can start, and before the
    // descriptor could be overwritten by the task's stdio.
    if (args->cgroup_procs >= 0 && syscall(SYS_write, args->cgroup_procs, "0", 1) != 1)
        return child_failed(args, StartStep::kCgroup);
    // Bound before execve: the task's first instruction runs on its cpus.
    if (args->cpu_mask &&
        syscall(SYS_sched_setaffinity, 0, args->cpu_mask_bytes, args->cpu_mask) != 0)
        return child_failed(args, StartStep::kAffinity);
    // A process group of its own: forwarded signals reach the task's
    // children, and the terminal's ^C reaches only the shell.
    if (syscall(SYS_setpgid, 0, 0) != 0)
        return child_failed(args, StartStep::kProcessGroup);
    for (int target = 0; target < 4; ++target)
        if (args->fds[target] >= 0 && syscall(SYS_dup3, args->fds[target], target, 0) < 0)
            return child_failed(args, StartStep::kStdio);
    // No stray descriptor of the shell's process reaches the task (a kernel
    // without close_range leaves those without close-on-exec open); without
    // PMI-1, not its fd 3 either.
    syscall(SYS_close_range, args->fds[kPmiFd] >= 0 ? 4 : 3, ~0U, 0);
    if (args->cwd && syscall(SYS_chdir, args->cwd) != 0)
        return child_failed(args, StartStep::kDirectory);
    if (args->umask >= 0)
        syscall(SYS_umask, args->umask);
    for (std::size_t i = 0; i < args->limit_count; ++i)
        if (syscall(SYS_prlimit64, 0, args->limits[i].first, &args->limits[i].second, nullptr) != 0)
            return child_failed(args, StartStep::kLimit);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &kNoSignals, nullptr, sizeof kNoSignals);
    syscall(SYS_execve, args->path, args->argv, args->envp);
    return child_failed(args, StartStep::kExec);
}

std::string located(std::string_view file, std::string_view cwd) {
    if (cwd.empty() || file.starts_with('/'))
        return std::string(file);
    std::string path(cwd);
    path += '/';
    path += file;
    return path;
}

// 0 when `file` is an executable regular file, else why not.
int check_executable(const std::string& file) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    if (::faccessat(AT_FDCWD, file.c_str(), X_OK, AT_EACCESS) != 0)
        return errno;
    return 0;
}

// The name of a "NAME=VALUE" entry.
std::string_view name_of(std::string_view entry) {
    return entry.substr(0, entry.find('='));
}

}  // namespace

CommandPath find_command(std::string_view name, std::string_view search_path,
                         std::string_view cwd) {
    if (name.empty())
        return {std::string(name), ENOENT};
    if (name.find('/') != std::string_view::npos)
        return {std::string(name), check_executable(located(name, cwd))};
    int error = ENOENT;
    while (true) {
        const std::size_t colon = search_path.find(':');
        const std::string_view dir = search_path.substr(0, colon);
        std::string candidate(dir.empty() ? "." : dir);
        candidate += '/';
        candidate += name;
        const int found = check_executable(located(candidate, cwd));
        if (found == 0)
            return {std::move(candidate), 0};
        if (found == EACCES)
            error = EACCES;  // execvp's rule: remembered, and reported if nothing runs
        if (colon == std::string_view::npos)
            break;
        search_path.remove_prefix(colon + 1);
    }
    return {std::string(name), error};
}

std::string_view search_path_of(const std::vector<std::string>& env) {
    for (const std::string& entry : env)
        if (entry.starts_with("PATH="))
            return std::string_view(entry).substr(5);
    return kDefaultSearchPath;
}

int exit_code_of_start_error(int error) {
    return error == ENOENT ? 127 : 126;
}

Spawner::Spawner(const Job& job, std::optional<rlim_t> nofile_at_start, CgroupFds cgroup)
    : umask_(job.umask), cgroup_(cgroup) {
    void* stack = ::mmap(nullptr, kChildStackSize, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack != MAP_FAILED) {
        stack_ = stack;
        stack_size_ = kChildStackSize;
    }
    const auto hard_limit = [](int resource) {
        rlimit current{};
        ::getrlimit(resource, &current);
        return current.rlim_max;
    };
    if (nofile_at_start)
        limits_.push_back({RLIMIT_NOFILE, {*nofile_at_start, hard_limit(RLIMIT_NOFILE)}});
    for (const auto& [resource, value] : job.soft_limits)
        limits_.push_back({resource, {value, hard_limit(resource)}});
}

Spawner::~Spawner() {
    if (stack_)
        ::munmap(stack_, stack_size_);
}

StartResult Spawner::start(const Task& task, const std::string& path, TaskFds fds,
                           std::span<const std::string> extra_env) {
    if (!stack_)
        return {-1, StartStep::kClone, ENOMEM};
    argv_.clear();
    for (const std::string& arg : task.argv)
        argv_.push_back(const_cast<char*>(arg.c_str()));
    argv_.push_back(nullptr);
    envp_.clear();
    const auto replaced = [extra_env](std::string_view entry) {
        return std::any_of(extra_env.begin(), extra_env.end(), [entry](const std::string& extra) {
            return name_of(extra) == name_of(entry);
        });
    };
    for (const std::string& entry : task.env)
        if (!entry.starts_with("PMI_FD=") && (extra_env.empty() || !replaced(entry)))
            envp_.push_back(const_cast<char*>(entry.c_str()));
    for (const std::string& entry : extra_env)
        envp_.push_back(const_cast<char*>(entry.c_str()));
    if (fds.pmi >= 0)
        envp_.push_back(const_cast<char*>(kPmiFdEntry.data()));
    envp_.push_back(nullptr);
    cpu_mask_.clear();
    if (const auto last = task.cpus_os.last()) {
        constexpr std::size_t kBits = sizeof(unsigned long) * CHAR_BIT;
        cpu_mask_.assign(*last / kBits + 1, 0);
        for (const IdSet::Range& range : task.cpus_os.ranges())
            for (std::uint64_t cpu = range.lo; cpu <= range.hi; ++cpu)
                cpu_mask_[cpu / kBits] |= 1UL << (cpu % kBits);
    }

    ChildArgs args{};
    args.path = path.c_str();
    args.argv = argv_.data();
    args.envp = envp_.data();
    args.cwd = task.cwd.empty() ? nullptr : task.cwd.c_str();
    args.cpu_mask = cpu_mask_.empty() ? nullptr : cpu_mask_.data();
    args.cpu_mask_bytes = cpu_mask_.size() * sizeof(unsigned long);
    args.fds[0] = fds.in;
    args.fds[1] = fds.out;
    args.fds[2] = fds.err;
    args.fds[kPmiFd] = fds.pmi;
    args.umask = umask_ ? static_cast<int>(*umask_) : -1;
    args.limits = limits_.data();
    args.limit_count = limits_.size();
    args.cgroup_procs = -1;
    args.parent = ::getpid();
    args.failed = StartStep::kNone;
    args.error = 0;

    // CLONE_VFORK: the parent resumes once the child has called execve or
    // exited, so the stack is free again for the next task.
    pid_t pid = -1;
    if (cgroup_.dir >= 0 && clone_into_cgroup_) {
        const CloneResult cloned =
            clone_vm_into_cgroup(start_child, &args, stack_, stack_size_, cgroup_.dir);
        if (!cloned.unsupported && cloned.pid < 0)
            return {-1, StartStep::kClone, cloned.error};
        clone_into_cgroup_ = !cloned.unsupported;
        pid = cloned.pid;
    }
    if (pid < 0) {
        args.cgroup_procs = cgroup_.procs;  // the child moves itself in: slower, as good
        char* const stack_top = static_cast<char*>(stack_) + stack_size_;
        pid = ::clone(start_child, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
        if (pid < 0)
            return {-1, StartStep::kClone, errno};
    }
    if (args.failed != StartStep::kNone) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return {-1, args.failed, args.error};
    }
    return {pid, StartStep::kNone, 0};
}

}  // namespace gantry::shell
