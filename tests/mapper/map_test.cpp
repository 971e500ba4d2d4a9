// Placement, ranking and binding on a small synthetic machine, with exact
// expected maps: they hold without the PRRTE vectors. Each node is
// "package:2 core:4 pu:2": PUs 0-15, core c = PUs 2c-2c+1, package 1 =
// cores 4-7 = PUs 8-15, one NUMA node for the machine.
#include "mapper/map.h"

#include <gtest/gtest.h>

#include "fixtures.h"
#include "mapper/display.h"

namespace gantry {
namespace {

using test::directives;
using test::small_machine;
using test::small_nodes;

JobRequest single(unsigned n, std::string_view map, std::string_view rank = "",
                  std::string_view bind = "") {
    return JobRequest{directives(map, rank, bind), {AppRequest{n, {}, "", {}, {}}}};
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

// One job on nodes that say their topology and which one is local.
struct Case {
    const char* name;
    JobRequest request;
    std::vector<Node> nodes;
    const char* expected;
};

TEST(MapJob, SingleAppPolicies) {
    const Case kCases[] = {
        {"core, default fill and core binding", single(6, "core"), small_nodes("n0:4,n1:4"),
         "0:n0:0-1 1:n0:2-3 2:n0:4-5 3:n0:6-7 4:n1:0-1 5:n1:2-3"},
        {"package sweep, bound to cores, fill", single(8, "package", "fill", "core"),
         small_nodes("n0:4,n1:4"),
         "0:n0:0-1 1:n0:2-3 2:n0:8-9 3:n0:10-11 4:n1:0-1 5:n1:2-3 6:n1:8-9 7:n1:10-11"},
        {"package sweep, rank by slot", single(4, "package", "slot", "core"), small_nodes("n0:4"),
         "0:n0:0-1 1:n0:8-9 2:n0:2-3 3:n0:10-11"},
        {"package sweep, rank by node", single(8, "package", "node", "core"),
         small_nodes("n0:4,n1:4"),
         "0:n0:0-1 1:n1:0-1 2:n0:8-9 3:n1:8-9 4:n0:2-3 5:n1:2-3 6:n0:10-11 7:n1:10-11"},
        {"package sweep, rank by span", single(8, "package", "span", "core"),
         small_nodes("n0:4,n1:4"),
         "0:n0:0-1 1:n0:8-9 2:n1:0-1 3:n1:8-9 4:n0:2-3 5:n0:10-11 6:n1:2-3 7:n1:10-11"},
        {"package binding: the whole package", single(2, "package"), small_nodes("n0:4"),
         "0:n0:0-7 1:n0:8-15"},
        {"node blocks 3/2, ranked round robin, NUMA (whole machine) binding", single(5, "node"),
         small_nodes("n0:4,n1:4"), "0:n0:0-15 1:n1:0-15 2:n0:0-15 3:n1:0-15 4:n0:0-15"},
        {"slot fills node 0 first", single(5, "slot", "", "none"), small_nodes("n0:4,n1:4"),
         "0:n0:- 1:n0:- 2:n0:- 3:n0:- 4:n1:-"},
        {"hwthread: one PU each", single(3, "hwthread"), small_nodes("n0:4"),
         "0:n0:0 1:n0:1 2:n0:2"},
        {"span: one task per node per pass, ranked as one big node", single(5, "core:span"),
         small_nodes("n0:4,n1:4,n2:4"), "0:n0:0-1 1:n0:2-3 2:n1:0-1 3:n1:2-3 4:n2:0-1"},
        {"ppr:1:package", single(0, "ppr:1:package"), small_nodes("n0:4,n1:4"),
         "0:n0:0-7 1:n0:8-15 2:n1:0-7 3:n1:8-15"},
        {"pe-list: each task on the whole list", single(2, "pe-list=1-2"), small_nodes("n0:4"),
         "0:n0:2-5 1:n0:2-5"},
        {"pe-list ordered: task k on CPU k", single(2, "pe-list=1,3:ordered"), small_nodes("n0:4"),
         "0:n0:2-3 1:n0:6-7"},
        {"PE=2: two cores each, never across packages", single(3, "slot:PE=2"), small_nodes("n0:4"),
         "0:n0:0-3 1:n0:4-7 2:n0:8-11"},
        {"oversubscribed: the rest spread evenly, defaulted binding dropped",
         single(10, "core:oversubscribe"), small_nodes("n0:4,n1:4"),
         "0:n0:- 1:n0:- 2:n0:- 3:n0:- 4:n0:- 5:n1:- 6:n1:- 7:n1:- 8:n1:- 9:n1:-"},
        {"oversubscribed with a binding asked for keeps it",
         single(5, "core:oversubscribe", "", "core"), small_nodes("n0:2,n1:2"),
         "0:n0:0-1 1:n0:2-3 2:n0:4-5 3:n1:0-1 4:n1:2-3"},
        {"LIMIT=2: two tasks per package, then the next", single(3, "slot", "", "package:limit=2"),
         small_nodes("n0:4"), "0:n0:0-7 1:n0:0-7 2:n0:8-15"},
        {"nolocal keeps off the local node", single(2, "core:nolocal"),
         small_nodes("n0:4,n1:4", "n0"), "0:n1:0-1 1:n1:2-3"},
    };
    for (const Case& c : kCases)
        EXPECT_EQ(layout(map_job(c.request, c.nodes)), c.expected) << c.name;
}

// NOLOCAL on app 0 only: app 1 still uses the local node.
TEST(MapJob, NolocalOnOneAppOnly) {
    const JobRequest request{
        directives("core:nolocal"),
        {AppRequest{2, {}, "", {}, {}}, AppRequest{2, directives("core"), "", {}, {}}}};
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4", "n0"))),
              "0:n1:0-1 1:n1:2-3 2:n0:0-1 3:n0:2-3");
}

// Without cores, core means hwthread (PRRTE).
TEST(MapJob, CorelessMachineMapsByHwthread) {
    const auto topology = *Topology::from_synthetic("package:2 pu:4");
    ASSERT_EQ(topology.ncores(), 0u);
    const auto map = map_job(single(3, "core"), make_nodes(*parse_hosts("a:4"), topology));
    EXPECT_EQ(layout(map), "0:a:0 1:a:1 2:a:2");
    ASSERT_TRUE(map.ok());
    EXPECT_EQ(map->policy.apps[0].map.by, MapBy::kHwthread);
    EXPECT_EQ(map->policy.apps[0].bind.to, BindTo::kHwthread);
}

TEST(MapJob, MaxSlotsCapsOversubscription) {
    const auto hosts = *parse_hostfile("n0 slots=2 max_slots=3\nn1 slots=2\n", "hf");
    const auto map =
        map_job(single(7, "core:oversubscribe", "", "none"), make_nodes(hosts, small_machine()));
    EXPECT_EQ(layout(map), "0:n0:- 1:n0:- 2:n0:- 3:n1:- 4:n1:- 5:n1:- 6:n1:-");
}

// The per-app design's warning (15.1): this MPMD job would map differently
// if app 1's own directives were dropped, so the test catches that loss.
TEST(MapJob, PerAppDirectivesAreHonoured) {
    JobRequest request{
        directives("package"),
        {AppRequest{2, {}, "./a", {}, {}}, AppRequest{2, directives("core"), "./b", {}, {}}}};
    const auto map = map_job(request, small_nodes("n0:8"));
    // App 1 is mapped by core after app 0 took cores 0 and 4.
    EXPECT_EQ(layout(map), "0:n0:0-7 1:n0:8-15 2:n0:2-3 3:n0:4-5");
    request.apps[1].directives = {};
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:8"))),
              "0:n0:0-7 1:n0:8-15 2:n0:2-7 3:n0:10-15");
    EXPECT_EQ(
        display_map(*map),
        "\n"
        "========================   JOB MAP   ========================\n"
        "Data for JOB gantry@0 offset 0 Total slots allocated 8\n"
        "    App 0: Mapper: round_robin  Mapping policy: BYPACKAGE:NOOVERSUBSCRIBE  Ranking "
        "policy: FILL  Binding policy: PACKAGE:IF-SUPPORTED\n"
        "    App 1: Mapper: round_robin  Mapping policy: BYCORE:NOOVERSUBSCRIBE  Ranking "
        "policy: FILL  Binding policy: CORE:IF-SUPPORTED\n"
        "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n"
        "\n"
        "\n"
        "Data for node: n0\tNum slots: 8\tMax slots: 0\tNum procs: 4\n"
        "        Process jobid: gantry@0 App: 0 Process rank: 0 Bound: package[0][core:L0-3]\n"
        "        Process jobid: gantry@0 App: 0 Process rank: 1 Bound: package[1][core:L4-7]\n"
        "        Process jobid: gantry@0 App: 1 Process rank: 2 Bound: package[0][core:L1]\n"
        "        Process jobid: gantry@0 App: 1 Process rank: 3 Bound: package[0][core:L2]\n"
        "\n"
        "=============================================================\n");
}

// Each placer maps one app of a two-app job; the other app keeps its own.
TEST(MapJob, EachPlacerMapsOneAppOfTwo) {
    const struct {
        const char* app1;
        const char* expected;
    } kCases[] = {
        // NUMA binding leaves out the cores app 0 took (PRRTE golden perapp.*.node-slot).
        {"node", "0:n0:0-1 1:n0:2-3 2:n0:4-15 3:n1:0-15"},
        {"slot", "0:n0:0-1 1:n0:2-3 2:n0:4-15 3:n0:4-15"},
        {"ppr:1:package", "0:n0:0-1 1:n0:2-3 2:n0:4-7 3:n0:8-15"},
        {"numa", "0:n0:0-1 1:n0:2-3 2:n0:4-15 3:n0:4-15"},
    };
    for (const auto& c : kCases) {
        const JobRequest request{
            directives("core"),
            {AppRequest{2, {}, "", {}, {}}, AppRequest{2, directives(c.app1), "", {}, {}}}};
        EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"))), c.expected) << c.app1;
    }
}

// seq and rankfile each place one app of a two-app job, numbering its tasks
// in file order after app 0's. The files are values, by the path FILE= gives.
TEST(MapJob, SeqAndRankfilePlaceOneAppOfTwo) {
    const std::string seq = "/gantry-map-test/seq";
    const std::string rf = "/gantry-map-test/rf";
    const FileTexts files = {
        {seq, {"n1\nn0 3\nn1 1:0\n", std::nullopt}},
        {rf, {"rank 2=n1 slot=1:0-1\nrank 3=+n0 slot=5\nrank 9=n0 slot=0\n", std::nullopt}}};
    JobRequest request{
        directives("core"),
        {AppRequest{2, {}, "", {}, {}}, AppRequest{3, directives("seq:FILE=" + seq), "", {}, {}}}};
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"), files)),
              "0:n0:0-1 1:n0:2-3 2:n1:0-15 3:n0:6-7 4:n1:8-9");
    request.apps[1].nprocs = 4;
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"), files)),
              "map: app 1 (-n 4): the seq file lists 3 tasks and 4 were asked for; give fewer "
              "tasks or add lines");

    // Rankfile ranks are the job's: app 1 holds ranks 2 and 3.
    request.apps[1] = AppRequest{2, directives("rankfile:FILE=" + rf), "", {}, {}};
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"), files)),
              "0:n0:0-1 1:n0:2-3 2:n1:8-11 3:n0:10-11");
    request.apps[1].nprocs = 3;
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"), files)),
              "map: app 1 (-n 3): rank 4 is missing from the rankfile (missing-rank)");
    // A file not given is one that does not exist; one its reader could not
    // read gives the reason it had.
    request.apps[1].directives = directives("rankfile:FILE=/nonexistent/rf");
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"), files)),
              "map-by: rankfile \"/nonexistent/rf\": No such file or directory");
    request.apps[1].directives = directives("rankfile:FILE=" + rf);
    const FileTexts unreadable = {{rf, {"", "Permission denied"}}};
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:4,n1:4"), unreadable)),
              "map-by: rankfile \"/gantry-map-test/rf\": Permission denied");
}

