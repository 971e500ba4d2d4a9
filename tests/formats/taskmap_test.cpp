// RFC 34 task maps: the RFC's tables and vectors, lookups, appends, the
// distributions, errors, and round trips over random maps.
#include "formats/taskmap.h"

#include <random>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace gantry {
namespace {

std::string json_of(std::string_view text) {
    auto map = TaskMap::parse(text);
    return map ? map->to_json() : "error: " + map.error().str();
}

std::string error_of(std::string_view text) {
    auto map = TaskMap::parse(text);
    return map ? "parsed as " + map->to_json() : map.error().str();
}

// RFC 34 "Test Vectors": raw task map <-> Flux task map.
struct RawCase {
    std::string_view raw;
    std::string_view json;
};
constexpr RawCase kRfc34Vectors[] = {
    {"", "[]"},
    {"0", "[[0,1,1,1]]"},
    {"0;1", "[[0,2,1,1]]"},
    {"0-1", "[[0,1,2,1]]"},
    {"0-1;2-3", "[[0,2,2,1]]"},
    {"0,2;1,3", "[[0,2,1,2]]"},
    {"1;0", "[[1,1,1,1],[0,1,1,1]]"},
    {"0-3;4-7;8-11;12-15", "[[0,4,4,1]]"},
    {"0,4,8,12;1,5,9,13;2,6,10,14;3,7,11,15", "[[0,4,1,4]]"},
    {"0-1,8-9;2-3,10-11;4-5,12-13;6-7,14-15", "[[0,4,2,2]]"},
    {"0-1;2-3;4-5;6-7;8-11;12-15", "[[0,4,2,1],[4,2,4,1]]"},
    {"0,6;1,7;2,8;3,9;4,10,12,14;5,11,13,15", "[[0,6,1,2],[4,2,1,2]]"},
    {"14-15;12-13;10-11;8-9;4-7;0-3",
     "[[5,1,4,1],[4,1,4,1],[3,1,2,1],[2,1,2,1],[1,1,2,1],[0,1,2,1]]"},
    {"0-1;2-3;4-5;6-7;8-9;12-13;10-11;14-15", "[[0,5,2,1],[6,1,2,1],[5,1,2,1],[7,1,2,1]]"},
    {"12-15;8-11;4-7;0-3", "[[3,1,4,1],[2,1,4,1],[1,1,4,1],[0,1,4,1]]"},
};

TEST(TaskMap, Rfc34VectorsRawToJson) {
    for (const auto& c : kRfc34Vectors)
        EXPECT_EQ(json_of(c.raw), c.json) << c.raw;
}

TEST(TaskMap, Rfc34VectorsJsonToRaw) {
    for (const auto& c : kRfc34Vectors) {
        auto map = TaskMap::parse(c.json);
        ASSERT_TRUE(map) << map.error().str();
        EXPECT_EQ(map->to_raw(), c.raw) << c.json;
        EXPECT_EQ(map->to_json(), c.json);
    }
}

// RFC 34's two tables of regular distributions: the PMI form and the Flux
// form of block, cyclic:1 and cyclic:2 over 4*4, 4*2 + 2*4 and 4096*256.
struct Distribution {
    std::vector<std::uint32_t> ppn_of_node;
    std::uint32_t stride;  // 0: block
    std::string_view json;
    std::string_view pmi;  // "" where the RFC says "long"
};

std::vector<std::uint32_t> nodes_of(std::uint32_t nodes, std::uint32_t ppn) {
    return std::vector<std::uint32_t>(nodes, ppn);
}

std::vector<std::uint32_t> four_by_two_two_by_four() {
    return {2, 2, 2, 2, 4, 4};
}

// The per-task node sequence of dealing ppn_of_node's tasks `stride` at a time.
std::vector<TaskMap::NodeId> deal(const std::vector<std::uint32_t>& ppn_of_node,
                                  std::uint32_t stride) {
    std::vector<TaskMap::NodeId> node_of_task;
    std::vector<std::uint32_t> left = ppn_of_node;
    bool dealt = true;
    while (dealt) {
        dealt = false;
        for (std::uint32_t n = 0; n < left.size(); ++n) {
            const std::uint32_t take = stride == 0 ? left[n] : std::min(stride, left[n]);
            for (std::uint32_t i = 0; i < take; ++i)
                node_of_task.push_back(n);
            left[n] -= take;
            dealt = dealt || take > 0;
        }
    }
    return node_of_task;
}

TEST(TaskMap, Rfc34DistributionTables) {
    const Distribution table[] = {
        {nodes_of(4, 4), 0, "[[0,4,4,1]]", "(vector,(0,4,4))"},
        {nodes_of(4, 4), 1, "[[0,4,1,4]]", "(vector,(0,4,1),(0,4,1),(0,4,1),(0,4,1))"},
        {nodes_of(4, 4), 2, "[[0,4,2,2]]", "(vector,(0,4,2),(0,4,2))"},
        {four_by_two_two_by_four(), 0, "[[0,4,2,1],[4,2,4,1]]", "(vector,(0,4,2),(4,2,4))"},
        {four_by_two_two_by_four(), 1, "[[0,6,1,2],[4,2,1,2]]",
         "(vector,(0,6,1),(0,6,1),(4,2,1),(4,2,1))"},
        {four_by_two_two_by_four(), 2, "[[0,6,2,1],[4,2,2,1]]", "(vector,(0,6,2),(4,2,2))"},
        {nodes_of(4096, 256), 0, "[[0,4096,256,1]]", "(vector,(0,4096,256))"},
        {nodes_of(4096, 256), 1, "[[0,4096,1,256]]", ""},
        {nodes_of(4096, 256), 2, "[[0,4096,2,128]]", ""},
    };
    for (const auto& d : table) {
        const auto map = TaskMap::from_nodes(deal(d.ppn_of_node, d.stride));
        EXPECT_EQ(map.to_json(), d.json);
        if (!d.pmi.empty()) {
            EXPECT_EQ(map.to_pmi(), d.pmi) << d.json;
            EXPECT_EQ(TaskMap::parse(d.pmi)->to_json(), d.json) << d.pmi;
        }
    }
}

TEST(TaskMap, Rfc34LongPmiForms) {
    // "long (256 map blocks)" and "(128 map blocks)", 2824 characters for cyclic:1.
    const auto cyclic1 = TaskMap::parse("[[0,4096,1,256]]")->to_pmi();
    const auto cyclic2 = TaskMap::parse("[[0,4096,2,128]]")->to_pmi();
    EXPECT_EQ(cyclic1.size(), 2824u);
    EXPECT_EQ(cyclic2.size(), 1416u);
    std::string expected = "(vector";
    for (int i = 0; i < 256; ++i)
        expected += ",(0,4096,1)";
    EXPECT_EQ(cyclic1, expected + ")");
    EXPECT_EQ(TaskMap::parse(cyclic1)->to_json(), "[[0,4096,1,256]]");
    EXPECT_EQ(TaskMap::parse(cyclic2)->to_json(), "[[0,4096,2,128]]");
}

TEST(TaskMap, BlockAndCyclicConstructors) {
    struct Case {
        std::uint32_t nodes, ppn, stride;
        std::string_view json;
    };
    constexpr Case kCases[] = {
        {4, 4, 1, "[[0,4,1,4]]"},           {4, 4, 2, "[[0,4,2,2]]"},
        {4, 4, 3, "[[0,4,3,1],[0,4,1,1]]"}, {4, 4, 4, "[[0,4,4,1]]"},
        {4, 4, 5, "[[0,4,4,1]]"},           {4096, 256, 1, "[[0,4096,1,256]]"},
        {4096, 256, 2, "[[0,4096,2,128]]"}, {1, 4, 1, "[[0,1,4,1]]"},
        {3, 1, 1, "[[0,3,1,1]]"},           {2, 128, 1, "[[0,2,1,128]]"},
        {4, 2, 1, "[[0,4,1,2]]"},
    };
    for (const auto& c : kCases) {
        EXPECT_EQ(TaskMap::cyclic(c.nodes, c.ppn, c.stride)->to_json(), c.json)
            << c.nodes << "x" << c.ppn << " cyclic:" << c.stride;
        // The closed form agrees with dealing task by task.
        EXPECT_EQ(TaskMap::from_nodes(deal(nodes_of(c.nodes, c.ppn), c.stride)).to_json(), c.json);
    }
    EXPECT_EQ(TaskMap::block(4, 4)->to_json(), "[[0,4,4,1]]");
    EXPECT_EQ(TaskMap::block(0, 4).error().str(),
              "taskmap: append(0,0,4): nnodes and ppn must be 1 or more");
    EXPECT_EQ(TaskMap::cyclic(4, 4, 0).error().str(),
              "taskmap: cyclic stride 0 (must be 1 or more)");
    EXPECT_EQ(TaskMap::block(65536, 65536).error().str(),
              "taskmap: append(0,65536,65536): the map would pass 2147483648 tasks");
}

// flux-core's shell cyclic scheme applied to a block map's per-node counts.
TEST(TaskMap, CyclicOverPerNodeCounts) {
    struct Case {
        std::string_view block_map;
        std::uint32_t stride;
        std::string_view json;
        std::string_view raw;
    };
    constexpr Case kCases[] = {
        {"[[0,4,4,1]]", 3, "[[0,4,3,1],[0,4,1,1]]", "0-2,12;3-5,13;6-8,14;9-11,15"},
        {"[[0,4,2,1],[4,2,4,1]]", 1, "[[0,6,1,2],[4,2,1,2]]",
         "0,6;1,7;2,8;3,9;4,10,12,14;5,11,13,15"},
        {"[[0,4,2,1],[4,2,4,1]]", 2, "[[0,6,2,1],[4,2,2,1]]",
         "0-1;2-3;4-5;6-7;8-9,12-13;10-11,14-15"},
        {"[[0,1,3,1],[1,1,2,1]]", 1, "[[0,2,1,2],[0,1,1,1]]", "0,2,4;1,3"},
        {"[[0,1,3,1],[1,1,2,1]]", 2, "[[0,2,2,1],[0,1,1,1]]", "0-1,4;2-3"},
        {"[[0,3,3,1],[3,1,2,1]]", 2, "[[0,4,2,1],[0,3,1,1]]", "0-1,8;2-3,9;4-5,10;6-7"},
        {"[[0,2,3,1]]", 1, "[[0,2,1,3]]", "0,2,4;1,3,5"},
        {"[]", 1, "[]", ""},
    };
    for (const auto& c : kCases) {
        const auto map = TaskMap::cyclic(*TaskMap::parse(c.block_map), c.stride);
        ASSERT_TRUE(map) << c.block_map;
        EXPECT_EQ(map->to_json(), c.json) << c.block_map << " cyclic:" << c.stride;
        EXPECT_EQ(map->to_raw(), c.raw) << c.block_map << " cyclic:" << c.stride;
    }
}

TEST(TaskMap, Forms) {
    const auto map = *TaskMap::parse("(vector,(0,4,4),(0,4,1))");
    EXPECT_EQ(map.to_json(), "[[0,4,4,1],[0,4,1,1]]");
    EXPECT_EQ(map.to_wrapped(), R"({"version":1,"map":[[0,4,4,1],[0,4,1,1]]})");
    EXPECT_EQ(map.to_pmi(), "(vector,(0,4,4),(0,4,1))");
    EXPECT_EQ(map.to_raw(), "0-3,16;4-7,17;8-11,18;12-15,19");
    EXPECT_EQ(map.to_raw_deranged(), "0,1,2,3,16;4,5,6,7,17;8,9,10,11,18;12,13,14,15,19");
    EXPECT_EQ(map.to_multiline(), "0: 0-3,16\n1: 4-7,17\n2: 8-11,18\n3: 12-15,19\n");
    EXPECT_EQ(*TaskMap::parse(map.to_wrapped()), map);
    EXPECT_EQ(*TaskMap::parse(map.to_raw()), map);
    EXPECT_EQ(*TaskMap::parse(map.to_raw_deranged()), map);

    // A node without tasks: an empty raw field, a bare `<node>:` line.
    const auto gap = *TaskMap::parse("[[1,1,2,1],[3,1,1,1]]");
    EXPECT_EQ(gap.to_raw(), ";0-1;;2");
    EXPECT_EQ(gap.to_multiline(), "0:\n1: 0-1\n2:\n3: 2\n");
    EXPECT_EQ(*TaskMap::parse(";0-1;;2"), gap);

    const TaskMap unknown;
    EXPECT_TRUE(unknown.empty());
    EXPECT_EQ(unknown.to_json(), "[]");
    EXPECT_EQ(unknown.to_wrapped(), R"({"version":1,"map":[]})");
    EXPECT_EQ(unknown.to_pmi(), "");
    EXPECT_EQ(unknown.to_raw(), "");
    EXPECT_EQ(unknown.to_multiline(), "");
    EXPECT_EQ(unknown.nnodes(), 0u);
    EXPECT_EQ(unknown.ntasks(), 0u);
    for (std::string_view text : {"", "  \n", "[]", R"({"version":1,"map":[]})", " [ ] "})
        EXPECT_EQ(*TaskMap::parse(text), unknown) << text;
}

TEST(TaskMap, JsonBlocksAreKeptAsWritten) {
    EXPECT_EQ(json_of("[[0,2,1,1],[0,2,1,1]]"), "[[0,2,1,1],[0,2,1,1]]");
    EXPECT_EQ(json_of(" [ [0, 1, 4, 1] , [1,1,4,1] ]\n"), "[[0,1,4,1],[1,1,4,1]]");
    EXPECT_EQ(json_of(R"({"map":[[0,4,4,1]],"version":1,"extra":{"a":"]"}})"), "[[0,4,4,1]]");
    EXPECT_EQ(json_of("[[-0,1,1,1]]"), "[[0,1,1,1]]");
}

