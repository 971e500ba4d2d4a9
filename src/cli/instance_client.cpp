#include "cli/instance_client.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "broker/store.h"

#include "cli/command.h"
#include "util/text.h"

namespace gantry::cli {

// Job states as the record store names them.
using broker::JobState;
using broker::parse_job_state;

// --- The instance ------------------------------------------------------------

CLI::Option* add_uri_option(CLI::App& app, std::optional<std::string>& uri) {
    return app.add_option("--uri", uri, "The instance's URI (default: $GANTRY_URI)")
        ->type_name("URI");
}

std::optional<std::string> instance_uri(const std::optional<std::string>& option, int& exit_code) {
    auto uri = option ? Result<std::string>(*option) : overlay::Client::default_uri();
    if (!uri) {
        exit_code = fail(uri.error());
        return std::nullopt;
    }
    if (auto path = overlay::socket_path_of(*uri); !path) {
        exit_code = fail(Error::in(option ? "--uri" : std::string(overlay::kUriVariable),
                                   "expected unix:///PATH/TO/SOCKET", *uri));
        return std::nullopt;
    }
    return *uri;
}

Status check_for_instance(const Jobspec& spec, std::string_view domain) {
    const auto refusal = instance_refusal(spec);
    if (!refusal)
        return {};
    using Reason = InstanceRefusal::Reason;
    const std::string app = "app " + std::to_string(refusal->app);
    switch (refusal->reason) {
        case Reason::kSimulatedTopology:
            return Error(std::string(domain), "--topology simulates nodes, where nothing can run");
        case Reason::kAppWithoutNtasks:
            return Error(std::string(domain), app +
                                                  " has no -n: every app of an MPMD program "
                                                  "needs one inside an instance");
    }
    return {};
}

int runtime_failure(const Error& error) {
    fail(error);
    return kExitRuntime;
}

std::optional<overlay::Client> connect_instance(const std::optional<std::string>& uri_option,
                                                int& exit_code) {
    const auto uri = instance_uri(uri_option, exit_code);
    if (!uri)
        return std::nullopt;
    auto client = overlay::Client::connect(*uri);
    if (!client) {
        exit_code = runtime_failure(client.error());
        return std::nullopt;
    }
    return std::move(*client);
}

// --- Jobs ----------------------------------------------------------------------

std::string string_field(const Json& object, std::string_view key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::string number_text(const Json& object, std::string_view key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_number() ? to_compact(*found) : "-";
}

int waiting_failure(const overlay::Client& client, const Error& error,
                    std::string_view error_type) {
    runtime_failure(error);
    return client.lost_connection() || error_type == overlay::kShutdownError ? kExitInstanceGone
                                                                             : kExitRuntime;
}

Result<std::vector<std::string>> job_states_of(std::string_view domain, std::string_view option,
                                               std::string_view text) {
    static const std::map<std::string, std::vector<JobState>, std::less<>> kGroups = {
        {"pending", {JobState::kNew, JobState::kDepend, JobState::kSched}},
        {"running", {JobState::kRun, JobState::kCleanup}},
        {"active",
         {JobState::kNew, JobState::kDepend, JobState::kSched, JobState::kRun, JobState::kCleanup}},
    };
    std::vector<JobState> states;
    for (std::size_t start = 0; start <= text.size();) {
        auto comma = text.find(',', start);
        if (comma == std::string_view::npos)
            comma = text.size();
        const std::string word = lower_case(text.substr(start, comma - start));
        if (const auto group = kGroups.find(word); group != kGroups.end())
            states.insert(states.end(), group->second.begin(), group->second.end());
        else if (const auto state = parse_job_state(upper_case(word)))
            states.push_back(*state);
        else
            return Error(std::string(domain),
                         std::string(option) + ": unknown state " + quote(word) +
                             " (new, depend, sched, run, cleanup, inactive, pending, running, "
                             "active)");
        start = comma + 1;
    }
    std::sort(states.begin(), states.end());
    states.erase(std::unique(states.begin(), states.end()), states.end());
    std::vector<std::string> names;
    for (const JobState state : states)
        names.emplace_back(to_string(state));
    return names;
}

Result<std::optional<std::uint32_t>> user_of(std::string_view domain,
                                             const std::optional<std::string>& text) {
    if (!text)
        return std::optional<std::uint32_t>(::getuid());
    if (*text == "all")
        return std::optional<std::uint32_t>();
    if (const passwd* entry = ::getpwnam(text->c_str()))
        return std::optional<std::uint32_t>(entry->pw_uid);
    std::uint32_t uid = 0;
    const char* end = text->data() + text->size();
    if (const auto [ptr, ec] = std::from_chars(text->data(), end, uid);
        ec == std::errc() && ptr == end && !text->empty())
        return std::optional<std::uint32_t>(uid);
    return Error(std::string(domain), "--user: no such user " + quote(*text));
}

Result<std::uint64_t> parse_job_id(std::string_view domain, std::string_view text) {
    std::uint64_t id = 0;
    const char* end = text.data() + text.size();
    // from_chars alone would take a leading '-' and stop at trailing junk.
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == text.npos;
    if (!digits || std::from_chars(text.data(), end, id).ec != std::errc())
        return Error(std::string(domain), "bad job id " + quote(text));
    if (id == 0)
        return Error(std::string(domain), "bad job id \"0\" (ids start at 1)");
    return id;
}

const Json* exception_of(const Json& summary) {
    const auto found = summary.find("exception");
    return found != summary.end() && found->is_object() ? &*found : nullptr;
}

std::optional<int> exit_code_of(const Json& summary) {
    const auto found = summary.find("exit_code");
    if (found == summary.end() || !found->is_number_integer())
        return std::nullopt;
    return found->get<int>();
}

JobResult result_of(const Json& summary) {
    if (const Json* exception = exception_of(summary))
        return string_field(*exception, "type") == "cancel" ? JobResult::kCanceled
                                                            : JobResult::kFailed;
    return exit_code_of(summary) == 0 ? JobResult::kCompleted : JobResult::kFailed;
}

std::string_view to_string(JobResult result) {
    switch (result) {
        case JobResult::kCompleted:
            return "completed";
        case JobResult::kFailed:
            return "failed";
        case JobResult::kCanceled:
            return "canceled";
    }
    return "failed";
}

int command_exit_code(const Json& summary) {
    return exit_code_of(summary).value_or(kExitRuntime);
}

std::string exception_text(std::uint64_t id, const Json& exception) {
    std::string text =
        "job " + std::to_string(id) + ": exception: " + string_field(exception, "type");
    if (const std::string note = string_field(exception, "note"); !note.empty())
        text += ": " + note;
    return text;
}

}  // namespace gantry::cli
