// Where a job shell under an instance lets its unbound tasks run: inside
// its node's share of R, never the whole machine.
#include "shell/unbound.h"

#include <gtest/gtest.h>

#include "formats/rset.h"

namespace gantry::shell {
namespace {

Task task_on(IdSet cpus_os) {
    Task task;
    task.cpus_os = std::move(cpus_os);
    return task;
}

TEST(ConfineUnboundTasks, ToTheNodesAllocatedCores) {
    // Rank 1 holds cores 1 and 3 of "package:1 core:4 pu:2" (PUs 2-3, 6-7);
    // rank 0's cores are another node's and stay out.
    const auto R = ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}},)"
        R"({"rank":"1","children":{"core":"1,3"}}],"nodelist":["n[0-1]"]}})");
    ASSERT_TRUE(R) << R.error().str();
    const auto topology = Topology::from_synthetic("package:1 core:4 pu:2");
    ASSERT_TRUE(topology);
    const auto nodes = nodes_from_resources(*R, *topology);
    ASSERT_TRUE(nodes) << nodes.error().str();
    Job job;
    job.tasks = {task_on(IdSet{}), task_on(IdSet{6}), task_on(IdSet{})};
    confine_unbound_tasks_to_allocation(job, (*nodes)[1]);
    EXPECT_EQ(job.tasks[0].cpus_os.str(), "2-3,6-7");
    EXPECT_EQ(job.tasks[1].cpus_os.str(), "6");
    EXPECT_EQ(job.tasks[2].cpus_os.str(), "2-3,6-7");

    // A node without an allocation: the whole machine.
    Job unallocated;
    unallocated.tasks = {task_on(IdSet{})};
    confine_unbound_tasks_to_allocation(unallocated, local_node(*topology, "here"));
    EXPECT_EQ(unallocated.tasks[0].cpus_os.str(), "0-7");
}

}  // namespace
}  // namespace gantry::shell
