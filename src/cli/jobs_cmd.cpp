// `gantry jobs`, `gantry info` and `gantry eventlog`: what an instance
// knows about its jobs, as tables and lines for people or as the broker's
// JSON for programs. References: docs/commands/jobs.md, info.md, eventlog.md.
#include <pwd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/store.h"
#include "cli/command.h"
#include "cli/instance_client.h"
#include "cli/output_format.h"
#include "formats/idset.h"
#include "formats/rset.h"
#include "shell/exit_status.h"
#include "util/duration.h"
#include "util/text.h"

namespace gantry::cli {

// Job states as the record store names them.
using broker::JobState;
using broker::parse_job_state;

namespace {

constexpr std::string_view kJobsExamples = R"(Examples:
  $ gantry jobs
  JOBID USER     NAME       ST NTASKS     TIME EXIT
      4 <user>   solver      S      2   <time>
      3 <user>   sleep       R      1   <time>
  $ gantry jobs -a
  JOBID USER     NAME       ST NTASKS     TIME EXIT
      4 <user>   solver      S      2   <time>
      3 <user>   sleep       R      1   <time>
      2 <user>   hostname   CD      2   <time>    0
      1 <user>   false       F      1   <time>    1
  $ gantry jobs --state=run,sched --name solver
  $ gantry jobs -a --json | jq .exit_code
  $ gantry jobs -a -o '{id:>5} {name:<10.10+} {status:<9} {returncode:>2}'
  JOBID NAME       STATUS    RC
      4 solver     SCHED
      3 sleep      RUN
      2 hostname   COMPLETED  0
      1 false      FAILED     1
  $ gantry jobs -A
  $ gantry jobs -u root

Lists the jobs newest first: by default the active ones (pending and
running), -a all of them, --state the ones in the states given.

ST is the job's state: N new, D waiting for its dependencies, S scheduled
(waiting for resources), R running, C cleaning up; an inactive job shows how
it ended: CD completed (exit code 0), F failed, CA canceled. TIME is how
long an active job has been in its state (a running job's run time so far),
and how long an inactive one lived, from submit to its end. EXIT is the
job's exit code, - for one that never ran.

--state takes new, depend, sched, run, cleanup, inactive, pending (new,
depend, sched), running (run, cleanup) and active (pending and running),
comma-separated, in any case. Your jobs are listed; -u USER (a name, a uid
or all) another user's, -A every user's in every state.

-o FORMAT prints fields by flux jobs' names, {NAME} or {NAME:SPEC} with
SPEC [[FILL]<|>|^][WIDTH][.PRECISION][+] (+ marks a cut value): id, userid,
username, urgency, name, ntasks, nnodes, nodelist (the job's nodes, once
allocated), state, state_single, status,
status_abbrev, result, result_abbrev, returncode, exit_code,
contextual_time, t_submit, t_inactive, exception.occurred, exception.type,
exception.note. The header line names them as flux does (JOBID, USER, ST,
RC...). The default is
  {id:>5} {username:<8} {name:<10} {status_abbrev:>2} {ntasks:>6}
  {contextual_time:>8} {exit_code:>4}

Exit status: 0 on success; 1 when the instance cannot be reached or
refuses; 2 on bad options, states, user or format, or when there is no
GANTRY_URI and no --uri.)";

constexpr std::string_view kInfoExamples = R"(Examples:
  $ gantry info 2
  id         2
  name       hostname
  user       <user> (uid <uid>)
  state      INACTIVE
  result     completed
  exit-code  0
  urgency    16
  ntasks     2
  submitted  <time>
  command    -n 2 hostname
  R          rank0/core[0-1]
  taskmap    [[0,1,2,1]]
  tasks
    0-1     exited with exit code 0
  eventlog
    0.000000 submit urgency=16 userid=<uid>
    <time> depend
    ...
  jobspec
    {"apps":[...],...,"version":1}
  $ gantry info 2 --json | jq .R

Exit status: 0 on success; 1 when the instance cannot be reached or
refuses (gantry: job 9: no such job); 69 when it shut down (or the
connection was lost) while --follow waited; 2 on bad options or a bad job
id.)";

constexpr std::string_view kEventlogExamples = R"(Examples:
  $ gantry eventlog 2
  0.000000 submit urgency=16 userid=<uid>
  <time> depend
  <time> alloc
  <time> start
  <time> finish status=0
  <time> release final=true ranks="all"
  <time> clean
  $ gantry eventlog --follow --time-format=iso 2
  <time> submit urgency=16 userid=<uid>
  ...
  $ gantry eventlog --json 2 | jq -r .name

One event per line: its time, its name, its context as KEY=VALUE with
JSON values. --follow prints the events as they come until the job's
`clean`, the last one.

Exit status: 0 on success; 1 when the instance cannot be reached or
refuses (gantry: job 9: no such job); 2 on bad options or a bad job id.)";