TEST(TaskMap, PmiForms) {
    constexpr RawCase kPmi[] = {
        {"(vector,(0,1,4))", "[[0,1,4,1]]"},
        {"(vector,(0,8,16),(0,4,32))", "[[0,8,16,1],[0,4,32,1]]"},
        {"(vector,(0,4,2),(1,3,1))", "[[0,4,2,1],[1,3,1,1]]"},
        {"    (vector, (0,4,4), (0,4,1), )", "[[0,4,4,1],[0,4,1,1]]"},
        {"(vector, (1,1,1), (0,2,2),)", "[[1,1,1,1],[0,2,2,1]]"},
        {"(vector, (0,1,1), (1,5,3), (6,2, 5))", "[[0,1,1,1],[1,5,3,1],[6,2,5,1]]"},
        {"(vector,(0,4,1),(0,4,1),(2,2,1),(2,2,1))", "[[0,4,1,2],[2,2,1,2]]"},
        {"(vector,(0,1,1),(0,1,1),(0,1,1))", "[[0,1,3,1]]"},
        {"(vector,(0,2,2),(2,2,4))", "[[0,2,2,1],[2,2,4,1]]"},
    };
    for (const auto& c : kPmi)
        EXPECT_EQ(json_of(c.raw), c.json) << c.raw;
}

