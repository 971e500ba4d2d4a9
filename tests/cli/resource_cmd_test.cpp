// `gantry resource list` against real instances: this machine's, and one of
// three nodes (two of them simulated ranks) given by --resources, with jobs
// holding part of it.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/instance.h"
#include "support/machine.h"
#include "support/process.h"
#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

using Json = nlohmann::json;

const std::string kHeader = "     STATE NNODES   NCORES    NGPUS NODELIST\n";

// An instance of three nodes: this host (rank 0) and n1, n2 (ranks 1-2,
// simulated: scheduled, never run on), each with cores 0-1.
class ResourceList : public testing::Test {
protected:
    void SetUp() override {
        // No GPUs: jobs are checked against the whole inventory, and this
        // machine has none for them.
        const auto encoded = run_gantry({"R", "encode", "--ranks", "0-2", "--cores", "0-1",
                                         "--hosts", host_name() + ",n[1-2]"});
        ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
        std::ofstream(R_) << encoded.out;
        const auto started = run_gantry(
            {"start", "--daemon", "--state-dir", state_, "--resources", R_, "--simulate-ranks"});
        ASSERT_EQ(started.exit_code, 0) << started.err;
        uri_ = "unix://" + state_ + "/socket";
    }
    void TearDown() override {
        if (!uri_.empty()) {
            EXPECT_EQ(gantry({"shutdown", "--force"}).exit_code, 0);
        }
    }
    // `gantry args...` with --uri after the (sub)command's name.
    CommandResult gantry(std::vector<std::string> args) const {
        args.insert(args.begin() + (args[0] == "resource" ? 2 : 1), {"--uri", uri_});
        return run_gantry(args);
    }
    void expect(std::vector<std::string> args, const std::string& out, const std::string& err,
                int exit_code) const {
        const auto result = gantry(args);
        EXPECT_EQ(result.out, out) << args[0];
        EXPECT_EQ(result.err, err) << args[0];
        EXPECT_EQ(result.exit_code, exit_code) << args[0];
    }
    void expect_list(const std::vector<std::string>& options, const std::string& out) const {
        std::vector<std::string> args = {"resource", "list"};
        args.insert(args.end(), options.begin(), options.end());
        expect(args, out, "", 0);
    }
    std::string submit(const std::vector<std::string>& args) const {
        std::vector<std::string> all = {"submit"};
        all.insert(all.end(), args.begin(), args.end());
        const auto result = gantry(all);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return result.out.substr(0, result.out.find('\n'));
    }
    std::string state(const std::string& id) const {
        const auto result = gantry({"info", "--json", id});
        const Json info = Json::parse(result.out, nullptr, false);
        return info.is_object() ? info.value("state", "") : "";
    }

    ScratchDir dir_;
    const std::string R_ = dir_ / "R.json";
    const std::string state_ = dir_ / "state";
    std::string uri_;
};

TEST_F(ResourceList, NothingRunningIsAllFree) {
    const std::string host = host_name();
    expect_list({}, kHeader + "      free      3        6        0 " + host + ",n[1-2]\n" +
                        " allocated      0        0        0\n" +
                        "      down      0        0        0\n");
}

TEST_F(ResourceList, ARunningJobsCoresAreAllocated) {
    const std::string host = host_name();
    // Two tasks: both cores of rank 0, the first fit.
    const std::string whole = submit({"-n", "2", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return state(whole) == "RUN"; }));
    expect_list({}, kHeader + "      free      2        4        0 n[1-2]\n" +
                        " allocated      1        2        0 " + host + "\n" +
                        "      down      0        0        0\n");
    expect({"cancel", whole}, "", "", 0);
    ASSERT_TRUE(eventually([&] { return state(whole) == "INACTIVE"; }));
    // One task: a node with cores free and allocated is in both rows.
    const std::string half = submit({"-n", "1", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return state(half) == "RUN"; }));
    expect_list({}, kHeader + "      free      3        5        0 " + host + ",n[1-2]\n" +
                        " allocated      1        1        0 " + host + "\n" +
                        "      down      0        0        0\n");
    expect({"cancel", half}, "", "", 0);
    ASSERT_TRUE(eventually([&] { return state(half) == "INACTIVE"; }));
    expect_list({"-n", "-s", "allocated"}, " allocated      0        0        0\n");
}

TEST_F(ResourceList, StatesAndFormats) {
    const std::string host = host_name();
    expect_list({"-s", "all,up,down"}, kHeader + "       all      3        6        0 " + host +
                                           ",n[1-2]\n" + "        up      3        6        0 " +
                                           host + ",n[1-2]\n" +
                                           "      down      0        0        0\n");
    expect_list({"--states=free", "-o", "{state}:{ranks}:{nnodes}:{ncores}:{ngpus}"},
                "STATE:RANKS:NNODES:NCORES:NGPUS\nfree :0-2  :3     :6     :0\n");
    expect_list({"-n", "-s", "all", "--format", "{nodelist}"}, host + ",n[1-2]\n");
}

