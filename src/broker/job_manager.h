// The job manager's insides, shared by the files that implement it, one
// concern each (as flux-core splits its job manager):
//
//   jobs.cpp          the public JobManager, restart, the method table
//   job_submit.cpp    job.submit: checks, the record, front ends that go
//   job_depend.cpp    DEPEND: dependencies and who waits for whom
//   job_sched.cpp     SCHED: the scheduler's queue, allocation, urgency
//   job_exec.cpp      RUN and CLEANUP: the exec service's events, signals,
//                     stdin, exceptions, cancel
//   job_output.cpp    summaries, job.list/info, followers of the eventlog
//                     and the output (eventlog, attach)
//   job_wait.cpp      job.wait, job.purge, answers when the instance ends
//   job_program.cpp   RFC 8's programs: new, grow, shrink, map, exec, terminate
//   job_params.h      reading a request's params
//
// Not a public header: src/broker/jobs.h is the job manager's interface.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include "broker/broker.h"
#include "broker/exec_service.h"
#include "broker/job_params.h"
#include "broker/jobs.h"
#include "broker/scheduler.h"
#include "broker/store.h"
#include "formats/jobspec.h"
#include "formats/rset.h"
#include "formats/taskmap.h"
#include "mapper/jobspec_map.h"
#include "mapper/map.h"
#include "topo/rank_topologies.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// The rank under which a shell's own messages are stored and sent (-1 in the API).
inline constexpr std::uint32_t kShellRank = std::numeric_limits<std::uint32_t>::max();

// The note of the cancel exception of an interactive job whose front end
// went before the job started.
inline constexpr const char* kFrontEndGone =
    "its front end (gantry run, gantry alloc) is gone: an interactive job does not start "
    "without it";

// The scheduler's request of a jobspec.
Request request_of(const Jobspec& spec);
// What an instance accepts of a jobspec: its nodes are the instance's.
Status check_for_instance(const Jobspec& spec, const std::string& method);
// The jobspec the shell runs inside `R`: one task per allocated slot when
// the command line gave no -n, and -c cores bound to each task.
Jobspec placed_jobspec(Jobspec spec, const ResourceSet& R);

// One exec's task map and the ranks of R it was mapped onto (its node k is
// the k-th of them).
struct ExecMap {
    TaskMap map;
    IdSet ranks;
};

struct JobManager::Impl {
    // One job.exec: its execution by the exec service, ranks from
    // `first_rank` in the job (each exec is a parallel program of its own
    // for PMI).
    struct Exec {
        std::unique_ptr<Execution> execution;
        std::uint32_t first_rank = 0;
        std::string ranks;                    // its tasks' ranks in the job, an idset
        ResourceSet R;                        // what its tasks hold
        std::optional<Responder> exec_reply;  // job.exec's: answered once the tasks started
    };
    // A job.shrink's reply: given once the execs it ended have ended, so
    // that what follows it sees their tasks gone.
    struct ShrinkReply {
        Responder responder;
        std::set<const Exec*> ending;
        Json result;
    };
    // A job that is not INACTIVE.
    struct Active {
        JobId id = 0;
        Jobspec spec;
        JobState state = JobState::kNew;
        std::uint32_t owner = 0;
        std::optional<ResourceSet> R;  // once allocated (or grown)
        bool in_scheduler = false;     // queued or holding R there
        bool manual = false;           // made by job.new: runs until terminated
        bool terminating = false;
        std::vector<Jobspec::App> pending_apps;    // mapped, not executed yet
        std::vector<std::unique_ptr<Exec>> execs;  // executions running
        std::vector<ShrinkReply> shrink_replies;
        std::vector<ExecMap> exec_maps;    // of every exec so far, in order
        std::uint32_t next_rank = 0;       // of the next exec's first task
        std::optional<int> finish_status;  // the first failing exec's, else the last's
        std::vector<TaskExit> task_exits;
        std::optional<std::string> exception;  // the first fatal one's type
        std::string early_stdin;               // sent before the tasks started
        bool early_eof = false;
        bool lost_R = false;       // held R when the broker that ran it ended
        bool interactive = false;  // bound to the front end that submitted it
    };
    // A front end that follows a job's eventlog, or its output too.
    struct Follower {
        Responder responder;
        JobId id = 0;
        bool output = false;  // job.attach
        bool follow = true;
        std::uint64_t event_seq = 0;
        std::uint64_t output_seq = 0;
        bool waiting_for_reader = false;  // to read what was sent: see feed()
    };
    struct AllWaiter {
        Responder responder;
        std::vector<JobId> ids;
        std::set<JobId> left;
    };
    enum class Verdict { kWaiting, kMet, kNever, kUnknown };

    Impl(asio::io_context& loop, Broker& broker, Store store, const ResourceSet& inventory,
         RankTopologies topologies, std::unique_ptr<ExecService> exec_service)
        : loop(loop),
          broker(broker),
          store(std::move(store)),
          scheduler(inventory),
          inventory(inventory),
          topologies(std::move(topologies)),
          exec_service(std::move(exec_service)),
          begin_timer(loop),
          depend_retry_timer(loop) {}