TEST(TaskMap, Lookups) {
    const auto map = *TaskMap::parse("[[0,4,4,1]]");
    EXPECT_EQ(map.taskids(0).encode(), "0-3");
    EXPECT_EQ(map.ntasks(0), 4u);
    EXPECT_EQ(map.nodeid(15), 3u);
    EXPECT_TRUE(map.taskids(4).empty());
    EXPECT_EQ(map.ntasks(4), 0u);
    EXPECT_EQ(map.nodeid(16), std::nullopt);
    EXPECT_EQ(map.nodeid(24), std::nullopt);

    const auto cyclic = *TaskMap::parse("[[0,4096,1,256]]");
    EXPECT_EQ(cyclic.nnodes(), 4096u);
    EXPECT_EQ(cyclic.ntasks(), 1048576u);
    EXPECT_EQ(cyclic.taskids(0).count(), 256u);
    EXPECT_EQ(cyclic.taskids(0).first(), 0u);
    EXPECT_EQ(cyclic.taskids(0).last(), 1044480u);
    EXPECT_EQ(cyclic.taskids(1).nth(1), 4097u);
    EXPECT_EQ(cyclic.nodeid(1044481), 1u);
    EXPECT_EQ(cyclic.nodeid(4095), 4095u);
    EXPECT_EQ(cyclic.ntasks(4095), 256u);

    const std::string_view by_node[] = {"0-15",    "16-31",   "32-47",   "48-63",
                                        "64-79",   "80-95",   "96-111",  "112-127",
                                        "128-159", "160-191", "192-223", "224-255"};
    const auto mixed = *TaskMap::parse("[[0,8,16,1],[8,4,32,1]]");
    EXPECT_EQ(mixed.nnodes(), 12u);
    EXPECT_EQ(mixed.ntasks(), 256u);
    for (TaskMap::NodeId n = 0; n < 12; ++n)
        EXPECT_EQ(mixed.taskids(n).encode(), by_node[n]) << n;

    // Huge maps are looked up by arithmetic, not expanded.
    const auto huge = *TaskMap::parse("[[0,2,1073741824,1]]");
    EXPECT_EQ(huge.ntasks(), 2147483648u);
    EXPECT_EQ(huge.nodeid(2147483647), 1u);
    EXPECT_EQ(huge.taskids(1).encode(), "1073741824-2147483647");
}