TEST(MapJob, RanksAreContiguousPerAppAndLocalRanksFollowNodes) {
    const JobRequest request{
        directives("node"),
        {AppRequest{3, {}, "", {}, {}}, AppRequest{2, directives("slot"), "", {}, {}}}};
    const auto map = map_job(request, small_nodes("n0:4,n1:4"));
    ASSERT_TRUE(map.ok()) << map.error().str();
    ASSERT_EQ(map->tasks.size(), 5u);
    EXPECT_EQ(map->app_sizes, (std::vector<unsigned>{3, 2}));
    const std::uint32_t expected[][5] = {// rank, app, app rank, node, local rank
                                         {0, 0, 0, 0, 0},
                                         {1, 0, 1, 1, 0},
                                         {2, 0, 2, 0, 1},
                                         {3, 1, 0, 0, 2},
                                         {4, 1, 1, 0, 3}};
    for (std::size_t i = 0; i < 5; ++i) {
        const Task& t = map->tasks[i];
        EXPECT_EQ((std::vector<std::uint32_t>{t.rank, t.app, t.app_rank, t.node, t.local_rank}),
                  (std::vector<std::uint32_t>(std::begin(expected[i]), std::end(expected[i]))))
            << i;
    }
    EXPECT_EQ(map->tasks[0].cpus_os.str(), map->tasks[0].cpus.str());  // synthetic: same numbers
}

