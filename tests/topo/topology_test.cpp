#include "topo/topology.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace gantry {
namespace {

TEST(Topology, SyntheticCountsEveryLevel) {
    const auto topo = Topology::from_synthetic("package:2 numa:1 l3:1 core:8 pu:2");
    ASSERT_TRUE(topo.ok()) << topo.error().str();
    EXPECT_EQ(topo->npackages(), 2u);
    EXPECT_EQ(topo->ncores(), 16u);
    EXPECT_EQ(topo->npus(), 32u);
    EXPECT_EQ(topo->ngpus(), 0u);
}

TEST(Topology, BadSyntheticDescriptionIsAnError) {
    const auto topo = Topology::from_synthetic("package:two");
    ASSERT_FALSE(topo.ok());
    EXPECT_EQ(topo.error().str().rfind("topology: cannot read synthetic topology", 0), 0u)
        << topo.error().str();
}

TEST(Topology, MissingXmlFileIsAnError) {
    const auto topo = Topology::from_xml("/nonexistent/topology.xml");
    ASSERT_FALSE(topo.ok());
    EXPECT_EQ(topo.error().str().rfind("topology: cannot ", 0), 0u) << topo.error().str();
}

TEST(Topology, LocalMachineHasCoresAndPus) {
    const auto topo = Topology::local();
    ASSERT_TRUE(topo.ok()) << topo.error().str();
    EXPECT_GE(topo->ncores(), 1u);
    EXPECT_GE(topo->npus(), topo->ncores());
    EXPECT_FALSE(local_hostname().empty());
    EXPECT_EQ(local_hostname().find('.'), std::string::npos);
}

}  // namespace
}  // namespace gantry
