#include "util/spawn.h"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstring>

namespace gantry {

namespace {

// The attributes and file actions of `options`; 0, or the first error.
int describe(const SpawnOptions& options, posix_spawnattr_t& attributes,
             posix_spawn_file_actions_t& actions) {
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (options.new_session)
        flags |= POSIX_SPAWN_SETSID;
    if (options.new_process_group)
        flags |= POSIX_SPAWN_SETPGROUP;
    sigset_t none;
    sigemptyset(&none);
    sigset_t pipe_default;
    sigemptyset(&pipe_default);
    sigaddset(&pipe_default, SIGPIPE);
    if (const int error = ::posix_spawnattr_setflags(&attributes, flags))
        return error;
    if (const int error = ::posix_spawnattr_setsigmask(&attributes, &none))
        return error;
    if (const int error = ::posix_spawnattr_setsigdefault(&attributes, &pipe_default))
        return error;
    if (options.new_process_group)
        if (const int error = ::posix_spawnattr_setpgroup(&attributes, 0))
            return error;
    for (const auto& [from, to] : options.descriptors)
        if (const int error = ::posix_spawn_file_actions_adddup2(&actions, from, to))
            return error;
    if (options.close_from >= 0)
        return ::posix_spawn_file_actions_addclosefrom_np(&actions, options.close_from);
    return 0;
}

}  // namespace

Result<pid_t> spawn_process(const std::string& program, const std::vector<std::string>& argv,
                            const SpawnOptions& options) {
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    if (const int error = ::posix_spawnattr_init(&attributes))
        return Error::system("spawn", std::strerror(error));
    if (const int error = ::posix_spawn_file_actions_init(&actions)) {
        ::posix_spawnattr_destroy(&attributes);
        return Error::system("spawn", std::strerror(error));
    }
    std::vector<char*> pointers;
    for (const std::string& arg : argv)
        pointers.push_back(const_cast<char*>(arg.c_str()));
    pointers.push_back(nullptr);
    pid_t pid = -1;
    int error = describe(options, attributes, actions);
    if (error == 0)
        error = options.search_path ? ::posix_spawnp(&pid, program.c_str(), &actions, &attributes,
                                                     pointers.data(), environ)
                                    : ::posix_spawn(&pid, program.c_str(), &actions, &attributes,
                                                    pointers.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    if (error != 0)
        return Error::system("spawn", std::strerror(error));
    return pid;
}

}  // namespace gantry
