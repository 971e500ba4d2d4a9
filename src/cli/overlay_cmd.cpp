// `gantry overlay status`: the tree of an instance's brokers, each rank's
// host and state. Reference: docs/commands/overlay.md.
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/instance_client.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kOverlayExamples = R"(Examples:
  $ gantry start --test-size=3 gantry overlay status
  0 node0: up
  ├─ 1 node1: up
  └─ 2 node2: up
  $ gantry overlay status --json | jq -c '.ranks[] | select(.state != "up")'

Each line is a broker rank, its host and its state, under its parent in
the overlay's tree: up; drained (up, its node taken out of service by
gantry resource drain), with the reason given; lost, with why (its own
silence, or its parent's when a whole subtree went at once: where the tree
broke); or joining, before it has joined. An instance of one broker is
rank 0 alone.

Exit status: 0 when every broker is up or drained; 1 when some are lost or joining,
or the instance cannot be reached; 2 on bad options, or when there is no
GANTRY_URI and no --uri.)";

struct Broker {
    std::uint64_t rank = 0;
    std::string host;
    std::string state;
    std::string why;
};

std::string line_of(const Broker& broker) {
    std::string line = std::to_string(broker.rank) + " " +
                       (broker.host.empty() ? std::string("?") : broker.host) + ": " + broker.state;
    if (!broker.why.empty())
        line += " (" + broker.why + ")";
    return line;
}

// Rank `rank` and its subtree, each child under its parent as `tree` does.
void print_subtree(std::ostream& out, const std::map<std::uint64_t, Broker>& brokers,
                   const std::map<std::uint64_t, std::vector<std::uint64_t>>& children,
                   std::uint64_t rank, const std::string& prefix, bool root, bool last) {
    out << (root ? "" : prefix + (last ? "└─ " : "├─ ")) << line_of(brokers.at(rank)) << '\n';
    const auto found = children.find(rank);
    if (found == children.end())
        return;
    const std::string below = root ? "" : prefix + (last ? "   " : "│  ");
    for (std::size_t i = 0; i < found->second.size(); ++i)
        print_subtree(out, brokers, children, found->second[i], below, false,
                      i + 1 == found->second.size());
}

}  // namespace

int overlay_main(int argc, char** argv) {
    CLI::App app("Show the tree of an instance's brokers.", "overlay");
    app.footer(std::string(kOverlayExamples));
    app.require_subcommand(1);
    auto* status = app.add_subcommand(
        "status", "Print each broker rank under its parent, with its host and state");
    status->footer(std::string(kOverlayExamples));
    std::optional<std::string> uri_option;
    bool json = false;
    add_uri_option(*status, uri_option);
    status->add_flag("--json", json, "Print the overlay.status reply");
    if (const auto code = parse_options(app, argc, argv))
        return *code;

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("overlay.status");
    if (!reply)
        return runtime_failure(reply.error());
    std::map<std::uint64_t, Broker> brokers;
    std::map<std::uint64_t, std::vector<std::uint64_t>> children;
    bool all_up = true;
    for (const Json& entry : reply->value("ranks", Json::array())) {
        Broker broker{entry.value("rank", std::uint64_t{0}), string_field(entry, "host"),
                      string_field(entry, "state"), string_field(entry, "why")};
        all_up = all_up && (broker.state == "up" || broker.state == "drained");
        if (const auto parent = entry.find("parent"); parent != entry.end() && parent->is_number())
            children[parent->get<std::uint64_t>()].push_back(broker.rank);
        brokers.emplace(broker.rank, std::move(broker));
    }
    if (!brokers.contains(0))
        return runtime_failure(Error("overlay.status", "the reply names no rank 0"));
    if (json)
        std::cout << to_compact(*reply) << '\n';
    else
        print_subtree(std::cout, brokers, children, 0, "", true, true);
    std::cout.flush();
    return all_up ? kExitOk : kExitRuntime;
}

}  // namespace gantry::cli
