// `gantry kill`, `gantry cancel`, `gantry purge` and `gantry urgency`: act
// on jobs of an instance by id. Reference: docs/commands/kill.md.
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/run_options.h"
#include "formats/jobspec.h"
#include "util/text.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kKillExamples = R"(Examples:
  $ gantry kill 1
  $ gantry kill -s USR1 1 2
  $ gantry kill -s 2 1
  $ gantry kill 3                       # exit 1
  gantry: job 3: is not running (SCHED)
  $ gantry kill --signal=SIGKILL 1
  $ gantry kill -9 2                    # and -KILL, -USR1: as kill(1)

Sends a signal (by name, with or without SIG, or by number; TERM by
default) to every task of each running job. Each id is tried; those that
fail are reported.

Exit status: 0 when every job got the signal; 1 when one did not (not
running, no such job) or the instance cannot be reached; 2 on bad options,
a bad signal or a bad job id.)";

constexpr std::string_view kCancelExamples = R"(Examples:
  $ gantry cancel 1
  $ gantry cancel --all --dry-run
  gantry: cancel: would cancel 3 jobs
  $ gantry cancel --all
  gantry: cancel: canceled 3 jobs

A pending job is removed from the queue and never runs; a running job's
tasks get SIGTERM, then SIGKILL after its kill timeout (--kill-timeout,
5 s by default). The job ends with a `cancel` exception: its summary says
canceled (CA in gantry jobs). Each id is tried; those that fail are reported.

--all cancels every active job of yours; --states (pending, running,
active, or new, depend, sched, run, cleanup, comma-separated) only those in
these states, and --user another user's (a name, a uid, or all), both
implying --all. Jobs already ending are left as they are. The count goes to
stderr; none matching is no error ("matched 0 jobs", or nothing with -q).

Exit status: 0 when every job was canceled; 1 when one was not (inactive
already, no such job) or the instance cannot be reached; 2 on bad options,
a bad job id, state or user, or ids given with --all, --states or --user.)";

constexpr std::string_view kPurgeExamples = R"(Examples:
  $ gantry purge 3 4
  purged 2 inactive jobs
  $ gantry purge
  purged 2 inactive jobs

Removes inactive jobs from the instance's records: their summary,
eventlog, output and exits. With ids, those jobs; without, every inactive
job. Job ids are never reused.

Exit status: 0 when every job given was purged; 1 when one was not (still
active, no such job) or the instance cannot be reached; 2 on bad options or
a bad job id.)";

constexpr std::string_view kUrgencyExamples = R"(Examples:
  $ gantry urgency 2 31
  $ gantry urgency 2 hold
  $ gantry urgency 2 default

Sets a pending job's urgency: 0 (hold: never scheduled until raised) to 31
(expedite: before any other), 16 by default. Among pending jobs, the more
urgent run first, then the older.

Exit status: 0 on success; 1 when the job is not pending, does not exist or
the instance cannot be reached; 2 on bad options, a bad job id or urgency.)";

// The ids of the command line, or a usage error about the first bad one.
Result<std::vector<std::uint64_t>> job_ids(std::string_view domain,
                                           const std::vector<std::string>& texts) {
    std::vector<std::uint64_t> ids;
    for (const std::string& text : texts) {
        auto id = parse_job_id(domain, text);
        if (!id)
            return id.error();
        ids.push_back(*id);
    }
    return ids;
}

// Calls `method` for each id with `params` and {"id"}, reporting failures.
// The exit code: kExitOk when none failed.
int for_each_job(overlay::Client& client, std::string_view method,
                 const std::vector<std::uint64_t>& ids, const Json& params,
                 const std::function<void(const Json&)>& on_result = {}) {
    int exit_code = kExitOk;
    for (const std::uint64_t id : ids) {
        Json request = params;
        request["id"] = id;
        const auto reply = client.call(method, request);
        if (!reply)
            exit_code = runtime_failure(reply.error());
        else if (on_result)
            on_result(*reply);
    }
    return exit_code;
}

