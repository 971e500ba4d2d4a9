// `gantry resource list`: an instance's nodes, cores and GPUs by state (free,
// allocated, down), as the instance's scheduler sees them; `gantry resource
// drain` and `undrain`: nodes taken out of service and back. Reference:
// docs/commands/resource.md.
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
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
  $ gantry start --test-size=3 sh -c 'gantry resource drain node2 bad fan; gantry resource drain -n'
  2    node2 <time> bad fan

One row per state: free (no job holds it), allocated (a job holds it) and
down (cannot be used: the nodes of lost brokers, see gantry overlay
status, and what no job holds on drained nodes); -s chooses the states,
from free, allocated, down, drained (the drained nodes' part of down), up
(all but lost brokers' nodes) and all, comma-separated. A node some of
whose cores are free and others allocated counts in both rows.

drain TARGETS [REASON...] takes nodes out of service, by rank (an idset)
or host name (a hostlist): no new job is placed there, jobs running there
go on, and the nodes stay drained when the instance restarts; without
TARGETS it lists the drained nodes. undrain TARGETS puts them back.

-o FORMAT prints fields by flux resource list's names, {NAME} or
{NAME:SPEC} as in gantry jobs: state, nnodes, ncores, ngpus, ranks,
nodelist, properties (the nodes' properties, comma-separated, as
--requires names them). The default is
  {state:>10} {nnodes:>6} {ncores:>8} {ngpus:>8} {nodelist}

Exit status: 0 on success; 1 when the instance cannot be reached or
refuses; 2 on bad options, states or format, or when there is no
GANTRY_URI and no --uri.)";

const std::map<std::string, std::string> kResourceFields = {
    {"state", "STATE"}, {"nnodes", "NNODES"},     {"ncores", "NCORES"},         {"ngpus", "NGPUS"},
    {"ranks", "RANKS"}, {"nodelist", "NODELIST"}, {"properties", "PROPERTIES"},
};

constexpr std::string_view kDefaultResourceFormat =
    "{state:>10} {nnodes:>6} {ncores:>8} {ngpus:>8} {nodelist}";

constexpr std::string_view kStates[] = {"free", "allocated", "down", "drained", "up", "all"};

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
                                         " (free, allocated, down, drained, up, all)");
        states.emplace_back(word);
        start = comma + 1;
    }
    return states;
}

// The reply's R of `state`: "down" is the lost brokers' nodes and what no
// job holds on drained ones, "up" all but the lost brokers' nodes.
Result<ResourceSet> resources_in(const Json& reply, const std::string& state) {
    const auto R = [&](const char* key) -> Result<ResourceSet> {
        const auto found = reply.find(key);
        if (found == reply.end())
            return Error("resource.list", std::string("no \"") + key + "\" in the reply");
        return ResourceSet::from_json(*found);
    };
    if (state != "up" && state != "down")
        return R(state.c_str());
    auto down = R("down");
    if (!down)
        return down;
    auto other = R(state == "up" ? "all" : "drained");
    if (!other)
        return other;
    return state == "up" ? other->diff(*down) : down->append(*other);
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
    if (field == "properties") {
        std::string names;
        for (const auto& [name, ranks] : R.properties())
            if (ranks.intersects(R.ranks()))
                names += (names.empty() ? "" : ",") + name;
        return names;
    }
    return "";
}

// The drained nodes, a line each.
void print_drained(const Json& reply, bool header) {
    const auto format = OutputFormat::parse(
        "resource", "{rank} {host} {since} {reason}",
        {{"rank", "RANK"}, {"host", "HOST"}, {"since", "SINCE"}, {"reason", "REASON"}});
    std::vector<std::vector<std::string>> rows;
    for (const Json& node : reply.value("drain", Json::array()))
        rows.push_back({std::to_string(node.value("rank", 0u)), node.value("host", ""),
                        iso_time(node.value("time", 0.0)), node.value("reason", "")});
    format->print(std::cout, rows, header);
}

// The instance's reply to `method`; on failure, the exit code.
std::variant<Json, int> ask_instance(const std::optional<std::string>& uri_option,
                                     const std::string& method,
                                     const Json& params = Json::object()) {
    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    auto reply = client->call(method, params);
    if (!reply)
        return runtime_failure(reply.error());
    return std::move(*reply);
}

// drain TARGETS [REASON...] and undrain TARGETS: one call each.
int change_drain(const std::optional<std::string>& uri_option, const std::string& method,
                 const std::vector<std::string>& words) {
    std::string reason;
    for (std::size_t i = 1; i < words.size(); ++i)
        reason += (i > 1 ? " " : "") + words[i];
    Json params = {{"targets", words.front()}};
    if (method == "resource.drain")
        params["reason"] = reason;
    const auto reply = ask_instance(uri_option, method, params);
    return std::holds_alternative<int>(reply) ? std::get<int>(reply) : kExitOk;
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
    std::vector<std::string> drain_words, undrain_targets;
    auto* drain = app.add_subcommand(
        "drain", "Take nodes out of service (no new job goes there), or list the drained ones");
    drain->footer(std::string(kResourceExamples));
    add_uri_option(*drain, uri_option);
    drain->add_option("words", drain_words, "TARGETS (ranks or host names), then the reason")
        ->type_name("TARGETS [REASON...]");
    drain->add_flag("-n,--no-header", no_header, "Leave the header line out of the list");
    auto* undrain = app.add_subcommand("undrain", "Put drained nodes back in service");
    undrain->footer(std::string(kResourceExamples));
    add_uri_option(*undrain, uri_option);
    undrain->add_option("targets", undrain_targets, "The nodes: ranks or host names")
        ->type_name("TARGETS")
        ->required()
        ->expected(1);
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    if (undrain->parsed())
        return change_drain(uri_option, "resource.undrain", undrain_targets);
    if (drain->parsed() && !drain_words.empty())
        return change_drain(uri_option, "resource.drain", drain_words);
    if (drain->parsed()) {
        const auto reply = ask_instance(uri_option, "resource.list");
        if (std::holds_alternative<int>(reply))
            return std::get<int>(reply);
        print_drained(std::get<Json>(reply), !no_header);
        std::cout.flush();
        return kExitOk;
    }
    const auto states = states_of(states_text);
    if (!states)
        return fail(states.error());
    const auto format = OutputFormat::parse(
        "resource", format_text ? *format_text : kDefaultResourceFormat, kResourceFields);
    if (!format)
        return fail(format.error());

    const auto answer = ask_instance(uri_option, "resource.list");
    if (std::holds_alternative<int>(answer))
        return std::get<int>(answer);
    const Json* reply = &std::get<Json>(answer);
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
