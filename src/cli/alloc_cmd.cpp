// `gantry alloc` and `gantry batch`: a child instance as one job of the
// current one. The job's one task is `gantry start CMD`, confined to the
// allocated cores; that `gantry start` finds it runs inside a job and takes
// the job's R, ranks and cores counted from 0, as its inventory. Reference:
// docs/commands/alloc.md.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/attach.h"
#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/run_options.h"
#include "formats/jobspec.h"
#include "overlay/client.h"
#include "shell/spawn.h"
#include "util/duration.h"

extern char** environ;

namespace gantry::cli {

namespace {

constexpr std::string_view kAllocExamples = R"(Examples:
  $ gantry alloc -n 2 sh -c 'gantry instance info | grep cores; gantry run -n 2 hostname'
  cores      2
  <host>
  <host>
  $ gantry alloc -n 1 -c 2 ./workflow.sh       # 2 cores: 1 slot of 2
  $ gantry alloc -n 2
  (an interactive shell; exit ends it)

The child instance's inventory is exactly the allocated R, its ranks and
cores numbered from 0; inside it GANTRY_URI names the child, so gantry
commands (submit, run, jobs, alloc...) go there. The parent lists it as one
job, and releases its resources when CMD ends.

gantry alloc is the job's front end: SIGINT, SIGTERM or SIGHUP while the job
waits for resources cancel it, and a job whose gantry alloc has gone (killed,
even with SIGKILL) never starts. Once the child runs, signals go to it.

Exit status: CMD's (the child instance's); 1 when it never ran (canceled,
its dependency failed), when the instance refuses it (a request that can
never fit) or fails; 128+N when signal N canceled it while pending; 69 when
the instance shut down before it ended; 2 on bad options.)";

constexpr std::string_view kBatchExamples = R"(Examples:
  $ gantry batch -n 2 ./steps.sh
  1
  $ gantry wait 1; gantry attach 1             # the script's output, kept by the parent

Like alloc, but returns at once with the job's id: SCRIPT runs as the child
instance's initial program when the scheduler finds the resources, and its
output is kept in the parent's record.

SCRIPT's stdin is /dev/null, as for sbatch and flux batch.

SCRIPT is looked up (in PATH, when it has no '/') and must be executable
when it is submitted: one that is not is refused at once.

Exit status: 0 once submitted; 1 when the instance refuses it (a request
that can never fit) or fails; 2 on bad options, or a SCRIPT that cannot
run.)";

struct Request {
    std::uint32_t nodes = 0;
    std::uint32_t slots = 0;  // 0: one per node with -N (whole nodes), else 1
    std::uint32_t cores = 1;
    std::uint32_t gpus = 0;
    bool exclusive = false;
    std::vector<std::string> requirements;  // --requires, each a query
    std::string time_limit;
    std::string name;
    std::string urgency = "default";
    std::optional<std::string> uri;
    std::vector<std::string> command;
};

void add_request_options(CLI::App& app, Request& request) {
    app.positionals_at_end();
    app.add_option("-N,--nodes", request.nodes, "Nodes (default: as the slots take)")
        ->check(needs_positive_number());
    app.add_option("-n,--nslots,--ntasks", request.slots,
                   "Slots of -c cores and -g GPUs (default 1; with -N alone, whole nodes)")
        ->check(needs_positive_number());
    app.add_option("-c,--cores-per-slot,--cpus-per-task", request.cores,
                   "Cores per slot (default 1)")
        ->check(needs_positive_number());
    app.add_option("-g,--gpus-per-slot,--gpus-per-task", request.gpus, "GPUs per slot (default 0)")
        ->check(needs("a number of 0 or more", [](const std::string& text) {
            return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        }));
    app.add_flag("--exclusive", request.exclusive, "Whole nodes");
    app.add_option("--requires", request.requirements,
                   "Only nodes that satisfy QUERY: properties, host:HOSTS, rank:IDS, with and, "
                   "or, not and parentheses (docs/formats/constraint.md); several must all hold")
        ->type_name("QUERY")
        ->allow_extra_args(false);
    app.add_option("-t,--time-limit", request.time_limit,
                   "The child instance is terminated after this long: minutes (30), H:M:S, D-H:M:S "
                   "or 90s, 2h, 1d")
        ->type_name("DURATION");
    app.add_option("-J,--job-name", request.name, "The job's name in the parent's list");
    app.add_option("--urgency", request.urgency,
                   "0 (held) to 31 (first), or hold, default, expedite; default 16")
        ->check(needs("0-31, hold, default or expedite",
                      [](const std::string& text) { return urgency_of(text).has_value(); }));
    add_uri_option(app, request.uri);
}

// The executable to run as the child's broker: this one.
std::string gantry_path() {
    auto path = gantry_executable();
    return path ? *path : std::string("gantry");
}

