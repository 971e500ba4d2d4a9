// A jobspec mapped as `gantry run` and an instance's broker map it: per-app
// policies, the node pool from an allocation, resources.R, hosts or a
// hostfile, paths taken from attributes.cwd, and the options' messages.
#include "mapper/jobspec_map.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fixtures.h"
#include "support/vectors.h"

namespace gantry {
namespace {

using test::small_machine;

Jobspec::App app(std::vector<std::string> command, std::uint32_t ntasks, std::string map_by = "",
                 std::string rank_by = "", std::string bind_to = "") {
    Jobspec::App a;
    a.command = std::move(command);
    a.ntasks = ntasks;
    a.map_by = std::move(map_by);
    a.rank_by = std::move(rank_by);
    a.bind_to = std::move(bind_to);
    return a;
}

Jobspec with_hosts(std::string hosts, std::vector<Jobspec::App> apps) {
    Jobspec spec;
    spec.apps = std::move(apps);
    spec.job.hosts = std::move(hosts);
    return spec;
}

// "rank:node:PUs" for every task in rank order; "-" when unbound.
std::string layout(const Result<JobMap>& map) {
    if (!map)
        return map.error().str();
    std::string out;
    for (const Task& task : map->tasks)
        out += (out.empty() ? "" : " ") + std::to_string(task.rank) + ":" +
               map->nodes[task.node].name + ":" + (task.cpus.empty() ? "-" : task.cpus.str());
    return out;
}

ResourceSet allocation_of(const std::string& json) {
    return *ResourceSet::parse(json);
}

// `gantry run -H n0:4,n1:4 -n 2 --map-by package ./a x : -n 4 --map-by core ./b`.
TEST(MapJobspec, TwoAppsWithTheirOwnPolicies) {
    const Jobspec spec = with_hosts(
        "n0:4,n1:4", {app({"./a", "x"}, 2, "package"), app({"./b"}, 4, "core", "", "core")});
    const auto map = map_jobspec(spec, small_machine());
    EXPECT_EQ(layout(map), "0:n0:0-7 1:n0:8-15 2:n0:2-3 3:n0:4-5 4:n1:0-1 5:n1:2-3");
    ASSERT_TRUE(map);
    EXPECT_EQ(map->app_sizes, (std::vector<unsigned>{2, 4}));
    EXPECT_TRUE(map->policy.per_app);
    EXPECT_EQ(mapping_name(map->policy.apps[0].map), "BYPACKAGE");
    EXPECT_EQ(mapping_name(map->policy.apps[1].map), "BYCORE");
    EXPECT_EQ(app_argvs(spec), (std::vector<std::vector<std::string>>{{"./a", "x"}, {"./b"}}));
    EXPECT_EQ(app_commands(spec), (std::vector<std::string>{"./a x", "./b"}));
}

// The broker maps inside the R it allocated: cores 2-3 of n0 only, whatever
// the jobspec's -H says.
TEST(MapJobspec, AnAllocationIsTheNodePool) {
    const ResourceSet allocation = allocation_of(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"2-3"}}],)"
        R"("nodelist":["n0"]}})");
    const Jobspec two = with_hosts("", {app({"x"}, 2, "core")});
    EXPECT_EQ(layout(map_jobspec(two, small_machine(), allocation)), "0:n0:4-5 1:n0:6-7");
    const Jobspec three = with_hosts("", {app({"x"}, 3, "core")});
    EXPECT_EQ(layout(map_jobspec(three, small_machine(), allocation)),
              "map: app 0 (-n 3 x): there are not enough slots available: 3 tasks do not fit in "
              "the 2 free slots of n0; add :OVERSUBSCRIBE to the job's --map-by or give fewer "
              "tasks");
    Jobspec elsewhere = with_hosts("", {app({"x"}, 1), app({"y"}, 1)});
    elsewhere.apps[1].hosts = "n7";
    EXPECT_EQ(layout(map_jobspec(elsewhere, small_machine(), allocation)),
              "run: app 1's host n7 is not among the job's allocated nodes");
    elsewhere.apps[1].hosts = "n0";
    EXPECT_EQ(layout(map_jobspec(elsewhere, small_machine(), allocation)), "0:n0:4-5 1:n0:6-7");
}

// --resources: the jobspec's own R, in place of -H.
TEST(MapJobspec, ResourcesR) {
    Jobspec spec = with_hosts("", {app({"x"}, 3, "core")});
    spec.resources.R = allocation_of(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"6-7"}}],)"
        R"("nodelist":["n[0-1]"]}})");
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())), "0:n0:12-13 1:n0:14-15 2:n1:12-13");
    spec.job.hosts = "a";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "run: give one of -H, --hostfile and --resources");
}

// Relative paths are the front end's: taken from attributes.cwd.
TEST(MapJobspec, RelativeHostfileIsTakenFromTheJobsDirectory) {
    const std::filesystem::path hostfile =
        test::write_temp_file("gantry-jobspec-map-hosts", "h0 slots=1\nh1 slots=2\n");
    Jobspec spec;
    spec.apps = {app({"x"}, 3, "slot", "", "none")};
    spec.job.hostfile = hostfile.filename().string();
    spec.attributes.cwd = hostfile.parent_path().string();
    EXPECT_EQ(jobspec_path(spec, spec.job.hostfile), hostfile.string());
    EXPECT_EQ(jobspec_path(spec, "/abs/hosts"), "/abs/hosts");
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())), "0:h0:- 1:h1:- 2:h1:-");
    spec.job.hostfile = "gantry-no-such-hostfile";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "run: hostfile \"gantry-no-such-hostfile\": No such file or directory");
    // Without a directory, relative paths are the process's.
    spec.attributes.cwd.clear();
    EXPECT_EQ(jobspec_path(spec, "hosts"), "hosts");
}

