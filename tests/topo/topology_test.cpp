#include "topo/topology.h"

#include <hwloc.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/crafted_topology.h"
#include "support/scratch.h"
#include "support/vectors.h"

namespace gantry {
namespace {

TEST(Topology, SyntheticCountsEveryLevel) {
    const auto topo = Topology::from_synthetic("package:2 numa:1 l3:1 core:8 pu:2");
    ASSERT_TRUE(topo.ok()) << topo.error().str();
    EXPECT_EQ(topo->npackages(), 2u);
    EXPECT_EQ(topo->ncores(), 16u);
    EXPECT_EQ(topo->npus(), 32u);
    EXPECT_EQ(topo->ngpus(), 0u);
    EXPECT_EQ(topo->count(ObjectType::kNuma), 2u);
    EXPECT_EQ(topo->count(ObjectType::kL3Cache), 2u);
}

// package:2 core:4 pu:2: PUs 0-15, core c holds PUs 2c and 2c+1.
TEST(Topology, SyntheticObjectsHaveLogicalCpusets) {
    const auto topo = Topology::from_synthetic("package:2 core:4 pu:2");
    ASSERT_TRUE(topo.ok()) << topo.error().str();
    ASSERT_EQ(topo->count(ObjectType::kPackage), 2u);
    EXPECT_EQ(topo->object(ObjectType::kPackage, 1).pus.str(), "8-15");
    EXPECT_EQ(topo->object(ObjectType::kCore, 5).pus.str(), "10-11");
    EXPECT_EQ(topo->object(ObjectType::kPu, 7).pus.str(), "7");
    EXPECT_EQ(topo->object(ObjectType::kCore, 5).logical, 5u);
    EXPECT_EQ(topo->objects_within(ObjectType::kCore, topo->object(ObjectType::kPackage, 1).pus),
              (std::vector<unsigned>{4, 5, 6, 7}));
    EXPECT_EQ(topo->object_of(ObjectType::kPackage, 9), 1u);
    EXPECT_EQ(topo->object_of(ObjectType::kCore, 9), 4u);
    EXPECT_EQ(topo->object_of(ObjectType::kNuma, 9), 0u);  // hwloc adds one NUMA for the machine
    EXPECT_EQ(topo->all_pus().str(), "0-15");
    EXPECT_EQ(topo->os_pus(IdSet{0, 1, 15}).str(), "0-1,15");
    EXPECT_EQ(to_string(ObjectType::kPu), "hwthread");
}

TEST(Topology, CopiesShareOneSnapshot) {
    const auto topo = Topology::from_synthetic("package:1 core:2 pu:1");
    ASSERT_TRUE(topo.ok());
    const Topology copy = *topo;
    EXPECT_EQ(copy.handle(), topo->handle());
    EXPECT_EQ(copy.objects(ObjectType::kCore).data(), topo->objects(ObjectType::kCore).data());
}

// The README of prrte-offline gives, per topology file, these counts.
struct XmlCounts {
    const char* file;
    unsigned packages, numas, l3s, cores, pus, gpus;
};
constexpr XmlCounts kOfflineTopologies[] = {
    {"test-topo.xml", 2, 4, 24, 176, 176, 0},
    {"test-topo2.xml", 1, 4, 8, 24, 48, 1},
    {"turin-4gpu.xml", 2, 8, 16, 128, 256, 4},
    {"turin-4gpu-nvml.xml", 2, 8, 16, 128, 256, 4},
};

Topology load_offline(const std::string& file) {
    const auto path = *test::vectors_dir() / "prrte-offline" / "topologies" / file;
    auto topo = Topology::from_xml(path.string());
    if (!topo)
        throw std::runtime_error(topo.error().str());
    return *topo;
}

TEST(Topology, OfflineXmlCountsMatchTheReadme) {
    GANTRY_REQUIRE_VECTORS();
    for (const auto& c : kOfflineTopologies) {
        const Topology topo = load_offline(c.file);
        EXPECT_EQ(topo.count(ObjectType::kPackage), c.packages) << c.file;
        EXPECT_EQ(topo.count(ObjectType::kNuma), c.numas) << c.file;
        EXPECT_EQ(topo.count(ObjectType::kL3Cache), c.l3s) << c.file;
        EXPECT_EQ(topo.count(ObjectType::kCore), c.cores) << c.file;
        EXPECT_EQ(topo.count(ObjectType::kPu), c.pus) << c.file;
        EXPECT_EQ(topo.ngpus(), c.gpus) << c.file;
    }
}

TEST(Topology, OfflineCpusetsAreLogical) {
    GANTRY_REQUIRE_VECTORS();
    const Topology topo = load_offline("test-topo.xml");
    EXPECT_EQ(topo.object(ObjectType::kPackage, 1).pus.str(), "88-175");
    EXPECT_EQ(topo.object(ObjectType::kNuma, 1).pus.str(), "44-87");
    EXPECT_EQ(topo.object(ObjectType::kL3Cache, 1).pus.str(), "8-15");
}

TEST(Topology, OfflineGpusHaveNamesUuidsAndLocality) {
    GANTRY_REQUIRE_VECTORS();
    const Topology nvml = load_offline("turin-4gpu-nvml.xml");
    ASSERT_EQ(nvml.ngpus(), 4u);
    EXPECT_EQ(nvml.gpus()[0].name, "cuda0");
    EXPECT_EQ(nvml.gpus()[3].name, "cuda3");
    EXPECT_EQ(nvml.gpus()[0].uuid, "GPU-46f77619-68bf-8f9d-7cfb-61fa9c4ca692");
    EXPECT_EQ(nvml.gpus()[0].pci_busid, "0000:06:00.0");
    EXPECT_TRUE(nvml.gpus()[0].pus.contains(32));  // core 16 (PUs 32-33) is the nearest
    const Topology plain = load_offline("turin-4gpu.xml");
    ASSERT_EQ(plain.ngpus(), 4u);
    for (const Gpu& gpu : plain.gpus())
        EXPECT_EQ(gpu.uuid, "") << gpu.name;
    EXPECT_EQ(plain.gpus()[0].name, "renderD128");
    const Topology amd = load_offline("test-topo2.xml");
    ASSERT_EQ(amd.ngpus(), 1u);
    EXPECT_EQ(amd.gpus()[0].name, "rsmi0");
    EXPECT_EQ(amd.gpus()[0].uuid, "d364112172e626c1");
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

// Whatever the version of hwloc does with it (crashes, or refuses it), a
// file given by a user is an error of one line, not the end of the process.
TEST(Topology, AnXmlFileThatHwlocCrashesOnIsAnError) {
    test::ScratchDir dir("gantry-topology-test");
    const std::string path = dir / "crafted.xml";
    std::ofstream(path) << test::kXmlHwlocCrashesOn;
    const auto topo = Topology::from_xml(path);
    ASSERT_FALSE(topo.ok());
    const std::string message = topo.error().str();
    EXPECT_TRUE(message.starts_with("topology: cannot load XML topology: ")) << message;
    EXPECT_TRUE(message.ends_with(" in \"" + path + "\"")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(Topology, LocalMachineHasCoresAndPus) {
    const auto topo = Topology::local();
    ASSERT_TRUE(topo.ok()) << topo.error().str();
    EXPECT_GE(topo->ncores(), 1u);
    EXPECT_GE(topo->npus(), topo->ncores());
    EXPECT_FALSE(local_hostname().empty());
    EXPECT_EQ(local_hostname().find('.'), std::string::npos);
}

// What a broker hands its job shells: the same objects, cpusets included.
// This machine as Topology::local() finds it (without hwloc's x86
// component, unless sysfs lists no cache) has every object hwloc's full
// discovery finds.
TEST(Topology, LocalMachineHasWhatAFullDiscoveryFinds) {
    const auto local = Topology::local();
    ASSERT_TRUE(local) << local.error().str();
    hwloc_topology_t full = nullptr;
    ASSERT_EQ(hwloc_topology_init(&full), 0);
    hwloc_topology_set_io_types_filter(full, HWLOC_TYPE_FILTER_KEEP_NONE);
    ASSERT_EQ(hwloc_topology_load(full), 0);
    // As local() does: the machine as far as this process is bound.
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(full, bound, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound))
        hwloc_topology_restrict(full, bound, 0);
    hwloc_bitmap_free(bound);
    const std::pair<ObjectType, hwloc_obj_type_t> types[] = {
        {ObjectType::kPackage, HWLOC_OBJ_PACKAGE}, {ObjectType::kL3Cache, HWLOC_OBJ_L3CACHE},
        {ObjectType::kL2Cache, HWLOC_OBJ_L2CACHE}, {ObjectType::kL1Cache, HWLOC_OBJ_L1CACHE},
        {ObjectType::kCore, HWLOC_OBJ_CORE},       {ObjectType::kPu, HWLOC_OBJ_PU}};
    for (const auto& [type, hwloc] : types)
        EXPECT_EQ(local->count(type), static_cast<unsigned>(hwloc_get_nbobjs_by_type(full, hwloc)))
            << to_string(type);
    hwloc_topology_destroy(full);
}

TEST(Topology, XmlTextRoundTrips) {
    const Topology synthetic = Topology::from_synthetic("package:2 core:4 pu:2").value();
    const std::string xml = synthetic.to_xml();
    ASSERT_FALSE(xml.empty());
    const Topology again = Topology::from_xml_text(xml).value();
    EXPECT_EQ(again.npackages(), 2u);
    EXPECT_EQ(again.ncores(), 8u);
    EXPECT_EQ(again.npus(), 16u);
    for (unsigned core = 0; core < 8; ++core) {
        EXPECT_EQ(again.object(ObjectType::kCore, core).pus,
                  synthetic.object(ObjectType::kCore, core).pus);
        EXPECT_EQ(again.object(ObjectType::kCore, core).os,
                  synthetic.object(ObjectType::kCore, core).os);
    }
}

TEST(Topology, XmlTextThatIsNotXmlIsRefused) {
    const auto bad = Topology::from_xml_text("not xml");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().str().rfind("topology: cannot ", 0), 0u) << bad.error().str();
}

}  // namespace
}  // namespace gantry
