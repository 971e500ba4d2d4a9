// Conformance with flux-core's PMI-1 server (pmi_wire.json): for every
// request line it records, gantry answers with the same reply command and
// the same success or failure. Where gantry deliberately differs, the test
// says so:
// - `init` 1.0 succeeds (flux refuses versions below 1.1): MPICH always
//   sends 1.1, and a 1.0 client speaks a subset of the same protocol.
// - maxes are 64/64/866, not 64/64/1024: MPICH clamps to 866 anyway, and a
//   put longer than that could not come back in a get_result line.
// - Replies carry rc= only where MPICH reads one (init, put, get, publish,
//   unpublish, lookup, spawn); a reply without rc= counts as success here.
// - A value ends at the next space, as MPICH's client splits lines (flux
//   takes `value=` to the end of the line); msg= words have no spaces.
// - Commands are matched exactly, not by prefix (see server_test.cpp).
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "pmi/server.h"
#include "support/vectors.h"

namespace gantry::pmi {
namespace {

constexpr std::string_view kKvs = "kvs_2315_0";

// The placeholders of the recorded requests, made concrete.
const std::map<std::string, std::string> kPlaceholders = {
    {"<name>", std::string(kKvs)},
    {"<key>", "-bcast-1-0"},
    {"<missing>", "hostname[1]"},
    {"<string to end of line>", "2F6465762F"},
    {"<N>", "7"},
    {"<text>", "bye"},
    {"<s>", "service"},
    {"<p>", "port"},
};

std::string concrete(std::string request) {
    if (request.starts_with("mcmd=spawn"))
        return "mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=1\nspawnssofar=1\n"
               "argcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n";
    if (request == "<any other line>")
        return "cmd=frobnicate\n";
    for (const auto& [name, value] : kPlaceholders)
        for (auto at = request.find(name); at != std::string::npos; at = request.find(name))
            request.replace(at, name.size(), value);
    return request + "\n";
}

// The value of `key` among a reply's space-separated tokens.
std::optional<std::string> token(std::string_view line, std::string_view key) {
    const std::string prefix = std::string(key) + "=";
    std::size_t pos = 0;
    while (pos < line.size()) {
        const std::size_t end = std::min(line.find_first_of(" \n", pos), line.size());
        const std::string_view word = line.substr(pos, end - pos);
        if (word.starts_with(prefix))
            return std::string(word.substr(prefix.size()));
        pos = end + 1;
    }
    return std::nullopt;
}

bool succeeded(std::string_view line) {
    return token(line, "rc").value_or("0") == "0";
}

TEST(PmiServerVectors, SameReplyCommandAndOutcomeAsFlux) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("pmi_wire.json");
    int checked = 0;
    for (const auto& r : records["wire"]) {
        const std::string recorded = r["request"];
        const std::string request = concrete(recorded);
        SCOPED_TRACE(request);
        JobInfo job;
        job.kvsname = kKvs;
        job.size = 1;
        job.universe_size = 1;
        job.appnum_of_rank = {0};
        Server server(job);
        // A key for the gets to find.
        (void)server.receive(0, "cmd=put kvsname=kvs_2315_0 key=-bcast-1-0 value=2F64\n");
        Effects effects = server.receive(0, request);
        // The owner of a job on one node completes a barrier at once.
        if (effects.local_barrier) {
            auto done = server.barrier_complete(effects.local_barrier->puts);
            ASSERT_TRUE(done) << done.error().str();
            effects.replies.insert(effects.replies.end(), done->replies.begin(),
                                   done->replies.end());
        }
        ++checked;
        if (r["response"].is_null()) {
            // abort is not answered; any other line ends the task.
            EXPECT_TRUE(effects.replies.empty());
            EXPECT_NE(effects.abort_exit_code.has_value(), effects.protocol_error.has_value());
            if (recorded.starts_with("cmd=abort")) {
                EXPECT_EQ(effects.abort_exit_code, 7);
            }
            continue;
        }
        ASSERT_FALSE(effects.protocol_error) << *effects.protocol_error;
        ASSERT_EQ(effects.replies.size(), 1u);
        const std::string reply = effects.replies[0].line;
        const std::string flux = r["response"];
        EXPECT_EQ(token(reply, "cmd"), token(flux, "cmd")) << reply;
        const bool deliberately_different = request == "cmd=init pmi_version=1 pmi_subversion=0\n";
        EXPECT_EQ(succeeded(reply), succeeded(flux) != deliberately_different) << reply;
    }
    EXPECT_EQ(checked, 18);
}

TEST(PmiServerVectors, ProcessMappingAsFluxStartWritesIt) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("pmi_wire.json");
    constexpr std::uint32_t kTasks = 4;
    const std::map<std::string, std::optional<std::string>> gantry = {
        {"single (default)", process_mapping(TaskMap::block(1, kTasks).value())},
        {"per-broker", process_mapping(TaskMap::block(kTasks, 1).value())},
        {"none", process_mapping(TaskMap{})},
    };
    int checked = 0;
    for (const auto& r : records["flux_start_test_mode"]) {
        const std::string clique = r["flux start --test-pmi-clique"];
        std::string expected = r["PMI_process_mapping"];
        if (!gantry.contains(clique))
            continue;  // "<TASKMAP>": any map, as ProcessMapping in server_test.cpp
        for (auto at = expected.find('N'); at != std::string::npos; at = expected.find('N'))
            expected.replace(at, 1, std::to_string(kTasks));
        SCOPED_TRACE(clique);
        EXPECT_EQ(gantry.at(clique).value_or("(not set)"), expected);
        ++checked;
    }
    EXPECT_EQ(checked, 3);
}

// flux-core's shell provides PMI_process_mapping and its RFC 34 task map
// (flux.taskmap, wrapped) as keys; gantry's shell provides the same two, the
// second as the plain JSON array gantry.taskmap, and the server answers them
// and keeps them from puts.
TEST(PmiServerVectors, PreputKeys) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("pmi_wire.json");
    const TaskMap map = TaskMap::block(2, 2).value();
    JobInfo job;
    job.kvsname = kKvs;
    job.size = 1;
    job.server_keys["PMI_process_mapping"] = process_mapping(map).value();
    job.server_keys["gantry.taskmap"] = map.to_json();
    Server server(job);
    int checked = 0;
    for (const auto& r : records["preput_keys"]) {
        std::string key = r["key"];
        if (key == "flux.taskmap")
            key = "gantry.taskmap";
        if (!job.server_keys.contains(key))
            continue;  // flux's own instance keys
        SCOPED_TRACE(key);
        const auto get = server.receive(0, "cmd=get kvsname=kvs_2315_0 key=" + key + "\n");
        ASSERT_EQ(get.replies.size(), 1u);
        EXPECT_EQ(get.replies[0].line,
                  "cmd=get_result rc=0 msg=success value=" + job.server_keys[key] + "\n");
        const auto put = server.receive(0, "cmd=put kvsname=kvs_2315_0 key=" + key + " value=x\n");
        ASSERT_EQ(put.replies.size(), 1u);
        EXPECT_FALSE(succeeded(put.replies[0].line));
        ++checked;
    }
    EXPECT_EQ(checked, 2);
    EXPECT_EQ(job.server_keys["gantry.taskmap"], "[[0,2,2,1]]");
}

}  // namespace
}  // namespace gantry::pmi
