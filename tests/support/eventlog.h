// A job's eventlog as tests compare it: whole and in order, so that an event
// out of place, missing or one too many fails the test, where looking for
// one event would not. Header-only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_command.h"

namespace gantry::test {

// The names of the events of a job's record (job.info's reply, or
// `gantry info --json`'s), in their order.
inline std::vector<std::string> event_names(const nlohmann::json& job) {
    std::vector<std::string> names;
    for (const nlohmann::json& event : job.value("eventlog", nlohmann::json::array()))
        names.push_back(event.at("name").get<std::string>());
    return names;
}

// The time of the job's first event called `name`, for an order across the
// eventlogs of two jobs (seq counts each job's events on their own); -1
// when it has none.
inline double event_time(const nlohmann::json& job, const std::string& name) {
    for (const nlohmann::json& event : job.value("eventlog", nlohmann::json::array()))
        if (event.at("name") == name)
            return event.at("time").get<double>();
    return -1;
}

// The lines of `gantry eventlog`'s text without their times, contexts kept:
// `exec.end ranks="0" status=0`.
inline std::vector<std::string> untimed_events(const std::string& eventlog_text) {
    std::vector<std::string> events;
    for (const std::string& line : lines_of(eventlog_text))
        events.push_back(line.substr(line.find(' ') + 1));
    return events;
}

}  // namespace gantry::test