// A signal by name (KILL, SIGKILL, kill) or number.
Result<int> parse_signal(std::string_view text) {
    int number = 0;
    const char* end = text.data() + text.size();
    if (const auto [ptr, ec] = std::from_chars(text.data(), end, number);
        ec == std::errc() && ptr == end && number > 0 && number < NSIG)
        return number;
    std::string name = upper_case(text);
    if (name.starts_with("SIG"))
        name.erase(0, 3);
    for (int signal = 1; signal < NSIG; ++signal)
        if (const char* abbreviation = ::sigabbrev_np(signal);
            abbreviation != nullptr && name == abbreviation)
            return signal;
    return Error("kill", "bad signal " + quote(text) + " (a name such as TERM or USR1, or 1-" +
                             std::to_string(NSIG - 1) + ")");
}

Result<int> parse_urgency(std::string_view text) {
    if (const auto urgency = urgency_of(text))
        return *urgency;
    return Error("urgency", "bad urgency " + quote(text) + " (0-31, hold, default or expedite)");
}

// kill(1)'s spelling of the signal, `-9` or `-USR1` (`-SIGUSR1`): an
// argument of a dash and then digits or capitals, which no option of
// `gantry kill` is, becomes `-s 9`; not the value of an -s before it, which
// is left for parse_signal to refuse (`-s -9` is no signal).
std::vector<std::string> with_kill_signal_spelled(int argc, char** argv) {
    std::vector<std::string> args(argv, argv + argc);
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg == "--")
            break;
        if (arg == "-s" || arg == "--signal" || arg == "--uri") {
            ++i;
            continue;
        }
        const bool signal_like =
            arg.size() > 1 && arg[0] == '-' &&
            arg.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1) == arg.npos;
        if (!signal_like)
            continue;
        args[i] = std::string(arg.substr(1));
        args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), "-s");
        break;
    }
    return args;
}

// The ID... positional of kill, cancel and purge.
CLI::Option* add_ids(CLI::App& app, std::vector<std::string>& ids, bool required) {
    auto* option = app.add_option("ID", ids, "The jobs' ids");
    return required ? option->required() : option;
}

}  // namespace

