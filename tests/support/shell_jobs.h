// Jobs and supervised-shell records as the shell layer's tests build them.
// Header-only: only those tests link the shell library.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shell/records.h"
#include "shell/shell.h"

namespace gantry::test {

// Task `rank`: `sh -c script` with a plain PATH and RANK set.
inline shell::Task sh_task(std::uint32_t rank, const std::string& script) {
    shell::Task task;
    task.rank = rank;
    task.argv = {"sh", "-c", script};
    task.env = {"PATH=/usr/bin:/bin", "RANK=" + std::to_string(rank)};
    return task;
}

// A job of one sh script per rank, on node0, stdin from /dev/null.
inline shell::Job sh_job(const std::vector<std::string>& scripts) {
    shell::Job job;
    job.id = "job1";
    job.hostname = "node0";
    for (std::size_t rank = 0; rank < scripts.size(); ++rank)
        job.tasks.push_back(sh_task(static_cast<std::uint32_t>(rank), scripts[rank]));
    job.app_commands = {"sh"};
    job.input.source = shell::Input::Source::kNone;
    return job;
}

// The records a supervised shell sends, one maker per kind.
inline shell::records::Record output(shell::records::Record::Kind kind, std::uint32_t rank,
                                     std::string bytes) {
    return {.kind = kind, .rank = rank, .wait_status = 0, .bytes = std::move(bytes)};
}
inline shell::records::Record message(std::string line) {
    return {.kind = shell::records::Record::Kind::kMessage,
            .rank = 0,
            .wait_status = 0,
            .bytes = std::move(line)};
}
inline shell::records::Record started() {
    return {
        .kind = shell::records::Record::Kind::kStarted, .rank = 0, .wait_status = 0, .bytes = {}};
}
inline shell::records::Record exit_of(std::uint32_t rank, int wait_status) {
    return {.kind = shell::records::Record::Kind::kExit,
            .rank = rank,
            .wait_status = wait_status,
            .bytes = {}};
}

}  // namespace gantry::test
