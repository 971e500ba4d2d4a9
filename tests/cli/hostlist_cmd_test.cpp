// `gantry hostlist`, run as a real process: whole output and exit code.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/vectors.h"

namespace gantry {
namespace {

using test::run_gantry;

struct Case {
    std::vector<std::string> args;
    std::string input;  // stdin
    std::string out;
    int exit_code;
};

// The cases of flux-core's t2814-hostlist-cmd.t (the `cli_flux_hostlist`
// vectors), with `flux hostlist` spelled `gantry hostlist`.
const std::vector<Case> kFluxCases = {
    {{"hostlist", "-c", "foo[1-10]"}, "", "10\n", 0},
    {{"hostlist"}, "foo1 foo2 foo3", "foo[1-3]\n", 0},
    {{"hostlist"}, "foo1\nfoo2\nfoo3", "foo[1-3]\n", 0},
    {{"hostlist", "foo[1-3]"}, "", "foo[1-3]\n", 0},
    {{"hostlist", "--fallback", "foo1", "foo2", "foo3"}, "", "foo[1-3]\n", 0},
    {{"hostlist", "-e", "foo[1-3]"}, "", "foo1 foo2 foo3\n", 0},
    {{"hostlist", "--expand", "--delimiter=\\n", "foo[1-3]"}, "", "foo1\nfoo2\nfoo3\n", 0},
    {{"hostlist", "--nth=1", "foo[1-10]"}, "", "foo2\n", 0},
    {{"hostlist", "--nth=-1", "foo[1-10]"}, "", "foo10\n", 0},
    {{"hostlist", "--nth=1,3-4", "foo[1-10]"}, "", "foo[2,4-5]\n", 0},
    {{"hostlist", "--nth=-1,3-4", "foo[1-10]"}, "", "foo[7-8,10]\n", 0},
    {{"hostlist", "-e", "--nth=1,3-4", "foo[1-10]"}, "", "foo2 foo4 foo5\n", 0},
    {{"hostlist", "-F", "foo1", "foo[1-10]"}, "", "0\n", 0},
    {{"hostlist", "-F", "foo10", "foo[1-10]"}, "", "9\n", 0},
    {{"hostlist", "-F", "foo[1-2]", "foo[1-10]"}, "", "0 1\n", 0},
    {{"hostlist", "-x", "foo1", "foo[0-10]"}, "", "foo[0,2-10]\n", 0},
    {{"hostlist", "-x", "foo[0-9]", "foo[0-10]"}, "", "foo10\n", 0},
    {{"hostlist", "-x", "1", "foo[0-10]"}, "", "foo[0,2-10]\n", 0},
    {{"hostlist", "-x", "0-9", "foo[0-10]"}, "", "foo10\n", 0},
    {{"hostlist", "-x", "foo5", "-n", "5-6", "foo[1-10]"}, "", "foo[7-8]\n", 0},
    {{"hostlist", "-L", "2", "foo[1-10]"}, "", "foo[1-2]\n", 0},
    {{"hostlist", "-L", "-2", "foo[1-10]"}, "", "foo[9-10]\n", 0},
    {{"hostlist", "host1", "host0", "host5", "host4"}, "", "host[1,0,5,4]\n", 0},
    {{"hostlist", "host1", "host1", "host1"}, "", "host[1,1,1]\n", 0},
    {{"hostlist", "-S", "host3", "host2", "host1", "host0"}, "", "host[0-3]\n", 0},
    {{"hostlist", "-S", "host2", "host1", "host3", "host1"}, "", "host[1,1-3]\n", 0},
    {{"hostlist", "-u", "host2", "host1", "host3", "host1"}, "", "host[1-3]\n", 0},
    {{"hostlist", "-u", "host[1-3]", "host2"}, "", "host[1-3]\n", 0},
    {{"hostlist", "-u", "host[1-3]", "bar", "baz"}, "", "bar,baz,host[1-3]\n", 0},
    {{"hostlist", "-i", "host[1-3]", "host[2-5]"}, "", "host[2-3]\n", 0},
    {{"hostlist", "-i", "host[1-3]", "host[2-5]", "host[3-10]"}, "", "host3\n", 0},
    {{"hostlist", "-X", "host[1-3]", "host[2-5]"}, "", "host[1,4-5]\n", 0},
    {{"hostlist", "-X", "host[1-3]", "host[2-5]", "host[3-10]"}, "", "host[1,3,6-10]\n", 0},
    {{"hostlist", "-X", "host[3-10]", "host[1-3]", "host[2-5]"}, "", "host[1,3,6-10]\n", 0},
    {{"hostlist", "-m", "host[1-10]", "host[2-3]"}, "", "host[1,4-10]\n", 0},
    {{"hostlist", "-m", "host[1-10]", "host[2-3]", "host[5-10]"}, "", "host[1,4]\n", 0},
    {{"hostlist", "-m", "host[1-10]", "host[1-20]"}, "", "\n", 0},
    {{"hostlist", "-qm", "host[1-10]", "host[1-20]"}, "", "", 1},
    {{"hostlist", "-m", "host[1,1,1]", "host1"}, "", "host[1,1]\n", 0},
    {{"hostlist", "-um", "host[1,1,1]", "host1"}, "", "host1\n", 0},
    {{"hostlist", "--quiet", "host[1-10]"}, "", "", 0},
    {{"hostlist", "--quiet", "--intersect", "host1", "host2"}, "", "", 1},
    {{"hostlist", "--fallback", "foo1"}, "", "foo1\n", 0},
};

// gantry's own cases: long option names, suffixes, padding, large lists.
const std::vector<Case> kRuns = {
    {{"hostlist"}, "", "\n", 0},
    {{"hostlist", ""}, "", "\n", 0},
    {{"hostlist", "foo1 foo2", "foo3"}, "", "foo[1-3]\n", 0},
    {{"hostlist"}, "  foo1\n\n\tfoo[2-3],bar \n", "foo[1-3],bar\n", 0},
    {{"hostlist", "foo0-eth2", "foo1-eth2", "foo2-eth2"}, "", "foo[0-2]-eth2\n", 0},
    {{"hostlist", "foo[005,4,11-13]"}, "", "foo[005,004,011-013]\n", 0},
    {{"hostlist", "foo01", "foo1"}, "", "foo01,foo1\n", 0},
    {{"hostlist", "--count", "foo[0-1048575]", "foo[0-1048575]"}, "", "2097152\n", 0},
    {{"hostlist", "--nth=-1", "node[0-999999]"}, "", "node999999\n", 0},
    {{"hostlist", "--find=node765432", "node[0-999999]"}, "", "765432\n", 0},
    {{"hostlist", "--minus", "node[1-1000000]", "node[5-10]"}, "", "node[1-4,11-1000000]\n", 0},
    {{"hostlist", "--union", "b[1-2]", "a", "b1"}, "", "a,b[1-2]\n", 0},
    {{"hostlist", "--unique", "b2", "b1"}, "", "b[1-2]\n", 0},
    {{"hostlist", "--sort", "node10", "node9", "node010", "node1-ib"},
     "",
     "node1-ib,node[9-10],node010\n",
     0},
    {{"hostlist", "--intersect", "host[1-3]"}, "", "host[1-3]\n", 0},
    {{"hostlist", "--xor", "a,b", "b,c"}, "", "a,c\n", 0},
    {{"hostlist", "--exclude=a", "--exclude=0", "a,b,c,a"}, "", "c\n", 0},
    {{"hostlist", "--exclude=5-20", "foo[1-3]"}, "", "foo[1-3]\n", 0},
    {{"hostlist", "--limit=20", "foo[1-3]"}, "", "foo[1-3]\n", 0},
    {{"hostlist", "--limit=-20", "foo[1-3]"}, "", "foo[1-3]\n", 0},
    {{"hostlist", "-e", "-d", ",", "foo[1-3]"}, "", "foo1,foo2,foo3\n", 0},
    {{"hostlist", "-F", "foo[3,1]", "-d", "\\t", "foo[1-3]"}, "", "2\t0\n", 0},
    {{"hostlist", "-e"}, "", "\n", 0},
    {{"hostlist", "-c"}, "", "0\n", 0},
    {{"hostlist", "-S", "-n", "0", "host3", "host1"}, "", "host1\n", 0},
    // A bracketed argument is one hostlist of numbers, as typed.
    {{"hostlist", "--count", "[1-3,5-6]"}, "", "5\n", 0},
    {{"hostlist", "--expand", "[1-3,5-6]"}, "", "1 2 3 5 6\n", 0},
    {{"hostlist", "--expand", "[00-2]"}, "", "00 01 02\n", 0},
    {{"hostlist", "n[1-2]", "[3]"}, "", "n[1-2],3\n", 0},
    {{"hostlist", "--exclude=[1-2]", "n[0-3]"}, "", "n[0,3]\n", 0},
    {{"hostlist", "-x", "[1-2]", "n[0-3]"}, "", "n[0,3]\n", 0},
};

TEST(HostlistCommand, FluxCases) {
    for (const auto& c : kFluxCases)
        test::expect_gantry(c.args, c.input, c.out, "", c.exit_code);
}

TEST(HostlistCommand, Runs) {
    for (const auto& c : kRuns)
        test::expect_gantry(c.args, c.input, c.out, "", c.exit_code);
}

struct Failure {
    std::vector<std::string> args;
    std::string err;
    int exit_code;
};

// Nothing on stdout; one line on stderr.
const std::vector<Failure> kFailures = {
    // flux: "invalid index"; gantry says which and why.
    {{"hostlist", "-n", "10", "foo[1-10]"},
     "gantry: hostlist: --nth: index 10 is out of range for 10 hosts in \"10\"\n",
     2},
    {{"hostlist", "-n", "-11", "foo[1-10]"},
     "gantry: hostlist: --nth: index -11 is out of range for 10 hosts in \"-11\"\n",
     2},
    {{"hostlist", "-n", "-0", "foo[1-10]"},
     "gantry: hostlist: --nth: index -0 is not a position; -1 is the last host in \"-0\"\n",
     2},
    {{"hostlist", "-n", "2-1", "foo[1-10]"},
     "gantry: hostlist: --nth: range end is below its start at offset 1 in \"2-1\"\n",
     2},
    // flux: "not found", exit 1: a negative answer rather than bad input.
    {{"hostlist", "-F", "foo1", "foo[2-10]"},
     "gantry: hostlist: --find: foo1 is not in the list in \"foo[2-10]\"\n",
     1},
    {{"hostlist", "foo[1-"}, "gantry: hostlist: '[' without ']' at offset 3 in \"foo[1-\"\n", 2},
    {{"hostlist", "foo[1-3]bar[4-5]"},
     "gantry: hostlist: a second bracket group is not allowed at offset 11 in "
     "\"foo[1-3]bar[4-5]\"\n",
     2},
    {{"hostlist", "ok", "foo[0-1048576]"},
     "gantry: hostlist: range of 1048577 hosts is larger than 1048576 at offset 4 in "
     "\"foo[0-1048576]\"\n",
     2},
    {{"hostlist", "-x", "foo[", "a"},
     "gantry: hostlist: --exclude: hostlist: '[' without ']' at offset 3 in \"foo[\"\n",
     2},
    {{"hostlist", "-L", "0", "a"},
     "gantry: hostlist: --limit: 0 keeps no host; give N > 0 for the first N, N < 0 for the "
     "last N\n",
     2},
    {{"hostlist", "-L", "x", "a"}, "gantry: hostlist: -L needs a whole number, not \"x\"\n", 2},
    {{"hostlist", "--limit=x", "a"},
     "gantry: hostlist: --limit needs a whole number, not \"x\"\n",
     2},
    {{"hostlist", "-L"}, "gantry: hostlist: -L needs a value\n", 2},
    {{"hostlist", "-i", "-m", "a"}, "gantry: hostlist: -i cannot be used with -m\n", 2},
    {{"hostlist", "--intersect", "--minus", "a"},
     "gantry: hostlist: --intersect cannot be used with --minus\n",
     2},
    {{"hostlist", "-F", "a", "-F", "b", "a,b"},
     "gantry: hostlist: -F is given more than once; it takes one value\n",
     2},
    {{"hostlist", "--bogus"},
     "gantry: hostlist: unknown option \"--bogus\" (see gantry hostlist --help)\n",
     2},
    {{"hostlist", "--bogus=[1]"},
     "gantry: hostlist: unknown option \"--bogus\" (see gantry hostlist --help)\n",
     2},
};

TEST(HostlistCommand, Failures) {
    for (const auto& c : kFailures)
        test::expect_gantry(c.args, "", "", c.err, c.exit_code);
}

TEST(HostlistCommand, HelpHasExamples) {
    const auto r = run_gantry({"hostlist", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("Usage: gantry hostlist [OPTIONS] [HOSTLIST...]"), std::string::npos);
    EXPECT_NE(r.out.find("  $ gantry hostlist --minus 'node[1-10]' 'node[2-3]' node7\n"
                         "  node[1,4-6,8-10]\n"),
              std::string::npos);
}

// Every `cli_flux_hostlist` record, run through a shell as written. Where
// flux-core's output is an error description, gantry's exit code is checked.
TEST(HostlistCommand, FluxVectors) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("hostlist_ops.json")["cli_flux_hostlist"];
    ASSERT_EQ(records.size(), 46u);
    for (const auto& record : records) {
        std::string command = record["cmd"];
        const auto at = command.find("flux hostlist");
        ASSERT_NE(at, std::string::npos) << command;
        command.replace(at, 4, "'" + test::gantry_binary() + "'");
        const std::string expected = record["stdout"];
        const auto r = test::run_program({"sh", "-c", command});
        if (expected == "<error: invalid index>" || expected == "<error: invalid hostlist>") {
            EXPECT_EQ(r.exit_code, 2) << command;
            EXPECT_EQ(r.out, "") << command;
        } else if (expected == "<error: not found>" || expected == "<exit nonzero>" ||
                   expected == "<exit 1, no output>") {
            EXPECT_EQ(r.exit_code, 1) << command;
            EXPECT_EQ(r.out, "") << command;
        } else if (expected == "<no output, exit 0>") {
            EXPECT_EQ(r.exit_code, 0) << command;
            EXPECT_EQ(r.out, "") << command;
        } else {
            EXPECT_EQ(r.exit_code, 0) << command << r.err;
            EXPECT_EQ(r.out, expected + "\n") << command;
        }
    }
}

}  // namespace
}  // namespace gantry
