// `gantry taskmap` run as a process: whole outputs and exit codes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace gantry {
namespace {

struct Case {
    std::vector<std::string> args;
    std::string input;  // stdin
    int exit_code;
    std::string out;
    std::string err;
};

void expect_runs(const Case& c) {
    std::vector<std::string> args = {"taskmap"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    test::expect_gantry(args, c.input, c.out, c.err, c.exit_code);
}

TEST(TaskmapCommand, Conversions) {
    const Case kCases[] = {
        {{"0,4,8,12;1,5,9,13;2,6,10,14;3,7,11,15"}, "", 0, "[[0,4,1,4]]\n", ""},
        {{"--to=json", "(vector,(0,4,2),(4,2,4))"}, "", 0, "[[0,4,2,1],[4,2,4,1]]\n", ""},
        {{"--to=raw", "[[0,4,2,2]]"}, "", 0, "0-1,8-9;2-3,10-11;4-5,12-13;6-7,14-15\n", ""},
        {{"--to=raw", "[[0,6,1,2],[4,2,1,2]]"},
         "",
         0,
         "0,6;1,7;2,8;3,9;4,10,12,14;5,11,13,15\n",
         ""},
        {{"--to=pmi", "[[0,2,1,2]]"}, "", 0, "(vector,(0,2,1),(0,2,1))\n", ""},
        {{"--to=pmi", "0-3;4-7"}, "", 0, "(vector,(0,2,4))\n", ""},
        {{"--to=wrapped", "[[0,4096,256,1]]"},
         "",
         0,
         "{\"version\":1,\"map\":[[0,4096,256,1]]}\n",
         ""},
        {{"--to=multiline", "(vector,(0,2,3))"}, "", 0, "0: 0-2\n1: 3-5\n", ""},
        {{"--to=multiline", "[[1,1,2,1]]"}, "", 0, "0:\n1: 0-1\n", ""},
        {{"--to=raw"}, "{\"version\":1,\"map\":[[0,2,2,1]]}\n", 0, "0-1;2-3\n", ""},
        {{}, "  0-1;2-3\n", 0, "[[0,2,2,1]]\n", ""},
        // The unknown mapping.
        {{"[]"}, "", 0, "[]\n", ""},
        {{"--to=pmi", "[]"}, "", 0, "\n", ""},
        {{"--to=raw", ""}, "", 0, "\n", ""},
        {{"--to=multiline", "[]"}, "", 0, "", ""},
        {{"--to=raw", "--", "[[0,2,2,1],[1,1,1,1]]"}, "", 0, "0-1;2-4\n", ""},
    };
    for (const auto& c : kCases)
        expect_runs(c);
}

TEST(TaskmapCommand, Queries) {
    const Case kCases[] = {
        {{"--nodeid=13", "[[0,4,1,4]]"}, "", 0, "1\n", ""},
        {{"--nodeid=15", "[[0,4,4,1]]"}, "", 0, "3\n", ""},
        {{"--taskids=1", "[[0,4,1,4]]"}, "", 0, "1,5,9,13\n", ""},
        {{"--taskids=0", "[[0,4,4,1]]"}, "", 0, "0-3\n", ""},
        {{"--taskids=0", "[[1,1,4,1]]"}, "", 0, "\n", ""},
        {{"--ntasks=0", "[[0,4,4,1]]"}, "", 0, "4\n", ""},
        {{"--ntasks=7"}, "{\"version\":1,\"map\":[[0,4096,256,1]]}", 0, "256\n", ""},
        {{"--nnodes", "[[0,8,16,1],[8,4,32,1]]"}, "", 0, "12\n", ""},
        {{"--total-tasks", "[[0,4096,1,256]]"}, "", 0, "1048576\n", ""},
        {{"--nodeid=1044481", "[[0,4096,1,256]]"}, "", 0, "1\n", ""},
        {{"--nodeid=24", "[[0,4,4,1]]"},
         "",
         2,
         "",
         "gantry: taskmap: task 24 is not in the map (16 tasks)\n"},
        {{"--taskids=4", "[[0,4,4,1]]"},
         "",
         2,
         "",
         "gantry: taskmap: node 4 is not in the map (4 nodes)\n"},
        {{"--ntasks=4", "[[0,4,4,1]]"},
         "",
         2,
         "",
         "gantry: taskmap: node 4 is not in the map (4 nodes)\n"},
        {{"--nodeid=0", "[]"}, "", 2, "", "gantry: taskmap: the task map is unknown ([])\n"},
    };
    for (const auto& c : kCases)
        expect_runs(c);
}

TEST(TaskmapCommand, Distributions) {
    const Case kCases[] = {
        {{"--block", "--nodes=4", "--ppn=4"}, "", 0, "[[0,4,4,1]]\n", ""},
        {{"--cyclic", "--nodes=4", "--ppn=4"}, "", 0, "[[0,4,1,4]]\n", ""},
        {{"--cyclic=2", "--nodes=4", "--ppn=4"}, "", 0, "[[0,4,2,2]]\n", ""},
        {{"--cyclic=3", "--nodes=4", "--ppn=4"}, "", 0, "[[0,4,3,1],[0,4,1,1]]\n", ""},
        {{"--cyclic", "--nodes=4096", "--ppn=256"}, "", 0, "[[0,4096,1,256]]\n", ""},
        {{"--cyclic=2", "--nodes=4096", "--ppn=256"}, "", 0, "[[0,4096,2,128]]\n", ""},
        {{"--cyclic=2", "--nodes=2", "--ppn=3", "--to=raw"}, "", 0, "0-1,4;2-3,5\n", ""},
        {{"--block", "--nodes=2", "--ppn=2", "--to=pmi"}, "", 0, "(vector,(0,2,2))\n", ""},
        {{"--cyclic", "--nodes=3", "--ppn=2", "--taskids=2"}, "", 0, "2,5\n", ""},
        {{"--block"}, "", 2, "", "gantry: taskmap: --block and --cyclic need --nodes and --ppn\n"},
        {{"--nodes=3", "--ppn=2"},
         "",
         2,
         "",
         "gantry: taskmap: --nodes and --ppn need --block or --cyclic\n"},
        {{"--cyclic=0", "--nodes=4", "--ppn=4"},
         "",
         2,
         "",
         "gantry: taskmap: --cyclic needs a positive number, not \"0\"\n"},
        {{"--block", "--nodes=65536", "--ppn=65536"},
         "",
         2,
         "",
         "gantry: taskmap: append(0,65536,65536): the map would pass 2147483648 tasks\n"},
    };
    for (const auto& c : kCases)
        expect_runs(c);
}

TEST(TaskmapCommand, BadInput) {
    const Case kCases[] = {
        {{"0-1;1-2"},
         "",
         2,
         "",
         "gantry: taskmap: task 1 is on more than one node at offset 4 in \"0-1;1-2\"\n"},
        {{"0-1;10-11"}, "", 2, "", "gantry: taskmap: tasks 2-9 are on no node in \"0-1;10-11\"\n"},
        {{"[[0,0,1,1]]"},
         "",
         2,
         "",
         "gantry: taskmap: block 0 has nnodes 0 (must be 1 or more) at offset 4 in "
         "\"[[0,0,1,1]]\"\n"},
        {{"{\"version\":2,\"map\":[]}"},
         "",
         2,
         "",
         "gantry: taskmap: version 2 is not supported (must be 1) at offset 11 in "
         "\"{\\\"version\\\":2,\\\"map\\\":[]}\"\n"},
        {{"(vector,(0,1,0))"},
         "",
         2,
         "",
         "gantry: taskmap: block 0 has ppn 0 (must be 1 or more) at offset 13 in "
         "\"(vector,(0,1,0))\"\n"},
        {{"--to=raw", "[[0,2147483647,1,1]]"},
         "",
         2,
         "",
         "gantry: taskmap: the raw form of this map could exceed 1 GiB; not printed\n"},
        {{"--to=pmi", "[[0,1,1,2147483647]]"},
         "",
         2,
         "",
         "gantry: taskmap: the pmi form of this map could exceed 1 GiB; not printed\n"},
        {{"--to=yaml", "[]"},
         "",
         2,
         "",
         "gantry: taskmap: --to needs one of json, wrapped, raw, pmi or multiline, not \"yaml\"\n"},
        {{"--block", "[[0,1,1,1]]", "--nodes=1", "--ppn=1"},
         "",
         2,
         "",
         "gantry: taskmap: MAP cannot be used with --block\n"},
        {{"--nodeid=1", "--taskids=1", "[[0,1,1,1]]"},
         "",
         2,
         "",
         "gantry: taskmap: --nodeid cannot be used with --taskids\n"},
    };
    for (const auto& c : kCases)
        expect_runs(c);
}

TEST(TaskmapCommand, Help) {
    const auto result = test::run_gantry({"taskmap", "--help"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.err, "");
    EXPECT_NE(result.out.find("Usage: gantry taskmap [OPTIONS] [MAP]"), std::string::npos);
    EXPECT_NE(result.out.find("  $ gantry taskmap --cyclic=2 --nodes=4 --ppn=4\n  [[0,4,2,2]]\n"),
              std::string::npos);
}

// The raw form of a million cyclic tasks is built in one piece.
TEST(TaskmapCommand, LargeRawOutput) {
    const auto result = test::run_gantry({"taskmap", "--to=raw", "[[0,4096,1,256]]"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out.size(), 7277498u);
    EXPECT_EQ(result.out.substr(0, 20), "0,4096,8192,12288,16");
    EXPECT_EQ(result.out.substr(result.out.size() - 16), "1044479,1048575\n");
    std::size_t nodes = 1;
    for (const char c : result.out)
        nodes += c == ';';
    EXPECT_EQ(nodes, 4096u);
}

}  // namespace
}  // namespace gantry
