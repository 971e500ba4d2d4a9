// What every gantry subcommand shares: its entry point, reading input from
// arguments or stdin, and how errors end a command.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "formats/idset.h"
#include "util/error.h"

namespace gantry::broker {
class PreparedProgram;
}

namespace gantry::cli {

// Exit codes of every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // a failure of the system, not of the input
inline constexpr int kExitUsage = 2;    // bad input or bad options

// Each subcommand: argv[0] is the subcommand's name ("idset").
int idset_main(int argc, char** argv);
int hostlist_main(int argc, char** argv);
int taskmap_main(int argc, char** argv);
int rset_main(int argc, char** argv);
int run_main(int argc, char** argv);
int start_main(int argc, char** argv);
// `gantry start -H` whose initial program, named by its CMD, was forked
// already (`gantry run -H`, start_cmd.cpp).
int start_main_with(int argc, char** argv, broker::PreparedProgram initial);
int keygen_main(int argc, char** argv);
int shutdown_main(int argc, char** argv);
int instance_main(int argc, char** argv);
int submit_main(int argc, char** argv);
int attach_main(int argc, char** argv);
int jobs_main(int argc, char** argv);
int info_main(int argc, char** argv);
int eventlog_main(int argc, char** argv);
int wait_main(int argc, char** argv);
int kill_main(int argc, char** argv);
int cancel_main(int argc, char** argv);
int purge_main(int argc, char** argv);
int urgency_main(int argc, char** argv);
int job_main(int argc, char** argv);
int alloc_main(int argc, char** argv);
int batch_main(int argc, char** argv);
int resource_main(int argc, char** argv);
int overlay_main(int argc, char** argv);
int job_shell_main(int argc, char** argv);  // started by a broker, see job_shell_cmd.cpp

// Prints `gantry: <error>` on stderr and returns kExitUsage.
int fail(const Error& error);
// Prints `gantry: <domain>: <message>` on stderr and returns kExitUsage.
int fail(std::string_view domain, std::string_view message);

// Pointers to `args`' strings, null-terminated, for a main(argc, argv) or
// exec: argc is args.size(). Valid while `args` is unchanged.
std::vector<char*> argv_of(std::vector<std::string>& args);

// The path of the running gantry, which it runs again (a broker, a job
// shell, the brokers of other hosts) from /proc/self/exe.
Result<std::string> gantry_executable();

// Parses argv with CLI11. Returns an exit code when the command should stop
// now (--help printed: 0; bad options: one line on stderr, 2), else nothing.
// Usage lines read `gantry NAME ...`, for the command and its subcommands.
std::optional<int> parse_options(CLI::App& app, int argc, char** argv);

// A check for an option's ->check(): a value that `fits` passes; another is
// refused as `<option> needs <what>, not "<value>"`. parse_options asks the
// same checks about a value CLI11 cannot convert, so that `-n x` is told
// what -n needs, in the same words.
CLI::Validator needs(std::string what, std::function<bool(const std::string&)> fits);
// Digits, not all zeros: counts of things that cannot be none.
CLI::Validator needs_positive_number();
// One of `names`, as given.
CLI::Validator needs_one_of(std::vector<std::string> names);

// `\n`, `\t` and `\\` in a --delimiter value, so that `-d '\n'` works as in flux.
std::string unescape_delimiter(std::string_view text);

// The 0-based positions that an --nth value selects among `count` items, as
// flux hostlist reads it: an idset of indices, or `-` and an idset counted
// from the end (`-1` is the last). `noun` names the items in messages
// ("id", "host"); errors are in `domain`.
Result<IdSet> nth_positions(std::string_view domain, std::string_view noun, std::string_view text,
                            std::uint64_t count);

// The command's input: its positional arguments when there are any, else
// stdin split on whitespace (so `echo 1-3 | gantry idset` works).
std::vector<std::string> arguments_or_stdin(const std::vector<std::string>& args);

// All of stdin, for formats that are whole documents (JSON R, task maps).
std::string read_stdin();

}  // namespace gantry::cli
