// A jobspec mapped as `gantry run` and an instance's broker map it: per-app
// policies, the node pool from an allocation (each rank with its own
// topology), resources.R, hosts or a hostfile, paths taken from
// attributes.cwd, files given as values, and the options' messages.
#include "mapper/jobspec_map.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "fixtures.h"
#include "mapper/display.h"

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

// What `gantry run` gives the mapper on this machine (its names), but every
// node a small_machine() and only the files given.
MapInputs inputs(FileTexts files = {}) {
    MapInputs given;
    given.topology = small_machine();
    given.hostname = local_hostname();
    given.names = local_names();
    given.files = std::move(files);
    return given;
}

// ... and inside `allocation`, every rank of it a small_machine().
MapInputs inputs_in(const ResourceSet& allocation) {
    MapInputs given = inputs();
    given.ranks = RankTopologies(allocation.ranks(), small_machine());
    return given;
}

// `gantry run -H n0:4,n1:4 -n 2 --map-by package ./a x : -n 4 --map-by core ./b`.
TEST(MapJobspec, TwoAppsWithTheirOwnPolicies) {
    const Jobspec spec = with_hosts(
        "n0:4,n1:4", {app({"./a", "x"}, 2, "package"), app({"./b"}, 4, "core", "", "core")});
    const auto map = map_jobspec(spec, inputs());
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
    EXPECT_EQ(layout(map_jobspec(two, inputs_in(allocation), allocation)), "0:n0:4-5 1:n0:6-7");
    const Jobspec three = with_hosts("", {app({"x"}, 3, "core")});
    EXPECT_EQ(layout(map_jobspec(three, inputs_in(allocation), allocation)),
              "map: app 0 (-n 3 x): there are not enough slots available: 3 tasks do not fit in "
              "the 2 free slots of n0; add :OVERSUBSCRIBE to the job's --map-by or give fewer "
              "tasks");
    Jobspec elsewhere = with_hosts("", {app({"x"}, 1), app({"y"}, 1)});
    elsewhere.apps[1].hosts = "n7";
    EXPECT_EQ(layout(map_jobspec(elsewhere, inputs_in(allocation), allocation)),
              "run: app 1's host n7 is not among the job's allocated nodes");
    elsewhere.apps[1].hosts = "n0";
    EXPECT_EQ(layout(map_jobspec(elsewhere, inputs_in(allocation), allocation)),
              "0:n0:4-5 1:n0:6-7");
}

// Inside an allocation each node has the topology of its rank: rank 0 a
// machine of two single-PU cores, rank 1 one of two packages of two
// two-PU cores, whatever order they were given in.
TEST(MapJobspec, EachRankOfAnAllocationHasItsOwnTopology) {
    const ResourceSet allocation = allocation_of(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-1"}},)"
        R"({"rank":"1","children":{"core":"0-3"}}],"nodelist":["n[0-1]"]}})");
    const Topology small = *Topology::from_synthetic("package:1 core:2 pu:1");
    const Topology big = *Topology::from_synthetic("package:2 core:2 pu:2");
    MapInputs given;
    given.ranks.assign(IdSet{1}, big);
    given.ranks.assign(IdSet{0}, small);
    Jobspec spec = with_hosts("", {app({"x"}, 6, "core", "", "core")});
    spec.job.display = {"map"};
    const auto map = map_jobspec(spec, given, allocation);
    EXPECT_EQ(layout(map), "0:n0:0 1:n0:1 2:n1:0-1 3:n1:2-3 4:n1:4-5 5:n1:6-7");
    ASSERT_TRUE(map) << map.error().str();
    EXPECT_EQ(map->nodes[0].topology.handle(), small.handle());
    EXPECT_EQ(map->nodes[1].topology.handle(), big.handle());
    EXPECT_EQ(display_output(spec, *map, DisplayOptions{"gantry@7"}).text,
              "\n========================   JOB MAP   ========================\n"
              "Data for JOB gantry@7 offset 0 Total slots allocated 6\n"
              "    Mapping policy: BYCORE:NOOVERSUBSCRIBE  Ranking policy: FILL Binding policy: "
              "CORE\n"
              "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n"
              "\n"
              "\n"
              "Data for node: n0\tNum slots: 2\tMax slots: 0\tNum procs: 2\n"
              "        Process jobid: gantry@7 App: 0 Process rank: 0 Bound: package[0][core:L0]\n"
              "        Process jobid: gantry@7 App: 0 Process rank: 1 Bound: package[0][core:L1]\n"
              "\n"
              "Data for node: n1\tNum slots: 4\tMax slots: 0\tNum procs: 4\n"
              "        Process jobid: gantry@7 App: 0 Process rank: 2 Bound: package[0][core:L0]\n"
              "        Process jobid: gantry@7 App: 0 Process rank: 3 Bound: package[0][core:L1]\n"
              "        Process jobid: gantry@7 App: 0 Process rank: 4 Bound: package[1][core:L2]\n"
              "        Process jobid: gantry@7 App: 0 Process rank: 5 Bound: package[1][core:L3]\n"
              "\n"
              "=============================================================\n");
    // A rank without a topology has no node to map onto.
    given.ranks = RankTopologies(IdSet{0}, small);
    EXPECT_EQ(layout(map_jobspec(spec, given, allocation)), "R: rank 1 (n1) has no topology");
}

