// Launch plans on a synthetic "package:2 core:4 pu:2" machine whose PUs are
// numbered as Linux numbers hyperthreads: core c holds logical PUs 2c and
// 2c+1, which the OS calls c and c+8.
#include "mapper/launch_plan.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace gantry {
namespace {

using test::directives;

const Topology& machine() {
    static const Topology topology = *Topology::from_synthetic(
        "package:2 core:4 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)");
    return topology;
}

using Argv = std::vector<std::string>;

// App 0: two tasks by package; app 1: three unbound tasks by node.
JobMap mpmd_map() {
    const JobRequest request{directives("package"),
                             {AppRequest{2, {}, "./a x", {}, {}},
                              AppRequest{3, directives("node", "", "none"), "./b", {}, {}}}};
    return *map_job(request, make_nodes(*parse_hosts("n0:3,n1:3,n2:3"), machine()));
}

TEST(LaunchPlan, OneNodePlanPerNodeWithTasks) {
    const std::vector<Argv> argv = {{"./a", "x"}, {"./b"}};
    const std::vector<NodePlan> expected = {
        {0,
         "n0",
         5,
         {LaunchTask{0, 0, 0, 0, 0, {"./a", "x"}, *IdSet::parse("0-3,8-11"), {}},
          LaunchTask{1, 0, 1, 1, 1, {"./a", "x"}, *IdSet::parse("4-7,12-15"), {}},
          LaunchTask{2, 1, 0, 2, 2, {"./b"}, {}, {}}}},
        {1, "n1", 5, {LaunchTask{3, 1, 1, 0, 0, {"./b"}, {}, {}}}},
        {2, "n2", 5, {LaunchTask{4, 1, 2, 0, 0, {"./b"}, {}, {}}}},
    };
    EXPECT_EQ(launch_plans(mpmd_map(), argv), expected);
}

TEST(LaunchPlan, LocalRankOrderAndOsIndices) {
    // rank-by node interleaves nodes: n0 holds ranks 0, 2, 4 as local 0, 1, 2.
    JobRequest request{directives("core"), {AppRequest{5, {}, "", {}, {}}}};
    request.directives.rank = *parse_rank_by("node");
    const auto map = map_job(request, make_nodes(*parse_hosts("n0:3,n1:3"), machine()));
    ASSERT_TRUE(map.ok()) << map.error().str();
    const auto plans = launch_plans(*map, std::vector<Argv>{{"hostname"}});
    ASSERT_EQ(plans.size(), 2u);
    EXPECT_EQ(launch_plans_text(plans),
              R"({"hostname":"n0","job_size":5,"node":0,"tasks":[)"
              R"({"app":0,"app_rank":0,"argv":["hostname"],"cpus_os":"0,8","gpus":[],)"
              R"("local_rank":0,"node_rank":0,"rank":0},)"
              R"({"app":0,"app_rank":2,"argv":["hostname"],"cpus_os":"1,9","gpus":[],)"
              R"("local_rank":1,"node_rank":1,"rank":2},)"
              R"({"app":0,"app_rank":4,"argv":["hostname"],"cpus_os":"2,10","gpus":[],)"
              R"("local_rank":2,"node_rank":2,"rank":4}]})"
              "\n"
              R"({"hostname":"n1","job_size":5,"node":1,"tasks":[)"
              R"({"app":0,"app_rank":1,"argv":["hostname"],"cpus_os":"0,8","gpus":[],)"
              R"("local_rank":0,"node_rank":0,"rank":1},)"
              R"({"app":0,"app_rank":3,"argv":["hostname"],"cpus_os":"1,9","gpus":[],)"
              R"("local_rank":1,"node_rank":1,"rank":3}]})"
              "\n");
}

// GPUs pass through as the node's GPU indices, the ids R gives them.
TEST(LaunchPlan, GpusAndMissingArgv) {
    JobMap map;
    map.nodes = make_nodes(*parse_hosts("g0:2"), machine());
    map.policy.apps.resize(2);
    map.app_sizes = {1, 1};
    map.tasks = {Task{0, 0, 0, 0, 0, 0, IdSet{0, 1}, IdSet{0, 8}, {1}},
                 Task{1, 1, 0, 0, 1, 1, IdSet{}, IdSet{}, {0, 2}}};
    const std::vector<NodePlan> expected = {
        {0,
         "g0",
         2,
         {LaunchTask{0, 0, 0, 0, 0, {"./gpu"}, IdSet{0, 8}, {1}},
          LaunchTask{1, 1, 0, 1, 1, {}, {}, {0, 2}}}}};
    EXPECT_EQ(launch_plans(map, std::vector<Argv>{{"./gpu"}}), expected);
    EXPECT_TRUE(launch_plans(JobMap{}, {}).empty());
}

}  // namespace
}  // namespace gantry
