// An initial program forked before its instance starts, that runs once it
// is handed the instance's URI. `gantry run -H` forks its own front end so,
// before the broker's threads and libraries make a fork unsafe: when the
// last host joins, the front end submits the job at once, where a program
// started then would first be executed and loaded (a few milliseconds of
// every run across hosts).
//
// The instance treats it as the initial program it would have started
// (InstanceOptions::prepared_program): its own process group, forwarded
// signals, the terminal, its exit code the instance's.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <array>
#include <functional>
#include <memory>
#include <string>

#include "shell/containment.h"
#include "util/error.h"

namespace gantry::broker {

// The signals an instance passes on to its initial program's process group,
// and ends on itself while it has none.
inline constexpr std::array<int, 5> kForwardedSignals = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

// The name of the cgroup that holds an instance's initial program and
// what it starts: one per broker process.
std::string initial_program_cgroup_name();

class PreparedProgram {
public:
    // Forks a process that waits for the URI, then exits with run(uri),
    // which sees the environment an initial program does (GANTRY_URI, no
    // GANTRY_JOB_ID of an enclosing instance's job).
    // It is the leader of a process group of its own, held in the
    // containment of an initial program (its cgroup, which it joins at
    // once: the kernel's wait for that is off the instance's way), and dies
    // with this process however this one dies. Call it while this process
    // has one thread.
    static Result<PreparedProgram> fork(std::function<int(const std::string& uri)> run);

    PreparedProgram(PreparedProgram&& other) noexcept;
    PreparedProgram& operator=(PreparedProgram&& other) noexcept;
    PreparedProgram(const PreparedProgram&) = delete;
    PreparedProgram& operator=(const PreparedProgram&) = delete;
    // Not handed its URI: it learns that there is none, exits without
    // running anything, and is waited for.
    ~PreparedProgram();

    pid_t pid() const { return pid_; }
    // What holds it and what it starts, for the instance to end them with
    // it.
    std::unique_ptr<shell::Containment> take_containment() { return std::move(containment_); }

    // It runs from here on, and is the caller's to wait for.
    Status start(const std::string& uri);

private:
    PreparedProgram(pid_t pid, int uri_fd, std::unique_ptr<shell::Containment> containment)
        : pid_(pid), uri_fd_(uri_fd), containment_(std::move(containment)) {}
    void drop();

    pid_t pid_ = -1;
    int uri_fd_ = -1;  // the writing end of the pipe it reads its URI from
    std::unique_ptr<shell::Containment> containment_;
};

}  // namespace gantry::broker