// The files a jobspec names are values its caller read: a hostfile and a
// rankfile, by the paths jobspec_path gives, map as files on disk do
// (neither exists), and a file the caller could not read gives its reason.
TEST(MapJobspec, FilesAreValuesTheCallerRead) {
    Jobspec spec;
    spec.apps = {app({"x"}, 3, "slot", "", "none")};
    spec.attributes.cwd = "/gantry-front-end";
    spec.job.hostfile = "hosts";
    EXPECT_EQ(jobspec_files(spec), (std::vector<std::string>{"/gantry-front-end/hosts"}));
    const FileTexts hostfile = {{"/gantry-front-end/hosts", {"h0 slots=2\nh1\n", std::nullopt}}};
    EXPECT_EQ(layout(map_jobspec(spec, inputs(hostfile))), "0:h0:- 1:h0:- 2:h1:-");
    const FileTexts unreadable = {{"/gantry-front-end/hosts", {"", "Permission denied"}}};
    EXPECT_EQ(layout(map_jobspec(spec, inputs(unreadable))),
              "run: hostfile \"hosts\": Permission denied");

    spec = with_hosts("n0:2,n1:2", {app({"x"}, 2)});
    spec.attributes.cwd = "/gantry-front-end";
    spec.job.rankfile = "ranks";
    EXPECT_EQ(jobspec_files(spec), (std::vector<std::string>{"/gantry-front-end/ranks"}));
    const FileTexts rankfile = {
        {"/gantry-front-end/ranks", {"rank 0=n1 slot=1\nrank 1=n0 slot=0-1\n", std::nullopt}}};
    EXPECT_EQ(layout(map_jobspec(spec, inputs(rankfile))), "0:n1:2-3 1:n0:0-3");
    EXPECT_EQ(layout(map_jobspec(spec, inputs())),
              "map-by: rankfile \"/gantry-front-end/ranks\": No such file or directory");

    // Every file once: the job's and each app's hostfile, the rankfile, FILE=.
    spec = with_hosts("", {app({"x"}, 1, "seq:FILE=order"), app({"y"}, 1, "rankfile:FILE=/rf")});
    spec.attributes.cwd = "/d";
    spec.job.hostfile = "h";
    spec.job.rankfile = "/rf";
    spec.apps[1].hostfile = "/d/h";
    EXPECT_EQ(jobspec_files(spec), (std::vector<std::string>{"/d/h", "/rf", "/d/order"}));
}

// --resources: the jobspec's own R, in place of -H.
TEST(MapJobspec, ResourcesR) {
    Jobspec spec = with_hosts("", {app({"x"}, 3, "core")});
    spec.resources.R = allocation_of(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"6-7"}}],)"
        R"("nodelist":["n[0-1]"]}})");
    EXPECT_EQ(layout(map_jobspec(spec, inputs())), "0:n0:12-13 1:n0:14-15 2:n1:12-13");
    spec.job.hosts = "a";
    EXPECT_EQ(layout(map_jobspec(spec, inputs())),
              "run: give one of -H, --hostfile and --resources");
}

