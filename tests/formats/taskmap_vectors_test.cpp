// Conformance: every record of taskmap.json and taskmap_ops.json. Records
// that the vectors mark QUIRK are flux-core behaviours gantry does not copy;
// for those the test states what gantry does instead.
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "formats/taskmap.h"
#include "support/vectors.h"

namespace gantry {
namespace {

bool is_quirk(const Json& record) {
    return record.value("note", "").find("QUIRK") != std::string::npos;
}

TaskMap parse_ok(const std::string& text) {
    auto map = TaskMap::parse(text);
    EXPECT_TRUE(map) << text << ": " << map.error().str();
    return map ? *map : TaskMap{};
}

TEST(TaskMapVectors, DecodeAndEncode) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("taskmap.json");
    int checked = 0;
    for (const auto& r : records) {
        const std::string input = r["input"];
        SCOPED_TRACE(input);
        if (is_quirk(r))
            continue;  // TaskMapVectors.QuirksAreNotCopied
        auto map = TaskMap::parse(input);
        if (!r["valid"].get<bool>()) {
            EXPECT_FALSE(map) << "accepted as " << map->to_json();
            if (!map) {
                EXPECT_EQ(map.error().domain(), "taskmap");
                EXPECT_EQ(map.error().input(), input);
            }
            ++checked;
            continue;
        }
        ASSERT_TRUE(map) << map.error().str();
        EXPECT_EQ(map->to_json(), r["taskmap"].get<std::string>());
        EXPECT_EQ(map->to_pmi(), r["pmi"].get<std::string>());
        EXPECT_EQ(map->nnodes(), r["nnodes"].get<std::uint32_t>());
        EXPECT_EQ(map->ntasks(), r["ntasks"].get<std::uint64_t>());
        EXPECT_EQ(map->empty(), r["ntasks"].get<std::uint64_t>() == 0);
        if (!r["raw"].is_null()) {
            EXPECT_EQ(map->to_raw(), r["raw"].get<std::string>());
            EXPECT_EQ(map->to_raw_deranged(), r["raw_deranged"].get<std::string>());
            // The raw form says where each task goes, not how blocks were written.
            EXPECT_EQ(parse_ok(r["raw"]).to_raw(), map->to_raw());
        }
        EXPECT_EQ(parse_ok(map->to_json()), *map);
        EXPECT_EQ(parse_ok(map->to_wrapped()), *map);
        ++checked;
    }
    EXPECT_EQ(checked, 99);
}

TEST(TaskMapVectors, QuirksAreNotCopied) {
    GANTRY_REQUIRE_VECTORS();
    // flux-core skips empty raw fields; in gantry an empty field is a node
    // without tasks, and a trailing one is an error.
    const std::map<std::string, std::string> gantry = {
        {"0-3;",
         "error: taskmap: the last node has no tasks (a task map ends with a node that has "
         "some) at offset 4 in \"0-3;\""},
        {";0-3", "[[1,1,4,1]]"},
        {"0-3;;4-7", "[[0,1,4,1],[2,1,4,1]]"},
    };
    int quirks = 0;
    for (const auto& r : test::load_vector_json("taskmap.json")) {
        if (!is_quirk(r))
            continue;
        const std::string input = r["input"];
        auto map = TaskMap::parse(input);
        ASSERT_TRUE(gantry.count(input)) << "new QUIRK record: " << input;
        EXPECT_EQ(map ? map->to_json() : "error: " + map.error().str(), gantry.at(input));
        EXPECT_NE(map ? map->to_json() : "", r["taskmap"].get<std::string>());
        ++quirks;
    }
    EXPECT_EQ(quirks, 3);
}

TEST(TaskMapVectors, Lookups) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("taskmap_ops.json");
    for (const auto& r : ops["lookups"]) {
        const auto map = parse_ok(r["taskmap"]);
        SCOPED_TRACE(r["taskmap"].get<std::string>());
        if (r.contains("nnodes")) {
            EXPECT_EQ(map.nnodes(), r["nnodes"].get<std::uint32_t>());
            EXPECT_EQ(map.ntasks(), r["ntasks"].get<std::uint64_t>());
        }
        if (r.contains("taskids_by_node")) {
            const auto& by_node = r["taskids_by_node"];
            ASSERT_EQ(by_node.size(), map.nnodes());
            for (TaskMap::NodeId n = 0; n < by_node.size(); ++n) {
                EXPECT_EQ(map.taskids(n).encode(), by_node[n].get<std::string>());
                EXPECT_EQ(map.ntasks(n), IdSet::parse(by_node[n].get<std::string>())->count());
            }
        }
        if (r.contains("taskids_by_node_first2")) {
            // "0,4096,8192,...,1044480 (256 ids, stride 4096)" and "1,4097,...,1044481".
            for (TaskMap::NodeId n = 0; n < 2; ++n) {
                const IdSet ids = map.taskids(n);
                EXPECT_EQ(ids.count(), 256u);
                for (std::uint64_t i = 0; i < 256; ++i)
                    EXPECT_EQ(ids.nth(i), n + i * 4096);
            }
        }
        if (r.contains("query")) {
            const auto& q = r["query"];
            EXPECT_EQ(map.taskids(0).encode(), q["taskids(0)"].get<std::string>());
            EXPECT_EQ(map.ntasks(0), q["ntasks(0)"].get<std::uint64_t>());
            EXPECT_EQ(map.nodeid(15), q["nodeid(15)"].get<std::uint32_t>());
            // flux-core errors on these; gantry's lookups answer "none".
            EXPECT_TRUE(map.taskids(4).empty());
            EXPECT_EQ(map.ntasks(4), 0u);
            EXPECT_EQ(map.nodeid(24), std::nullopt);
        }
    }
}