    asio::io_context& loop;
    Broker& broker;
    Store store;
    Scheduler scheduler;
    ResourceSet inventory;
    RankTopologies topologies;  // each rank's: jobs are mapped on them
    std::unique_ptr<ExecService> exec_service;
    asio::steady_timer begin_timer;
    asio::steady_timer depend_retry_timer;
    std::set<JobId> depend_retry;  // jobs whose dependencies the store could not check
    bool depend_retry_armed = false;
    std::map<JobId, Active> active;
    std::multimap<JobId, JobId> dependents;  // job -> jobs waiting for its end
    std::multimap<JobId, std::shared_ptr<Follower>> followers;
    std::multimap<JobId, Responder> waiters;
    std::vector<std::shared_ptr<AllWaiter>> all_waiters;
    std::set<JobId> touched;  // jobs whose followers have news
    bool pump_posted = false;
    bool schedule_posted = false;
    std::function<void()> on_stopped;
    // Callbacks that may outlive the manager (a connection closing during
    // teardown) hold a weak pointer to this.
    std::shared_ptr<bool> alive = std::make_shared<bool>(true);

    // --- Records (jobs.cpp) ----------------------------------------------------

    // A failure to write the record is the instance's, not the job's: it is
    // reported where it happens and the job goes on.
    template <class T>
    void check(const Result<T>& result) {
        if (!result)
            report(result.error());
    }
    void report(const Error& error);
    void post_event(Active& job, std::string_view name, const Json& context = Json::object());
    void enter(Active& job, JobState state);
    // The job's record; "job N: no such job" when the store has none, the
    // store's own error (reported) when it cannot say.
    Result<JobRecord> record_of(JobId id);
    Status restore();
    // What mapping `spec` reads on this machine, on the ranks' topologies.
    MapInputs map_inputs(const Jobspec& spec) const;
    bool was_interactive(JobId id);

    // Runs `work` on the loop once, however often it is asked for before then.
    template <class Work>
    void post_once(bool& posted, Work work) {
        if (posted)
            return;
        posted = true;
        asio::post(loop, [&posted, work] {
            posted = false;
            work();
        });
    }

    // --- job_submit.cpp --------------------------------------------------------
    Result<JobId> submit(const Json& document, const Peer& peer, bool interactive);
    void front_end_gone(JobId id);
    void register_submit_methods();

    // --- job_depend.cpp --------------------------------------------------------
    Verdict verdict_of(const Jobspec::Dependency& dependency);
    void resolve_dependencies(Active& job);
    void release_dependents(JobId ended);
    void retry_dependencies_later();

    // --- job_sched.cpp ---------------------------------------------------------
    void queue(Active& job);
    void start_immediately(Active& job);
    void schedule_soon();
    void schedule();
    void register_sched_methods();
    Result<IdSet> ranks_named(const std::string& method, const Json& targets) const;
    Json resource_list();

    // --- job_exec.cpp ----------------------------------------------------------
    void start(Active& job, const ResourceSet& R);
    Result<IdSet> exec(Active& job);
    void show_display(const Active& job, const Jobspec& placed, const JobMap& map);
    void on_output(JobId id, std::uint32_t first_rank, const ShellOutput& output);
    void on_started(JobId id, const Exec* started);
    void answer_shrinks(Active& job, const Exec* ended);
    void on_finished(JobId id, const Exec* ended, int wait_status);
    void finish(Active& job);
    void clean_up(Active& job);
    void terminate(Active& job);
    void raise(Active& job, const std::string& type, const std::string& note,
               std::uint32_t userid = 0);
    void cancel(Active& job, std::uint32_t uid);
    bool none_running() const;
    void register_exec_methods();

    // --- job_program.cpp -------------------------------------------------------
    Result<JobId> create_program(const std::string& name, const Peer& peer);
    Status hold(Active& job, const ResourceSet& R);
    Status grow(Active& job, const ResourceSet& added);
    // Returns the execs it ends (their tasks get SIGTERM).
    Result<std::set<const Exec*>> shrink(Active& job, const ResourceSet& removed);
    void register_program_methods();

    // --- job_output.cpp --------------------------------------------------------
    std::optional<Json> first_exception(JobId id);
    Json summary(const JobRecord& record);
    Result<Json> summary(JobId id);
    void touch(JobId id);
    void pump();
    bool feed(const std::shared_ptr<Follower>& follower);
    void wait_for_reader(const std::shared_ptr<Follower>& follower);
    void forget(const std::shared_ptr<Follower>& follower);
    void follow(Responder responder, JobId id, bool output, bool keep_following);
    void register_output_methods();

    // --- job_wait.cpp ----------------------------------------------------------
    void answer_waiters(JobId id);
    void answer_shutdown();
    void answer_all(AllWaiter& waiter);
    void register_wait_methods();

    // --- Methods (jobs.cpp) ----------------------------------------------------
    void register_methods();
    // Registers a method, under each of `names`, whose params name a job
    // ("id"): `handle(id, request, responder)` runs once the id is read.
    template <class Handle>
    void register_job_method(std::initializer_list<const char*> names, Handle handle);
    // The job `id`, if not yet INACTIVE; otherwise answers the error and
    // returns null. program(): the same, and the job must be one made by
    // job.new and not ending.
    Active* running_job(JobId id, Responder& responder);
    Active* program(JobId id, Responder& responder);
};

template <class Handle>
void JobManager::Impl::register_job_method(std::initializer_list<const char*> names,
                                           Handle handle) {
    for (const char* name : names)
        broker.register_method(
            name, [this, handle](const overlay::Message& request, Responder responder) {
                const auto id = id_param(request);
                if (!id) {
                    responder.error(id.error());
                    return;
                }
                handle(*id, request, std::move(responder));
            });
}

}  // namespace gantry::broker
