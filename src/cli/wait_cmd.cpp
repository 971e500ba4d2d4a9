// `gantry wait`: wait for a job, or every active job, to end, and exit as
// they did. Reference: docs/commands/wait.md.
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "cli/instance_client.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kExamples = R"(Examples:
  $ id=$(gantry submit sh -c 'exit 3')
  $ gantry wait $id; echo $?
  3
  $ gantry submit -n 2 sleep 5
  2
  $ gantry submit hostname
  3
  $ gantry cancel 3; gantry wait 3           # exit 1
  gantry: job 3: exception: cancel: canceled by <uid>
  $ gantry submit --begin-time +3s sh -c 'exit 2'
  4
  $ gantry wait --all                        # exit 1
  gantry: job 4: exit code 2

With an id, waits for that job to end and exits with its exit code; a job
that never ran (canceled while pending, a dependency failed, lost) has none:
its exception is printed and the exit status is 1. A job that has ended
already is answered at once.

With --all, waits for every job active when it asks (pending or running),
prints a line on stderr for each one that did not complete (exit code 0, no
exception), and exits 0 when all completed, else 1.

Exit status: as above; 1 also when the instance cannot be reached or
refuses (gantry: job 9: no such job); 69 when the instance shut down (or the
connection to it was lost) before the job ended; 2 on bad options or a bad
job id.)";

// Prints why a job did not complete, when it did not: its exception, else
// its exit code. True when it completed.
bool report(const Json& summary) {
    const auto id = summary.value("id", std::uint64_t{0});
    if (const Json* exception = exception_of(summary)) {
        fail(Error("", exception_text(id, *exception)));
        return false;
    }
    if (const int code = command_exit_code(summary); code != 0) {
        fail(Error("", "job " + std::to_string(id) + ": exit code " + std::to_string(code)));
        return false;
    }
    return true;
}

}  // namespace

int wait_main(int argc, char** argv) {
    CLI::App app("Wait for a job, or all active jobs, to end; exit as they did.", "wait");
    app.footer(std::string(kExamples));
    std::optional<std::string> uri_option;
    std::optional<std::string> id_text;
    bool all = false;
    add_uri_option(app, uri_option);
    auto* id_option = app.add_option("ID", id_text, "The job's id");
    app.add_flag("-a,--all", all, "Wait for every active job")->excludes(id_option);
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    if (!all && !id_text)
        return fail("wait", "give a job id or --all");
    std::optional<std::uint64_t> id;
    if (id_text) {
        const auto parsed = parse_job_id("wait", *id_text);
        if (!parsed)
            return fail(parsed.error());
        id = *parsed;
    }

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("job.wait", id ? Json{{"id", *id}} : Json{{"all", true}});
    if (!reply)
        return waiting_failure(*client, reply.error(), client->last_error_type());
    if (id) {
        // Only the exception is worth a line: the exit code says the rest.
        if (const Json* exception = exception_of(*reply))
            fail(Error("", exception_text(*id, *exception)));
        return command_exit_code(*reply);
    }
    bool all_completed = true;
    for (const Json& summary : reply->value("jobs", Json::array()))
        all_completed = report(summary) && all_completed;
    return all_completed ? kExitOk : kExitRuntime;
}

}  // namespace gantry::cli