// Relative paths are the front end's: taken from attributes.cwd. The file
// is a value, given by the path it has there; no file of that name exists.
TEST(MapJobspec, RelativeHostfileIsTakenFromTheJobsDirectory) {
    const std::filesystem::path hostfile = "/gantry-front-end/job/gantry-jobspec-map-hosts";
    const FileTexts files = {{hostfile.string(), {"h0 slots=1\nh1 slots=2\n", std::nullopt}}};
    Jobspec spec;
    spec.apps = {app({"x"}, 3, "slot", "", "none")};
    spec.job.hostfile = hostfile.filename().string();
    spec.attributes.cwd = hostfile.parent_path().string();
    EXPECT_EQ(jobspec_path(spec, spec.job.hostfile), hostfile.string());
    EXPECT_EQ(jobspec_path(spec, "/abs/hosts"), "/abs/hosts");
    EXPECT_EQ(jobspec_files(spec), (std::vector<std::string>{hostfile.string()}));
    EXPECT_EQ(layout(map_jobspec(spec, inputs(files))), "0:h0:- 1:h1:- 2:h1:-");
    spec.job.hostfile = "gantry-no-such-hostfile";
    EXPECT_EQ(layout(map_jobspec(spec, inputs(files))),
              "run: hostfile \"gantry-no-such-hostfile\": No such file or directory");
    // Without a directory, relative paths are the process's.
    spec.attributes.cwd.clear();
    EXPECT_EQ(jobspec_path(spec, "hosts"), "hosts");
}

// As in PRRTE, a hostfile gives the hosts and each app's -H picks among them
// (`--hostfile hosts -H h0 -n 1 a : -H h1,h2 -n 2 b`); a host outside it is
// an error naming it.
TEST(MapJobspec, PerAppHostsPickAmongTheHostfile) {
    const std::filesystem::path hostfile = "/gantry-front-end/gantry-jobspec-map-per-app";
    const MapInputs given =
        inputs({{hostfile.string(), {"h0 slots=2\nh1 slots=1\nh2 slots=2\n", std::nullopt}}});
    Jobspec spec;
    spec.apps = {app({"a"}, 1, "slot", "", "none"), app({"b"}, 2, "slot", "", "none")};
    spec.job.hostfile = hostfile.string();
    spec.apps[0].hosts = "h0";
    spec.apps[1].hosts = "h1,h2";
    EXPECT_EQ(layout(map_jobspec(spec, given)), "0:h0:- 1:h1:- 2:h2:-");
    spec.apps[1].hosts = "h1,h9";
    EXPECT_EQ(layout(map_jobspec(spec, given)),
              "run: app 1's host h9 is not in the hostfile \"" + hostfile.string() + "\"");
    spec.apps[1].hosts.clear();
    EXPECT_EQ(layout(map_jobspec(spec, given)), "0:h0:- 1:h0:- 2:h1:-");
}

// localhost, this machine's addresses and its name are one node, named as
// the machine is.
TEST(MapJobspec, ThisMachinesNamesAreOneNode) {
    const std::string here = local_hostname();
    const Jobspec spec =
        with_hosts("localhost:2,127.0.0.1:1," + here, {app({"x"}, 4, "slot", "", "none")});
    EXPECT_EQ(layout(map_jobspec(spec, inputs())),
              "0:" + here + ":- 1:" + here + ":- 2:" + here + ":- 3:" + here + ":-");
}

// seq without FILE= reads app 0's hosts from the job's -H, a later app's
// from its own.
TEST(MapJobspec, SeqReadsTheHosts) {
    Jobspec spec = with_hosts("n1,n0", {app({"x"}, 0, "seq"), app({"y"}, 0, "seq")});
    spec.apps[1].hosts = "n0,n0";
    EXPECT_EQ(layout(map_jobspec(spec, inputs())), "0:n1:0-1 1:n0:0-1 2:n0:2-3 3:n0:4-5");
}

// The mpirun flags are qualifiers of the job's --map-by.
TEST(MapJobspec, CompatFlagsFoldIntoTheJobsPolicy) {
    Jobspec spec = with_hosts("a:1", {app({"x"}, 2, "", "", "core")});
    EXPECT_EQ(layout(map_jobspec(spec, inputs())),
              "map: app 0 (-n 2 x): there are not enough slots available: 2 tasks do not fit in "
              "the 1 free slot of a; add :OVERSUBSCRIBE to the job's --map-by or give fewer "
              "tasks");
    spec.job.oversubscribe = true;
    EXPECT_EQ(layout(map_jobspec(spec, inputs())), "0:a:0-1 1:a:2-3");
    spec.apps[0].map_by = "core:nooversubscribe";
    EXPECT_EQ(layout(map_jobspec(spec, inputs())),
              "run: --oversubscribe conflicts with NOOVERSUBSCRIBE in --map-by");
    spec.apps[0].map_by = "core";
    spec.job.oversubscribe = false;
    spec.job.rankfile = "ranks";
    EXPECT_EQ(layout(map_jobspec(spec, inputs())),
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
        EXPECT_EQ(layout(map_jobspec(c.spec, inputs())), c.error);
}

}  // namespace
}  // namespace gantry
