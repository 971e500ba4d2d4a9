// `gantry job`: RFC 8's program methods one by one, for programs built by
// hand rather than submitted: new, grow, map, exec, shrink, terminate, and
// the names RFC 8 gives to what other commands do (wait, signal, reap, list,
// getinfo). Reference: docs/commands/job.md.
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/run_options.h"
#include "formats/rset.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kDomain = "job";

constexpr std::string_view kUsage = R"(Usage: gantry job METHOD [ARGS]

RFC 8's program methods, for a program built step by step:

  new [--name NAME]            an empty program, running, holding nothing; prints its id
  grow ID R.json               add resources (an RFC 20 R file, - for stdin)
  map ID [RUN OPTIONS] CMD...  add tasks: an app as `gantry run` spells it (MPMD too)
  exec ID                      start the tasks mapped since the last exec; prints their ranks
                               once they run
  shrink ID R.json             remove resources; the tasks on them end before it returns
  terminate ID                 end the program (SIGTERM, then SIGKILL) and wait for it
  wait ID | signal [-s SIG] ID | reap ID | list | getinfo ID
                               as gantry wait, kill, purge, jobs -a, info

Examples:
  $ id=$(gantry job new --name steps)
  $ gantry R encode --local | gantry job grow $id -
  $ gantry job map $id -n 1 ./server
  $ gantry job exec $id
  0
  $ gantry job map $id -n 1 ./client && gantry job exec $id
  1
  $ gantry job terminate $id                  # exit 143: the server's SIGTERM

Each exec is a parallel program of its own (its tasks share one PMI
job), started on the program's resources that earlier execs' running tasks
leave free; ranks count across the execs, as the record shows them.

Exit status: 0 on success (terminate: the program's exit code); 1 when the
instance fails or refuses; 2 on bad arguments.)";

int print_usage(std::ostream& out, int code) {
    out << kUsage << '\n';
    return code;
}