// --- Times ---------------------------------------------------------------------

std::string printf_text(const char* format, double value) {
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

// A duration as flux prints one: 0s under a millisecond, then 1.234s,
// 12.35s, 1.5m, 2.25h, 3.1d (four significant digits).
std::string duration_text(double seconds) {
    if (!(seconds >= 1e-3))
        return "0s";
    if (seconds < 10)
        return printf_text("%.3fs", seconds);
    if (seconds < 60)
        return printf_text("%.4gs", seconds);
    if (seconds < 3600)
        return printf_text("%.4gm", seconds / 60);
    if (seconds < 86400)
        return printf_text("%.4gh", seconds / 3600);
    return printf_text("%.4gd", seconds / 86400);
}

double number_field(const Json& object, std::string_view key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_number() ? found->get<double>() : 0.0;
}

// --- Events ----------------------------------------------------------------------

enum class TimeFormat { kOffset, kIso, kRaw };

// Prints events as `TIME NAME KEY=VALUE...`, times counted from the first
// event's (the job's submit) in kOffset.
class EventPrinter {
public:
    explicit EventPrinter(TimeFormat format) : format_(format) {}

    std::string line(const Json& event) {
        const double time = number_field(event, "time");
        if (!first_time_)
            first_time_ = time;
        std::string text = format_ == TimeFormat::kIso   ? iso_time(time)
                           : format_ == TimeFormat::kRaw ? printf_text("%.6f", time)
                                                         : printf_text("%.6f", time - *first_time_);
        text += ' ' + string_field(event, "name");
        if (const auto context = event.find("context");
            context != event.end() && context->is_object())
            for (const auto& [key, value] : context->items())
                text += ' ' + key + '=' + to_compact(value);
        return text;
    }

private:
    TimeFormat format_;
    std::optional<double> first_time_;
};

// --- Summaries -------------------------------------------------------------------

// The user's name, else the uid as digits.
std::string user_name(std::uint32_t uid) {
    static std::map<std::uint32_t, std::string> known;
    if (const auto found = known.find(uid); found != known.end())
        return found->second;
    const passwd* entry = ::getpwuid(uid);
    return known[uid] = entry != nullptr ? entry->pw_name : std::to_string(uid);
}

std::uint32_t userid_of(const Json& summary) {
    const auto found = summary.find("userid");
    return found != summary.end() && found->is_number_unsigned() ? found->get<std::uint32_t>() : 0;
}

// The ST column.
std::string state_abbreviation(const Json& summary) {
    const auto state = parse_job_state(string_field(summary, "state"));
    if (!state)
        return "?";
    switch (*state) {
        case JobState::kNew:
            return "N";
        case JobState::kDepend:
            return "D";
        case JobState::kSched:
            return "S";
        case JobState::kRun:
            return "R";
        case JobState::kCleanup:
            return "C";
        case JobState::kInactive:
            break;
    }
    switch (result_of(summary)) {
        case JobResult::kCompleted:
            return "CD";
        case JobResult::kCanceled:
            return "CA";
        case JobResult::kFailed:
            break;
    }
    return "F";
}

// The NTASKS column: 0 is a count not known yet (one task per slot, before
// the job is mapped).
std::string ntasks_text(const Json& summary) {
    const std::string text = number_text(summary, "ntasks");
    return text == "0" ? "-" : text;
}

bool is_inactive(const Json& summary) {
    return string_field(summary, "state") == to_string(JobState::kInactive);
}

// The TIME column: an active job's time in its state, an inactive one's
// from submit to its end.
std::string time_text(const Json& summary, double now) {
    const double state_time = number_field(summary, "state_time");
    const double since = is_inactive(summary) ? number_field(summary, "submit_time") : state_time;
    const double until = is_inactive(summary) ? state_time : now;
    return duration_text(until - since);
}

// --- gantry jobs ---------------------------------------------------------------

// The fields of --format: flux-jobs(1)'s names that a job's summary can
// fill, with flux's headings, and gantry's `exit_code` (EXIT).
const std::map<std::string, std::string> kJobFields = {
    {"id", "JOBID"},
    {"userid", "UID"},
    {"username", "USER"},
    {"urgency", "URG"},
    {"state", "STATE"},
    {"state_single", "S"},
    {"name", "NAME"},
    {"ntasks", "NTASKS"},
    {"nnodes", "NNODES"},
    {"nodelist", "NODELIST"},
    {"status", "STATUS"},
    {"status_abbrev", "ST"},
    {"result", "RESULT"},
    {"result_abbrev", "RS"},
    {"returncode", "RC"},
    {"exit_code", "EXIT"},
    {"contextual_time", "TIME"},
    {"t_submit", "T_SUBMIT"},
    {"t_inactive", "T_INACTIVE"},
    {"exception.occurred", "EXCEPTION-OCCURRED"},
    {"exception.type", "EXCEPTION-TYPE"},
    {"exception.note", "EXCEPTION-NOTE"},
};

// What `gantry jobs` prints without --format.
constexpr std::string_view kDefaultJobsFormat =
    "{id:>5} {username:<8} {name:<10} {status_abbrev:>2} {ntasks:>6} {contextual_time:>8} "
    "{exit_code:>4}";

// The value of one --format field of a job's summary.
std::string job_field(const Json& job, const std::string& field, double now) {
    const bool inactive = is_inactive(job);
    if (field == "id" || field == "userid" || field == "urgency")
        return number_text(job, field);
    if (field == "username")
        return user_name(userid_of(job));
    if (field == "state")
        return string_field(job, "state");
    if (field == "state_single") {
        const std::string state = state_abbreviation(job);
        return inactive ? "I" : state;
    }
    if (field == "name")
        return string_field(job, "name");
    if (field == "ntasks")
        return ntasks_text(job);
    if (field == "nnodes")
        return number_field(job, "nnodes") > 0 ? number_text(job, "nnodes") : "";
    if (field == "nodelist")
        return string_field(job, "nodelist");
    if (field == "status")
        return inactive ? upper_case(to_string(result_of(job))) : string_field(job, "state");
    if (field == "status_abbrev")
        return state_abbreviation(job);
    if (field == "result")
        return inactive ? upper_case(to_string(result_of(job))) : "";
    if (field == "result_abbrev")
        return inactive ? state_abbreviation(job) : "";
    if (field == "returncode" || field == "exit_code")
        return inactive ? number_text(job, "exit_code") : "";
    if (field == "contextual_time")
        return time_text(job, now);
    if (field == "t_submit")
        return printf_text("%.6f", number_field(job, "submit_time"));
    if (field == "t_inactive")
        return inactive ? printf_text("%.6f", number_field(job, "state_time")) : "";
    const Json* exception = exception_of(job);
    if (field == "exception.occurred")
        return exception ? "True" : "False";
    if (field == "exception.type")
        return exception ? string_field(*exception, "type") : "";
    if (field == "exception.note")
        return exception ? string_field(*exception, "note") : "";
    return "";
}

void print_jobs(const Json& jobs, const OutputFormat& format, bool header) {
    const std::vector<std::string> fields = format.fields();
    const double now = epoch_seconds();
    std::vector<std::vector<std::string>> rows;
    for (const Json& job : jobs) {
        std::vector<std::string>& row = rows.emplace_back();
        for (const std::string& field : fields)
            row.push_back(job_field(job, field, now));
    }
    format.print(std::cout, rows, header);
}

// --- gantry info ------------------------------------------------------------------

void print_field(std::string_view label, const std::string& value) {
    std::cout << label << std::string(label.size() < 11 ? 11 - label.size() : 1, ' ') << value
              << '\n';
}

// A word as a shell reads it back: quoted when it has more than letters,
// digits and harmless punctuation.
std::string shell_word(const std::string& word) {
    constexpr std::string_view kPlain =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
    if (!word.empty() && word.find_first_not_of(kPlain) == std::string::npos)
        return word;
    std::string quoted = "'";
    for (const char c : word)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// The apps' command lines as `gantry run` takes them: `-n 4 ./a : -n 1 ./b`.
std::string command_text(const Json& jobspec) {
    std::string text;
    const auto apps = jobspec.find("apps");
    if (apps == jobspec.end() || !apps->is_array())
        return "-";
    for (const Json& app : *apps) {
        if (!text.empty())
            text += " : ";
        if (const auto ntasks = app.find("ntasks");
            ntasks != app.end() && ntasks->is_number() && *ntasks != 0)
            text += "-n " + to_compact(*ntasks) + ' ';
        std::string words;
        for (const Json& word : app.value("command", Json::array()))
            words += (words.empty() ? "" : " ") +
                     shell_word(word.is_string() ? word.get<std::string>() : to_compact(word));
        text += words;
    }
    return text;
}

// R in its short form when it is an R, else as given.
std::string resources_text(const Json& R) {
    if (R.is_null())
        return "-";
    if (auto set = ResourceSet::from_json(R); set && !set->empty())
        return set->short_form();
    return R.is_string() ? R.get<std::string>() : to_compact(R);
}

// Each wait status with the ranks that ended so, by first rank:
// `0-2      exited with exit code 0`.
void print_task_exits(const Json& exits) {
    std::map<int, IdSet> ranks_by_status;
    for (const Json& exit : exits) {
        const auto rank = exit.find("rank");
        const auto status = exit.find("wait_status");
        if (rank != exit.end() && rank->is_number_unsigned() && status != exit.end() &&
            status->is_number_integer())
            ranks_by_status[status->get<int>()].insert(rank->get<IdSet::Id>());
    }
    std::vector<std::pair<IdSet, int>> groups;
    for (auto& [status, ranks] : ranks_by_status)
        groups.emplace_back(std::move(ranks), status);
    std::sort(groups.begin(), groups.end(),
              [](const auto& a, const auto& b) { return a.first.first() < b.first.first(); });
    std::size_t width = 8;
    std::vector<std::string> labels;
    for (const auto& group : groups) {
        labels.push_back(group.first.encode());
        width = std::max(width, labels.back().size() + 1);
    }
    for (std::size_t k = 0; k < groups.size(); ++k)
        std::cout << "  " << labels[k] << std::string(width - labels[k].size(), ' ')
                  << shell::describe_end(groups[k].second) << '\n';
}

void print_info(std::uint64_t id, const Json& info) {
    print_field("id", number_text(info, "id"));
    print_field("name", string_field(info, "name"));
    const std::uint32_t uid = userid_of(info);
    print_field("user", user_name(uid) + " (uid " + std::to_string(uid) + ")");
    print_field("state", string_field(info, "state"));
    if (is_inactive(info)) {
        print_field("result", std::string(to_string(result_of(info))));
        print_field("exit-code", number_text(info, "exit_code"));
    }
    if (const Json* exception = exception_of(info)) {
        // "job 7: exception: TYPE: NOTE" without its "job 7: exception: ".
        const std::string text = exception_text(id, *exception);
        print_field("exception", text.substr(text.find(": exception: ") + 13));
    }
    print_field("urgency", number_text(info, "urgency"));
    print_field("ntasks", ntasks_text(info));
    print_field("submitted", iso_time(number_field(info, "submit_time")));
    const Json jobspec = info.value("jobspec", Json::object());
    print_field("command", command_text(jobspec));
    print_field("R", resources_text(info.value("R", Json())));
    const Json taskmap = info.value("taskmap", Json());
    print_field("taskmap", taskmap.is_null()     ? std::string("-")
                           : taskmap.is_string() ? taskmap.get<std::string>()
                                                 : to_compact(taskmap));
    if (const auto exits = info.find("task_exits");
        exits != info.end() && exits->is_array() && !exits->empty()) {
        std::cout << "tasks\n";
        print_task_exits(*exits);
    }
    std::cout << "eventlog\n";
    EventPrinter events(TimeFormat::kOffset);
    for (const Json& event : info.value("eventlog", Json::array()))
        std::cout << "  " << events.line(event) << '\n';
    std::cout << "jobspec\n  " << to_compact(jobspec) << '\n';
}

}  // namespace

int jobs_main(int argc, char** argv) {
    CLI::App app("List an instance's jobs.", "jobs");
    app.footer(std::string(kJobsExamples));
    std::optional<std::string> uri_option;
    bool all = false, json = false, no_header = false;
    bool all_users = false;
    std::optional<std::string> state_text, name, user, format_text;
    std::size_t count = 0;
    add_uri_option(app, uri_option);
    auto* all_option = app.add_flag("-a,--all", all, "List jobs in every state, inactive too");
    auto* all_users_option = app.add_flag("-A,--all-users", all_users,
                                          "List every user's jobs in every state (-a --user=all)");
    app.add_option("-f,--filter,--state", state_text,
                   "List jobs in these states only (comma-separated; see below)")
        ->type_name("STATES")
        ->excludes(all_option)
        ->excludes(all_users_option);
    app.add_option("-u,--user", user,
                   "List this user's jobs (a name, a uid, or all; default: yours)")
        ->type_name("USER")
        ->excludes(all_users_option);
    app.add_option("-o,--format", format_text,
                   "Print these fields, as flux jobs spells them: {id:>5} {name:<10} (see below)")
        ->type_name("FORMAT");
    app.add_option("--name", name, "List the jobs of this name only")->type_name("NAME");
    app.add_option("-c,--count", count, "List this many jobs at most (the newest)")
        ->type_name("N")
        ->check(needs_positive_number());
    app.add_flag("--json", json, "Print each job's summary as one line of JSON");
    app.add_flag("-n,--no-header", no_header, "Leave the header line out");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const auto format = OutputFormat::parse(
        "jobs", format_text ? std::string_view(*format_text) : kDefaultJobsFormat, kJobFields);
    if (!format)
        return fail(format.error());
    if (format_text && json)
        return fail("jobs", "--format and --json do not go together");

    Json params = Json::object();
    if (state_text) {
        auto states = job_states_of("jobs", "--state", *state_text);
        if (!states)
            return fail(states.error());
        params["states"] = *states;
    } else if (!all && !all_users) {
        params["states"] = *job_states_of("jobs", "--state", "active");
    }
    const auto userid = user_of("jobs", all_users ? std::optional<std::string>("all") : user);
    if (!userid)
        return fail(userid.error());
    if (*userid)
        params["userid"] = **userid;
    if (name)
        params["name"] = *name;
    if (count > 0)
        params["limit"] = count;

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("job.list", params);
    if (!reply)
        return runtime_failure(reply.error());
    const Json jobs = reply->value("jobs", Json::array());
    if (json) {
        for (const Json& job : jobs)
            std::cout << to_compact(job) << '\n';
    } else {
        print_jobs(jobs, *format, !no_header);
    }
    std::cout.flush();
    return kExitOk;
}

int info_main(int argc, char** argv) {
    CLI::App app(
        "Print what an instance knows of a job: its summary, command, R, task map, tasks' "
        "exits, eventlog and jobspec.",
        "info");
    app.footer(std::string(kInfoExamples));
    std::optional<std::string> uri_option;
    std::string id_text;
    bool json = false;
    add_uri_option(app, uri_option);
    app.add_option("ID", id_text, "The job's id")->required();
    app.add_flag("--json", json, "Print the job.info reply as one line of JSON");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const auto id = parse_job_id("info", id_text);
    if (!id)
        return fail(id.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    const auto reply = client->call("job.info", {{"id", *id}});
    if (!reply)
        return runtime_failure(reply.error());
    if (json)
        std::cout << to_compact(*reply) << '\n';
    else
        print_info(*id, *reply);
    std::cout.flush();
    return kExitOk;
}

int eventlog_main(int argc, char** argv) {
    CLI::App app("Print a job's events, one a line, or follow them as they come.", "eventlog");
    app.footer(std::string(kEventlogExamples));
    std::optional<std::string> uri_option;
    std::string id_text;
    bool follow = false, json = false;
    add_uri_option(app, uri_option);
    app.add_option("ID", id_text, "The job's id")->required();
    app.add_flag("-f,--follow", follow, "Print events as they come, until the job's last (clean)");
    std::string format_name = "offset";
    app.add_option("-T,--time-format", format_name,
                   "offset: seconds since the job's submit (default); iso: UTC date and time; "
                   "raw: seconds since the epoch")
        ->type_name("FORMAT")
        ->check(needs_one_of({"offset", "iso", "raw"}));
    app.add_flag("--json", json, "Print each event as the broker gives it, one JSON line each");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    const TimeFormat format = format_name == "iso"   ? TimeFormat::kIso
                              : format_name == "raw" ? TimeFormat::kRaw
                                                     : TimeFormat::kOffset;
    const auto id = parse_job_id("eventlog", id_text);
    if (!id)
        return fail(id.error());

    int exit_code = kExitOk;
    auto client = connect_instance(uri_option, exit_code);
    if (!client)
        return exit_code;
    EventPrinter printer(format);
    const auto print = [&](const Json& reply) {
        for (const Json& event : reply.value("events", Json::array()))
            std::cout << (json ? to_compact(event) : printer.line(event)) << '\n';
        std::cout.flush();  // followed events as they come
    };
    const auto reply = client->call("job.eventlog", {{"id", *id}, {"follow", follow}}, print);
    if (!reply)
        return waiting_failure(*client, reply.error(), client->last_error_type());
    print(*reply);
    return kExitOk;
}

}  // namespace gantry::cli