TEST(TaskMapVectors, Append) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("taskmap_ops.json");
    for (const auto& r : ops["append"]) {
        TaskMap map;
        Status status;
        if (r["appends"].is_string()) {
            // "for i in 0..3: for j in 0..3: append(j,1,1)"
            for (int i = 0; i < 4; ++i)
                for (std::uint32_t j = 0; j < 4; ++j)
                    status = map.append(j, 1, 1);
        } else {
            for (const auto& a : r["appends"])
                if (status)
                    status = map.append(a[0], a[1], a[2]);
        }
        if (r.contains("error")) {
            EXPECT_FALSE(status) << r["appends"];
        } else {
            EXPECT_TRUE(status) << r["appends"];
            EXPECT_EQ(map.to_json(), r["result"].get<std::string>()) << r["appends"];
        }
    }
}

TEST(TaskMapVectors, Check) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("taskmap_ops.json");
    for (const auto& r : ops["check"]) {
        const auto status = parse_ok(r["b"]).check(parse_ok(r["a"]));
        EXPECT_EQ(status.ok(), r["ok"].get<bool>()) << r["b"];
    }
}

TEST(TaskMapVectors, EncodeFlags) {
    GANTRY_REQUIRE_VECTORS();
    int checked = 0;
    const Json ops = test::load_vector_json("taskmap_ops.json");
    for (const auto& r : ops["encode_flags"]) {
        if (!r.contains("result"))
            continue;  // invalid flag combinations: gantry has one function per form
        const auto map = parse_ok(r["taskmap"]);
        const std::string flags = r["flags"];
        const std::string encoded = flags == "RAW_DERANGED" ? map.to_raw_deranged()
                                    : flags == "WRAPPED"    ? map.to_wrapped()
                                                            : "unknown flags " + flags;
        EXPECT_EQ(encoded, r["result"].get<std::string>());
        ++checked;
    }
    EXPECT_EQ(checked, 2);
}

// The maps the shell's --taskmap schemes produce, where they depend on the
// task map alone (hostfile and plugin schemes need the job's hosts).
TEST(TaskMapVectors, Schemes) {
    GANTRY_REQUIRE_VECTORS();
    const std::regex job_shape(R"(-N(\d+) --tasks-per-node=(\d+))");
    int checked = 0;
    const Json ops = test::load_vector_json("taskmap_ops.json");
    for (const auto& r : ops["schemes"]) {
        const std::string option = r["taskmap_option"].is_null() ? "block" : r["taskmap_option"];
        SCOPED_TRACE(option);
        if (r.contains("block_map")) {
            const int stride = std::stoi(option.substr(option.find(':') + 1));
            auto map = TaskMap::cyclic(parse_ok(r["block_map"]), stride);
            ASSERT_TRUE(map);
            EXPECT_EQ(map->to_json(), r["result"].get<std::string>());
            if (!r["raw"].is_null()) {
                EXPECT_EQ(map->to_raw(), r["raw"].get<std::string>());
            }
            ++checked;
            continue;
        }
        std::smatch shape;
        const std::string job = r["job"];
        const std::string result = r["result"];
        if (job == "-n1") {
            EXPECT_EQ(TaskMap::block(1, 1)->to_json(), result);
            ++checked;
        } else if (std::regex_match(job, shape, job_shape) && result.front() == '[') {
            const auto nodes = static_cast<std::uint32_t>(std::stoul(shape[1]));
            const auto ppn = static_cast<std::uint32_t>(std::stoul(shape[2]));
            const auto block = *TaskMap::block(nodes, ppn);
            if (option == "block") {
                EXPECT_EQ(block.to_json(), result);
            } else if (option.rfind("cyclic", 0) == 0) {
                const auto colon = option.find(':');
                const int stride =
                    colon == std::string::npos ? 1 : std::stoi(option.substr(colon + 1));
                EXPECT_EQ(TaskMap::cyclic(nodes, ppn, stride)->to_json(), result);
            } else if (option.rfind("manual:", 0) == 0) {
                const auto manual = parse_ok(option.substr(7));
                EXPECT_EQ(manual.to_json(), result);
                EXPECT_TRUE(manual.check(block));
            } else {
                continue;  // plugin scheme
            }
            ++checked;
        } else if (job == "-N4 -n6") {
            // A manual map may move tasks between nodes: only totals are checked.
            const auto manual = parse_ok(option.substr(7));
            EXPECT_EQ(manual.to_json(), result);
            EXPECT_TRUE(manual.check(*TaskMap::parse("[[0,2,2,1],[2,2,1,1]]")));
            ++checked;
        } else if (option == "manual:[]") {
            EXPECT_TRUE(parse_ok("[]").empty());  // mapping unknown: the job fails
            ++checked;
        } else if (option.rfind("manual:{}", 0) == 0) {
            const auto block = *TaskMap::block(4, 4);
            EXPECT_FALSE(TaskMap::parse("{}"));
            EXPECT_FALSE(parse_ok("[[1,3,4,1]]").check(block));
            EXPECT_FALSE(parse_ok("[[1,3,4,1],[0,1,3,1]]").check(block));
            ++checked;
        } else if (option.find("cyclic:0") != std::string::npos) {
            EXPECT_FALSE(TaskMap::cyclic(4, 4, 0));
            ++checked;
        }
    }
    EXPECT_EQ(checked, 27);
}

}  // namespace
}  // namespace gantry
