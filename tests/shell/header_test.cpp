// The header a broker hands each shell of a job (shell_header,
// parse_shell_header): what the shell maps and runs with.
#include "shell/header.h"

#include <gtest/gtest.h>

#include <string>

#include "shell/map_inputs.h"
#include "topo/rank_topologies.h"
#include "topo/topology.h"

namespace gantry::shell {
namespace {

Jobspec two_tasks() {
    Jobspec spec;
    Jobspec::App app;
    app.command = {"hostname"};
    app.ntasks = 2;
    spec.apps = {app};
    return spec;
}

ResourceSet ranks_3_and_5() {
    return *ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"3,5","children":{"core":"0-1"}}],)"
        R"("nodelist":["a","b"]}})");
}

std::string header_text(const Json& topologies, const Json& map_inputs, std::uint32_t rank = 5) {
    return to_compact(
        shell_header("7", two_tasks().to_json(), ranks_3_and_5(), rank, topologies, map_inputs));
}

Json some_inputs() {
    MapInputs inputs;
    inputs.hostname = "a";
    inputs.names = {"10.0.0.1"};
    inputs.files = {{"/w/hosts", {"a slots=2\n", std::nullopt}}};
    return map_inputs_to_json(inputs);
}

// What the broker writes, the shell reads: its node is its rank's place
// among R's ranks, and it maps with the broker's topologies and readings.
TEST(ShellHeader, TheShellReadsWhatTheBrokerWrote) {
    const Topology node = *Topology::from_synthetic("package:1 core:2 pu:1");
    const RankTopologies topologies(*IdSet::parse("3,5"), node);
    const auto header = parse_shell_header(header_text(topologies.to_json(), some_inputs()));
    ASSERT_TRUE(header) << header.error().str();
    EXPECT_EQ(header->id, "7");
    EXPECT_EQ(header->jobspec, two_tasks());
    EXPECT_EQ(header->R.encode(), ranks_3_and_5().encode());
    EXPECT_EQ(header->rank, 5u);
    EXPECT_EQ(header->node, 1u);
    EXPECT_EQ(header->inputs.ranks.ranks().encode(), "3,5");
    ASSERT_NE(header->inputs.ranks.find(5), nullptr);
    // As loaded from the XML the broker sent.
    EXPECT_EQ(header->inputs.ranks.find(5)->to_xml(),
              Topology::from_xml_text(node.to_xml())->to_xml());
    EXPECT_FALSE(header->inputs.ranks.simulated(5));
    EXPECT_EQ(header->inputs.hostname, "a");
    EXPECT_EQ(header->inputs.names, std::vector<std::string>{"10.0.0.1"});
    EXPECT_EQ(header->inputs.files.at("/w/hosts").text, "a slots=2\n");
}

// Each refusal is one line naming the member, or the format, at fault.
TEST(ShellHeader, BadHeadersAreOneLineNamingThePlace) {
    const Topology node = *Topology::from_synthetic("package:1 core:2 pu:1");
    const Json topologies = RankTopologies(*IdSet::parse("3,5"), node).to_json();
    const auto error_of = [](const std::string& text) {
        const auto header = parse_shell_header(text);
        return header ? std::string("accepted") : header.error().str();
    };
    EXPECT_EQ(error_of("").substr(0, 11), "job-shell: ");
    EXPECT_EQ(error_of("[]"), "job-shell: the header is not an object");
    Json header = *parse_json("test", header_text(topologies, some_inputs()));
    const auto with = [&header](const std::string& member, const Json& value) {
        Json changed = header;
        changed[member] = value;
        return to_compact(changed);
    };
    const auto without = [&header](const std::string& member) {
        Json changed = header;
        changed.erase(member);
        return to_compact(changed);
    };
    EXPECT_EQ(error_of(with("id", 7)), R"(job-shell: the header's "id" is not a string)");
    EXPECT_EQ(error_of(without("rank")), R"(job-shell: the header has no "rank" (a broker rank))");
    EXPECT_EQ(error_of(with("rank", -1)), R"(job-shell: the header has no "rank" (a broker rank))");
    EXPECT_EQ(error_of(with("rank", 4)), "job-shell: rank 4 is not among R's ranks (3,5)");
    EXPECT_EQ(error_of(with("rank", 1ull << 40)),
              "job-shell: rank 1099511627776 is not among R's ranks (3,5)");
    EXPECT_EQ(error_of(without("topologies")), "topologies: expected an array, not null");
    EXPECT_EQ(
        error_of(with("topologies", Json::array({{{"ranks", "3"}, {"xml", "<x"}}}))).substr(0, 20),
        "topologies: [0].xml:");
    EXPECT_EQ(error_of(without("map_inputs")), "map_inputs: expected an object, not null");
    EXPECT_EQ(error_of(with("jobspec", Json::array())).substr(0, 9), "jobspec: ");
    EXPECT_EQ(error_of(with("R", Json::object())).substr(0, 1), "R");
    for (const std::string member : {"jobspec", "R", "topologies", "map_inputs"})
        EXPECT_EQ(error_of(without(member)).find('\n'), std::string::npos) << member;
}

}  // namespace
}  // namespace gantry::shell
