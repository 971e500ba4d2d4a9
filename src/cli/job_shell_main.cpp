// `gantry-job-shell`: the job shell as an executable of its own, which a
// broker starts for each job on its node (`gantry job-shell` does the same).
// It links only what a shell uses: no ZeroMQ, no SQLite, none of their
// dependencies, which would otherwise be loaded at every shell's start
// (bench/brokers.sh, docs/benchmarks.md).
#include "cli/command.h"
#include "util/memory.h"

int main(int argc, char** argv) {
    gantry::keep_freed_memory();
    return gantry::cli::job_shell_main(argc, argv);
}
