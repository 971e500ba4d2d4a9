// `gantry instance info` and `gantry shutdown`: ask a running instance, over
// its API socket, what it is, or to end. Reference: docs/commands/instance.md.
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "cli/instance_client.h"
#include "formats/idset.h"
#include "overlay/client.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kInstanceExamples = R"(Examples:
  $ gantry start sh -c 'gantry instance info'
  uri        unix:///tmp/gantry-.../socket
  owner      <user> (uid <uid>)
  pid        <pid>
  state-dir  /tmp/gantry-...
  size       1
  cores      <cores>
  gpus       0
  uptime     ...s
  jobs       0 pending, 0 running, 0 inactive
  $ uri=$(gantry start --daemon --state-dir ~/.gantry/main)
  $ gantry instance info --uri "$uri" --json
  {"cores":<cores>,"gpus":0,"jobs":{"inactive":0,"pending":0,"running":0},...}
  $ gantry shutdown --uri "$uri"

The instance is the one of --uri, else of GANTRY_URI (set inside an
instance).

Exit status: 0 on success; 1 when the instance cannot be reached or refuses;
2 on bad options, or when there is no GANTRY_URI and no --uri.)";

constexpr std::string_view kShutdownExamples = R"(Examples:
  $ uri=$(gantry start --daemon)
  $ gantry shutdown --uri "$uri"
  $ gantry start sh -c 'gantry shutdown'     # exit 1
  gantry: instance.shutdown: the initial program is running (pid <pid>); --force sends it SIGTERM and the instance ends with it

Ends the instance of --uri, else of GANTRY_URI (set inside an instance), and
returns once it has ended: its socket, and a temporary state directory, are
gone. An instance with an initial program ends with that program: --force
sends the program's process group SIGTERM.

Exit status: 0 once the instance has ended; 1 when it cannot be reached or
refuses; 2 on bad options, or when there is no GANTRY_URI and no --uri.)";

// 42s, 3m07s, 2h03m07s, 4d02h03m.
std::string uptime_text(double seconds) {
    const auto total = static_cast<std::uint64_t>(std::max(0.0, std::floor(seconds)));
    const auto days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60,
               secs = total % 60;
    std::ostringstream out;
    out << std::setfill('0');
    if (days > 0)
        out << days << 'd' << std::setw(2) << hours << 'h' << std::setw(2) << minutes << 'm';
    else if (hours > 0)
        out << hours << 'h' << std::setw(2) << minutes << 'm' << std::setw(2) << secs << 's';
    else if (minutes > 0)
        out << minutes << 'm' << std::setw(2) << secs << 's';
    else
        out << secs << 's';
    return out.str();
}

std::string number_text(const Json& value) {
    return value.is_number() ? to_compact(value) : "-";
}

void print_info(const Json& info) {
    const auto field = [&](std::string_view label, const std::string& value) {
        std::cout << std::left << std::setw(11) << label << value << '\n';
    };
    const auto string_of = [&](const char* key) {
        const auto found = info.find(key);
        return found != info.end() && found->is_string() ? found->get<std::string>() : "-";
    };
    const auto number_of = [&](const char* key) {
        const auto found = info.find(key);
        return found != info.end() ? number_text(*found) : "-";
    };
    field("uri", string_of("uri"));
    const Json owner = info.value("owner", Json::object());
    field("owner", owner.value("name", std::string("-")) + " (uid " +
                       number_text(owner.value("uid", Json())) + ")");
    field("pid", number_of("pid"));
    field("state-dir", string_of("state_dir"));
    field("size", number_of("size"));
    field("cores", number_of("cores"));
    field("gpus", number_of("gpus"));
    // An instance of several brokers: how many, which are up, the tree.
    if (const auto brokers = info.find("brokers"); brokers != info.end() && brokers->is_object()) {
        const Json size = brokers->value("size", Json());
        const std::string up = brokers->value("up", std::string("-"));
        const auto nup = IdSet::parse(up);
        // The others are down (lost, or not joined yet): named when any.
        std::string down;
        if (nup && size.is_number_unsigned() && size.get<std::uint64_t>() > nup->count()) {
            const IdSet ranks =
                IdSet::range(0, static_cast<std::uint32_t>(size.get<std::uint64_t>() - 1)) - *nup;
            down = "; " + std::to_string(ranks.count()) + " down: " + ranks.encode();
        }
        field("brokers", number_text(size) + " (" +
                             (nup ? std::to_string(nup->count()) : std::string("-")) +
                             " up: " + up + down + "; fanout " +
                             number_text(brokers->value("fanout", Json())) + ")");
    }
    const auto uptime = info.find("uptime");
    field("uptime", uptime != info.end() && uptime->is_number() ? uptime_text(uptime->get<double>())
                                                                : std::string("-"));
    const Json jobs = info.value("jobs", Json::object());
    std::string counts;
    for (const char* state : {"pending", "running", "inactive"})
        counts +=
            (counts.empty() ? "" : ", ") + number_text(jobs.value(state, Json())) + " " + state;
    field("jobs", counts);
}

}  // namespace

int instance_main(int argc, char** argv) {
    CLI::App app("Ask a running instance about itself.", "instance");
    app.footer(std::string(kInstanceExamples));
    app.require_subcommand(1);
    auto* info = app.add_subcommand("info",
                                    "Print the instance's URI, owner, size, resources, "
                                    "uptime and job counts");
    info->footer(std::string(kInstanceExamples));
    std::optional<std::string> uri_option;
    bool json = false;
    add_uri_option(*info, uri_option);
    info->add_flag("--json", json, "Print the instance.info reply as one line of JSON");
    if (const auto code = parse_options(app, argc, argv))
        return *code;

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("instance.info");
    if (!reply)
        return runtime_failure(reply.error());
    if (json)
        std::cout << to_compact(*reply) << '\n';
    else
        print_info(*reply);
    std::cout.flush();
    return kExitOk;
}

int shutdown_main(int argc, char** argv) {
    CLI::App app("End a running instance.", "shutdown");
    app.footer(std::string(kShutdownExamples));
    std::optional<std::string> uri_option;
    bool force = false;
    add_uri_option(app, uri_option);
    app.add_flag("-f,--force", force,
                 "With an initial program running: send its process group SIGTERM");
    if (const auto code = parse_options(app, argc, argv))
        return *code;

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    if (const auto reply = client->call("instance.shutdown", {{"force", force}}); !reply)
        return runtime_failure(reply.error());
    if (auto closed = client->wait_closed(); !closed)
        return runtime_failure(closed.error());
    return kExitOk;
}

}  // namespace gantry::cli