TEST(TaskMap, AppendSequences) {
    struct Append {
        std::uint32_t nodeid, nnodes, ppn;
    };
    struct Case {
        std::vector<Append> appends;
        std::string_view json;
    };
    const Case kCases[] = {
        {{{0, 1, 4}, {1, 1, 4}, {2, 1, 4}, {3, 1, 4}}, "[[0,4,4,1]]"},
        {{{0, 1, 4}, {1, 1, 4}, {2, 1, 4}, {3, 1, 4}, {4, 1, 8}, {5, 1, 8}},
         "[[0,4,4,1],[4,2,8,1]]"},
        {{{0, 1, 4}, {1, 1, 4}, {2, 1, 4}, {3, 1, 4}, {4, 1, 8}, {5, 1, 8}, {4, 2, 8}},
         "[[0,4,4,1],[4,2,8,2]]"},
        {{{0, 1, 1}, {0, 1, 1}, {0, 1, 1}, {0, 1, 1}}, "[[0,1,4,1]]"},
        {{{0, 4, 1}, {0, 4, 1}, {0, 1, 1}}, "[[0,4,1,2],[0,1,1,1]]"},
    };
    for (const auto& c : kCases) {
        TaskMap map;
        for (const auto& a : c.appends)
            ASSERT_TRUE(map.append(a.nodeid, a.nnodes, a.ppn));
        EXPECT_EQ(map.to_json(), c.json);
    }
    TaskMap cyclic;
    for (int round = 0; round < 4; ++round)
        for (std::uint32_t node = 0; node < 4; ++node)
            ASSERT_TRUE(cyclic.append(node, 1, 1));
    EXPECT_EQ(cyclic.to_json(), "[[0,4,1,4]]");

    TaskMap map;
    EXPECT_EQ(map.append(0, 0, 0).error().str(),
              "taskmap: append(0,0,0): nnodes and ppn must be 1 or more");
    EXPECT_EQ(map.append(2147483647, 2, 1).error().str(),
              "taskmap: append(2147483647,2,1): runs past node or task 2147483647");
    EXPECT_TRUE(map.empty());
}

