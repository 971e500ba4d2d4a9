// The GPUs tasks see: their device mapping's, else a share of their node's,
// nearest first and evenly shared.
#include <gtest/gtest.h>

#include "mapper/fixtures.h"
#include "support/vectors.h"

namespace gantry::test {
namespace {

// Two packages of two cores; package p has one NVIDIA GPU, cudaP.
std::string package_xml(int p) {
    const auto mask = [](unsigned bits) {
        char text[16];
        std::snprintf(text, sizeof text, "0x%08x", bits);
        return std::string(text);
    };
    const std::string n = std::to_string(p);
    std::string cores;
    for (int c = 0; c < 2; ++c) {
        const int i = p * 2 + c;
        const std::string set = mask(1u << i);
        cores += "<object type=\"Core\" os_index=\"" + std::to_string(i) + "\" cpuset=\"" + set +
                 "\" complete_cpuset=\"" + set +
                 "\" nodeset=\"0x1\" complete_nodeset=\"0x1\">"
                 "<object type=\"PU\" os_index=\"" +
                 std::to_string(i) + "\" cpuset=\"" + set + "\" complete_cpuset=\"" + set +
                 "\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/></object>\n";
    }
    const std::string set = mask(3u << (2 * p));
    return "<object type=\"Package\" os_index=\"" + n + "\" cpuset=\"" + set +
           "\" complete_cpuset=\"" + set + "\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n" +
           cores + "<object type=\"Bridge\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"000" + n +
           ":[00-01]\"><object type=\"PCIDev\" pci_busid=\"000" + n +
           ":01:00.0\" pci_type=\"0302 [10de:2335] [10de:18bf] a1\">"
           "<object type=\"OSDev\" name=\"cuda" +
           n +
           "\" osdev_type=\"5\" subtype=\"CUDA\">"
           "<info name=\"Backend\" value=\"CUDA\"/>"
           "<info name=\"NVIDIAUUID\" value=\"GPU-0000000" +
           n +
           "\"/></object></object></object>"
           "</object>\n";
}

const Topology& gpu_machine() {
    static const Topology topology = *Topology::from_xml(write_temp_file(
        "gpu-machine.xml",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
        "<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" "
        "complete_cpuset=\"0x0000000f\" allowed_cpuset=\"0x0000000f\" nodeset=\"0x1\" "
        "complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\">\n<object type=\"NUMANode\" "
        "os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" nodeset=\"0x1\" "
        "complete_nodeset=\"0x1\" local_memory=\"1073741824\"/>\n" +
            package_xml(0) + package_xml(1) + "</object>\n</topology>\n"));
    return topology;
}

using Gpus = std::vector<std::vector<unsigned>>;

Gpus gpus_of(unsigned nprocs, std::string_view map, std::string_view bind = "") {
    JobRequest request;
    request.directives = directives(map, "", bind);
    request.apps.push_back(AppRequest{nprocs, {}, "./a", {}, {}});
    auto job =
        map_job(request, make_nodes(*parse_hosts("n0:4"), gpu_machine(), CpuUnit::kCore, ""));
    EXPECT_TRUE(job.ok()) << job.error().str();
    return visible_gpus(*job);
}

TEST(Gpus, TheMachineHasOneGpuPerPackage) {
    ASSERT_EQ(gpu_machine().ngpus(), 2u);
    EXPECT_EQ(gpu_machine().gpus()[1].name, "cuda1");
    EXPECT_EQ(gpu_machine().gpus()[1].pus, IdSet::range(2, 3));
}

TEST(Gpus, NearestFirstAndEvenlyShared) {
    EXPECT_EQ(gpus_of(4, "core"), (Gpus{{0}, {0}, {1}, {1}}));
    EXPECT_EQ(gpus_of(2, "package"), (Gpus{{0}, {1}}));
    EXPECT_EQ(gpus_of(2, "core"), (Gpus{{0}, {1}}));  // both near GPU 0, but it is shared evenly
    EXPECT_EQ(gpus_of(3, "core"), (Gpus{{0}, {0}, {1}}));
    EXPECT_EQ(gpus_of(1, "core"), (Gpus{{0, 1}}));
    // Unbound tasks are near no GPU: they take turns.
    EXPECT_EQ(gpus_of(4, "core", "none"), (Gpus{{0}, {1}, {0}, {1}}));
}

TEST(Gpus, DeviceMappingKeepsItsOwnChoice) {
    EXPECT_EQ(gpus_of(2, "device=gpu"), (Gpus{{0}, {1}}));
}

TEST(Gpus, NodesWithoutGpusGiveNone) {
    JobRequest request;
    request.apps.push_back(AppRequest{2, {}, "./a", {}, {}});
    auto job = map_job(request, small_nodes("n0:2"));
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(visible_gpus(*job), (Gpus{{}, {}}));
}

}  // namespace
}  // namespace gantry::test
