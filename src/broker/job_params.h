// Reading a job method's params, with errors that name the method and the
// param: `job.list: "limit" is string, expected an integer`.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "broker/store.h"
#include "overlay/message.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// --- Parameters ----------------------------------------------------------------

inline Error param_error(const overlay::Message& request, const std::string& message) {
    return Error(request.method, message);
}

inline Result<JobId> id_param(const overlay::Message& request) {
    const auto found = request.params.find("id");
    if (found == request.params.end())
        return param_error(request, "\"id\" is missing");
    if (!found->is_number_unsigned() || found->get<std::uint64_t>() == 0)
        return param_error(request, "\"id\" must be a positive integer");
    return found->get<JobId>();
}

inline Result<bool> bool_param(const overlay::Message& request, const char* key) {
    const auto found = request.params.find(key);
    if (found == request.params.end())
        return false;
    if (!found->is_boolean())
        return param_error(request, "\"" + std::string(key) + "\" is " + json_type_name(*found) +
                                        ", expected a boolean");
    return found->get<bool>();
}

inline Result<std::int64_t> int_param(const overlay::Message& request, const char* key,
                                      std::int64_t fallback) {
    const auto found = request.params.find(key);
    if (found == request.params.end())
        return fallback;
    if (!found->is_number_integer())
        return param_error(request, "\"" + std::string(key) + "\" is " + json_type_name(*found) +
                                        ", expected an integer");
    return found->get<std::int64_t>();
}

// "states": RFC 21 names, the jobs in any of them; none: any state.
inline Result<std::vector<JobState>> states_param(const overlay::Message& request) {
    std::vector<JobState> states;
    const auto found = request.params.find("states");
    if (found == request.params.end())
        return states;
    if (!found->is_array())
        return param_error(request, "\"states\" must be an array of names");
    for (const Json& name : *found) {
        const auto state =
            name.is_string() ? parse_job_state(name.get<std::string>()) : std::nullopt;
        if (!state)
            return param_error(request, "unknown state " + to_compact(name) +
                                            " (NEW, DEPEND, SCHED, RUN, CLEANUP, INACTIVE)");
        states.push_back(*state);
    }
    return states;
}

// "userid": the jobs of that user; none: every user's.
inline Result<std::optional<std::uint32_t>> uid_param(const overlay::Message& request) {
    const auto found = request.params.find("userid");
    if (found == request.params.end())
        return std::optional<std::uint32_t>();
    if (!found->is_number_unsigned() ||
        found->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
        return param_error(request, "\"userid\" must be a uid");
    return std::optional<std::uint32_t>(found->get<std::uint32_t>());
}

inline Error no_such_job(JobId id) {
    return Error("job " + std::to_string(id), "no such job");
}

}  // namespace gantry::broker
