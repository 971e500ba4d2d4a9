// The job's R from its map, on a synthetic "package:2 core:4 pu:2" machine:
// core c = PUs 2c-2c+1, package 1 = cores 4-7.
#include "mapper/resources.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace gantry {
namespace {

using test::directives;
using test::small_machine;
using test::small_nodes;

AppRequest app(unsigned n, Directives own = {}) {
    return AppRequest{n, std::move(own), "", {}, {}};
}

// "<short form> on <hosts>", or the mapping error.
std::string resources_of(const JobRequest& request, std::vector<Node> pool) {
    const auto map = map_job(request, std::move(pool));
    if (!map)
        return map.error().str();
    const ResourceSet r = job_resources(*map);
    return r.short_form() + " on " + r.nodelist().encode();
}

TEST(JobResources, CoresOfBoundAndUnboundTasks) {
    const struct {
        const char* name;
        JobRequest request;
        const char* hosts;
        const char* expected;
    } kCases[] = {
        {"core binding: the bound cores",
         {directives("core"), {app(6)}},
         "n0:4,n1:4",
         "rank0/core[0-3] rank1/core[0-1] on n[0-1]"},
        {"package binding: the whole package",
         {directives("ppr:1:package"), {app(0)}},
         "n0:2",
         "rank0/core[0-7] on n0"},
        {"unbound: one core per task, lowest first",
         {directives("slot", "", "none"), {app(5)}},
         "n0:4,n1:4",
         "rank0/core[0-3] rank1/core0 on n[0-1]"},
        {"unbound with hwthread CPUs: one PU per task, R holds their cores",
         {directives("slot:hwtcpus", "", "none"), {app(3)}},
         "n0:4",
         "rank0/core[0-1] on n0"},
        {"unbound tasks take cores no bound task holds",
         {directives("core"), {app(2), app(2, directives("slot", "", "none"))}},
         "n0:4",
         "rank0/core[0-3] on n0"},
        {"a core with one bound hwthread is not a free slot",
         {directives("hwthread"), {app(1), app(1, directives("slot", "", "none"))}},
         "n0:2",
         "rank0/core[0-1] on n0"},
        {"oversubscribed beyond the cores: unbound tasks share them all",
         {directives("slot:oversubscribe", "", "none"), {app(20)}},
         "n0:4",
         "rank0/core[0-7] on n0"},
        {"nodes without tasks are left out; ranks are node indices",
         {directives("core:nolocal"), {app(2)}},
         "n0:4,n1:4",
         "rank1/core[0-1] on n1"},
    };
    for (const auto& c : kCases) {
        const bool local = std::string_view(c.name).starts_with("nodes without");
        EXPECT_EQ(resources_of(c.request, small_nodes(c.hosts, local ? "n0" : "")), c.expected)
            << c.name;
    }
}

// The R a job maps inside limits it, and the job's R lies inside it.
TEST(JobResources, InsideAnAllocation) {
    const auto allocation = *ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"5-7"}}],)"
        R"("nodelist":["n[0-1]"]}})");
    const JobRequest request{directives("core"), {app(4)}};
    EXPECT_EQ(resources_of(request, *nodes_from_resources(allocation, small_machine())),
              "rank0/core[5-7] rank1/core5 on n[0-1]");
    const JobRequest unbound{directives("slot", "", "none"), {app(4)}};
    EXPECT_EQ(resources_of(unbound, *nodes_from_resources(allocation, small_machine())),
              "rank0/core[5-7] rank1/core5 on n[0-1]");
}

// GPUs come from the tasks: a map built by hand, as a device map gives it.
TEST(JobResources, GpusOfTheTasks) {
    JobMap map;
    map.nodes = small_nodes("g0:2,g1:2");
    map.policy.apps.resize(1);
    map.app_sizes = {3};
    map.tasks = {Task{0, 0, 0, 0, 0, 0, IdSet{0, 1}, IdSet{0, 1}, {2}},
                 Task{1, 0, 1, 0, 1, 1, IdSet{8, 9}, IdSet{8, 9}, {0, 3}},
                 Task{2, 0, 2, 1, 0, 0, IdSet{}, IdSet{}, {1}}};
    EXPECT_EQ(job_resources(map).encode(),
              R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0,4",)"
              R"("gpu":"0,2-3"}},{"rank":"1","children":{"core":"0","gpu":"1"}}],)"
              R"("nodelist":["g[0-1]"],"starttime":0.0,"expiration":0.0}})");
}

TEST(JobResources, EmptyJobMapHasNoRanks) {
    EXPECT_TRUE(job_resources(JobMap{}).empty());
}

}  // namespace
}  // namespace gantry
