// spawn_process with real programs: what the child is given (descriptors,
// session, process group, signal state) and what a program that cannot be
// started gives the caller.
#include "util/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "util/file.h"

namespace gantry {
namespace {

SpawnOptions with(void (*set)(SpawnOptions&)) {
    SpawnOptions options;
    set(options);
    return options;
}

// What `script` (run by sh) writes on the descriptor given as its fd 1,
// and its exit code.
struct Ran {
    std::string out;
    int exit_code = -1;
};

Ran run_sh(const std::string& script, SpawnOptions options) {
    int pipe[2];
    EXPECT_EQ(::pipe2(pipe, O_CLOEXEC), 0);
    options.descriptors.insert(options.descriptors.begin(), {pipe[1], STDOUT_FILENO});
    const auto pid = spawn_process("/bin/sh", {"sh", "-c", script}, options);
    ::close(pipe[1]);
    Ran ran;
    if (!pid) {
        ::close(pipe[0]);
        ADD_FAILURE() << pid.error().str();
        return ran;
    }
    read_all(pipe[0], ran.out);
    ::close(pipe[0]);
    int status = 0;
    EXPECT_EQ(::waitpid(*pid, &status, 0), *pid);
    ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return ran;
}

TEST(SpawnProcess, GivesTheChildItsDescriptorsAndClosesTheRest) {
    const int extra = ::open("/dev/null", O_RDONLY);  // not close-on-exec
    ASSERT_GE(extra, 0);
    const int high = ::fcntl(extra, F_DUPFD, 20);
    ASSERT_GE(high, 20);
    const Ran kept =
        run_sh("test -e /proc/self/fd/" + std::to_string(high) + " && echo open", SpawnOptions{});
    EXPECT_EQ(kept.out, "open\n");
    const Ran closed =
        run_sh("test -e /proc/self/fd/" + std::to_string(high) + " || echo closed; echo x >&4",
               SpawnOptions{.descriptors = {{extra, 4}}, .close_from = 5});
    EXPECT_EQ(closed.out, "closed\n");
    EXPECT_NE(closed.exit_code, 0) << "fd 4 is /dev/null opened for reading: the echo fails";
    ::close(extra);
    ::close(high);
}

TEST(SpawnProcess, NewSessionAndNewProcessGroup) {
    // Fields 5 and 6 of /proc/self/stat: its process group, its session.
    const std::string ids = "read -r pid rest < /proc/self/stat; set -- $rest; echo $$ $4 $5";
    const Ran session = run_sh(ids, with([](SpawnOptions& o) { o.new_session = true; }));
    const auto words = [](const std::string& text) {
        std::vector<std::string> found;
        std::string word;
        for (const char c : text)
            if (c == ' ' || c == '\n') {
                if (!word.empty())
                    found.push_back(word);
                word.clear();
            } else {
                word += c;
            }
        return found;
    };
    const auto s = words(session.out);
    ASSERT_EQ(s.size(), 3u) << session.out;
    EXPECT_EQ(s[1], s[0]);  // its own group
    EXPECT_EQ(s[2], s[0]);  // its own session
    const Ran group = run_sh(ids, with([](SpawnOptions& o) { o.new_process_group = true; }));
    const auto g = words(group.out);
    ASSERT_EQ(g.size(), 3u) << group.out;
    EXPECT_EQ(g[1], g[0]);
    EXPECT_EQ(g[2], std::to_string(::getsid(0)));  // this process's session still
}

// The caller may ignore SIGPIPE and block signals; the child starts with
// neither, as a program started from a shell would.
TEST(SpawnProcess, SigpipeAtItsDefaultAndNoSignalBlocked) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction before {};
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &before), 0);
    sigset_t usr1, old_mask;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);
    const Ran ran =
        run_sh("grep '^SigBlk' /proc/self/status; kill -PIPE $$; echo ignored", SpawnOptions{});
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ::sigaction(SIGPIPE, &before, nullptr);
    EXPECT_EQ(ran.out, "SigBlk:\t0000000000000000\n");
    EXPECT_EQ(ran.exit_code, -1) << "SIGPIPE ended it";
}

TEST(SpawnProcess, FindsProgramsOnThePathOnlyWhenAsked) {
    const auto found =
        spawn_process("true", {"true"}, with([](SpawnOptions& o) { o.search_path = true; }));
    ASSERT_TRUE(found) << found.error().str();
    int status = 0;
    EXPECT_EQ(::waitpid(*found, &status, 0), *found);
    EXPECT_EQ(status, 0);
    const auto not_searched = spawn_process("true", {"true"}, SpawnOptions{});
    ASSERT_FALSE(not_searched);
    EXPECT_EQ(not_searched.error().str(), "spawn: No such file or directory");
    const auto missing = spawn_process("/nonexistent/program", {"x"}, SpawnOptions{});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().str(), "spawn: No such file or directory");
    EXPECT_EQ(missing.error().kind(), ErrorKind::kSystem);
}

}  // namespace
}  // namespace gantry
