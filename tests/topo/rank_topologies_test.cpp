// Each rank's topology, grouped: ranks of one topology share a group, which
// is sent once as XML and read back as one load.
#include "topo/rank_topologies.h"

#include <gtest/gtest.h>

namespace gantry {
namespace {

const Topology& two_cores() {
    static const Topology topology = *Topology::from_synthetic("package:1 core:2 pu:1");
    return topology;
}

const Topology& eight_pus() {
    static const Topology topology = *Topology::from_synthetic("package:2 core:2 pu:2");
    return topology;
}

std::string layout(const RankTopologies& topologies) {
    std::string out;
    for (const RankTopologies::Group& group : topologies.groups())
        out += (out.empty() ? "" : " ") + group.ranks.encode() + ":" +
               std::to_string(group.topology.npus());
    return out;
}

TEST(RankTopologies, RanksOfOneTopologyShareAGroup) {
    RankTopologies topologies(IdSet::range(0, 3), two_cores());
    topologies.assign(IdSet{2, 5}, eight_pus());
    topologies.assign(IdSet{4}, two_cores());
    EXPECT_EQ(layout(topologies), "0-1,3-4:2 2,5:8");
    EXPECT_EQ(topologies.ranks().encode(), "0-5");
    EXPECT_EQ(topologies.find(3)->handle(), two_cores().handle());
    EXPECT_EQ(topologies.find(5)->handle(), eight_pus().handle());
    EXPECT_EQ(topologies.find(6), nullptr);
    EXPECT_EQ(layout(topologies.only(IdSet{2, 3})), "2:8 3:2");
    EXPECT_EQ(layout(topologies.only(IdSet{0, 1})), "0-1:2");
    // A rank given another topology leaves its group; an emptied group goes.
    topologies.assign(IdSet{2, 5}, two_cores());
    EXPECT_EQ(layout(topologies), "0-5:2");
}

TEST(RankTopologies, JsonRoundTrip) {
    RankTopologies topologies(IdSet{1, 2}, eight_pus());
    topologies.assign(IdSet{0}, two_cores());
    const Json json = topologies.to_json();
    ASSERT_EQ(json.size(), 2u);
    EXPECT_EQ(json[0].at("ranks"), "0");
    EXPECT_EQ(json[0].at("xml"), two_cores().to_xml());
    EXPECT_EQ(json[1].at("ranks"), "1-2");
    EXPECT_EQ(json[1].at("xml"), eight_pus().to_xml());
    const auto back = RankTopologies::from_json(json);
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(layout(*back), "0:2 1-2:8");
    EXPECT_EQ(back->find(1)->handle(), back->find(2)->handle()) << "one load per group";
    EXPECT_EQ(back->to_json(), json);
}

// A simulated node's group says so, and keeps apart from a real node's
// group of the same topology.
TEST(RankTopologies, SimulatedGroups) {
    RankTopologies topologies(IdSet{0}, two_cores());
    topologies.assign(IdSet{1, 2}, two_cores(), true);
    EXPECT_EQ(layout(topologies), "0:2 1-2:2");
    EXPECT_FALSE(topologies.simulated(0));
    EXPECT_TRUE(topologies.simulated(2));
    EXPECT_FALSE(topologies.simulated(7));
    const Json json = topologies.to_json();
    EXPECT_FALSE(json[0].contains("simulated"));
    EXPECT_EQ(json[1].at("simulated"), true);
    const auto back = RankTopologies::from_json(json);
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_TRUE(back->simulated(1));
    EXPECT_FALSE(back->simulated(0));
    EXPECT_TRUE(back->only(IdSet{1}).simulated(1));
    EXPECT_EQ(back->to_json(), json);
}

TEST(RankTopologies, BadJson) {
    const std::string xml = two_cores().to_xml();
    const struct {
        Json json;
        const char* error;
    } kCases[] = {
        {Json::object(), "topologies: expected an array, not object"},
        {Json::array({1}), "topologies: [0]: expected {\"ranks\":IDSET,\"xml\":TEXT}"},
        {Json::array({{{"ranks", "0"}}}),
         "topologies: [0]: expected {\"ranks\":IDSET,\"xml\":TEXT}"},
        {Json::array({{{"ranks", ""}, {"xml", xml}}}), "topologies: [0].ranks: no ranks"},
        {Json::array({{{"ranks", "0-1"}, {"xml", xml}}, {{"ranks", "1"}, {"xml", xml}}}),
         "topologies: [1].ranks: rank 1 is in an earlier group"},
        {Json::array({{{"ranks", "0"}, {"xml", xml}, {"simulated", 1}}}),
         "topologies: [0].simulated: expected a boolean"},
    };
    for (const auto& c : kCases) {
        const auto parsed = RankTopologies::from_json(c.json);
        ASSERT_FALSE(parsed) << c.json.dump();
        EXPECT_EQ(parsed.error().str(), c.error);
    }
    const auto bad_xml = RankTopologies::from_json(Json::array({{{"ranks", "0"}, {"xml", "<x"}}}));
    ASSERT_FALSE(bad_xml);
    EXPECT_EQ(bad_xml.error().str(),
              "topologies: [0].xml: topology: cannot load XML topology: Invalid argument in "
              "\"<x\"");
    const auto bad_ranks =
        RankTopologies::from_json(Json::array({{{"ranks", "1-"}, {"xml", xml}}}));
    ASSERT_FALSE(bad_ranks);
    EXPECT_EQ(bad_ranks.error().str(),
              "topologies: [0].ranks: idset: expected an id at offset 2 in \"1-\"");
}

}  // namespace
}  // namespace gantry
