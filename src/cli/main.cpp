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
    for (const auto& sub : kSubcommands)
        if (sub.name == name)
            return sub.main(argc - 1, argv + 1);
    return gantry::cli::fail("gantry",
                             "unknown command \"" + std::string(name) + "\" (run gantry --help)");
}