TEST(TaskMap, Check) {
    struct Case {
        std::string_view reference, candidate, error;
    };
    constexpr Case kCases[] = {
        {"[[0,4,4,1]]", "[[0,4,1,4]]", ""},
        {"[[0,4,4,1]]", "[[0,4,2,2]]", ""},
        {"[[0,4,4,1]]", "[[0,4,3,1],[0,4,1,1]]", ""},
        {"[[0,4,4,1]]", "[[0,2,4,1],[2,1,3,1],[3,1,5,1]]", ""},
        {"[[0,4,4,1]]", "[[0,4,3,1]]", "taskmap: the map has 12 tasks, expected 16"},
        {"[[0,4,4,1]]", "[[0,2,8,1]]", "taskmap: the map has 2 nodes, expected 4"},
    };
    for (const auto& c : kCases) {
        const auto status = TaskMap::parse(c.candidate)->check(*TaskMap::parse(c.reference));
        EXPECT_EQ(status ? "" : status.error().str(), c.error) << c.candidate;
    }
}

TEST(TaskMap, Errors) {
    struct Case {
        std::string_view input, error;
    };
    constexpr Case kCases[] = {
        // JSON
        {"}", "taskmap: expected an id, found '}' at offset 0 in \"}\""},
        {"[[0,1,1,1]", "taskmap: invalid JSON at offset 10 in \"[[0,1,1,1]\""},
        {"{}", "taskmap: a wrapped task map needs \"version\" in \"{}\""},
        {R"({"version":1})", R"(taskmap: a wrapped task map needs "map" in "{\"version\":1}")"},
        {R"({"version":1,"map":{}})",
         R"(taskmap: "map" is an object (must be an array of blocks) at offset 19 in "{\"version\":1,\"map\":{}}")"},
        {R"({"version":2,"map":[[1,1,1,1]]})",
         R"(taskmap: version 2 is not supported (must be 1) at offset 11 in "{\"version\":2,\"map\":[[1,1,1,1]]}")"},
        {R"({"version":"1","map":[]})",
         R"(taskmap: version "1" is not supported (must be 1) at offset 11 in "{\"version\":\"1\",\"map\":[]}")"},
        {R"({"version":1,"map":[[]]})",
         R"(taskmap: block 0 has 0 fields (must be [nodeid,nnodes,ppn,repeat]) at offset 20 in "{\"version\":1,\"map\":[[]]}")"},
        {R"([["1","1","1","1"]])",
         R"(taskmap: block 0 has a string for nodeid (must be an integer) at offset 2 in "[[\"1\",\"1\",\"1\",\"1\"]]")"},
        {"[[1,2,3]]",
         "taskmap: block 0 has 3 fields (must be [nodeid,nnodes,ppn,repeat]) at offset 1 in "
         "\"[[1,2,3]]\""},
        {"[[1,2,3,4,5]]",
         "taskmap: block 0 has 5 fields (must be [nodeid,nnodes,ppn,repeat]) at offset 1 in "
         "\"[[1,2,3,4,5]]\""},
        {"[[-1,1,1,1]]",
         "taskmap: block 0 has nodeid -1 (must be 0 or more) at offset 2 in \"[[-1,1,1,1]]\""},
        {"[[0,1,1,1],[-1,1,1,1]]",
         "taskmap: block 1 has nodeid -1 (must be 0 or more) at offset 12 in "
         "\"[[0,1,1,1],[-1,1,1,1]]\""},
        {"[[0,1,1,1],1]",
         "taskmap: block 1 is a number (must be an array [nodeid,nnodes,ppn,repeat]) at offset 11 "
         "in \"[[0,1,1,1],1]\""},
        {"[[0,0,1,1]]",
         "taskmap: block 0 has nnodes 0 (must be 1 or more) at offset 4 in \"[[0,0,1,1]]\""},
        {"[[0,1,0,1]]",
         "taskmap: block 0 has ppn 0 (must be 1 or more) at offset 6 in \"[[0,1,0,1]]\""},
        {"[[0,1,1,0]]",
         "taskmap: block 0 has repeat 0 (must be 1 or more) at offset 8 in \"[[0,1,1,0]]\""},
        {"[[0, 1.5, 1, 1]]",
         "taskmap: block 0 has nnodes 1.5 (must be an integer) at offset 5 in \"[[0, 1.5, 1, "
         "1]]\""},
        {"[[0,1,2147483648,1]]",
         "taskmap: block 0 has ppn 2147483648 (must be at most 2147483647) at offset 6 in "
         "\"[[0,1,2147483648,1]]\""},
        {"[[0,1,99999999999999999999,1]]",
         "taskmap: block 0 has ppn 1e+20 (must be an integer) at offset 6 in "
         "\"[[0,1,99999999999999999999,1]]\""},
        {"[[2147483647,2,1,1]]",
         "taskmap: block 0 runs past node 2147483647 at offset 13 in \"[[2147483647,2,1,1]]\""},
        {"[[0,2,1073741824,1],[0,1,1,1]]",
         "taskmap: block 1 takes the map past 2147483648 tasks at offset 20 in "
         "\"[[0,2,1073741824,1],[0,1,1,1]]\""},
        {"[[0,2147483647,2147483647,2147483647]]",
         "taskmap: block 0 takes the map past 2147483648 tasks at offset 1 in "
         "\"[[0,2147483647,2147483647,2147483647]]\""},
        {"[0-3];[4-7]", "taskmap: invalid JSON at offset 3 in \"[0-3];[4-7]\""},
        // PMI
        {"vector, (1,1))", "taskmap: expected '(vector,' at offset 0 in \"vector, (1,1))\""},
        {"(vector, (1.11, 2.2))",
         "taskmap: expected ',' at offset 11 in \"(vector, (1.11, 2.2))\""},
        {"(vector, (1,1))", "taskmap: expected ',' at offset 13 in \"(vector, (1,1))\""},
        {"(vector, (1,1,0))",
         "taskmap: block 0 has ppn 0 (must be 1 or more) at offset 14 in \"(vector, (1,1,0))\""},
        {"(vector,(0,1,0))",
         "taskmap: block 0 has ppn 0 (must be 1 or more) at offset 13 in \"(vector,(0,1,0))\""},
        {"((1,1,1))", "taskmap: expected 'vector' at offset 1 in \"((1,1,1))\""},
        {"((1,1,1), vector,)", "taskmap: expected 'vector' at offset 1 in \"((1,1,1), vector,)\""},
        {"(vector,)",
         "taskmap: a PMI process mapping needs at least one block at offset 8 in \"(vector,)\""},
        {"(vector,(0,1,1,1))",
         "taskmap: expected ')' (a PMI block is (nodeid,nnodes,ppn)) at offset 14 in "
         "\"(vector,(0,1,1,1))\""},
        {"(vector,(0,1,1)) x",
         "taskmap: unexpected text after ')' at offset 17 in \"(vector,(0,1,1)) x\""},
        {"(vector,(0,1,-1))",
         "taskmap: expected an integer for ppn at offset 13 in \"(vector,(0,1,-1))\""},
        {"(vector,(0,1,99999999999))",
         "taskmap: block 0 has ppn 99999999999 (must be at most 2147483647) at offset 13 in "
         "\"(vector,(0,1,99999999999))\""},
        {"(vector,(0,2,1073741824),(0,1,1))",
         "taskmap: block 1 takes the map past 2147483648 tasks in "
         "\"(vector,(0,2,1073741824),(0,1,1))\""},
        // raw
        {"-1", "taskmap: expected an id, found '-' at offset 0 in \"-1\""},
        {"1-3;a-b", "taskmap: expected an id, found 'a' at offset 4 in \"1-3;a-b\""},
        {"1,1", "taskmap: ids out of order at offset 2 in \"1,1\""},
        {"0-1;1-2", "taskmap: task 1 is on more than one node at offset 4 in \"0-1;1-2\""},
        {"5-15;0-10", "taskmap: tasks 5-10 are on more than one node at offset 0 in \"5-15;0-10\""},
        {"1", "taskmap: task 0 is on no node in \"1\""},
        {"3-4;0-1", "taskmap: task 2 is on no node in \"3-4;0-1\""},
        {"0-1;10-11", "taskmap: tasks 2-9 are on no node in \"0-1;10-11\""},
        {"0-1;4;6", "taskmap: tasks 2-3,5 are on no node in \"0-1;4;6\""},
        {"0-3;",
         "taskmap: the last node has no tasks (a task map ends with a node that has some) at "
         "offset 4 in \"0-3;\""},
    };
    for (const auto& c : kCases)
        EXPECT_EQ(error_of(c.input), c.error) << c.input;
}

// Random per-task node sequences (fixed seed): every form round-trips and
// every lookup agrees with the sequence.
TEST(TaskMap, RandomRoundTrips) {
    std::mt19937 rng(34);
    for (int trial = 0; trial < 300; ++trial) {
        const std::uint32_t nodes = 1 + rng() % 6;
        const std::uint32_t ntasks = rng() % 40;
        std::vector<TaskMap::NodeId> node_of_task(ntasks);
        for (auto& n : node_of_task)
            n = (trial % 3 == 0) ? rng() % nodes : (rng() % 4 == 0 ? rng() % nodes : 0);
        // Runs of nodes, as distributions produce.
        if (trial % 3 == 1)
            for (std::uint32_t t = 0; t < ntasks; ++t)
                node_of_task[t] = (t / (1 + trial % 5)) % nodes;
        const auto map = TaskMap::from_nodes(node_of_task);
        ASSERT_EQ(map.ntasks(), ntasks);
        for (std::uint32_t t = 0; t < ntasks; ++t)
            ASSERT_EQ(map.nodeid(t), node_of_task[t]) << map.to_json() << " task " << t;
        ASSERT_EQ(map.nodeid(ntasks), std::nullopt);
        for (TaskMap::NodeId n = 0; n < map.nnodes(); ++n) {
            IdSet expected;
            for (std::uint32_t t = 0; t < ntasks; ++t)
                if (node_of_task[t] == n)
                    expected.insert(t);
            ASSERT_EQ(map.taskids(n), expected) << map.to_json() << " node " << n;
            ASSERT_EQ(map.ntasks(n), expected.count());
        }
        const std::string forms[] = {map.to_json(), map.to_wrapped(), map.to_raw(),
                                     map.to_raw_deranged()};
        for (const auto& form : forms) {
            auto back = TaskMap::parse(form);
            ASSERT_TRUE(back) << form << ": " << back.error().str();
            ASSERT_EQ(back->to_json(), map.to_json()) << form;
        }
        if (!map.empty()) {
            // PMI drops repeat counts, so compare what each task maps to.
            auto back = TaskMap::parse(map.to_pmi());
            ASSERT_TRUE(back) << map.to_pmi();
            ASSERT_EQ(back->to_raw(), map.to_raw()) << map.to_pmi();
        }
    }
}

}  // namespace
}  // namespace gantry