int kill_main(int argc, char** argv) {
    CLI::App app("Send a signal to running jobs.", "kill");
    app.footer(std::string(kKillExamples));
    std::optional<std::string> uri_option;
    std::vector<std::string> id_texts;
    std::string signal_text = "TERM";
    add_uri_option(app, uri_option);
    add_ids(app, id_texts, true);
    app.add_option("-s,--signal", signal_text,
                   "The signal: a name (TERM, SIGUSR1) or a number; -9 and -USR1 as kill(1) "
                   "spells them")
        ->type_name("SIG")
        ->capture_default_str();
    std::vector<std::string> args = with_kill_signal_spelled(argc, argv);
    std::vector<char*> pointers = argv_of(args);
    if (const auto code = parse_options(app, static_cast<int>(args.size()), pointers.data()))
        return *code;
    const auto signal = parse_signal(signal_text);
    if (!signal)
        return fail(signal.error());
    const auto ids = job_ids("kill", id_texts);
    if (!ids)
        return fail(ids.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    return for_each_job(*client, "job.kill", *ids, {{"signal", *signal}});
}

int cancel_main(int argc, char** argv) {
    CLI::App app("Cancel jobs: pending ones never run, running ones are terminated.", "cancel");
    app.footer(std::string(kCancelExamples));
    std::optional<std::string> uri_option, user, states_text;
    std::vector<std::string> id_texts;
    bool all = false, dry_run = false, quiet = false;
    add_uri_option(app, uri_option);
    add_ids(app, id_texts, false);
    app.add_flag("--all", all, "Cancel every active job of yours");
    app.add_option("-S,--states", states_text,
                   "Cancel the jobs in these states only (default: active; implies --all)")
        ->type_name("STATES");
    app.add_option("-u,--user", user,
                   "Cancel this user's jobs (a name, a uid, or all; implies --all)")
        ->type_name("USER");
    app.add_flag("-n,--dry-run", dry_run, "Cancel nothing; say how many jobs would be");
    app.add_flag("-q,--quiet", quiet, "Say nothing when no job matches");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    all = all || states_text || user;
    if (all && !id_texts.empty())
        return fail("cancel", "give job ids or --all, --states, --user, not both");
    if (!all && id_texts.empty())
        return fail("cancel", "give job ids or --all (see gantry cancel --help)");
    if (!all && (dry_run || quiet))
        return fail("cancel", std::string(dry_run ? "--dry-run" : "--quiet") +
                                  " goes with --all, --states or --user");

    Json params = {{"dry_run", dry_run}};
    if (all) {
        auto states = job_states_of("cancel", "--states", states_text.value_or("active"));
        if (!states)
            return fail(states.error());
        // Inactive jobs cannot be canceled: the word is refused, not ignored.
        for (const std::string& state : *states)
            if (state == "INACTIVE")
                return fail("cancel", "--states: inactive jobs cannot be canceled");
        params["states"] = *states;
        auto userid = user_of("cancel", user);
        if (!userid)
            return fail(userid.error());
        if (*userid)
            params["userid"] = **userid;
    }
    const auto ids = job_ids("cancel", id_texts);
    if (!ids)
        return fail(ids.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    if (!all)
        return for_each_job(*client, "job.cancel", *ids, Json::object());
    const auto reply = client->call("job.cancelall", params);
    if (!reply)
        return runtime_failure(reply.error());
    const auto canceled = reply->value("canceled", std::uint64_t{0});
    const std::string jobs = std::to_string(canceled) + (canceled == 1 ? " job" : " jobs");
    if (canceled > 0)
        std::cerr << "gantry: cancel: " << (dry_run ? "would cancel " : "canceled ") << jobs
                  << '\n';
    else if (!quiet)
        std::cerr << "gantry: cancel: matched 0 jobs\n";
    return kExitOk;
}

int purge_main(int argc, char** argv) {
    CLI::App app("Remove inactive jobs from the instance's records.", "purge");
    app.footer(std::string(kPurgeExamples));
    std::optional<std::string> uri_option;
    std::vector<std::string> id_texts;
    add_uri_option(app, uri_option);
    add_ids(app, id_texts, false);
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const auto ids = job_ids("purge", id_texts);
    if (!ids)
        return fail(ids.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    std::uint64_t purged = 0;
    const auto count = [&](const Json& result) {
        purged += result.value("purged", std::uint64_t{0});
    };
    if (ids->empty()) {
        const auto reply = client->call("job.purge");
        if (!reply)
            return runtime_failure(reply.error());
        count(*reply);
    } else {
        exit_code = for_each_job(*client, "job.purge", *ids, Json::object(), count);
    }
    std::cout << "purged " << purged << " inactive job" << (purged == 1 ? "" : "s") << '\n'
              << std::flush;
    return exit_code;
}

int urgency_main(int argc, char** argv) {
    CLI::App app("Change a pending job's urgency.", "urgency");
    app.footer(std::string(kUrgencyExamples));
    std::optional<std::string> uri_option;
    std::string id_text, urgency_text;
    add_uri_option(app, uri_option);
    app.add_option("ID", id_text, "The job's id")->required();
    app.add_option("URGENCY", urgency_text, "0-31, hold (0), default (16) or expedite (31)")
        ->required();
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const auto id = parse_job_id("urgency", id_text);
    if (!id)
        return fail(id.error());
    const auto urgency = parse_urgency(urgency_text);
    if (!urgency)
        return fail(urgency.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    return for_each_job(*client, "job.urgency", {*id}, {{"urgency", *urgency}});
}

}  // namespace gantry::cli