// An app's own hosts: it uses only those; the other apps all nodes.
TEST(MapJob, PerAppHosts) {
    JobRequest request{directives("node"),
                       {AppRequest{2, {}, "", {}, {}}, AppRequest{2, {}, "", {"n1"}, {}}}};
    // NUMA binding (4 tasks): app 1's leaves out the core app 0 took on n1.
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:2,n1:3"))),
              "0:n0:0-15 1:n1:0-15 2:n1:2-15 3:n1:2-15");
    request.apps[1].hosts = {"n9"};
    EXPECT_EQ(layout(map_job(request, small_nodes("n0:2,n1:2"))),
              "map: app 1: host \"n9\" is not one of the job's nodes");
}

// PRRTE's relative hosts in a later app's -H: +n<i> is the job's node i,
// +e the nodes earlier apps left empty, +e:N the first N of them.
TEST(MapJob, RelativeHosts) {
    const auto job = [](std::vector<std::string> hosts1, std::vector<std::string> hosts2) {
        return JobRequest{
            directives("core"),
            {AppRequest{2, {}, "", {}, {}}, AppRequest{3, {}, "", std::move(hosts1), {}},
             AppRequest{1, {}, "", std::move(hosts2), {}}}};
    };
    const struct {
        JobRequest request;
        const char* expected;
    } kCases[] = {
        {job({"+e"}, {"+n2"}), "0:n0:0-1 1:n0:2-3 2:n1:0-1 3:n1:2-3 4:n1:4-5 5:n2:0-1"},
        {job({"+e:1"}, {"+e:1"}), "0:n0:0-1 1:n0:2-3 2:n1:0-1 3:n1:2-3 4:n1:4-5 5:n2:0-1"},
        {job({"+n2", "n1"}, {"+n0"}), "0:n0:0-1 1:n0:2-3 2:n1:0-1 3:n1:2-3 4:n1:4-5 5:n0:4-5"},
        {job({"+e:3"}, {}),
         "map: app 1: +e:3 asks for 3 empty nodes and 2 are left; give fewer "
         "or more nodes"},
        {job({"n1"}, {"+n3"}), "map: app 2: +n3 names node 3 but the job has 3 nodes (+n0 to +n2)"},
        {job({"n1"}, {"+e:2"}),
         "map: app 2: +e:2 asks for 2 empty nodes and 1 are left; give fewer or more nodes"},
    };
    for (const auto& c : kCases)
        EXPECT_EQ(layout(map_job(c.request, small_nodes("n0:3,n1:3,n2:3"))), c.expected);
}

