// The gantry command: dispatches to one subcommand per file in this folder.
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/command.h"

namespace {

struct Subcommand {
    std::string_view name;
    std::string_view summary;
    int (*main)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"idset", "normalize, count, expand and combine RFC 22 idsets", gantry::cli::idset_main},
    {"hostlist", "expand, compress, search and combine RFC 29 hostlists",
     gantry::cli::hostlist_main},
    {"taskmap", "convert and query RFC 34 task maps", gantry::cli::taskmap_main},
    {"R", "encode, decode and combine RFC 20 resource sets", gantry::cli::rset_main},
    {"run", "map an MPMD program onto nodes and show the map (--dry-run)", gantry::cli::run_main},
    {"start", "start an instance on this machine, around a program or as a daemon",
     gantry::cli::start_main},
    {"shutdown", "end an instance", gantry::cli::shutdown_main},
    {"instance", "ask an instance about itself (instance info)", gantry::cli::instance_main},
    {"submit", "queue a job in an instance; print its id", gantry::cli::submit_main},
    {"attach", "print a job's output as it comes, forwarding stdin and signals",
     gantry::cli::attach_main},
    {"jobs", "list an instance's jobs", gantry::cli::jobs_main},
    {"resource", "list an instance's nodes, cores and GPUs: free, allocated, down",
     gantry::cli::resource_main},
    {"info", "print all an instance knows of a job", gantry::cli::info_main},
    {"eventlog", "print a job's events, or follow them", gantry::cli::eventlog_main},
    {"wait", "wait for jobs to end; exit with the job's exit code", gantry::cli::wait_main},
    {"kill", "send a signal to running jobs", gantry::cli::kill_main},
    {"cancel", "cancel jobs, pending or running", gantry::cli::cancel_main},
    {"purge", "remove inactive jobs from the records", gantry::cli::purge_main},
    {"urgency", "change a pending job's urgency", gantry::cli::urgency_main},
    {"alloc", "run a program in a child instance on allocated resources", gantry::cli::alloc_main},
    {"batch", "submit a script to run in a child instance; print its id", gantry::cli::batch_main},
    {"job", "RFC 8's program methods: new, grow, map, exec, shrink, terminate...",
     gantry::cli::job_main},
};

void print_usage(std::ostream& out) {
    out << "Usage: gantry COMMAND [OPTIONS] [ARGS]\n\n"
           "gantry launches and manages parallel programs.\n\nCommands:\n";
    for (const auto& sub : kSubcommands)
        out << "  " << sub.name << std::string(10 - sub.name.size(), ' ') << sub.summary << '\n';
    out << "\nRun `gantry COMMAND --help` for a command's options and examples.\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        print_usage(std::cerr);
        return gantry::cli::kExitUsage;
    }
    const std::string_view name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        print_usage(std::cout);
        return gantry::cli::kExitOk;
    }
    if (name == "--version") {
        std::cout << "gantry 0.1.0\n";
        return gantry::cli::kExitOk;
    }
    // Started by an instance's broker for each job, not by users: not listed.
    if (name == "job-shell")
        return gantry::cli::job_shell_main(argc - 1, argv + 1);
    for (const auto& sub : kSubcommands)
        if (sub.name == name)
            return sub.main(argc - 1, argv + 1);
    return gantry::cli::fail("gantry",
                             "unknown command \"" + std::string(name) + "\" (run gantry --help)");
}
