// Runs the built gantry command as a real process, for tests that compare a
// command's whole output and exit code.
#pragma once

#include <string>
#include <vector>

namespace gantry::test {

struct CommandResult {
    int exit_code = -1;  // 128+N when killed by signal N
    std::string out;
    std::string err;
};

// Runs `gantry args...` with `input` on stdin.
CommandResult run_gantry(const std::vector<std::string>& args, const std::string& input = "");

// Runs any program (argv[0] searched in PATH) with `input` on stdin.
CommandResult run_program(const std::vector<std::string>& argv, const std::string& input = "");

// Runs `gantry args...` with `input` on stdin and checks its whole stdout,
// stderr and exit code; failures name the command line.
void expect_gantry(const std::vector<std::string>& args, const std::string& input,
                   const std::string& out, const std::string& err, int exit_code);

// Path of the gantry binary under test.
std::string gantry_binary();

// `text` split at its newlines (a last line without one counts too).
std::vector<std::string> lines_of(const std::string& text);

}  // namespace gantry::test