TEST(MapJob, TaskMapFollowsRanks) {
    const auto by_node = map_job(single(5, "node"), small_nodes("n0:4,n1:4"));
    ASSERT_TRUE(by_node.ok()) << by_node.error().str();
    EXPECT_EQ(task_map(*by_node).to_raw(), "0,2,4;1,3");
    const auto by_slot = map_job(single(6, "slot", "", "none"), small_nodes("n0:4,n1:4"));
    ASSERT_TRUE(by_slot.ok()) << by_slot.error().str();
    EXPECT_EQ(task_map(*by_slot).to_json(), "[[0,1,4,1],[1,1,2,1]]");
}

TEST(MapJob, ErrorsSayWhatDoesNotFit) {
    const struct {
        JobRequest request;
        const char* hosts;
        const char* error;
    } kCases[] = {
        {single(9, "core"), "n0:4,n1:4",
         "map: job: there are not enough slots available: 9 tasks do not fit in the 8 free slots "
         "of n0, n1; add :OVERSUBSCRIBE to the job's --map-by or give fewer tasks"},
        {JobRequest{directives("core"),
                    {AppRequest{3, {}, "./a", {}, {}}, AppRequest{6, {}, "./b", {}, {}}}},
         "n0:4,n1:4",
         "map: app 1 (-n 6 ./b): there are not enough slots available: 6 tasks do not fit in "
         "the 5 free slots of n0, n1; add :OVERSUBSCRIBE to the job's --map-by or give fewer "
         "tasks"},
        {single(2, "l3cache"), "n0:4",
         "map-by: job: n0 has no l3cache to map by (mapping-target-not-found)"},
        {single(2, "device=gpu"), "n0:4",
         "map-by: job: device=gpu found no such device on n0 (mapping-target-not-found)"},
        {single(2, "pe-list=9"), "n0:4",
         "map-by: job: pe-list CPU 9 does not exist on n0, which has 8 cores"},
        {single(5, "core", "", "package:no-overload"), "n0:8",
         "bind-to: the binding PACKAGE lies above the mapping object BYCORE (bind-upwards); bind "
         "to core or a finer level, or map by a coarser object"},
        {single(9, "slot:oversubscribe", "", "core"), "n0:9",
         "map: job: 1 task found no free CPU to bind to on n0 (no-available-cpus); add "
         ":overload-allowed to --bind-to, bind to a coarser level, or give fewer tasks"},
        {single(2, "seq"), "n0:4",
         "map-by: job: seq needs its file: seq:FILE=path, or hosts from -H or --hostfile"},
        // More slots than cores: the binding, not the slots, runs out; the
        // other node's slots are not overfilled.
        {single(12, "slot", "", "core"), "n0:10,n1:2",
         "map: job: 2 tasks found no free CPU to bind to on n0, n1 (no-available-cpus); add "
         ":overload-allowed to --bind-to, bind to a coarser level, or give fewer tasks"},
        {single(5, "ppr:2:node"), "n0:4,n1:4",
         "map: job: ppr:2:node places 4 tasks on n0, n1, 1 short; give fewer tasks or more nodes"},
        {single(1u << 27, "core"), "n0:4", "map: more than 67108864 tasks in one job"},
        {JobRequest{directives("core"),
                    {AppRequest{2, {}, "", {}, {}}, AppRequest{0, {}, "", {}, {}}}},
         "n0:4",
         "map: app 1: give its task count (-n) when the job has several apps "
         "(multi-apps-and-zero-np)"},
    };
    for (const auto& c : kCases) {
        const JobRequest& request = c.request;
        EXPECT_EQ(layout(map_job(request, small_nodes(c.hosts))), c.error);
    }
}

