// The gantry command itself, before any command: its usage, `gantry help`,
// unknown commands and `--uri URI` in front of the command; and the shared
// libraries it loads.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/scratch.h"
#include "util/elf.h"

namespace gantry::test {
namespace {

TEST(Gantry, UnknownCommandIsOneLineAndExit2) {
    expect_gantry({"nosuch"}, "", "", "gantry: unknown command \"nosuch\" (see gantry --help)\n",
                  2);
    expect_gantry({"help", "nosuch"}, "", "",
                  "gantry: unknown command \"nosuch\" (see gantry --help)\n", 2);
    // Started by brokers, not a command users are helped to.
    expect_gantry({"help", "job-shell"}, "", "",
                  "gantry: unknown command \"job-shell\" (see gantry --help)\n", 2);
}

TEST(Gantry, HelpIsTheUsage) {
    const auto usage = run_gantry({"--help"});
    EXPECT_EQ(usage.exit_code, 0);
    EXPECT_EQ(usage.err, "");
    expect_gantry({"help"}, "", usage.out, "", 0);
    expect_gantry({"-h"}, "", usage.out, "", 0);
    // Without a command, the same on stderr.
    expect_gantry({}, "", "", usage.out, 2);
    EXPECT_NE(usage.out.find("Usage: gantry [--uri URI] COMMAND [OPTIONS] [ARGS]\n"
                             "       gantry help [COMMAND]\n"),
              std::string::npos)
        << usage.out;
    EXPECT_NE(usage.out.find("\n  run       map an MPMD program onto this machine's cores and run "
                             "it (in the instance of GANTRY_URI when set)\n"),
              std::string::npos)
        << usage.out;
}

TEST(Gantry, HelpCommandIsTheCommandsHelp) {
    for (const std::vector<std::string>& command : {std::vector<std::string>{"idset"},
                                                    {"hostlist"},
                                                    {"taskmap"},
                                                    {"R"},
                                                    {"R", "encode"},
                                                    {"run"},
                                                    {"submit"},
                                                    {"start"},
                                                    {"instance"},
                                                    {"instance", "info"},
                                                    {"jobs"},
                                                    {"eventlog"},
                                                    {"kill"},
                                                    {"alloc"},
                                                    {"batch"},
                                                    {"job"},
                                                    {"job", "map"}}) {
        std::vector<std::string> help_args = {"help"};
        help_args.insert(help_args.end(), command.begin(), command.end());
        std::vector<std::string> option_args = command;
        option_args.push_back("--help");
        const auto expected = run_gantry(option_args);
        EXPECT_EQ(expected.exit_code, 0) << command[0] << ": " << expected.err;
        EXPECT_NE(expected.out, "") << command[0];
        expect_gantry(help_args, "", expected.out, "", 0);
    }
}

TEST(Gantry, UriBeforeTheCommand) {
    // Handed to the command: no instance there, as it would say itself.
    expect_gantry({"--uri", "unix:///nonexistent/socket", "jobs"}, "", "",
                  "gantry: cannot connect to unix:///nonexistent/socket: No such file or "
                  "directory\n",
                  1);
    expect_gantry({"--uri=unix:///nonexistent/socket", "instance", "info"}, "", "",
                  "gantry: cannot connect to unix:///nonexistent/socket: No such file or "
                  "directory\n",
                  1);
    expect_gantry({"--uri", "unix:///x", "idset", "1"}, "", "",
                  "gantry: idset: takes no --uri (see gantry idset --help)\n", 2);
    expect_gantry({"--uri", "unix:///x", "nosuch"}, "", "",
                  "gantry: unknown command \"nosuch\" (see gantry --help)\n", 2);
    expect_gantry({"--uri"}, "", "", "gantry: --uri needs a value (see gantry --help)\n", 2);
    expect_gantry({"--uri", "unix:///x"}, "", "",
                  "gantry: no command after --uri \"unix:///x\" (see gantry --help)\n", 2);
}

// Where the build found their archives (cmake/StaticDeps.cmake), libzmq and
// SQLite are linked in: no shared copy is loaded at each start, nor those of
// the libraries libzmq.so brings that have an archive.
TEST(Gantry, LoadsNoSharedCopyOfTheLibrariesLinkedIn) {
    const std::string linked_in = GANTRY_ARCHIVES_LINKED;
    if (linked_in.empty())
        GTEST_SKIP() << "this build links every library shared (a sanitizer build, or no "
                        "libzmq.a and libsqlite3.a found)";
    EXPECT_EQ(linked_in, "zmq,sqlite3");
    const auto read = needed_libraries(read_file(gantry_binary()));
    ASSERT_TRUE(read) << read.error().str();
    const std::vector<std::string>& needed = *read;
    EXPECT_NE(std::find(needed.begin(), needed.end(), "libc.so.6"), needed.end());
    for (const std::string& name : needed)
        for (const char* linked : {"libzmq.", "libsqlite3.", "libsodium.", "libpgm", "libnorm.",
                                   "libbsd.", "libstdc++."})
            EXPECT_FALSE(name.starts_with(linked)) << name;
}

}  // namespace
}  // namespace gantry::test
