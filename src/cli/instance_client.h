// What the commands that talk to an instance share: which instance (--uri,
// else GANTRY_URI), how its failures end a command, job ids as users type
// them, and what a job's summary (src/broker/jobs.h) says about its end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "formats/jobspec.h"
#include "overlay/client.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::cli {

// --- The instance ------------------------------------------------------------

// The --uri option of every command that talks to an instance.
CLI::Option* add_uri_option(CLI::App& app, std::optional<std::string>& uri);

// Where to connect: --uri, else GANTRY_URI. Problems here are the user's:
// the message is printed and `exit_code` set to kExitUsage.
std::optional<std::string> instance_uri(const std::optional<std::string>& option, int& exit_code);

// A connection to the instance --uri or $GANTRY_URI names; else the exit
// code of the failure, its message printed.
std::optional<overlay::Client> connect_instance(const std::optional<std::string>& uri_option,
                                                int& exit_code);

// What an instance cannot take of the job a command line describes, in the
// options' words (the broker says it in the jobspec's): `DOMAIN: -H and
// --hostfile name hosts; inside an instance the scheduler chooses them
// (give -N, -n, -c, -g)`. Checked before the job is sent.
Status check_for_instance(const Jobspec& spec, std::string_view domain);

// Errors of the instance or of reaching it (the broker's replies such as
// "job 7: no such job" included): printed, kExitRuntime returned.
int runtime_failure(const Error& error);

// EX_UNAVAILABLE of sysexits.h: the instance shut down, or the connection
// to it was lost, before the job a command waited for had ended.
inline constexpr int kExitInstanceGone = 69;

// The end of a command that waited on `client` for a job's end and got
// `error` (a reply's error of type `error_type`, or a failure to receive):
// the message printed, then kExitInstanceGone when the instance shut down or
// the connection was lost, else kExitRuntime.
int waiting_failure(const overlay::Client& client, const Error& error,
                    std::string_view error_type = {});

// --- Jobs ----------------------------------------------------------------------

// The string at `key` of a reply's object; empty when absent or not a
// string (a reply is read, never trusted to have every key).
std::string string_field(const Json& object, std::string_view key);
// The number at `key` as digits; "-" when absent or not a number.
std::string number_text(const Json& object, std::string_view key);

// The RFC 21 state names ("RUN") of a comma-separated list of states as
// users type them: new, depend, sched, run, cleanup, inactive, and the
// groups pending, running and active, in any case. Sorted, each once. Else
// `DOMAIN: OPTION: unknown state "x" (...)`.
Result<std::vector<std::string>> job_states_of(std::string_view domain, std::string_view option,
                                               std::string_view text);

// The uid a --user value names, as flux reads it: a user name, a uid, or
// `all` (none: every user's jobs); not given: the caller's uid. Else
// `DOMAIN: --user: no such user "x"`.
Result<std::optional<std::uint32_t>> user_of(std::string_view domain,
                                             const std::optional<std::string>& text);

// A job id: decimal digits, not 0. Else `DOMAIN: bad job id "x"`.
Result<std::uint64_t> parse_job_id(std::string_view domain, std::string_view text);

// How an inactive job ended, by flux's names: completed (exit code 0, no
// exception), canceled (a `cancel` exception), failed (anything else).
enum class JobResult { kCompleted, kFailed, kCanceled };
JobResult result_of(const Json& summary);
std::string_view to_string(JobResult result);  // "completed", "failed", "canceled"

// The summary's exit code; none when the job never ran (canceled while
// pending, a dependency failed, lost) or has not ended.
std::optional<int> exit_code_of(const Json& summary);

// The exit status of a command that waited for the job: its exit code, or
// 1 when it has none.
int command_exit_code(const Json& summary);

// `job 7: exception: cancel: NOTE` (no `: NOTE` when the note is empty),
// for an exception {"type","note"} of an event or a summary.
std::string exception_text(std::uint64_t id, const Json& exception);

// The summary's exception, when it has one.
const Json* exception_of(const Json& summary);

}  // namespace gantry::cli
