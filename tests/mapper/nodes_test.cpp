// The node pool: -H, hostfiles, slot rules.
#include "mapper/nodes.h"

#include <gtest/gtest.h>

#include "formats/rset.h"
#include "mapper/map.h"

namespace gantry {
namespace {

std::string describe(const std::vector<HostSpec>& hosts) {
    std::string out;
    for (const HostSpec& h : hosts) {
        out += h.name + "=" + (h.slots ? std::to_string(*h.slots) : "-");
        if (h.max_slots)
            out += "/" + std::to_string(h.max_slots);
        if (h.all_cpus)
            out += "*";
        out += " ";
    }
    return out;
}

TEST(Hosts, SlotRules) {
    struct Case {
        std::string_view text;
        std::string_view hosts;
    };
    constexpr Case kCases[] = {
        {"node0", "node0=- "},
        {"node0:8,node1:4", "node0=8 node1=4 "},
        {"a,a,b", "a=2 b=- "},
        {"a:2,a:3", "a=5 "},
        {"a:*", "a=-* "},
        {"a:auto", "a=-* "},
        // PRRTE's relative hosts stay whole, for the mapper to resolve.
        {"+n0,+n12,+e,+e:3", "+n0=- +n12=- +e=- +e:3=- "},
    };
    for (const auto& c : kCases) {
        auto hosts = parse_hosts(c.text);
        ASSERT_TRUE(hosts.ok()) << hosts.error().str();
        EXPECT_EQ(describe(*hosts), c.hosts) << c.text;
    }
}

// Another name of this machine is the machine, its slots added to those
// given under its own name.
TEST(Hosts, LocalNamesBecomeOne) {
    const std::vector<std::string> names{"localhost", "10.1.2.3", "me.example.org"};
    EXPECT_EQ(describe(with_names_as(*parse_hosts("localhost:2,b,me,10.1.2.3,+n0"), names, "me")),
              "me=4 b=- +n0=- ");
    EXPECT_EQ(describe(with_names_as(*parse_hosts("me.example.org:*"), names, "me")), "me=-* ");
}

TEST(Hosts, BadListsAreOneLineErrors) {
    EXPECT_EQ(parse_hosts("").error().str(), "hosts: empty host list in \"\"");
    EXPECT_EQ(parse_hosts("a:0").error().str(),
              "hosts: bad slot count \"0\" for host \"a\" (host[:N] with N > 0, or host:*) in "
              "\"a:0\"");
    EXPECT_EQ(parse_hosts("a,,b").error().str(), "hosts: bad host name \"\" in \"a,,b\"");
    EXPECT_EQ(parse_hosts("a:x").error().str().substr(0, 25), "hosts: bad slot count \"x\"");
    EXPECT_EQ(parse_hosts("a b").error().str(), "hosts: bad host name \"a b\" in \"a b\"");
    for (const std::string_view bad : {"+x", "+n", "+nx", "+e:0", "+e:", "+e2", "+n1:2"})
        EXPECT_EQ(parse_hosts(bad).error().str(), "hosts: bad relative host " + quote(bad) +
                                                      " (+n<i>, +e or +e:N with N > 0) in " +
                                                      quote(bad))
            << bad;
}

TEST(Hostfile, PrrteSyntax) {
    const auto hosts = parse_hostfile(
        "# cluster\n"
        "node01 slots=10\n"
        "node13 slots=5 max_slots=8   // comment\n"
        "node15\n"
        "user@node16 max-slots=3\n"
        "/* a block\n comment */ node17 cpu=2\n"
        "node15\n"
        "gone slots=4\n"
        "^gone\n",
        "hf");
    ASSERT_TRUE(hosts.ok()) << hosts.error().str();
    EXPECT_EQ(describe(*hosts), "node01=10 node13=5/8 node15=2 node16=3/3 node17=2 ");
}

TEST(Hostfile, BadLinesNameTheLine) {
    struct Case {
        std::string_view text;
        std::string_view error;
    };
    constexpr Case kCases[] = {
        {"a slots=x\n", "hostfile: hf:1: slots needs a number, not \"slots=x\" in \"a slots=x\""},
        {"\na slots=0\n", "hostfile: hf:2: slots needs a number, not \"slots=0\""},
        {"a slots=2 slots=3\n", "hostfile: hf:1: slots given twice"},
        {"a color=red\n", "hostfile: hf:1: unknown keyword \"color=red\""},
        {"a slots=9 max_slots=4\n", "hostfile: hf:1: slots=9 exceeds max_slots=4"},
        {"# nothing\n", "hostfile: no hosts in \"hf\""},
        {"b@@ slots=1\n", "hostfile: hf:1: bad host name \"@\""},
    };
    for (const auto& c : kCases) {
        auto hosts = parse_hostfile(c.text, "hf");
        ASSERT_FALSE(hosts.ok()) << c.text;
        EXPECT_EQ(hosts.error().str().substr(0, c.error.size()), c.error);
    }
}

TEST(Nodes, TopologyAndSlots) {
    const auto topo = Topology::from_synthetic("package:2 core:4 pu:2");
    ASSERT_TRUE(topo.ok());
    const auto hosts = parse_hosts("n0,n1:3,n2:*");
    const auto nodes = make_nodes(*hosts, *topo, CpuUnit::kCore, "n1");
    ASSERT_EQ(nodes.size(), 3u);
    EXPECT_EQ(nodes[0].slots, 1u);
    EXPECT_FALSE(nodes[0].slots_given);
    EXPECT_EQ(nodes[1].slots, 3u);
    EXPECT_TRUE(nodes[1].local);
    EXPECT_EQ(nodes[2].slots, 8u);
    EXPECT_EQ(make_nodes(*hosts, *topo, CpuUnit::kHwthread)[2].slots, 16u);
    EXPECT_EQ(nodes[2].topology.ncores(), 8u);
    const Node here = local_node(*topo, "me");
    EXPECT_EQ(here.slots, 8u);
    EXPECT_TRUE(here.local);
}

// An allocation (RFC 20 R): one node per rank, only its cores and GPUs.
TEST(Nodes, FromResourceSet) {
    const auto topo = Topology::from_synthetic("package:2 core:4 pu:2");
    const auto r = ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"2-5"}}],)"
        R"("nodelist":["n[0-1]"]}})");
    ASSERT_TRUE(r.ok()) << r.error().str();
    const auto nodes = nodes_from_resources(*r, *topo);
    ASSERT_TRUE(nodes.ok()) << nodes.error().str();
    ASSERT_EQ(nodes->size(), 2u);
    EXPECT_EQ((*nodes)[1].name, "n1");
    EXPECT_EQ((*nodes)[1].slots, 4u);
    EXPECT_EQ((*nodes)[1].allowed_pus.str(), "4-11");

    Directives core;
    core.map = *parse_map_by("core");
    const auto map = map_job(JobRequest{core, {AppRequest{6, {}, "", {}, {}}}}, *nodes);
    ASSERT_TRUE(map.ok()) << map.error().str();
    std::string cpus;
    for (const Task& task : map->tasks)
        cpus += std::to_string(task.node) + ":" + task.cpus.str() + " ";
    EXPECT_EQ(cpus, "0:4-5 0:6-7 0:8-9 0:10-11 1:4-5 1:6-7 ");

    const auto too_big = ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-8"}}]}})");
    ASSERT_TRUE(too_big.ok()) << too_big.error().str();
    EXPECT_EQ(nodes_from_resources(*too_big, *topo).error().str(),
              "R: rank 0 (rank0) has core 8 but the topology has 8 cores");
}

}  // namespace
}  // namespace gantry
