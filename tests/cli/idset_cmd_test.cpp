// `gantry idset`, run as a real process: whole output and exit code.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace gantry {
namespace {

using test::run_gantry;

struct Case {
    std::vector<std::string> args;
    std::string input;  // stdin
    std::string out;
    int exit_code;
};

// Successful runs: everything on stdout, nothing on stderr.
const std::vector<Case> kRuns = {
    // Union, the default: arguments, then stdin words.
    {{"idset", "5-7", "0-3", "4"}, "", "0-7\n", 0},
    {{"idset", "[2,3,4,5]"}, "", "2-5\n", 0},
    {{"idset", "1-3,7"}, "", "1-3,7\n", 0},
    {{"idset", "--union", "1", "3"}, "", "1,3\n", 0},
    {{"idset", "-u", "1", "2"}, "", "1-2\n", 0},
    {{"idset"}, "3 1 2", "1-3\n", 0},
    {{"idset"}, "1-3\n7\n\n  9 ", "1-3,7,9\n", 0},
    {{"idset"}, "", "\n", 0},
    {{"idset", ""}, "", "\n", 0},
    {{"idset", "[]"}, "", "\n", 0},
    // Bracketed arguments are read as typed, as stdin is.
    {{"idset", "[0-3]", "[5]"}, "", "0-3,5\n", 0},
    {{"idset", "--expand", "[1-3,5]"}, "", "1 2 3 5\n", 0},
    {{"idset", "-c", "[1-3,5]"}, "", "4\n", 0},
    {{"idset", "0-2147483647"}, "", "0-2147483647\n", 0},
    // Output forms.
    {{"idset", "--count", "0-3,8"}, "", "5\n", 0},
    {{"idset", "-c", "0-2147483647"}, "", "2147483648\n", 0},
    {{"idset", "-c"}, "", "0\n", 0},
    {{"idset", "--expand", "0-3,8"}, "", "0 1 2 3 8\n", 0},
    {{"idset", "-e", "--delimiter=,", "0-3"}, "", "0,1,2,3\n", 0},
    {{"idset", "-e", "-d", "\\n", "1-3"}, "", "1\n2\n3\n", 0},
    {{"idset", "-e", "-d", "\\t", "1-2"}, "", "1\t2\n", 0},
    {{"idset", "-e", "-d", ", ", "1-2"}, "", "1, 2\n", 0},
    {{"idset", "-e"}, "", "\n", 0},
    {{"idset", "--brackets", "0-3,8"}, "", "[0-3,8]\n", 0},
    {{"idset", "-b", "5"}, "", "5\n", 0},
    {{"idset", "-b", "5-6"}, "", "[5-6]\n", 0},
    {{"idset", "-e", "-b", "-d,", "1-3"}, "", "[1,2,3]\n", 0},
    {{"idset", "-e", "-b", "1"}, "", "1\n", 0},
    // Combining.
    {{"idset", "--intersect", "0-10", "5-15"}, "", "5-10\n", 0},
    {{"idset", "-i", "0-10", "0-5", "0-3"}, "", "0-3\n", 0},
    {{"idset", "-i", "0-1", "3-4"}, "", "\n", 0},
    {{"idset", "--minus", "0-10", "2-3", "8"}, "", "0-1,4-7,9-10\n", 0},
    {{"idset", "-m", "0-10", "5-7", "1-3"}, "", "0,4,8-10\n", 0},
    {{"idset", "-m", "0-1024", "500-600"}, "", "0-499,601-1024\n", 0},
    {{"idset", "-m", "0-10"}, "", "0-10\n", 0},
    {{"idset", "--xor", "0-5", "3-8"}, "", "0-2,6-8\n", 0},
    {{"idset", "-X", "1-3", "2-5", "3-10"}, "", "1,3,6-10\n", 0},
    {{"idset", "-X", "3-10", "1-3", "2-5"}, "", "1,3,6-10\n", 0},
    // Many small sets: in an odd number of them, first minus all the others.
    {{"idset", "-X"}, "1 1 2 3-5 4 9", "2-3,5,9\n", 0},
    {{"idset", "-m"}, "0-20 5 7 6 1-2 19", "0,3-4,8-18,20\n", 0},
    {{"idset"}, "9 3 1 2 8 4-5 0", "0-5,8-9\n", 0},
    {{"idset", "-i"}, "0-9 5-20", "5-9\n", 0},
    // Selecting.
    {{"idset", "--nth=0,2", "3-9,20"}, "", "3,5\n", 0},
    {{"idset", "--nth=-1", "3-9,20"}, "", "20\n", 0},
    {{"idset", "-n", "-1", "3-9,20"}, "", "20\n", 0},
    {{"idset", "--nth=1", "1-10"}, "", "2\n", 0},
    {{"idset", "--nth=1,3-4", "1-10"}, "", "2,4-5\n", 0},
    {{"idset", "--nth=-1,3-4", "1-10"}, "", "7-8,10\n", 0},
    {{"idset", "-e", "--nth=1,3-4", "1-10"}, "", "2 4 5\n", 0},
    {{"idset", "-c", "--nth=1-1000000", "0-2147483647"}, "", "1000000\n", 0},
    {{"idset", "--nth=2147483647", "0-2147483647"}, "", "2147483647\n", 0},
    {{"idset", "--nth=-2147483647", "0-2147483647"}, "", "1\n", 0},
    {{"idset", "--nth=1-3", "0,10-11,20-29"}, "", "10-11,20\n", 0},
    {{"idset", "-m", "--nth=0", "0-10", "0-4"}, "", "5\n", 0},
    {{"idset", "--first", "4-9,12"}, "", "4\n", 0},
    {{"idset", "--last", "4-9,12"}, "", "12\n", 0},
    {{"idset", "--first"}, "", "\n", 0},
    {{"idset", "--last", "-c", "1-5"}, "", "1\n", 0},
    // --quiet: the exit code alone tells.
    {{"idset", "--quiet", "0-3"}, "", "", 0},
    {{"idset", "-q", "-i", "0-3", "4-7"}, "", "", 1},
    {{"idset", "-qm", "1-10", "1-20"}, "", "", 1},
    {{"idset", "-q"}, "", "", 1},
    {{"idset", "-q", "--nth=-1", "1-3"}, "", "", 0},
};

TEST(IdsetCommand, Runs) {
    for (const auto& c : kRuns)
        test::expect_gantry(c.args, c.input, c.out, "", c.exit_code);
}

struct Failure {
    std::vector<std::string> args;
    std::string input;
    std::string err;
};

// Bad input: one line on stderr, nothing on stdout, exit 2.
const std::vector<Failure> kFailures = {
    {{"idset", "3,2"}, "", "gantry: idset: ids out of order at offset 2 in \"3,2\"\n"},
    {{"idset", "1-3", "x"}, "", "gantry: idset: expected an id, found 'x' at offset 0 in \"x\"\n"},
    {{"idset", "-c"}, "1 [2", "gantry: idset: '[' is never closed at offset 0 in \"[2\"\n"},
    // RFC 22 allows one pair of brackets, on the command line as on stdin.
    {{"idset", "[[0]]"}, "", "gantry: idset: nested '[' at offset 1 in \"[[0]]\"\n"},
    {{"idset"}, "[[0]]", "gantry: idset: nested '[' at offset 1 in \"[[0]]\"\n"},
    {{"idset", "4294967296"},
     "",
     "gantry: idset: id is larger than 2147483647 at offset 0 in \"4294967296\"\n"},
    {{"idset", "1-1"},
     "",
     "gantry: idset: range must span two or more ids at offset 1 in \"1-1\"\n"},
    {{"idset", "-q", "1,,x"},
     "",
     "gantry: idset: expected an id, found 'x' at offset 3 in \"1,,x\"\n"},
    {{"idset", "-n", "10", "0-9"},
     "",
     "gantry: idset: --nth: index 10 is out of range for 10 ids in \"10\"\n"},
    {{"idset", "--nth=-11", "0-9"},
     "",
     "gantry: idset: --nth: index -11 is out of range for 10 ids in \"-11\"\n"},
    {{"idset", "--nth=0", ""},
     "",
     "gantry: idset: --nth: index 0 is out of range for 0 ids in \"0\"\n"},
    {{"idset", "--nth=-0", "0-9"},
     "",
     "gantry: idset: --nth: index -0 is not a position; -1 is the last id in \"-0\"\n"},
    {{"idset", "--nth=-3,2", "0-9"},
     "",
     "gantry: idset: --nth: ids out of order at offset 3 in \"-3,2\"\n"},
    {{"idset", "--nth", "", "0-9"}, "", "gantry: idset: --nth: no index given in \"\"\n"},
    {{"idset", "--nth=-", "0-9"}, "", "gantry: idset: --nth: no index given in \"-\"\n"},
    {{"idset", "--nth=x", "0-9"},
     "",
     "gantry: idset: --nth: expected an id, found 'x' at offset 0 in \"x\"\n"},
    // CLI11's refusals, said with the options as typed.
    {{"idset", "-d,", "0-3"}, "", "gantry: idset: -d needs --expand\n"},
    {{"idset", "--delimiter=,", "0-3"}, "", "gantry: idset: --delimiter needs --expand\n"},
    {{"idset", "-c", "-e", "1"}, "", "gantry: idset: -c cannot be used with -e\n"},
    {{"idset", "-i", "-m", "1"}, "", "gantry: idset: -i cannot be used with -m\n"},
    {{"idset", "--first", "--last", "1"},
     "",
     "gantry: idset: --first cannot be used with --last\n"},
    {{"idset", "--bogus"},
     "",
     "gantry: idset: unknown option \"--bogus\" (see gantry idset --help)\n"},
    {{"idset", "-n"}, "", "gantry: idset: -n needs a value\n"},
};

TEST(IdsetCommand, BadInputFailsWithOneLineAndExitTwo) {
    for (const auto& c : kFailures)
        test::expect_gantry(c.args, c.input, "", c.err, 2);
}

TEST(IdsetCommand, HelpShowsUsageOptionsAndExamples) {
    const auto result = run_gantry({"idset", "--help"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.err, "");
    EXPECT_TRUE(
        result.out.starts_with("Normalize, count, expand, index and combine RFC 22 idsets.\n"
                               "Usage: gantry idset [OPTIONS] [IDSET...]\n"))
        << result.out;
    for (const char* option :
         {"--union", "--intersect", "--minus", "--xor", "--nth", "--first", "--last", "--count",
          "--expand", "--delimiter", "--brackets", "--quiet"})
        EXPECT_NE(result.out.find(option), std::string::npos) << option;
    EXPECT_NE(result.out.find("Examples:\n  $ gantry idset 5-7 0-3 4\n  0-7\n"), std::string::npos);
    EXPECT_TRUE(result.out.ends_with("2 on a bad idset or bad options.\n")) << result.out;
}

// Every example in --help is run by the shell and must print what the help
// says below it.
TEST(IdsetCommand, HelpExamplesAreTrue) {
    const auto help = run_gantry({"idset", "--help"}).out;
    const std::string define_gantry = "gantry() { '" + test::gantry_binary() + "' \"$@\"; }; ";
    const std::string prompt = "  $ ";
    int examples = 0;
    for (std::size_t at = help.find(prompt); at != std::string::npos;) {
        const std::size_t command_end = help.find('\n', at);
        const std::string command =
            help.substr(at + prompt.size(), command_end - at - prompt.size());
        // The expected output: the indented lines up to the next prompt or blank line.
        std::string expected;
        std::size_t line = command_end + 1;
        while (line < help.size() && help.compare(line, prompt.size(), prompt) != 0 &&
               help.compare(line, 2, "  ") == 0) {
            const std::size_t line_end = help.find('\n', line);
            expected += help.substr(line + 2, line_end - line - 2) + "\n";
            line = line_end + 1;
        }
        const auto result = test::run_program({"sh", "-c", define_gantry + command});
        EXPECT_EQ(result.out, expected) << command;
        EXPECT_EQ(result.exit_code, 0) << command;
        ++examples;
        at = help.find(prompt, line);
    }
    EXPECT_EQ(examples, 12);
}

// Printing a huge expansion streams it instead of building it in memory.
TEST(IdsetCommand, ExpandsALargeSetInFull) {
    const auto result = run_gantry({"idset", "-e", "-d", ",", "0-999999"});
    ASSERT_EQ(result.exit_code, 0);
    ASSERT_EQ(result.err, "");
    std::string expected;
    for (int id = 0; id < 1000000; ++id)
        expected += std::to_string(id) + (id == 999999 ? "\n" : ",");
    EXPECT_EQ(result.out, expected);
}

}  // namespace
}  // namespace gantry
