#include "shell/clone_into.h"

#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace gantry::shell {
namespace {

#ifndef CLONE_INTO_CGROUP
constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ULL;
#else
constexpr std::uint64_t kCloneIntoCgroup = CLONE_INTO_CGROUP;
#endif
constexpr long kSysClone3 = 435;  // the same number on every architecture

// struct clone_args as of Linux 5.7 (CLONE_ARGS_SIZE_VER1: 88 bytes).
struct CloneArgs {
    std::uint64_t flags;
    std::uint64_t pidfd;
    std::uint64_t child_tid;
    std::uint64_t parent_tid;
    std::uint64_t exit_signal;
    std::uint64_t stack;
    std::uint64_t stack_size;
    std::uint64_t tls;
    std::uint64_t set_tid;
    std::uint64_t set_tid_size;
    std::uint64_t cgroup;
};
static_assert(sizeof(CloneArgs) == 88);

CloneResult result_of(long returned) {
    if (returned >= 0)
        return {static_cast<pid_t>(returned), 0, false};
    const int error = static_cast<int>(-returned);
    return {-1, error, error == ENOSYS || error == EINVAL || error == E2BIG};
}

CloneArgs args_for(std::uint64_t flags, int cgroup_dir) {
    CloneArgs args{};
    args.flags = flags | kCloneIntoCgroup;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<std::uint64_t>(cgroup_dir);
    return args;
}

// The child of a clone3 with a stack of its own starts on that stack right
// after the system call, with the caller's registers: no C++ frame of the
// caller is usable there, so the call of fn and the exit are written here
// in the architecture's own instructions, as libc writes clone().
[[gnu::no_sanitize("address", "undefined")]] long raw_clone3_call(CloneArgs* args, int (*fn)(void*),
                                                                  void* arg) {
#if defined(__x86_64__)
    long returned;
    register int (*function)(void*) asm("r12") = fn;
    register void* argument asm("r13") = arg;
    asm volatile(
        "syscall\n\t"
        "test %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        // The child: a fresh stack, 16-byte aligned before the call.
        "xor %%ebp, %%ebp\n\t"
        "mov %%r13, %%rdi\n\t"
        "call *%%r12\n\t"
        "mov %%eax, %%edi\n\t"
        "mov $60, %%eax\n\t"  // exit
        "syscall\n\t"
        "hlt\n\t"
        "1:\n\t"
        : "=a"(returned)
        : "a"(kSysClone3), "D"(args), "S"(sizeof(CloneArgs)), "r"(function), "r"(argument)
        : "rcx", "r11", "memory");
    return returned;
#elif defined(__aarch64__)
    register long x0 asm("x0") = reinterpret_cast<long>(args);
    register long x1 asm("x1") = sizeof(CloneArgs);
    register long x8 asm("x8") = kSysClone3;
    register int (*function)(void*) asm("x19") = fn;
    register void* argument asm("x20") = arg;
    asm volatile(
        "svc #0\n\t"
        "cbnz x0, 1f\n\t"
        "mov x29, xzr\n\t"
        "mov x0, x20\n\t"
        "blr x19\n\t"
        "mov x8, #93\n\t"  // exit
        "svc #0\n\t"
        "1:\n\t"
        : "+r"(x0)
        : "r"(x1), "r"(x8), "r"(function), "r"(argument)
        : "x30", "memory", "cc");
    return x0;
#else
    (void)args;
    (void)fn;
    (void)arg;
    return -ENOSYS;
#endif
}

}  // namespace

CloneResult clone_vm_into_cgroup(int (*fn)(void*), void* arg, void* stack, unsigned long stack_size,
                                 int cgroup_dir) {
    CloneArgs args = args_for(CLONE_VM | CLONE_VFORK, cgroup_dir);
    args.stack = reinterpret_cast<std::uint64_t>(stack);
    args.stack_size = stack_size;
    return result_of(raw_clone3_call(&args, fn, arg));
}

CloneResult fork_into_cgroup(int cgroup_dir) {
    CloneArgs args = args_for(0, cgroup_dir);
    const long returned = ::syscall(kSysClone3, &args, sizeof args);
    return result_of(returned < 0 ? -errno : returned);
}

}  // namespace gantry::shell