Result<std::string> read_file_or_stdin(std::string_view domain, const std::string& path) {
    if (path == "-")
        return read_stdin();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error::in(std::string(domain), "cannot read the R file", path);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The calls that take an id, with the reply's exit code.
struct Call {
    std::string method;
    Json params;
};

int call_and_print(const Call& call, const std::optional<std::string>& uri,
                   void (*print)(const Json&)) {
    int exit_code = kExitOk;
    auto client = connect_instance(uri, exit_code);
    if (!client)
        return exit_code;
    auto reply = client->call(call.method, call.params);
    if (!reply)
        return runtime_failure(reply.error());
    print(*reply);
    std::cout.flush();
    return kExitOk;
}

int resources_method(std::string_view method, int argc, char** argv) {
    CLI::App app(method == "grow" ? "Add resources to a program made by `gantry job new`."
                                  : "Remove resources from a program; its tasks on them end.",
                 "job " + std::string(method));
    std::optional<std::string> uri;
    std::string id_text;
    std::string path;
    add_uri_option(app, uri);
    app.add_option("ID", id_text, "The program's id")->required();
    app.add_option("R", path, "An RFC 20 R document; - reads stdin")->required();
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const std::string domain = "job " + std::string(method);
    auto id = parse_job_id(domain, id_text);
    if (!id)
        return fail(id.error());
    auto text = read_file_or_stdin(domain, path);
    if (!text)
        return fail(text.error());
    auto R = ResourceSet::parse(*text);
    if (!R)
        return fail(Error::in(domain, R.error().str(), path));
    return call_and_print({"job." + std::string(method), {{"id", *id}, {"R", R->to_json()}}}, uri,
                          [](const Json& reply) {
                              auto held = ResourceSet::from_json(reply.value("R", Json()));
                              if (held && !held->empty())
                                  std::cout << held->short_form() << '\n';
                              else
                                  std::cout << "(nothing)\n";
                          });
}

int new_method(int argc, char** argv) {
    CLI::App app("Make an empty program: running, holding nothing; print its id.", "job new");
    std::optional<std::string> uri;
    std::string name = "program";
    add_uri_option(app, uri);
    app.add_option("--name", name, "Its name in gantry jobs");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    return call_and_print({"job.new", {{"name", name}}}, uri, [](const Json& reply) {
        std::cout << reply.value("id", std::uint64_t{0}) << '\n';
    });
}

// map takes `gantry run`'s command line after the id, so it is read by hand.
int map_method(int argc, char** argv) {
    if (argc >= 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        std::cout << "Usage: gantry job map ID [RUN OPTIONS] CMD [ARGS] [: ...]\n\n"
                     "Adds an app (or several, MPMD) to a program's pending tasks, with the "
                     "options of gantry run (see gantry run --help); gantry job exec starts "
                     "them.\n\nExample:\n  $ gantry job map 7 -n 4 --bind-to core ./a.out\n";
        return kExitOk;
    }
    std::optional<std::string> uri;
    int first = 1;
    if (argc > first + 1 && std::string_view(argv[first]) == "--uri") {
        uri = argv[first + 1];
        first += 2;
    }
    if (argc <= first)
        return fail("job map", "needs a program id and a command (see gantry job map --help)");
    auto id = parse_job_id("job map", argv[first]);
    if (!id)
        return fail(id.error());
    // argv[first] stands in for the subcommand's name, as parse_run_command
    // expects; its messages name the command typed, job map.
    auto command = parse_run_command("job map", argc - first, argv + first);
    if (!command)
        return fail(command.error());
    if (auto fits = check_for_instance(command->jobspec, "job.map"); !fits)
        return runtime_failure(fits.error());
    return call_and_print({"job.map", {{"id", *id}, {"jobspec", command->jobspec.to_json()}}}, uri,
                          [](const Json&) {});
}

int id_method(std::string_view method, int argc, char** argv) {
    CLI::App app(method == "exec" ? "Start a program's pending tasks; print their ranks."
                                  : "End a program: SIGTERM to its tasks, then SIGKILL; wait.",
                 "job " + std::string(method));
    std::optional<std::string> uri;
    std::string id_text;
    add_uri_option(app, uri);
    app.add_option("ID", id_text, "The program's id")->required();
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    auto id = parse_job_id("job " + std::string(method), id_text);
    if (!id)
        return fail(id.error());
    int exit_code = kExitOk;
    auto client = connect_instance(uri, exit_code);
    if (!client)
        return exit_code;
    auto reply = client->call("job." + std::string(method), {{"id", *id}});
    if (!reply)
        return runtime_failure(reply.error());
    if (method == "exec") {
        std::cout << reply->value("ranks", std::string()) << '\n';
        return kExitOk;
    }
    return command_exit_code(*reply);
}

}  // namespace

int job_main(int argc, char** argv) {
    if (argc < 2)
        return print_usage(std::cerr, kExitUsage);
    const std::string_view method = argv[1];
    const int rest_argc = argc - 1;
    char** rest_argv = argv + 1;
    if (method == "--help" || method == "-h" || method == "help")
        return print_usage(std::cout, kExitOk);
    if (method == "new")
        return new_method(rest_argc, rest_argv);
    if (method == "grow" || method == "shrink")
        return resources_method(method, rest_argc, rest_argv);
    if (method == "map")
        return map_method(rest_argc, rest_argv);
    if (method == "exec" || method == "terminate")
        return id_method(method, rest_argc, rest_argv);
    // RFC 8's names for the commands that already do it.
    if (method == "wait")
        return wait_main(rest_argc, rest_argv);
    if (method == "signal")
        return kill_main(rest_argc, rest_argv);
    if (method == "reap")
        return purge_main(rest_argc, rest_argv);
    if (method == "getinfo")
        return info_main(rest_argc, rest_argv);
    if (method == "list") {
        std::vector<char*> args(rest_argv, rest_argv + rest_argc);
        static char all[] = "-a";
        args.insert(args.begin() + 1, all);
        return jobs_main(static_cast<int>(args.size()), args.data());
    }
    return fail(kDomain, "unknown method \"" + std::string(method) +
                             "\" (new, grow, map, exec, shrink, wait, signal, terminate, reap, "
                             "list, getinfo)");
}

}  // namespace gantry::cli