TEST(MapJob, OverloadAllowedSharesCpus) {
    const auto map = map_job(single(9, "slot", "", "core:overload-allowed"), small_nodes("n0:9"));
    ASSERT_TRUE(map.ok()) << map.error().str();
    EXPECT_EQ(map->tasks[8].cpus.str(), "0-1");
}

TEST(Display, JsonAndBindings) {
    const JobRequest request{
        directives("core"),
        {AppRequest{1, {}, "", {}, {}}, AppRequest{1, directives("slot", "", "none"), "", {}, {}}}};
    const auto map = map_job(request, small_nodes("n0:2"));
    ASSERT_TRUE(map.ok()) << map.error().str();
    EXPECT_EQ(
        to_compact(map_json(*map)),
        R"({"apps":[{"app":0,"binding":"CORE:IF-SUPPORTED","cpu_type":"CORE","mapping":)"
        R"("BYCORE:NOOVERSUBSCRIBE","ranking":"FILL","tasks":1},{"app":1,"binding":"NONE",)"
        R"("cpu_type":"CORE","mapping":"BYSLOT:NOOVERSUBSCRIBE","ranking":"SLOT","tasks":1}],)"
        R"("nodes":[{"max_slots":0,"name":"n0","slots":2}],"oversubscribe":false,"tasks":[)"
        R"({"app":0,"app_rank":0,"cpus":"0-1","cpus_os":"0-1","gpus":[],"local_rank":0,)"
        R"("node":"n0","node_rank":0,"rank":0},{"app":1,"app_rank":0,"cpus":"","cpus_os":"",)"
        R"("gpus":[],"local_rank":1,"node":"n0","node_rank":1,"rank":1}]})");
    EXPECT_EQ(map_json_text(*map), to_compact(map_json(*map)));
    const std::vector<HostSpec> odd = {{"a\"b", 4, 0, false}, {"c", 4, 0, false}};
    const auto big =
        map_job(single(16, "hwthread:oversubscribe"), make_nodes(odd, small_machine()));
    ASSERT_TRUE(big.ok()) << big.error().str();
    EXPECT_EQ(map_json_text(*big), to_compact(map_json(*big)));
    EXPECT_EQ(display_bindings(*map, {"j@1", false}),
              "Proc j@1[0] Node n0 bound to package[0][core:L0]\n"
              "Proc j@1[1] Node n0 is UNBOUND\n");
}

