// What the mapper takes as values, read on this machine (read_map_inputs,
// jobspec_topology), and the files --display writes (write_display_files).
#include "shell/map_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/scratch.h"
#include "support/vectors.h"

namespace gantry::shell {
namespace {

Jobspec::App app(std::vector<std::string> command, std::uint32_t ntasks, std::string map_by = "") {
    Jobspec::App a;
    a.command = std::move(command);
    a.ntasks = ntasks;
    a.map_by = std::move(map_by);
    return a;
}

// The files the jobspec names, each with its text or the system's reason,
// by the path the mapper asks for; this machine's names only when the
// jobspec names hosts.
TEST(ReadMapInputs, TheFilesTheJobspecNames) {
    const std::filesystem::path hostfile =
        test::write_temp_file("gantry-map-io-hosts", "h0 slots=2\n");
    Jobspec spec;
    spec.apps = {app({"x"}, 1, "rankfile:FILE=gantry-no-such-rankfile")};
    spec.attributes.cwd = hostfile.parent_path().string();
    spec.job.hostfile = hostfile.filename().string();
    const MapInputs inputs = read_map_inputs(spec);
    const std::string missing = (hostfile.parent_path() / "gantry-no-such-rankfile").string();
    EXPECT_EQ(inputs.files, (FileTexts{{hostfile.string(), {"h0 slots=2\n", std::nullopt}},
                                       {missing, {"", "No such file or directory"}}}));
    EXPECT_EQ(inputs.hostname, local_hostname());
    EXPECT_EQ(inputs.names, local_names());
    EXPECT_FALSE(inputs.topology);
    EXPECT_TRUE(inputs.ranks.empty());

    Jobspec plain;
    plain.apps = {app({"x"}, 1)};
    const MapInputs none = read_map_inputs(plain);
    EXPECT_EQ(none.files, FileTexts{});
    EXPECT_EQ(none.hostname, local_hostname());
    EXPECT_EQ(none.names, std::vector<std::string>{});
}

TEST(JobspecTopology, SyntheticOrThisMachine) {
    Jobspec spec;
    spec.job.topology = "package:1 core:2 pu:1";
    const auto synthetic = jobspec_topology(spec);
    ASSERT_TRUE(synthetic) << synthetic.error().str();
    EXPECT_EQ(synthetic->all_pus().count(), 2u);
    spec.job.topology = "bogus:1";
    EXPECT_FALSE(jobspec_topology(spec));
}

TEST(WriteDisplayFiles, InOrderUpToTheFirstFailure) {
    const test::ScratchDir scratch("gantry-map-io-display");
    const std::filesystem::path dir = scratch.path();
    const std::string svg = (dir / "map.svg").string();
    DisplayOutput output{"text\n", {{svg, "<svg/>\n"}}};
    ASSERT_TRUE(write_display_files(output));
    EXPECT_EQ(test::read_file(svg), "<svg/>\n");
    output.files.insert(output.files.begin(), {(dir / "none" / "x.svg").string(), "<svg/>\n"});
    EXPECT_EQ(write_display_files(output).error().str(),
              "run: cannot write the map to \"" + (dir / "none" / "x.svg").string() + "\"");
}

}  // namespace
}  // namespace gantry::shell
