#include "broker/job_manager.h"

#include <signal.h>

#include <algorithm>

#include "broker/job_params.h"
#include "mapper/jobspec_map.h"
#include "mapper/resources.h"
#include "shell/exit_status.h"
#include "shell/map_inputs.h"
#include "shell/map_io.h"
#include "shell/records.h"
#include "util/base64.h"
#include "util/duration.h"

namespace gantry::broker {

namespace {

// Stdin a front end may send before the job's tasks have started.
constexpr std::size_t kEarlyStdinBytes = std::size_t{16} << 20;

// The part of `R` that `map`'s tasks hold (node i of the map is R's i-th
// rank): what a later exec of the same program may not take.
ResourceSet held_part(const JobMap& map, const ResourceSet& R) {
    std::vector<ResourceSet::Rank> ranks;
    for (const auto& [rank, target] : R.targets())
        ranks.push_back(rank);
    ResourceSet held;
    const ResourceSet used = job_resources(map);
    for (const auto& [node, target] : used.targets())
        if (node < ranks.size())
            (void)held.insert(ranks[node],
                              Target{R.find(ranks[node])->hostname, target.cores, target.gpus});
    return held;
}

// The task map of a job's execs together, in the order they ran. RFC 34
// numbers a job's nodes by their place among its ranks; a program's R
// changes as it grows and shrinks, so here the ranks are all those any of
// its execs was mapped onto.
TaskMap combined_task_map(const std::vector<ExecMap>& execs) {
    if (execs.size() == 1)
        return execs.front().map;
    IdSet all;
    for (const ExecMap& exec : execs)
        all |= exec.ranks;
    TaskMap combined;
    for (const ExecMap& exec : execs)
        for (const TaskMap::Block& block : exec.map.blocks())
            for (std::uint32_t pass = 0; pass < block.repeat; ++pass)
                for (std::uint32_t k = 0; k < block.nnodes; ++k) {
                    const auto rank = exec.ranks.nth(block.nodeid + k);
                    const auto node = rank ? all.index_of(*rank) : std::nullopt;
                    if (node)  // always: the map's nodes are the ranks it was given
                        (void)combined.append(static_cast<TaskMap::NodeId>(*node), 1, block.ppn);
                }
    return combined;
}

}  // namespace

// An allocated job (SCHED -> RUN): its apps run inside R as one exec.
void JobManager::Impl::start(Active& job, const ResourceSet& R) {
    job.R = R;
    {
        auto transaction = store.transaction();
        check(store.append_event(job.id, epoch_seconds(), "alloc"));
        check(store.set_state(job.id, JobState::kRun, epoch_seconds()));
        check(store.set_R(job.id, R.encode()));
        if (transaction)
            check(transaction->commit());
    }
    job.state = JobState::kRun;
    touch(job.id);
    job.pending_apps = job.spec.apps;
    if (auto started = exec(job); !started)
        raise(job, "exec", started.error().str());
}

// Starts the pending apps' tasks in one shell, inside the job's R.
// Returns the ranks they got in the job.
Result<IdSet> JobManager::Impl::exec(Active& job) {
    if (job.pending_apps.empty())
        return Error("job " + std::to_string(job.id), "has no tasks to start (job.map first)");
    if (!job.R || job.R->empty())
        return Error("job " + std::to_string(job.id), "has no resources (job.grow first)");
    // Tasks of an earlier exec keep their cores: this one gets the rest.
    ResourceSet free = *job.R;
    for (const auto& run : job.execs)
        free = free.diff(run->R);
    if (free.empty())
        return Error("job " + std::to_string(job.id),
                     "has no free resources: its running tasks hold them all (job.grow first)");
    Jobspec spec = job.spec;
    spec.apps = std::exchange(job.pending_apps, {});
    const Jobspec placed = placed_jobspec(std::move(spec), free);
    const MapInputs inputs = map_inputs(placed);
    auto map = map_jobspec(placed, inputs, free);
    if (!map)
        return map.error();  // the apps are dropped: the caller maps again
    show_display(job, placed, *map);
    const auto ntasks = static_cast<std::uint32_t>(map->tasks.size());
    const TaskMap exec_map = task_map(*map);
    job.exec_maps.push_back({exec_map, free.ranks()});
    const std::string taskmap = combined_task_map(job.exec_maps).to_json();
    check(job.manual ? store.replace_taskmap(job.id, taskmap) : store.set_taskmap(job.id, taskmap));
    auto run = std::make_unique<Exec>();
    run->first_rank = job.next_rank;
    run->R = held_part(*map, free);
    const Exec* key = run.get();
    const JobId id = job.id;
    const std::uint32_t first_rank = run->first_rank;
    ExecEvents events{
        [this, id, key] { on_started(id, key); },
        // The whole R goes back when the job ends (CLEANUP): a rank's part
        // is not handed back alone yet.
        [](std::uint32_t) {},
        [this, id](std::string_view type, const Error& error) {
            if (const auto job = active.find(id); job != active.end())
                raise(job->second, std::string(type),
                      type == "exec" ? "the job shell failed: " + error.str() : error.str());
        },
        [this, id, key](int wait_status) { on_finished(id, key, wait_status); },
        [this, id, first_rank](const ShellOutput& output) { on_output(id, first_rank, output); },
        [this, id, first_rank](const TaskEnd& end) {
            if (const auto job = active.find(id); job != active.end())
                job->second.task_exits.push_back({first_rank + end.task_rank, end.wait_status});
        },
    };
    auto execution = exec_service->start(
        ExecRequest{job.id, free, placed.to_json(), shell::map_inputs_to_json(inputs)}, events);
    if (!execution)
        return execution.error();
    run->execution = std::move(*execution);
    const IdSet ranks = IdSet::range(job.next_rank, job.next_rank + ntasks - 1);
    run->ranks = ranks.encode();
    job.next_rank += ntasks;
    if (job.manual)
        post_event(
            job, "exec",
            {{"ranks", ranks.encode()}, {"taskmap", *parse_json("taskmap", exec_map.to_json())}});
    Execution& started = *run->execution;
    job.execs.push_back(std::move(run));
    if (!job.early_stdin.empty())
        (void)started.write_stdin(std::exchange(job.early_stdin, {}));
    if (job.early_eof)
        started.close_stdin();
    if (job.terminating)  // canceled while starting
        started.terminate();
    return ranks;
}

// What --display asks to see of the map comes first in the job's
// output, as PRRTE prints it before the tasks' (a failure on stderr).
void JobManager::Impl::show_display(const Active& job, const Jobspec& placed, const JobMap& map) {
    if (placed.job.display.empty())
        return;
    const DisplayOutput output =
        display_output(placed, map, DisplayOptions{"gantry@" + std::to_string(job.id)});
    if (auto written = shell::write_display_files(output); written)
        check(store.append_output(job.id, OutputStream::kStdout, kShellRank, output.text));
    else
        check(store.append_output(job.id, OutputStream::kStderr, kShellRank,
                                  "gantry: " + written.error().str() + "\n"));
}

void JobManager::Impl::on_output(JobId id, std::uint32_t first_rank, const ShellOutput& output) {
    if (!active.contains(id))
        return;
    switch (output.kind) {
        case ShellOutput::Kind::kStdout:
        case ShellOutput::Kind::kStderr:
            check(store.append_output(id,
                                      output.kind == ShellOutput::Kind::kStdout
                                          ? OutputStream::kStdout
                                          : OutputStream::kStderr,
                                      first_rank + output.task_rank, output.bytes));
            break;
        case ShellOutput::Kind::kMessage:
            check(store.append_output(id, OutputStream::kStderr, kShellRank, output.bytes));
            break;
    }
    touch(id);
}

// Each execution's `start` comes once, when the shells of all its ranks
// have started their tasks (a program made by job.new has one per exec).
// A program's job.exec is answered then, so that its next step finds the
// tasks running.
void JobManager::Impl::on_started(JobId id, const Exec* started) {
    const auto found = active.find(id);
    if (found == active.end())
        return;
    post_event(found->second, "start");
    for (const auto& run : found->second.execs)
        if (run.get() == started && run->exec_reply) {
            run->exec_reply->result({{"ranks", run->ranks}});
            run->exec_reply.reset();
        }
}

void JobManager::Impl::on_finished(JobId id, const Exec* ended, int wait_status) {
    const auto found = active.find(id);
    if (found == active.end())
        return;
    Active& job = found->second;
    std::string ended_ranks;
    for (const auto& run : job.execs)
        if (run.get() == ended) {
            ended_ranks = run->ranks;
            if (run->exec_reply)
                run->exec_reply->error(
                    Error("job " + std::to_string(id),
                          "exec of ranks " + run->ranks + " ended before its tasks started"));
        }
    std::erase_if(job.execs, [ended](const auto& run) { return run.get() == ended; });
    if (!job.finish_status || shell::exit_code_of(*job.finish_status) == 0)
        job.finish_status = wait_status;
    if (job.manual && !job.terminating)
        post_event(job, "exec.end", {{"ranks", ended_ranks}, {"status", wait_status}});
    answer_shrinks(job, ended);
    if (job.manual && !job.terminating)
        return;
    if (job.execs.empty())
        finish(job);
}

// The shrinks that were waiting for `ended` alone are answered.
void JobManager::Impl::answer_shrinks(Active& job, const Exec* ended) {
    for (auto& reply : job.shrink_replies)
        if (reply.ending.erase(ended) == 1 && reply.ending.empty())
            reply.responder.result(reply.result);
    std::erase_if(job.shrink_replies,
                  [](const ShrinkReply& reply) { return reply.ending.empty(); });
}

// Every exec has ended: the job's result is recorded, then it is cleaned up.
void JobManager::Impl::finish(Active& job) {
    std::sort(job.task_exits.begin(), job.task_exits.end(),
              [](const TaskExit& a, const TaskExit& b) { return a.rank < b.rank; });
    {
        auto transaction = store.transaction();
        check(store.flush());
        if (job.finish_status) {
            check(store.record_task_exits(job.id, job.task_exits));
            check(store.append_event(job.id, epoch_seconds(), "finish",
                                     {{"status", *job.finish_status}}));
            check(store.set_exit_code(job.id, shell::exit_code_of(*job.finish_status)));
        }
        check(store.set_state(job.id, JobState::kCleanup, epoch_seconds()));
        if (transaction)
            check(transaction->commit());
    }
    job.state = JobState::kCleanup;
    clean_up(job);
}

// CLEANUP: the job's R goes back, then INACTIVE.
void JobManager::Impl::clean_up(Active& job) {
    auto transaction = store.transaction();
    if (job.in_scheduler) {
        const bool allocated = scheduler.find_running(job.id) != nullptr;
        check(allocated ? scheduler.release(job.id) : scheduler.remove(job.id));
        job.in_scheduler = false;
        if (allocated)
            check(store.append_event(job.id, epoch_seconds(), "release",
                                     {{"ranks", "all"}, {"final", true}}));
    }
    if (job.lost_R)
        check(store.append_event(job.id, epoch_seconds(), "release",
                                 {{"ranks", "all"}, {"final", true}}));
    check(store.set_state(job.id, JobState::kCleanup, epoch_seconds()));
    check(store.append_event(job.id, epoch_seconds(), "clean"));
    check(store.set_state(job.id, JobState::kInactive, epoch_seconds()));
    if (transaction)
        check(transaction->commit());
    const JobId id = job.id;
    active.erase(id);  // `job` is gone from here on
    touch(id);
    schedule_soon();
    answer_waiters(id);
    release_dependents(id);
    if (on_stopped && none_running())
        std::exchange(on_stopped, nullptr)();
}

// Ends the job: its running tasks get SIGTERM (SIGKILL after the kill
// timeout) and it ends when its shells have; without any, at once.
void JobManager::Impl::terminate(Active& job) {
    job.terminating = true;
    if (job.execs.empty()) {
        finish(job);
        return;
    }
    for (const auto& run : job.execs)
        run->execution->terminate();
}

// A fatal exception: the job is terminated.
void JobManager::Impl::raise(Active& job, const std::string& type, const std::string& note,
                             std::uint32_t userid) {
    if (!job.exception)
        job.exception = type;
    post_event(job, "exception",
               {{"type", type}, {"severity", 0}, {"note", note}, {"userid", userid}});
    if (!job.terminating || job.execs.empty())
        terminate(job);
}

// A `cancel` exception from `uid`: a pending job never runs, a running
// one is terminated.
void JobManager::Impl::cancel(Active& job, std::uint32_t uid) {
    std::string note = "canceled by " + std::to_string(uid);
    if (!job.execs.empty())
        note += "; its tasks get SIGTERM, then SIGKILL after its kill timeout (" +
                format_duration(std::chrono::milliseconds(
                    static_cast<std::int64_t>(job.spec.attributes.kill_timeout * 1000))) +
                ")";
    raise(job, "cancel", note, uid);
}

bool JobManager::Impl::none_running() const {
    return std::none_of(active.begin(), active.end(),
                        [](const auto& entry) { return !entry.second.execs.empty(); });
}

void JobManager::Impl::register_exec_methods() {
    register_job_method({"job.stdin"}, [this](JobId id, const overlay::Message& request,
                                              Responder responder) {
        auto eof = bool_param(request, "eof");
        if (!eof) {
            responder.error(eof.error());
            return;
        }
        auto data = data_of(request.params);
        if (!data) {
            responder.error(param_error(request, data.error().message()));
            return;
        }
        std::string bytes = std::move(*data);
        Active* job = running_job(id, responder);
        if (!job)
            return;
        if (!job->execs.empty()) {
            // The first exec's tasks read it (rank 0, unless --input said otherwise).
            Execution& process = *job->execs.front()->execution;
            if (!bytes.empty())
                if (auto written = process.write_stdin(bytes); !written) {
                    responder.error(written.error());
                    return;
                }
            if (*eof)
                process.close_stdin();
            // The answer is the client's cue for more: stdin faster than
            // the tasks read it waits in the client's input, not here.
            process.when_stdin_room([responder]() mutable { responder.result(Json::object()); });
            return;
        } else {
            if (job->early_eof || job->early_stdin.size() + bytes.size() > kEarlyStdinBytes) {
                responder.error(Error("job " + std::to_string(id),
                                      job->early_eof ? "its stdin is closed"
                                                     : "over 16 MiB of stdin before it started"));
                return;
            }
            job->early_stdin += bytes;
            job->early_eof = *eof;
        }
        responder.result(Json::object());
    });

    register_job_method(
        {"job.kill", "job.signal"},  // RFC 8 calls it signal
        [this](JobId id, const overlay::Message& request, Responder responder) {
            auto number = int_param(request, "signal", SIGTERM);
            if (!number) {
                responder.error(number.error());
                return;
            }
            if (*number < 1 || *number > shell::records::kMaxSignal) {
                responder.error(param_error(request, "signal " + std::to_string(*number) +
                                                         " is not a signal number (1-64)"));
                return;
            }
            Active* job = running_job(id, responder);
            if (!job)
                return;
            if (job->execs.empty()) {
                responder.error(
                    Error("job " + std::to_string(id),
                          "is not running (" + std::string(to_string(job->state)) + ")"));
                return;
            }
            for (const auto& run : job->execs)
                run->execution->signal(static_cast<int>(*number));
            responder.result(Json::object());
        });

    register_job_method({"job.cancel"},
                        [this](JobId id, const overlay::Message&, Responder responder) {
                            Active* job = running_job(id, responder);
                            if (!job)
                                return;
                            responder.result(Json::object());
                            cancel(*job, responder.peer().uid);
                        });
    broker.register_method(
        "job.cancelall", [this](const overlay::Message& request, Responder responder) {
            auto states = states_param(request);
            if (!states) {
                responder.error(states.error());
                return;
            }
            auto userid = uid_param(request);
            if (!userid) {
                responder.error(userid.error());
                return;
            }
            auto dry_run = bool_param(request, "dry_run");
            if (!dry_run) {
                responder.error(dry_run.error());
                return;
            }
            // Chosen first, canceled after: a cancel can end other jobs at once
            // (those that depend on it), which are then no longer to be canceled.
            std::vector<JobId> chosen;
            for (const auto& [id, job] : active) {
                const bool in_state = states->empty() || std::find(states->begin(), states->end(),
                                                                   job.state) != states->end();
                if (in_state && !job.terminating && (!*userid || job.owner == **userid))
                    chosen.push_back(id);
            }
            std::size_t canceled = 0;
            for (const JobId id : chosen) {
                const auto job = active.find(id);
                if (job == active.end() || job->second.terminating)
                    continue;
                if (!*dry_run)
                    cancel(job->second, responder.peer().uid);
                ++canceled;
            }
            responder.result({{"canceled", canceled}});
        });
}

}  // namespace gantry::broker