// Bad input never crashes: policy strings from the words and separators of
// the grammar, in random order, either parse or fail with one line, and
// whatever parses maps or fails with one line.
TEST(MapJob, RandomPoliciesNeverCrash) {
    const std::vector<std::string> pieces = {"core",     "node",    "slot",
                                             "package",  "numa",    "l3",
                                             "hwthread", "ppr",     "pe-list",
                                             "device",   "seq",     "rankfile",
                                             "span",     "pe",      "oversubscribe",
                                             "nolocal",  "hwtcpus", "ordered",
                                             "shared",   "ndev",    "interleave",
                                             "gpu",      "file",    ":",
                                             ":",        ":",       "=",
                                             "=",        ",",       "-",
                                             "0",        "1",       "2",
                                             "9",        "x",       ""};
    std::uint32_t state = 12345;
    const auto next = [&] {
        state = state * 1103515245u + 12345u;
        return (state >> 16) % pieces.size();
    };
    int parsed = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string spec;
        for (int k = 0, n = 1 + i % 6; k < n; ++k)
            spec += pieces[next()];
        auto map = parse_map_by(spec);
        if (!map) {
            EXPECT_EQ(map.error().str().find('\n'), std::string::npos) << spec;
            continue;
        }
        ++parsed;
        JobRequest request{Directives{}, {AppRequest{3, {}, "", {}, {}}}};
        request.directives.map = *map;
        const auto result = map_job(request, small_nodes("n0:2,n1:2"));
        if (!result)
            EXPECT_EQ(result.error().str().find('\n'), std::string::npos) << spec;
        else
            EXPECT_EQ(result->tasks.size(), 3u) << spec;
    }
    EXPECT_GT(parsed, 100);
}

