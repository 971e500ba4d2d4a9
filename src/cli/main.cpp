// The gantry command: dispatches to one subcommand per file in this folder.
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "util/memory.h"

namespace {

// Where a command takes `--uri URI`, so that `gantry --uri URI CMD ...`
// can hand it over: after the command's name, or after its own subcommand
// (`instance info`, `job exec`), whose option it is.
enum class UriOption { kNone, kAfterName, kAfterSubcommand };

struct Subcommand {
    std::string_view name;
    std::string_view summary;
    int (*main)(int argc, char** argv);
    UriOption uri = UriOption::kAfterName;
};

constexpr auto kNoUri = UriOption::kNone;

constexpr Subcommand kSubcommands[] = {
    {"idset", "normalize, count, expand and combine RFC 22 idsets", gantry::cli::idset_main,
     kNoUri},
    {"hostlist", "expand, compress, search and combine RFC 29 hostlists",
     gantry::cli::hostlist_main, kNoUri},
    {"taskmap", "convert and query RFC 34 task maps", gantry::cli::taskmap_main, kNoUri},
    {"R", "encode, decode and combine RFC 20 resource sets", gantry::cli::rset_main, kNoUri},
    {"run",
     "map an MPMD program onto this machine's cores and run it (in the instance of "
     "GANTRY_URI when set)",
     gantry::cli::run_main},
    {"start", "start an instance on this machine, around a program or as a daemon",
     gantry::cli::start_main, kNoUri},
    {"keygen", "make the CURVE certificate of a configured instance", gantry::cli::keygen_main,
     kNoUri},
    {"shutdown", "end an instance", gantry::cli::shutdown_main},
    {"instance", "ask an instance about itself (instance info)", gantry::cli::instance_main,
     UriOption::kAfterSubcommand},
    {"submit", "queue a job in an instance; print its id", gantry::cli::submit_main},
    {"attach", "print a job's output as it comes, forwarding stdin and signals",
     gantry::cli::attach_main},
    {"jobs", "list an instance's jobs", gantry::cli::jobs_main},
    {"resource", "list an instance's nodes, cores and GPUs: free, allocated, down",
     gantry::cli::resource_main},
    {"overlay", "show the tree of an instance's brokers, their hosts and states",
     gantry::cli::overlay_main, UriOption::kAfterSubcommand},
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
     gantry::cli::job_main, UriOption::kAfterSubcommand},
};

void print_usage(std::ostream& out) {
    out << "Usage: gantry [--uri URI] COMMAND [OPTIONS] [ARGS]\n"
           "       gantry help [COMMAND]\n\n"
           "gantry launches and manages parallel programs.\n\nCommands:\n";
    for (const auto& sub : kSubcommands)
        out << "  " << sub.name << std::string(10 - sub.name.size(), ' ') << sub.summary << '\n';
    out << "\nRun `gantry help COMMAND` or `gantry COMMAND --help` for a command's options and "
           "examples.\n`--uri URI` before COMMAND is the command's own --uri: the instance to "
           "talk to\n(default: $GANTRY_URI).\n";
}

const Subcommand* subcommand_named(std::string_view name) {
    for (const auto& sub : kSubcommands)
        if (sub.name == name)
            return &sub;
    return nullptr;
}

// Errors of the gantry command itself, before any command: no domain.
int usage_error(std::string_view message) {
    std::cerr << "gantry: " << message << " (see gantry --help)\n";
    return gantry::cli::kExitUsage;
}

int unknown_command(std::string_view name) {
    return usage_error("unknown command " + gantry::quote(name));
}

// Runs `sub` with `args` (args[0] is its name).
int run_subcommand(const Subcommand& sub, std::vector<std::string> args) {
    std::vector<char*> pointers = gantry::cli::argv_of(args);
    return sub.main(static_cast<int>(args.size()), pointers.data());
}

// `gantry help CMD [SUB]`: what `gantry CMD [SUB] --help` prints.
int help(int argc, char** argv) {
    if (argc < 3) {
        print_usage(std::cout);
        return gantry::cli::kExitOk;
    }
    const Subcommand* sub = subcommand_named(argv[2]);
    if (sub == nullptr || argv[2] == std::string_view("job-shell"))
        return unknown_command(argv[2]);
    std::vector<std::string> args(argv + 2, argv + argc);
    args.emplace_back("--help");
    return run_subcommand(*sub, std::move(args));
}

// `gantry --uri URI CMD ARGS...` (or --uri=URI): CMD's own --uri, put
// where CMD reads it.
int with_uri(int argc, char** argv) {
    std::string_view first = argv[1];
    std::string uri;
    int next = 2;
    if (first.starts_with("--uri=")) {
        uri = first.substr(6);
    } else if (argc > 2) {
        uri = argv[2];
        next = 3;
    } else {
        return usage_error("--uri needs a value");
    }
    if (next >= argc)
        return usage_error("no command after --uri " + gantry::quote(uri));
    const Subcommand* sub = subcommand_named(argv[next]);
    if (sub == nullptr)
        return unknown_command(argv[next]);
    if (sub->uri == UriOption::kNone)
        return gantry::cli::fail(std::string(sub->name), "takes no --uri (see gantry " +
                                                             std::string(sub->name) + " --help)");
    std::vector<std::string> args(argv + next, argv + argc);
    std::size_t at = 1;
    if (sub->uri == UriOption::kAfterSubcommand && args.size() > 1 && !args[1].starts_with("-"))
        at = 2;
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), {"--uri", uri});
    return run_subcommand(*sub, std::move(args));
}

}  // namespace

int main(int argc, char** argv) {
    gantry::keep_freed_memory();
    if (argc < 2) {
        print_usage(std::cerr);
        return gantry::cli::kExitUsage;
    }
    const std::string_view name = argv[1];
    if (name == "--help" || name == "-h") {
        print_usage(std::cout);
        return gantry::cli::kExitOk;
    }
    if (name == "help")
        return help(argc, argv);
    if (name == "--version") {
        std::cout << "gantry 0.1.0\n";
        return gantry::cli::kExitOk;
    }
    if (name == "--uri" || name.starts_with("--uri="))
        return with_uri(argc, argv);
    // Started by an instance's broker for each job, not by users: not listed.
    if (name == "job-shell")
        return gantry::cli::job_shell_main(argc - 1, argv + 1);
    if (const Subcommand* sub = subcommand_named(name))
        return sub->main(argc - 1, argv + 1);
    return unknown_command(name);
}
