// Waiting on what other processes do, for tests that drive real ones.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <thread>

namespace gantry::test {

// Whether `condition()` becomes true within `limit`, asked every 10 ms.
// The limit is generous because sanitizer builds and a loaded machine make
// every step slower; a test that passes does not wait for it.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return condition();
}

// Whether process `pid` has exited: gone, or a zombie nobody has reaped
// yet (which kill(pid, 0) would still find).
bool ended(pid_t pid);

// The parent of process `pid` (field 4 of /proc/PID/stat); -1 when gone.
pid_t parent_of(pid_t pid);

// Whether process `pid` has a handler in place for `signal` (SigCgt in
// /proc/PID/status): a test that signals a command waits for this rather
// than for a while, so that the signal is caught, not fatal, on a slow
// machine too.
bool catches(pid_t pid, int signal);

// Whether process `pid` is blocked in read(2) on a socket (the call and its
// descriptor in /proc/PID/syscall). A front end that sends its request and
// then reads the answer, as overlay::Client::call does, has sent it by then: a
// test waits for this rather than for a while before it changes what the
// answer depends on.
bool reading_a_socket(pid_t pid);

}  // namespace gantry::test