TEST(Display, SvgColoursCoresByRank) {
    const auto topology = *Topology::from_synthetic("package:1 core:2 pu:1");
    const std::vector<HostSpec> hosts = {{"n<0>", 2, 0, false}};
    const auto map = map_job(single(1, "core"), make_nodes(hosts, topology));
    ASSERT_TRUE(map.ok()) << map.error().str();
    EXPECT_EQ(map_svg(*map),
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"532\" height=\"88\">\n"
              "<rect x=\"4\" y=\"4\" width=\"76\" height=\"80\" fill=\"none\" "
              "stroke=\"black\"/>\n"
              "<text x=\"8\" y=\"19\" font-family=\"monospace\" font-size=\"13\">n&lt;0&gt; (1 "
              "task)</text>\n"
              "<rect x=\"8\" y=\"24\" width=\"68\" height=\"56\" fill=\"#f4f4f4\" "
              "stroke=\"black\"/>\n"
              "<text x=\"12\" y=\"38\" font-family=\"monospace\" font-size=\"12\">package "
              "0</text>\n"
              "<rect x=\"12\" y=\"44\" width=\"28\" height=\"28\" fill=\"hsl(0,70%,70%)\" "
              "stroke=\"black\"/>\n"
              "<text x=\"15\" y=\"62\" font-family=\"monospace\" font-size=\"10\">0</text>\n"
              "<rect x=\"44\" y=\"44\" width=\"28\" height=\"28\" fill=\"white\" "
              "stroke=\"black\"/>\n"
              "</svg>\n");
}

TEST(Display, BoundTextSplitsPerPackage) {
    EXPECT_EQ(bound_text(small_machine(), IdSet{}, CpuUnit::kCore), "N/A");
    EXPECT_EQ(bound_text(small_machine(), IdSet::range(6, 9), CpuUnit::kCore),
              "package[0][core:L3] package[1][core:L4]");
    EXPECT_EQ(bound_text(small_machine(), IdSet{3}, CpuUnit::kHwthread), "package[0][hwt:L3]");
}

TEST(Display, JobLevelHeaderAndDryRunWarning) {
    const auto map =
        map_job(single(2, "ppr:1:package:oversubscribe", "", "package"), small_nodes("n0:2"));
    ASSERT_TRUE(map.ok()) << map.error().str();
    EXPECT_EQ(display_map(*map, {"job-7", true}),
              "\n"
              "========================   JOB MAP   ========================\n"
              "Data for JOB job-7 offset 0 Total slots allocated 2\n"
              "    Mapping policy: BYPACKAGE:OVERSUBSCRIBE  Ranking policy: SLOT Binding policy: "
              "PACKAGE\n"
              "    Cpu set: N/A  PPR: 1:package  Cpus-per-rank: N/A  Cpu Type: CORE\n"
              "\n"
              "\n"
              "Data for node: n0\tNum slots: 2\tMax slots: 0\tNum procs: 2\n"
              "        Process jobid: job-7 App: 0 Process rank: 0 Bound: package[0][core:L0-3]\n"
              "        Process jobid: job-7 App: 0 Process rank: 1 Bound: package[1][core:L4-7]\n"
              "\n"
              "Warning: This map has been generated without launching anything (dry run);\n"
              "the nodes were given the topologies they were told to have.\n"
              "\n"
              "=============================================================\n");
}

}  // namespace
}  // namespace gantry