TEST_F(ResourceList, Json) {
    const auto result = gantry({"resource", "list", "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const Json reply = Json::parse(result.out, nullptr, false);
    ASSERT_TRUE(reply.is_object()) << result.out;
    EXPECT_EQ(reply["all"], reply["free"]);
    EXPECT_EQ(reply["all"]["execution"]["nodelist"], Json::array({host_name() + ",n[1-2]"}));
    EXPECT_EQ(reply["allocated"]["execution"]["R_lite"], Json::array());
    EXPECT_EQ(reply["down"]["execution"]["R_lite"], Json::array());
}

TEST_F(ResourceList, Errors) {
    expect({"resource", "list", "-s", "offline"}, "",
           "gantry: resource: --states: unknown state \"offline\" (free, allocated, down, "
           "drained, up, all)\n",
           2);
    expect({"resource", "list", "-o", "{queue}"}, "",
           "gantry: resource: --format: unknown field \"queue\" (known: ncores, ngpus, "
           "nnodes, nodelist, properties, ranks, state)\n",
           2);
    const auto no_subcommand = run_gantry({"resource"});
    EXPECT_EQ(no_subcommand.exit_code, 2);
    EXPECT_NE(no_subcommand.err.find("gantry: resource: "), std::string::npos) << no_subcommand.err;
    const auto outside =
        run_program({"env", "-u", "GANTRY_URI", gantry_binary(), "resource", "list"});
    EXPECT_EQ(outside.err, "gantry: not inside an instance (GANTRY_URI is not set); give --uri\n");
    EXPECT_EQ(outside.exit_code, 2);
}

// Drained nodes take no new job, show as down (and drained), keep their
// reason, and stay drained when the instance restarts on its state.
TEST_F(ResourceList, DrainedNodesTakeNoNewJobsAndStayDrained) {
    const std::string host = host_name();
    expect({"resource", "drain", "n1", "bad", "fan"}, "", "", 0);
    expect({"resource", "drain", "2"}, "", "", 0);
    expect_list({"-s", "free,allocated,down,drained,up"},
                kHeader + "      free      1        2        0 " + host + "\n" +
                    " allocated      0        0        0\n" +
                    "      down      2        4        0 n[1-2]\n" +
                    "   drained      2        4        0 n[1-2]\n" +
                    "        up      3        6        0 " + host + ",n[1-2]\n");
    const auto listed = gantry({"resource", "drain"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    const std::string time = R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)";
    EXPECT_TRUE(std::regex_match(listed.out, std::regex("RANK HOST SINCE {23}REASON\n"
                                                        "1    n1   " +
                                                        time +
                                                        " bad fan\n"
                                                        "2    n2   " +
                                                        time + "\n")))
        << listed.out;
    // A job of three nodes waits; one of one node runs meanwhile.
    const std::string wide = submit({"-N", "3", "true"});
    const std::string one = submit({"-N", "1", "true"});
    ASSERT_TRUE(eventually([&] { return state(one) == "INACTIVE"; }));
    EXPECT_EQ(state(wide), "SCHED");
    expect({"cancel", wide}, "", "", 0);

    // Restarted on its state, the instance keeps them drained.
    expect({"shutdown"}, "", "", 0);
    const auto restarted = run_gantry(
        {"start", "--daemon", "--state-dir", state_, "--resources", R_, "--simulate-ranks"});
    ASSERT_EQ(restarted.exit_code, 0) << restarted.err;
    const auto again = gantry({"resource", "drain", "-n"});
    EXPECT_TRUE(std::regex_match(again.out, std::regex("1    n1   " + time +
                                                       " bad fan\n"
                                                       "2    n2   " +
                                                       time + "\n")))
        << again.out;
    expect({"resource", "undrain", "n[1-2]"}, "", "", 0);
    expect({"resource", "drain"}, "RANK HOST SINCE REASON\n", "", 0);
    expect_list({"-n", "-s", "free"}, "      free      3        6        0 " + host + ",n[1-2]\n");
}

TEST_F(ResourceList, DrainErrors) {
    expect({"resource", "drain", "7"}, "",
           "gantry: resource.drain: no rank 7 in this instance (ranks 0-2)\n", 1);
    expect({"resource", "drain", "zz"}, "",
           "gantry: resource.drain: no node zz in this instance (" + host_name() + ",n[1-2])\n", 1);
    expect({"resource", "drain", "n["}, "",
           "gantry: resource.drain: \"n[\" is neither ranks nor host names: '[' without ']'\n", 1);
    expect({"resource", "undrain", "1"}, "", "gantry: resource.undrain: rank 1 is not drained\n",
           1);
    const auto no_targets = gantry({"resource", "undrain"});
    EXPECT_EQ(no_targets.exit_code, 2);
    EXPECT_NE(no_targets.err.find("gantry: resource: "), std::string::npos) << no_targets.err;
}

// This machine's instance, as `gantry start --daemon` makes it.
class ResourceListHere : public InstanceTest {};

TEST_F(ResourceListHere, ThisMachineIsOneFreeNode) {
    const Json instance = daemon_.info();
    const std::string cores = std::to_string(instance.value("cores", 0));
    const std::string gpus = std::to_string(instance.value("gpus", 0));
    const auto pad = [](const std::string& text, std::size_t width) {
        return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
    };
    expect({"resource", "list"},
           kHeader + "      free      1 " + pad(cores, 8) + " " + pad(gpus, 8) + " " + host_name() +
               "\n" + " allocated      0        0        0\n" +
               "      down      0        0        0\n",
           "", 0);
}

TEST(ResourceHelp, HasExamples) {
    const auto result = run_gantry({"resource", "list", "--help"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("Examples:"), std::string::npos);
    EXPECT_NE(result.out.find("Exit status"), std::string::npos);
    EXPECT_NE(run_gantry({"--help"}).out.find("\n  resource "), std::string::npos);
}

}  // namespace
}  // namespace gantry::test
