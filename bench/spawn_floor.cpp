// The floor no launcher can beat: posix_spawn N copies of a command, wait
// for them, nothing else. `-r` prints the largest resident set of any
// process waited for (the launcher under test, when N is 1), in KiB.
//
// Usage: spawn_floor [-r] N CMD [ARGS...]
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
    int first = 1;
    const bool report_rss = argc > 1 && std::strcmp(argv[1], "-r") == 0;
    if (report_rss)
        ++first;
    if (argc < first + 2) {
        std::fprintf(stderr, "usage: spawn_floor [-r] N CMD [ARGS...]\n");
        return 2;
    }
    const long n = std::strtol(argv[first], nullptr, 10);
    std::vector<pid_t> pids;
    for (long i = 0; i < n; ++i) {
        pid_t pid = 0;
        if (posix_spawnp(&pid, argv[first + 1], nullptr, nullptr, argv + first + 1, environ) != 0) {
            std::perror(argv[first + 1]);
            return 1;
        }
        pids.push_back(pid);
    }
    int failures = 0;
    for (const pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    if (report_rss) {
        rusage usage{};
        getrusage(RUSAGE_CHILDREN, &usage);
        std::fprintf(stderr, "max_rss_kib=%ld\n", usage.ru_maxrss);
    }
    return failures == 0 ? 0 : 1;
}