// As in PRRTE, a hostfile gives the hosts and each app's -H picks among them
// (`--hostfile hosts -H h0 -n 1 a : -H h1,h2 -n 2 b`); a host outside it is
// an error naming it.
TEST(MapJobspec, PerAppHostsPickAmongTheHostfile) {
    const std::filesystem::path hostfile =
        test::write_temp_file("gantry-jobspec-map-per-app", "h0 slots=2\nh1 slots=1\nh2 slots=2\n");
    Jobspec spec;
    spec.apps = {app({"a"}, 1, "slot", "", "none"), app({"b"}, 2, "slot", "", "none")};
    spec.job.hostfile = hostfile.string();
    spec.apps[0].hosts = "h0";
    spec.apps[1].hosts = "h1,h2";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())), "0:h0:- 1:h1:- 2:h2:-");
    spec.apps[1].hosts = "h1,h9";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "run: app 1's host h9 is not in the hostfile \"" + hostfile.string() + "\"");
    spec.apps[1].hosts.clear();
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())), "0:h0:- 1:h0:- 2:h1:-");
}

// localhost, this machine's addresses and its name are one node, named as
// the machine is.
TEST(MapJobspec, ThisMachinesNamesAreOneNode) {
    const std::string here = local_hostname();
    const Jobspec spec =
        with_hosts("localhost:2,127.0.0.1:1," + here, {app({"x"}, 4, "slot", "", "none")});
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "0:" + here + ":- 1:" + here + ":- 2:" + here + ":- 3:" + here + ":-");
}

// seq without FILE= reads app 0's hosts from the job's -H, a later app's
// from its own.
TEST(MapJobspec, SeqReadsTheHosts) {
    Jobspec spec = with_hosts("n1,n0", {app({"x"}, 0, "seq"), app({"y"}, 0, "seq")});
    spec.apps[1].hosts = "n0,n0";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())), "0:n1:0-1 1:n0:0-1 2:n0:2-3 3:n0:4-5");
}

// The mpirun flags are qualifiers of the job's --map-by.
TEST(MapJobspec, CompatFlagsFoldIntoTheJobsPolicy) {
    Jobspec spec = with_hosts("a:1", {app({"x"}, 2, "", "", "core")});
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "map: app 0 (-n 2 x): there are not enough slots available: 2 tasks do not fit in "
              "the 1 free slot of a; add :OVERSUBSCRIBE to the job's --map-by or give fewer "
              "tasks");
    spec.job.oversubscribe = true;
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())), "0:a:0-1 1:a:2-3");
    spec.apps[0].map_by = "core:nooversubscribe";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "run: --oversubscribe conflicts with NOOVERSUBSCRIBE in --map-by");
    spec.apps[0].map_by = "core";
    spec.job.oversubscribe = false;
    spec.job.rankfile = "ranks";
    EXPECT_EQ(layout(map_jobspec(spec, small_machine())),
              "run: --rankfile conflicts with --map-by BYCORE");
}

TEST(MapJobspec, BadOptionsGiveTheirMessages) {
    struct Case {
        Jobspec spec;
        std::string error;
    };
    Jobspec both = with_hosts("a", {app({"x"}, 1)});
    both.job.hostfile = "h";
    Jobspec app_both = with_hosts("", {app({"x"}, 1), app({"y"}, 1)});
    app_both.apps[1].hosts = "a";
    app_both.apps[1].hostfile = "h";
    const Case kCases[] = {
        {with_hosts("", {app({"x"}, 1, "bogus")}),
         "map-by: unknown directive \"bogus\" (Valid directives: slot, hwthread, core, l1cache, "
         "l2cache, l3cache, numa, package, socket, node, seq, ppr, rankfile, pe-list, device) in "
         "\"bogus\""},
        {with_hosts("", {app({"x"}, 1), app({"y"}, 1, "", "bogus")}),
         "rank-by: unknown directive \"bogus\" (Valid directives: slot, node, fill, span) in "
         "\"bogus\""},
        {with_hosts("+n0", {app({"x"}, 1)}),
         "run: the relative host +n0 names one of the job's nodes; give it in a later app's -H"},
        {both, "run: give one of -H, --hostfile and --resources"},
        {app_both, "run: give -H or --hostfile, not both"},
    };
    for (const Case& c : kCases)
        EXPECT_EQ(layout(map_jobspec(c.spec, small_machine())), c.error);
}

TEST(MapJobspec, Topology) {
    Jobspec spec;
    spec.job.topology = "package:1 core:2 pu:1";
    const auto synthetic = jobspec_topology(spec);
    ASSERT_TRUE(synthetic) << synthetic.error().str();
    EXPECT_EQ(synthetic->all_pus().count(), 2u);
    spec.job.topology = "bogus:1";
    EXPECT_FALSE(jobspec_topology(spec));
}

}  // namespace
}  // namespace gantry