Result<Jobspec> child_jobspec(std::string_view domain, const Request& request,
                              std::vector<std::string> command) {
    Jobspec spec;
    Jobspec::App app;
    app.command = {gantry_path(), "start"};
    app.command.insert(app.command.end(), command.begin(), command.end());
    // One broker per node of the allocation, however many the scheduler
    // gives, confined to its part, not bound to a slot; on several nodes
    // they bootstrap by the job's PMI into one child instance of as many
    // brokers.
    app.ntasks = 0;
    app.map_by = "ppr:1:node";
    app.bind_to = "none";
    spec.apps.push_back(std::move(app));
    spec.resources.nodes = request.nodes;
    // -N alone asks for whole nodes, as flux alloc -N does.
    spec.resources.ntasks =
        request.slots > 0 ? request.slots : std::max<std::uint32_t>(1, request.nodes);
    spec.resources.cores_per_task = request.cores;
    spec.resources.gpus_per_task = request.gpus;
    spec.resources.exclusive = request.exclusive || (request.nodes > 0 && request.slots == 0);
    for (const std::string& query : request.requirements)
        if (auto added = add_requirement(domain, spec.resources.constraint, query); !added)
            return added.error();
    if (!request.time_limit.empty()) {
        auto limit = parse_time_limit(domain, request.time_limit);
        if (!limit)
            return limit.error();
        spec.attributes.time_limit = std::chrono::duration<double>(*limit).count();
    }
    spec.attributes.name = !request.name.empty() ? request.name
                           : command.empty()
                               ? std::string(domain)
                               : std::filesystem::path(command[0]).filename().string();
    spec.attributes.urgency = urgency_of(request.urgency).value_or(Jobspec::kUrgencyDefault);
    std::error_code failure;
    spec.attributes.cwd = std::filesystem::current_path(failure).string();
    for (char** entry = environ; *entry; ++entry) {
        const std::string_view text(*entry);
        const std::size_t equals = text.find('=');
        if (equals != std::string_view::npos)
            spec.attributes.environment.emplace(std::string(text.substr(0, equals)),
                                                std::string(text.substr(equals + 1)));
    }
    return spec;
}

// The script must run when the job starts, hours later perhaps: checked at
// submit, as sbatch does, in this directory and PATH, as the job will.
Status check_script(const std::string& script) {
    const char* path = std::getenv("PATH");
    const std::vector<std::string> environment{path ? std::string("PATH=") + path : ""};
    const shell::CommandPath found =
        shell::find_command(script, shell::search_path_of(environment), "");
    if (found.error == 0)
        return {};
    return Error("batch", script + ": " + std::strerror(found.error));
}

// Submits the child instance's job; its id, or the command's exit code.
// An interactive job (alloc's) is bound to this connection: it never starts
// without its front end.
std::optional<std::uint64_t> submit(overlay::Client& client, const Jobspec& spec, bool interactive,
                                    int& exit_code) {
    auto reply =
        client.call("job.submit", {{"jobspec", spec.to_json()}, {"interactive", interactive}});
    if (!reply) {
        exit_code = runtime_failure(reply.error());
        return std::nullopt;
    }
    return reply->value("id", std::uint64_t{0});
}

}  // namespace

int alloc_main(int argc, char** argv) {
    CLI::App app(
        "Allocate resources and run CMD (default: an interactive shell) in a child "
        "instance on them; the resources are released when CMD ends.",
        "alloc");
    app.footer(std::string(kAllocExamples));
    Request request;
    add_request_options(app, request);
    app.add_option("CMD", request.command, "The child instance's initial program")->type_name("");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    std::vector<std::string> command = request.command;
    if (command.empty()) {
        // The child's stdin is a pipe from here, never a terminal: the
        // shell is asked to be interactive.
        const char* shell = std::getenv("SHELL");
        command = {shell && *shell ? shell : "/bin/sh", "-i"};
    }
    auto spec = child_jobspec("alloc", request, command);
    if (!spec)
        return fail(spec.error());
    int exit_code = kExitOk;
    const auto uri = instance_uri(request.uri, exit_code);
    if (!uri)
        return exit_code;
    auto client = connect_instance(request.uri, exit_code);
    if (!client)
        return exit_code;
    const auto id = submit(*client, *spec, true, exit_code);
    if (!id)
        return exit_code;
    return attach_job(*client, *uri, *id, AttachOptions{.owns_job = true});
}

int batch_main(int argc, char** argv) {
    CLI::App app(
        "Submit SCRIPT to run in a child instance on the resources asked for; print "
        "the job's id and return.",
        "batch");
    app.footer(std::string(kBatchExamples));
    Request request;
    add_request_options(app, request);
    app.add_option("SCRIPT", request.command, "The script and its arguments")
        ->type_name("")
        ->required();
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    if (auto script = check_script(request.command.front()); !script)
        return fail(script.error());
    auto spec = child_jobspec("batch", request, request.command);
    if (!spec)
        return fail(spec.error());
    spec->attributes.input = "/dev/null";  // nobody attaches to a batch job to type
    int exit_code = kExitOk;
    auto client = connect_instance(request.uri, exit_code);
    if (!client)
        return exit_code;
    const auto id = submit(*client, *spec, false, exit_code);
    if (!id)
        return exit_code;
    std::cout << *id << '\n';
    return kExitOk;
}

}  // namespace gantry::cli
