// `gantry resource list`: an instance's nodes, cores and GPUs by state (free,
// allocated, down), as the instance's scheduler sees them. Reference:
// docs/commands/resource.md.
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/output_format.h"
#include "formats/rset.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kResourceExamples = R"(Examples:
  $ gantry resource list
       STATE NNODES   NCORES    NGPUS NODELIST
        free      1  <cores>        0 <host>
   allocated      0        0        0
        down      0        0        0
  $ gantry resource list -s all -o '{ranks} {nodelist} {ncores}'
  $ gantry resource list --json | jq .free

One row per state: free (no job holds it), allocated (a job holds it) and
down (cannot be used: the nodes of lost brokers, see gantry overlay
status); -s chooses the states, from free,
allocated, down, up and all, comma-separated. A node some of whose cores
are free and others allocated counts in both rows.

-o FORMAT prints fields by flux resource list's names, {NAME} or
{NAME:SPEC} as in gantry jobs: state, nnodes, ncores, ngpus, ranks,
nodelist. The default is
  {state:>10} {nnodes:>6} {ncores:>8} {ngpus:>8} {nodelist}

Exit status: 0 on success; 1 when the instance cannot be reached or
refuses; 2 on bad options, states or format, or when there is no
GANTRY_URI and no --uri.)";

const std::map<std::string, std::string> kResourceFields = {
    {"state", "STATE"}, {"nnodes", "NNODES"}, {"ncores", "NCORES"},
    {"ngpus", "NGPUS"}, {"ranks", "RANKS"},   {"nodelist", "NODELIST"},
};

constexpr std::string_view kDefaultResourceFormat =
    "{state:>10} {nnodes:>6} {ncores:>8} {ngpus:>8} {nodelist}";

constexpr std::string_view kStates[] = {"free", "allocated", "down", "up", "all"};

// The states of -s, in the order given.
Result<std::vector<std::string>> states_of(std::string_view text) {
    std::vector<std::string> states;
    for (std::size_t start = 0; start <= text.size();) {
        auto comma = text.find(',', start);
        if (comma == std::string_view::npos)
            comma = text.size();
        const std::string_view word = text.substr(start, comma - start);
        if (std::find(std::begin(kStates), std::end(kStates), word) == std::end(kStates))
            return Error("resource", "--states: unknown state " + quote(word) +
                                         " (free, allocated, down, up, all)");
        states.emplace_back(word);
        start = comma + 1;
    }
    return states;
}

// The reply's R of `state` ("up": all but down).
Result<ResourceSet> resources_in(const Json& reply, const std::string& state) {
    const auto R = [&](const char* key) -> Result<ResourceSet> {
        const auto found = reply.find(key);
        if (found == reply.end())
            return Error("resource.list", std::string("no \"") + key + "\" in the reply");
        return ResourceSet::from_json(*found);
    };
    if (state != "up")
        return R(state.c_str());
    auto all = R("all");
    if (!all)
        return all;
    auto down = R("down");
    if (!down)
        return down;
    return all->diff(*down);
}

std::string field_of(const ResourceSet& R, const std::string& state, const std::string& field) {
    if (field == "state")
        return state;
    if (field == "nnodes")
        return std::to_string(R.nnodes());
    if (field == "ncores")
        return std::to_string(R.ncores());
    if (field == "ngpus")
        return std::to_string(R.ngpus());
    if (field == "ranks")
        return R.ranks().encode();
    if (field == "nodelist")
        return R.has_hostnames() ? R.nodelist().encode() : R.ranks().encode();
    return "";
}

}  // namespace

int resource_main(int argc, char** argv) {
    CLI::App app("Show an instance's resources.", "resource");
    app.footer(std::string(kResourceExamples));
    app.require_subcommand(1);
    auto* list = app.add_subcommand(
        "list", "Print the instance's nodes, cores and GPUs: free, allocated and down");
    list->footer(std::string(kResourceExamples));
    std::optional<std::string> uri_option, format_text;
    std::string states_text = "free,allocated,down";
    bool no_header = false, json = false;
    add_uri_option(*list, uri_option);
    list->add_option("-s,--states", states_text,
                     "The rows: free, allocated, down, up, all (comma-separated)")
        ->type_name("STATES")
        ->capture_default_str();
    list->add_option("-o,--format", format_text,
                     "Print these fields, as flux resource list spells them (see below)")
        ->type_name("FORMAT");
    list->add_flag("-n,--no-header", no_header, "Leave the header line out");
    list->add_flag("--json", json, "Print the resource.list reply (RFC 20 R of each state)");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const auto states = states_of(states_text);
    if (!states)
        return fail(states.error());
    const auto format = OutputFormat::parse(
        "resource", format_text ? *format_text : kDefaultResourceFormat, kResourceFields);
    if (!format)
        return fail(format.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("resource.list");
    if (!reply)
        return runtime_failure(reply.error());
    if (json) {
        std::cout << to_compact(*reply) << '\n' << std::flush;
        return kExitOk;
    }
    std::vector<std::vector<std::string>> rows;
    for (const std::string& state : *states) {
        const auto R = resources_in(*reply, state);
        if (!R)
            return runtime_failure(R.error());
        std::vector<std::string>& row = rows.emplace_back();
        for (const std::string& field : format->fields())
            row.push_back(field_of(*R, state, field));
    }
    format->print(std::cout, rows, !no_header);
    std::cout.flush();
    return kExitOk;
}

}  // namespace gantry::cli
