// Starting a program as a child with posix_spawn: the child shares this
// process's memory until its exec (no copy of the page tables, no
// copy-on-write faults after), and a failed exec is reported to the caller
// rather than as the child's exit code. For brokers that start job shells
// and launch agents; the job shell starts its tasks its own way
// (shell/spawn.h: a cgroup, limits, a working directory).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace gantry {

struct SpawnOptions {
    // Descriptors the child gets: {from, to} is dup2(from, to).
    std::vector<std::pair<int, int>> descriptors;
    // Every descriptor from this one up is closed in the child; -1: none.
    int close_from = -1;
    bool new_session = false;        // setsid(): no terminal, a session of its own
    bool new_process_group = false;  // setpgid(0, 0)
    bool search_path = false;        // the program is looked for on PATH
};

// Starts `program` (looked for on PATH with search_path) with `argv` (its
// argv[0] the name it is given) and this process's environment, its signal
// mask empty and SIGPIPE at its default. Error (kind kSystem, its
// message strerror's: "No such file or directory"): the program could not
// be started.
Result<pid_t> spawn_process(const std::string& program, const std::vector<std::string>& argv,
                            const SpawnOptions& options);

}  // namespace gantry
