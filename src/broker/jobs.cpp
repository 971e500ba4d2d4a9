#include "broker/jobs.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include "broker/exec.h"
#include "broker/scheduler.h"
#include "formats/jobspec.h"
#include "formats/taskmap.h"
#include "mapper/jobspec_map.h"
#include "mapper/resources.h"
#include "shell/exit_status.h"
#include "shell/map_io.h"
#include "topo/rank_topologies.h"
#include "util/base64.h"
#include "util/duration.h"

namespace gantry::broker {

namespace {

// The rank under which a shell's own messages are stored and sent (-1 in the API).
constexpr std::uint32_t kShellRank = std::numeric_limits<std::uint32_t>::max();
// Output sent to a follower in one reply at most.
constexpr std::size_t kReplyBytes = std::size_t{1} << 20;
// Stdin a front end may send before the job's tasks have started.
constexpr std::size_t kEarlyStdinBytes = std::size_t{16} << 20;
// The note of the cancel exception of an interactive job whose front end
// went before the job started.
constexpr const char* kFrontEndGone =
    "its front end (gantry run, gantry alloc) is gone: an interactive job does not start "
    "without it";

double now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Json event_json(const JobEvent& event) {
    return {
        {"seq", event.seq}, {"time", event.time}, {"name", event.name}, {"context", event.context}};
}

Json chunk_json(const OutputChunk& chunk) {
    return {{"seq", chunk.seq},
            {"stream", to_string(chunk.stream)},
            {"rank", chunk.rank == kShellRank ? std::int64_t{-1} : std::int64_t{chunk.rank}},
            {"data", base64_encode(chunk.bytes)}};
}

// --- Parameters ----------------------------------------------------------------

Error param_error(const api::Request& request, const std::string& message) {
    return Error(request.method, message);
}

Result<JobId> id_param(const api::Request& request) {
    const auto found = request.params.find("id");
    if (found == request.params.end())
        return param_error(request, "\"id\" is missing");
    if (!found->is_number_unsigned() || found->get<std::uint64_t>() == 0)
        return param_error(request, "\"id\" must be a positive integer");
    return found->get<JobId>();
}

Result<bool> bool_param(const api::Request& request, const char* key) {
    const auto found = request.params.find(key);
    if (found == request.params.end())
        return false;
    if (!found->is_boolean())
        return param_error(request, "\"" + std::string(key) + "\" is " + json_type_name(*found) +
                                        ", expected a boolean");
    return found->get<bool>();
}

Result<std::int64_t> int_param(const api::Request& request, const char* key,
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
Result<std::vector<JobState>> states_param(const api::Request& request) {
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
Result<std::optional<std::uint32_t>> uid_param(const api::Request& request) {
    const auto found = request.params.find("userid");
    if (found == request.params.end())
        return std::optional<std::uint32_t>();
    if (!found->is_number_unsigned() ||
        found->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
        return param_error(request, "\"userid\" must be a uid");
    return std::optional<std::uint32_t>(found->get<std::uint32_t>());
}

Error no_such_job(JobId id) {
    return Error("job " + std::to_string(id), "no such job");
}

// --- Jobs in the instance ------------------------------------------------------

// The scheduler's request of a jobspec.
Request request_of(const Jobspec& spec) {
    Request request;
    request.nodes = spec.resources.nodes;
    std::uint32_t ntasks = 0;
    for (const Jobspec::App& app : spec.apps)
        ntasks += app.ntasks;
    // Oversubscribed tasks share the slots asked for, as Slurm's --overcommit.
    const bool shared = spec.job.oversubscribe && spec.resources.ntasks > 0;
    request.ntasks = shared ? spec.resources.ntasks : std::max(ntasks, spec.resources.ntasks);
    request.cores_per_task = std::max<std::uint32_t>(1, spec.resources.cores_per_task);
    request.gpus_per_task = spec.resources.gpus_per_task;
    request.exclusive = spec.resources.exclusive;
    request.time_limit = spec.attributes.time_limit;
    return request;
}

// What an instance accepts of a jobspec: its nodes are the instance's.
Status check_for_instance(const Jobspec& spec, const std::string& method = "job.submit") {
    if (!spec.job.hosts.empty() || !spec.job.hostfile.empty())
        return Error(method,
                     "-H and --hostfile name hosts; inside an instance the "
                     "scheduler chooses them (give -N, -n, -c, -g)");
    if (!spec.job.topology.empty())
        return Error(method, "--topology simulates nodes, where nothing can run");
    for (std::size_t k = 1; k < spec.apps.size(); ++k) {
        if (!spec.apps[k].hosts.empty() || !spec.apps[k].hostfile.empty())
            return Error(method, "app " + std::to_string(k) +
                                     ": -H and --hostfile name hosts; inside an instance "
                                     "the scheduler chooses them");
        if (spec.apps[k].ntasks == 0 || spec.apps[0].ntasks == 0)
            return Error(method, "app " + std::to_string(spec.apps[k].ntasks == 0 ? k : 0) +
                                     " has no -n: every app of an MPMD program needs one "
                                     "inside an instance");
    }
    return {};
}

// The jobspec the shell runs inside `R`: one task per allocated slot when
// the command line gave no -n, and -c cores bound to each task.
Jobspec placed_jobspec(Jobspec spec, const ResourceSet& R) {
    if (spec.apps.size() == 1 && spec.apps[0].ntasks == 0)
        spec.apps[0].ntasks = static_cast<std::uint32_t>(
            std::max<std::int64_t>(1, R.nslots().value_or(static_cast<std::int64_t>(R.nnodes()))));
    if (spec.resources.cores_per_task > 1 && spec.apps[0].map_by.empty())
        spec.apps[0].map_by = "slot:PE=" + std::to_string(spec.resources.cores_per_task);
    return spec;
}

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

// One exec's task map and the ranks of R it was mapped onto (its node k is
// the k-th of them).
struct ExecMap {
    TaskMap map;
    IdSet ranks;
};

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

std::uint64_t ntasks_of_record(const JobRecord& record) {
    if (record.taskmap)
        if (auto map = TaskMap::parse(*record.taskmap); map && !map->empty())
            return map->ntasks();
    std::uint64_t ntasks = 0;
    if (auto document = parse_json("jobspec", record.jobspec); document && document->is_object())
        for (const Json& app : document->value("apps", Json::array()))
            if (app.is_object())
                ntasks += app.value("ntasks", std::uint64_t{0});
    return ntasks;
}

}  // namespace

// --- The manager ---------------------------------------------------------------

struct JobManager::Impl {
    // One job.exec: a shell and the tasks it runs, ranks from `first_rank`
    // in the job (each exec is a parallel program of its own for PMI).
    struct Exec {
        std::unique_ptr<ShellProcess> process;
        std::uint32_t first_rank = 0;
        std::string ranks;  // its tasks' ranks in the job, an idset
        ResourceSet R;      // what its tasks hold
    };
    // A job that is not INACTIVE.
    struct Active {
        JobId id = 0;
        Jobspec spec;
        JobState state = JobState::New;
        std::uint32_t owner = 0;
        std::optional<ResourceSet> R;  // once allocated (or grown)
        bool in_scheduler = false;     // queued or holding R there
        bool manual = false;           // made by job.new: runs until terminated
        bool terminating = false;
        std::vector<Jobspec::App> pending_apps;    // mapped, not executed yet
        std::vector<std::unique_ptr<Exec>> execs;  // shells running
        std::vector<ExecMap> exec_maps;            // of every exec so far, in order
        std::uint32_t next_rank = 0;               // of the next exec's first task
        std::optional<int> finish_status;          // the first failing exec's, else the last's
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
    };
    struct AllWaiter {
        Responder responder;
        std::vector<JobId> ids;
        std::set<JobId> left;
    };

    Impl(asio::io_context& loop, Broker& broker, Store store, const ResourceSet& inventory,
         RankTopologies topologies, std::string shell_program)
        : loop(loop),
          broker(broker),
          store(std::move(store)),
          scheduler(inventory),
          inventory(inventory),
          topologies(std::move(topologies)),
          shell_program(std::move(shell_program)),
          begin_timer(loop) {}

    asio::io_context& loop;
    Broker& broker;
    Store store;
    Scheduler scheduler;
    ResourceSet inventory;
    RankTopologies topologies;  // each rank's: jobs are mapped on them
    std::string shell_program;
    asio::steady_timer begin_timer;
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

    // --- Records -------------------------------------------------------------

    // A failure to write the record is the instance's, not the job's: it is
    // reported where it happens and the job goes on.
    template <class T>
    void check(const Result<T>& result) {
        if (!result)
            report(result.error());
    }
    void report(const Error& error) {
        ::dprintf(STDERR_FILENO, "gantry: %s\n", error.str().c_str());
    }

    void post_event(Active& job, std::string_view name, const Json& context = Json::object()) {
        check(store.append_event(job.id, now(), name, context));
        touch(job.id);
    }
    void enter(Active& job, JobState state) {
        job.state = state;
        check(store.set_state(job.id, state, now()));
    }

    // What mapping `spec` reads on this machine, on the ranks' topologies.
    MapInputs map_inputs(const Jobspec& spec) const {
        MapInputs inputs = shell::read_map_inputs(spec);
        inputs.ranks = topologies;
        return inputs;
    }

    // --- Submitting ----------------------------------------------------------

    Result<JobId> submit(const Json& document, const Peer& peer, bool interactive) {
        auto spec = Jobspec::from_json(document);
        if (!spec)
            return spec.error();
        if (auto status = check_for_instance(*spec); !status)
            return status.error();
        const Request request = request_of(*spec);
        if (spec->resources.R) {
            if (!spec->resources.R->diff(inventory).empty())
                return Error("job.submit", "--resources: not in the instance: " +
                                               spec->resources.R->diff(inventory).short_form());
        } else if (auto fits = scheduler.feasible(request); !fits) {
            return fits.error();
        }
        for (const Jobspec::Dependency& dependency : spec->attributes.dependencies)
            if (!active.contains(dependency.id) && !store.job(dependency.id))
                return Error("job.submit",
                             "--dependency=" + std::string(dependency_type_name(dependency.type)) +
                                 ":" + std::to_string(dependency.id) + ": no such job");
        // The policies and options are checked now, on the whole inventory
        // (or the given R), so that a job that cannot be mapped is refused
        // rather than failing later.
        const ResourceSet& pool = spec->resources.R ? *spec->resources.R : inventory;
        if (auto map = map_jobspec(placed_jobspec(*spec, pool), map_inputs(*spec), pool); !map)
            return map.error();

        NewJob record{spec->encode(), spec->attributes.name,    peer.uid,
                      now(),          spec->attributes.urgency, interactive};
        auto id = store.create_job(record);
        if (!id)
            return id.error();
        Active& job = active[*id];
        job.id = *id;
        job.spec = std::move(*spec);
        job.owner = peer.uid;
        job.interactive = interactive;
        enter(job, JobState::Depend);
        touch(job.id);
        resolve_dependencies(job);
        return *id;
    }

    // --- Restarting ----------------------------------------------------------

    // The jobs a broker left unfinished on this state directory: those that
    // ran were lost with it (their shells killed their tasks when it ended);
    // those waiting wait again, in their order.
    Status restore() {
        auto unfinished = store.unfinished_jobs();
        if (!unfinished)
            return unfinished.error();
        for (const JobId id : *unfinished) {
            auto record = store.job(id);
            if (!record)
                return record.error();
            Active& job = active[id];
            job.id = id;
            job.owner = record->owner;
            job.state = record->state;
            auto spec = Jobspec::parse(record->jobspec);
            if (spec)
                job.spec = std::move(*spec);
            if (job.state == JobState::Run || job.state == JobState::Cleanup || !spec) {
                job.lost_R = job.state == JobState::Run || job.state == JobState::Cleanup;
                raise(job, "lost",
                      spec || job.lost_R ? "the broker ended while the job ran"
                                         : "its jobspec cannot be read: " + spec.error().str());
                continue;
            }
            if (was_interactive(id)) {
                raise(job, "cancel", kFrontEndGone);
                continue;
            }
            if (job.state == JobState::Sched) {
                queue(job);
                continue;
            }
            enter(job, JobState::Depend);
            resolve_dependencies(job);
        }
        return {};
    }

    bool was_interactive(JobId id) {
        auto events = store.events(id);
        return events && !events->empty() && events->front().name == "submit" &&
               events->front().context.value("interactive", false);
    }

    // --- Front ends ----------------------------------------------------------

    // The connection of an interactive job's front end has closed: it never
    // starts without it; one running gets the end of its stdin, as a
    // terminal's hangup would give it (it goes on, and keeps its output).
    void front_end_gone(JobId id) {
        const auto found = active.find(id);
        if (found == active.end() || !found->second.interactive)
            return;
        Active& job = found->second;
        if (!job.R && !job.manual) {
            raise(job, "cancel", kFrontEndGone);
            return;
        }
        if (job.execs.empty())
            job.early_eof = true;
        else
            job.execs.front()->process->close_stdin();
    }

    // --- Dependencies --------------------------------------------------------

    enum class Verdict { Waiting, Met, Never };

    Verdict verdict_of(const Jobspec::Dependency& dependency) {
        if (active.contains(dependency.id))
            return Verdict::Waiting;
        auto record = store.job(dependency.id);
        if (!record)
            return Verdict::Never;  // purged
        const bool ok = record->exit_code == 0;
        switch (dependency.type) {
            case Jobspec::Dependency::Type::kAfterAny:
                return Verdict::Met;
            case Jobspec::Dependency::Type::kAfterOk:
                return ok ? Verdict::Met : Verdict::Never;
            case Jobspec::Dependency::Type::kAfterNotOk:
                return ok ? Verdict::Never : Verdict::Met;
        }
        return Verdict::Never;
    }

    void resolve_dependencies(Active& job) {
        bool waiting = false;
        for (const Jobspec::Dependency& dependency : job.spec.attributes.dependencies) {
            switch (verdict_of(dependency)) {
                case Verdict::Never:
                    raise(job, "dependency",
                          std::string(dependency_type_name(dependency.type)) + ":" +
                              std::to_string(dependency.id) + " can never be satisfied");
                    return;
                case Verdict::Waiting:
                    waiting = true;
                    break;
                case Verdict::Met:
                    break;
            }
        }
        if (waiting) {
            for (const Jobspec::Dependency& dependency : job.spec.attributes.dependencies)
                dependents.emplace(dependency.id, job.id);
            return;
        }
        post_event(job, "depend");
        enter(job, JobState::Sched);
        queue(job);
    }

    // A job has ended: those that waited for it may go on.
    void release_dependents(JobId ended) {
        std::set<JobId> waiting;
        const auto [first, last] = dependents.equal_range(ended);
        for (auto it = first; it != last; ++it)
            waiting.insert(it->second);
        dependents.erase(first, last);
        for (const JobId id : waiting) {
            const auto job = active.find(id);
            if (job == active.end() || job->second.state != JobState::Depend)
                continue;
            // Still listed under its other dependencies: forget those first.
            std::erase_if(dependents, [id](const auto& entry) { return entry.second == id; });
            resolve_dependencies(job->second);
        }
    }

    // --- Scheduling ----------------------------------------------------------

    void queue(Active& job) {
        if (job.spec.resources.R) {
            start_immediately(job);
            return;
        }
        const PendingJob pending{job.id, request_of(job.spec), job.spec.attributes.urgency,
                                 job.spec.attributes.begin_time};
        if (auto added = scheduler.add(pending); !added) {
            raise(job, "alloc", added.error().str());
            return;
        }
        job.in_scheduler = true;
        schedule_soon();
    }

    // RFC 8's immediate execution: the owner's explicit resources, no queue.
    void start_immediately(Active& job) {
        const ResourceSet& R = *job.spec.resources.R;
        if (auto held = scheduler.restore(job.id, R, now(), job.spec.attributes.time_limit);
            !held) {
            raise(job, "alloc", "--resources: " + held.error().str());
            return;
        }
        job.in_scheduler = true;
        start(job, R);
    }

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

    void schedule_soon() {
        post_once(schedule_posted, [this] { schedule(); });
    }

    void schedule() {
        if (on_stopped)
            return;  // the instance is ending: nothing more starts
        const double time = now();
        for (const Allocation& allocation : scheduler.schedule(time)) {
            const auto job = active.find(allocation.id);
            if (job != active.end())
                start(job->second, allocation.R);
        }
        begin_timer.cancel();
        if (const auto next = scheduler.next_begin_time(time)) {
            begin_timer.expires_after(std::chrono::milliseconds(
                static_cast<std::int64_t>(std::ceil((*next - time) * 1000))));
            begin_timer.async_wait([this](const asio::error_code& failure) {
                if (!failure)
                    schedule_soon();
            });
        }
    }

    // --- Running -------------------------------------------------------------

    // An allocated job (SCHED -> RUN): its apps run inside R as one exec.
    void start(Active& job, const ResourceSet& R) {
        job.R = R;
        {
            auto transaction = store.transaction();
            check(store.append_event(job.id, now(), "alloc"));
            check(store.set_state(job.id, JobState::Run, now()));
            check(store.set_R(job.id, R.encode()));
            if (transaction)
                check(transaction->commit());
        }
        job.state = JobState::Run;
        touch(job.id);
        job.pending_apps = job.spec.apps;
        if (auto started = exec(job); !started)
            raise(job, "exec", started.error().str());
    }

    // Starts the pending apps' tasks in one shell, inside the job's R.
    // Returns the ranks they got in the job.
    Result<IdSet> exec(Active& job) {
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
        // A rank no broker serves would silently run nothing.
        if (auto served = check_ranks_have_brokers(free); !served)
            return Error("job " + std::to_string(job.id), served.error().message());
        Jobspec spec = job.spec;
        spec.apps = std::exchange(job.pending_apps, {});
        const Jobspec placed = placed_jobspec(std::move(spec), free);
        auto map = map_jobspec(placed, map_inputs(placed), free);
        if (!map)
            return map.error();  // the apps are dropped: the caller maps again
        show_display(job, placed, *map);
        const auto ntasks = static_cast<std::uint32_t>(map->tasks.size());
        const TaskMap exec_map = task_map(*map);
        job.exec_maps.push_back({exec_map, free.ranks()});
        const std::string taskmap = combined_task_map(job.exec_maps).to_json();
        check(job.manual ? store.replace_taskmap(job.id, taskmap)
                         : store.set_taskmap(job.id, taskmap));
        // The shell maps the job on the same topologies, and runs the node
        // of its broker's rank: this one's, the only broker (rank 0).
        const Json header = {{"id", std::to_string(job.id)},
                             {"jobspec", placed.to_json()},
                             {"R", free.to_json()},
                             {"rank", 0},
                             {"topologies", topologies.only(free.ranks()).to_json()}};
        auto run = std::make_unique<Exec>();
        run->first_rank = job.next_rank;
        run->R = held_part(*map, free);
        Exec* key = run.get();
        const JobId id = job.id;
        ShellProcess::Handlers handlers{
            [this, id, key](shell::records::Record&& record) {
                on_record(id, key->first_rank, std::move(record));
            },
            [this, id](const Error& error) {
                if (const auto job = active.find(id); job != active.end())
                    raise(job->second, "exec", "the job shell failed: " + error.str());
            },
            [this, id, key](int wait_status) {
                asio::post(loop,
                           [this, id, key, wait_status] { on_shell_end(id, key, wait_status); });
            },
        };
        auto shell = ShellProcess::start(loop, shell_program, header, std::move(handlers));
        if (!shell)
            return shell.error();
        run->process = std::move(*shell);
        const IdSet ranks = IdSet::range(job.next_rank, job.next_rank + ntasks - 1);
        run->ranks = ranks.encode();
        job.next_rank += ntasks;
        if (job.manual)
            post_event(job, "exec",
                       {{"ranks", ranks.encode()},
                        {"taskmap", *parse_json("taskmap", exec_map.to_json())}});
        ShellProcess& process = *run->process;
        job.execs.push_back(std::move(run));
        if (!job.early_stdin.empty())
            (void)process.write_stdin(std::exchange(job.early_stdin, {}));
        if (job.early_eof)
            process.close_stdin();
        if (job.terminating)  // canceled while starting
            process.terminate();
        return ranks;
    }

    // What --display asks to see of the map comes first in the job's
    // output, as PRRTE prints it before the tasks' (a failure on stderr).
    void show_display(const Active& job, const Jobspec& placed, const JobMap& map) {
        if (placed.job.display.empty())
            return;
        const DisplayOutput output =
            display_output(placed, map, DisplayOptions{"gantry@" + std::to_string(job.id)});
        if (auto written = shell::write_display_files(output); written)
            check(store.append_output(job.id, OutputStream::Stdout, kShellRank, output.text));
        else
            check(store.append_output(job.id, OutputStream::Stderr, kShellRank,
                                      "gantry: " + written.error().str() + "\n"));
    }

    void on_record(JobId id, std::uint32_t first_rank, shell::records::Record&& record) {
        const auto found = active.find(id);
        if (found == active.end())
            return;
        Active& job = found->second;
        using Kind = shell::records::Record::Kind;
        switch (record.kind) {
            case Kind::Stdout:
            case Kind::Stderr:
                check(store.append_output(
                    id, record.kind == Kind::Stdout ? OutputStream::Stdout : OutputStream::Stderr,
                    first_rank + record.rank, record.bytes));
                if (followers.contains(id))
                    touch(id);
                break;
            case Kind::Message:
                check(store.append_output(id, OutputStream::Stderr, kShellRank, record.bytes));
                if (followers.contains(id))
                    touch(id);
                break;
            case Kind::Started:
                post_event(job, "start");
                break;
            case Kind::Exit:
                job.task_exits.push_back({first_rank + record.rank, record.wait_status});
                break;
        }
    }

    void on_shell_end(JobId id, const Exec* ended, int wait_status) {
        const auto found = active.find(id);
        if (found == active.end())
            return;
        Active& job = found->second;
        std::string ended_ranks;
        for (const auto& run : job.execs)
            if (run.get() == ended)
                ended_ranks = run->ranks;
        std::erase_if(job.execs, [ended](const auto& run) { return run.get() == ended; });
        if (!job.finish_status || shell::exit_code_of(*job.finish_status) == 0)
            job.finish_status = wait_status;
        if (job.manual && !job.terminating) {
            post_event(job, "exec.end", {{"ranks", ended_ranks}, {"status", wait_status}});
            return;
        }
        if (job.execs.empty())
            finish(job);
    }

    // Every exec has ended: the job's result is recorded, then it is cleaned up.
    void finish(Active& job) {
        std::sort(job.task_exits.begin(), job.task_exits.end(),
                  [](const TaskExit& a, const TaskExit& b) { return a.rank < b.rank; });
        {
            auto transaction = store.transaction();
            check(store.flush());
            if (job.finish_status) {
                check(store.record_task_exits(job.id, job.task_exits));
                check(
                    store.append_event(job.id, now(), "finish", {{"status", *job.finish_status}}));
                check(store.set_exit_code(job.id, shell::exit_code_of(*job.finish_status)));
            }
            check(store.set_state(job.id, JobState::Cleanup, now()));
            if (transaction)
                check(transaction->commit());
        }
        job.state = JobState::Cleanup;
        clean_up(job);
    }

    // CLEANUP: the job's R goes back, then INACTIVE.
    void clean_up(Active& job) {
        auto transaction = store.transaction();
        if (job.in_scheduler) {
            const bool allocated = scheduler.find_running(job.id) != nullptr;
            check(allocated ? scheduler.release(job.id) : scheduler.remove(job.id));
            job.in_scheduler = false;
            if (allocated)
                check(store.append_event(job.id, now(), "release",
                                         {{"ranks", "all"}, {"final", true}}));
        }
        if (job.lost_R)
            check(
                store.append_event(job.id, now(), "release", {{"ranks", "all"}, {"final", true}}));
        check(store.set_state(job.id, JobState::Cleanup, now()));
        check(store.append_event(job.id, now(), "clean"));
        check(store.set_state(job.id, JobState::Inactive, now()));
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
    void terminate(Active& job) {
        job.terminating = true;
        if (job.execs.empty()) {
            finish(job);
            return;
        }
        for (const auto& run : job.execs)
            run->process->terminate();
    }

    // A fatal exception: the job is terminated.
    void raise(Active& job, const std::string& type, const std::string& note,
               std::uint32_t userid = 0) {
        if (!job.exception)
            job.exception = type;
        post_event(job, "exception",
                   {{"type", type}, {"severity", 0}, {"note", note}, {"userid", userid}});
        if (!job.terminating || job.execs.empty())
            terminate(job);
    }

    // A `cancel` exception from `uid`: a pending job never runs, a running
    // one is terminated.
    void cancel(Active& job, std::uint32_t uid) {
        std::string note = "canceled by " + std::to_string(uid);
        if (!job.execs.empty())
            note += "; its tasks get SIGTERM, then SIGKILL after its kill timeout (" +
                    format_duration(std::chrono::milliseconds(
                        static_cast<std::int64_t>(job.spec.attributes.kill_timeout * 1000))) +
                    ")";
        raise(job, "cancel", note, uid);
    }

    bool none_running() const {
        return std::none_of(active.begin(), active.end(),
                            [](const auto& entry) { return !entry.second.execs.empty(); });
    }

    // --- RFC 8's program methods ---------------------------------------------

    // job.new: an empty program, RUN at once, holding nothing until grown.
    Result<JobId> create_program(const std::string& name, const Peer& peer) {
        Jobspec empty;
        empty.attributes.name = name;
        auto id =
            store.create_job({empty.encode(), name, peer.uid, now(), Jobspec::kUrgencyDefault});
        if (!id)
            return id.error();
        Active& job = active[*id];
        job.id = *id;
        job.spec = std::move(empty);
        job.owner = peer.uid;
        job.manual = true;
        post_event(job, "depend");
        post_event(job, "alloc");
        enter(job, JobState::Run);
        return *id;
    }

    // The scheduler holds what a program has: `R` from now on.
    Status hold(Active& job, const ResourceSet& R) {
        if (job.in_scheduler && scheduler.find_running(job.id))
            check(scheduler.release(job.id));
        job.in_scheduler = false;
        if (R.empty())
            return {};
        if (auto held = scheduler.restore(job.id, R, now(), 0); !held)
            return held;
        job.in_scheduler = true;
        return {};
    }

    Status grow(Active& job, const ResourceSet& added) {
        if (!added.diff(inventory).empty())
            return Error("job.grow", "not in the instance: " + added.diff(inventory).short_form());
        const ResourceSet before = job.R.value_or(ResourceSet());
        auto grown = before.append(added);
        if (!grown)
            return Error("job.grow", "the job holds some of it already: " + grown.error().str());
        if (auto held = hold(job, *grown); !held) {
            check(hold(job, before));
            return Error("job.grow", "busy: " + held.error().str());
        }
        job.R = std::move(*grown);
        check(store.replace_R(job.id, job.R->encode()));
        post_event(job, "grow", {{"R", added.to_json()}});
        return {};
    }

    // The tasks on the removed resources end (their shells are terminated);
    // removing everything leaves an empty program.
    Status shrink(Active& job, const ResourceSet& removed) {
        const ResourceSet before = job.R.value_or(ResourceSet());
        const ResourceSet taken = before.intersect(removed);
        if (taken.empty())
            return Error("job.shrink", "the job holds none of it");
        const ResourceSet after = before.diff(removed);
        check(hold(job, after));
        job.R = after;
        check(store.replace_R(job.id, after.encode()));
        for (const auto& run : job.execs)
            if (!run->R.intersect(taken).empty())
                run->process->terminate();
        post_event(job, "shrink", {{"R", taken.to_json()}});
        return {};
    }

    // --- Summaries -----------------------------------------------------------

    std::optional<Json> first_exception(JobId id) {
        auto events = store.events(id);
        if (!events)
            return std::nullopt;
        for (const JobEvent& event : *events)
            if (event.name == "exception")
                return Json{{"type", event.context.value("type", "")},
                            {"note", event.context.value("note", "")}};
        return std::nullopt;
    }

    Json summary(const JobRecord& record) {
        Json exception = nullptr;
        if (auto found = first_exception(record.id))
            exception = *found;
        return {{"id", record.id},
                {"name", record.name},
                {"state", to_string(record.state)},
                {"urgency", record.urgency},
                {"userid", record.owner},
                {"submit_time", record.submit_time},
                {"state_time", record.state_time},
                {"ntasks", ntasks_of_record(record)},
                {"exit_code", record.exit_code ? Json(*record.exit_code) : Json(nullptr)},
                {"exception", exception}};
    }

    Result<Json> summary(JobId id) {
        auto record = store.job(id);
        if (!record)
            return no_such_job(id);
        return summary(*record);
    }

    // --- Followers -----------------------------------------------------------

    void touch(JobId id) {
        if (!followers.contains(id))
            return;
        touched.insert(id);
        post_once(pump_posted, [this] { pump(); });
    }

    void pump() {
        // Output followers read what is committed: the buffer goes first.
        check(store.flush());
        const std::set<JobId> jobs = std::exchange(touched, {});
        for (const JobId id : jobs) {
            std::vector<std::shared_ptr<Follower>> of_job;
            const auto [first, last] = followers.equal_range(id);
            for (auto it = first; it != last; ++it)
                of_job.push_back(it->second);
            for (const auto& follower : of_job)
                if (!feed(*follower))
                    forget(follower);
        }
    }

    // Sends what the follower has not seen; false once it is done with.
    bool feed(Follower& follower) {
        if (!follower.responder.connected() || follower.responder.done())
            return false;
        const bool ended = !active.contains(follower.id);
        if (follower.output) {
            for (;;) {
                auto chunks =
                    store.output(follower.id, {follower.output_seq, std::nullopt, kReplyBytes});
                if (!chunks) {
                    follower.responder.error(chunks.error());
                    return false;
                }
                if (chunks->empty())
                    break;
                Json output = Json::array();
                for (const OutputChunk& chunk : *chunks)
                    output.push_back(chunk_json(chunk));
                follower.output_seq = chunks->back().seq;
                follower.responder.more({{"output", std::move(output)}});
            }
        }
        auto events = store.events(follower.id, follower.event_seq);
        if (!events) {
            follower.responder.error(events.error());
            return false;
        }
        Json list = Json::array();
        for (const JobEvent& event : *events)
            list.push_back(event_json(event));
        if (!events->empty())
            follower.event_seq = events->back().seq;
        if (ended || !follower.follow) {
            if (follower.output) {
                if (!list.empty())
                    follower.responder.more({{"events", std::move(list)}});
                auto last = summary(follower.id);
                if (last)
                    follower.responder.result(*last);
                else
                    follower.responder.error(last.error());
            } else {
                follower.responder.result({{"events", std::move(list)}});
            }
            return false;
        }
        if (!list.empty())
            follower.responder.more({{"events", std::move(list)}});
        return true;
    }

    void forget(const std::shared_ptr<Follower>& follower) {
        const auto [first, last] = followers.equal_range(follower->id);
        for (auto it = first; it != last; ++it)
            if (it->second == follower) {
                followers.erase(it);
                return;
            }
    }

    void follow(Responder responder, JobId id, bool output, bool keep_following) {
        auto record = store.job(id);
        if (!record) {
            responder.error(no_such_job(id));
            return;
        }
        auto follower = std::make_shared<Follower>(
            Follower{std::move(responder), id, output, keep_following, 0, 0});
        if (output)
            follower->responder.more({{"jobspec", *parse_json("jobspec", record->jobspec)}});
        check(store.flush());
        if (feed(*follower))
            followers.emplace(id, follower);
    }

    // --- Waiting -------------------------------------------------------------

    void answer_waiters(JobId id) {
        const auto [first, last] = waiters.equal_range(id);
        if (first != last) {
            auto result = summary(id);
            for (auto it = first; it != last; ++it) {
                if (result)
                    it->second.result(*result);
                else
                    it->second.error(result.error());
            }
            waiters.erase(first, last);
        }
        for (auto it = all_waiters.begin(); it != all_waiters.end();) {
            AllWaiter& waiter = **it;
            waiter.left.erase(id);
            if (!waiter.left.empty()) {
                ++it;
                continue;
            }
            answer_all(waiter);
            it = all_waiters.erase(it);
        }
    }

    // The instance is ending with jobs still pending: whoever waits for
    // one of them is told so, with an error of its own type, rather than
    // left with no reply. Followers of jobs that have just ended still get
    // their summaries.
    void answer_shutdown() {
        const auto shut_down = [](JobId id) {
            return Error("job " + std::to_string(id),
                         "the instance shut down before the job ended; a pending job waits "
                         "again when the instance restarts on its state directory");
        };
        for (auto it = followers.begin(); it != followers.end();) {
            if (!active.contains(it->first)) {
                ++it;
                continue;
            }
            it->second->responder.error(shut_down(it->first), api::kShutdownError);
            it = followers.erase(it);
        }
        for (auto& [id, responder] : waiters)
            responder.error(shut_down(id), api::kShutdownError);
        waiters.clear();
        for (const auto& waiter : std::exchange(all_waiters, {}))
            waiter->responder.error(
                Error("job.wait", "the instance shut down before every job ended"),
                api::kShutdownError);
    }

    void answer_all(AllWaiter& waiter) {
        Json jobs = Json::array();
        for (const JobId id : waiter.ids)
            if (auto result = summary(id))
                jobs.push_back(*result);
        waiter.responder.result({{"jobs", std::move(jobs)}});
    }

    // --- Methods -------------------------------------------------------------

    void register_methods();
    // Registers a method, under each of `names`, whose params name a job
    // ("id"): `handle(id, request, responder)` runs once the id is read.
    template <class Handle>
    void register_job_method(std::initializer_list<const char*> names, Handle handle) {
        for (const char* name : names)
            broker.register_method(
                name, [this, handle](const api::Request& request, Responder responder) {
                    const auto id = id_param(request);
                    if (!id) {
                        responder.error(id.error());
                        return;
                    }
                    handle(*id, request, std::move(responder));
                });
    }
    // The job `id`, if not yet INACTIVE; otherwise answers the error and
    // returns null. program(): the same, and the job must be one made by
    // job.new and not ending.
    Active* running_job(JobId id, Responder& responder);
    Active* program(JobId id, Responder& responder);
};

JobManager::Impl::Active* JobManager::Impl::running_job(JobId id, Responder& responder) {
    const auto job = active.find(id);
    if (job == active.end()) {
        if (store.job(id))
            responder.error(Error("job " + std::to_string(id), "has ended"));
        else
            responder.error(no_such_job(id));
        return nullptr;
    }
    return &job->second;
}

void JobManager::Impl::register_methods() {
    broker.register_method("job.submit", [this](const api::Request& request, Responder responder) {
        const auto jobspec = request.params.find("jobspec");
        if (jobspec == request.params.end()) {
            responder.error(param_error(request, "\"jobspec\" is missing"));
            return;
        }
        auto interactive = bool_param(request, "interactive");
        if (!interactive) {
            responder.error(interactive.error());
            return;
        }
        auto id = submit(*jobspec, responder.peer(), *interactive);
        if (!id) {
            responder.error(id.error());
            return;
        }
        if (*interactive)
            responder.when_disconnected([this, alive = std::weak_ptr<bool>(alive), id = *id] {
                if (alive.lock())
                    front_end_gone(id);
            });
        responder.result({{"id", *id}});
    });

    broker.register_method("job.list", [this](const api::Request& request, Responder responder) {
        JobFilter filter;
        const Json& params = request.params;
        auto states = states_param(request);
        if (!states) {
            responder.error(states.error());
            return;
        }
        filter.states = std::move(*states);
        auto userid = uid_param(request);
        if (!userid) {
            responder.error(userid.error());
            return;
        }
        filter.owner = *userid;
        if (const auto name = params.find("name"); name != params.end() && name->is_string())
            filter.name = name->get<std::string>();
        auto limit = int_param(request, "limit", 0);
        if (!limit || *limit < 0) {
            responder.error(limit ? param_error(request, "\"limit\" must not be negative")
                                  : limit.error());
            return;
        }
        filter.limit = static_cast<std::size_t>(*limit);
        auto records = store.list(filter);
        if (!records) {
            responder.error(records.error());
            return;
        }
        Json jobs = Json::array();
        for (const JobRecord& record : *records)
            jobs.push_back(summary(record));
        responder.result({{"jobs", std::move(jobs)}});
    });

    const auto info = [this](JobId id, const api::Request&, Responder responder) {
        auto record = store.job(id);
        if (!record) {
            responder.error(no_such_job(id));
            return;
        }
        Json info = summary(*record);
        info["jobspec"] = *parse_json("jobspec", record->jobspec);
        info["R"] = record->R ? *parse_json("R", *record->R) : Json(nullptr);
        info["taskmap"] =
            record->taskmap ? *parse_json("taskmap", *record->taskmap) : Json(nullptr);
        Json eventlog = Json::array();
        if (auto events = store.events(id))
            for (const JobEvent& event : *events)
                eventlog.push_back(event_json(event));
        info["eventlog"] = std::move(eventlog);
        Json exits = Json::array();
        if (auto tasks = store.task_exits(id))
            for (const TaskExit& task : *tasks)
                exits.push_back({{"rank", task.rank}, {"wait_status", task.wait_status}});
        info["task_exits"] = std::move(exits);
        responder.result(info);
    };
    register_job_method({"job.info", "job.getinfo"}, info);  // RFC 8 calls it getinfo

    register_job_method({"job.eventlog"},
                        [this](JobId id, const api::Request& request, Responder responder) {
                            auto keep = bool_param(request, "follow");
                            if (!keep) {
                                responder.error(keep.error());
                                return;
                            }
                            follow(std::move(responder), id, false, *keep);
                        });

    register_job_method({"job.attach"}, [this](JobId id, const api::Request&, Responder responder) {
        follow(std::move(responder), id, true, true);
    });

    register_job_method({"job.stdin"}, [this](JobId id, const api::Request& request,
                                              Responder responder) {
        auto eof = bool_param(request, "eof");
        if (!eof) {
            responder.error(eof.error());
            return;
        }
        std::string bytes;
        if (const auto data = request.params.find("data"); data != request.params.end()) {
            auto decoded =
                data->is_string()
                    ? base64_decode(data->get<std::string>())
                    : Result<std::string>(param_error(request, "\"data\" must be a base64 string"));
            if (!decoded) {
                responder.error(decoded.error());
                return;
            }
            bytes = std::move(*decoded);
        }
        Active* job = running_job(id, responder);
        if (!job)
            return;
        if (!job->execs.empty()) {
            // The first exec's tasks read it (rank 0, unless --input said otherwise).
            ShellProcess& process = *job->execs.front()->process;
            if (!bytes.empty())
                if (auto written = process.write_stdin(bytes); !written) {
                    responder.error(written.error());
                    return;
                }
            if (*eof)
                process.close_stdin();
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
        [this](JobId id, const api::Request& request, Responder responder) {
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
                run->process->signal(static_cast<int>(*number));
            responder.result(Json::object());
        });

    register_job_method({"job.cancel"}, [this](JobId id, const api::Request&, Responder responder) {
        Active* job = running_job(id, responder);
        if (!job)
            return;
        responder.result(Json::object());
        cancel(*job, responder.peer().uid);
    });

    broker.register_method("resource.list", [this](const api::Request&, Responder responder) {
        // The scheduler's view: what no job holds is free. Every rank of the
        // inventory counts as up: nothing here marks a node down yet.
        const ResourceSet free = scheduler.free_resources();
        responder.result({{"all", inventory.to_json()},
                          {"free", free.to_json()},
                          {"allocated", inventory.diff(free).to_json()},
                          {"down", ResourceSet().to_json()}});
    });

    broker.register_method(
        "job.cancelall", [this](const api::Request& request, Responder responder) {
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

    register_job_method(
        {"job.urgency"}, [this](JobId id, const api::Request& request, Responder responder) {
            auto urgency = int_param(request, "urgency", -1);
            if (!urgency) {
                responder.error(urgency.error());
                return;
            }
            if (*urgency < 0 || *urgency > 31) {
                responder.error(param_error(
                    request, "urgency " + std::to_string(*urgency) + " is not in 0-31"));
                return;
            }
            Active* job = running_job(id, responder);
            if (!job)
                return;
            if (!scheduler.find_pending(id)) {
                responder.error(Error(
                    "job " + std::to_string(id),
                    "is not waiting in the queue (" + std::string(to_string(job->state)) + ")"));
                return;
            }
            check(scheduler.set_urgency(id, static_cast<int>(*urgency)));
            check(store.set_urgency(id, static_cast<int>(*urgency)));
            post_event(*job, "urgency", {{"urgency", *urgency}});
            schedule_soon();
            responder.result(Json::object());
        });

    broker.register_method("job.wait", [this](const api::Request& request, Responder responder) {
        auto all = bool_param(request, "all");
        if (!all) {
            responder.error(all.error());
            return;
        }
        if (*all) {
            auto waiter = std::make_shared<AllWaiter>(AllWaiter{std::move(responder), {}, {}});
            for (const auto& [id, job] : active) {
                waiter->ids.push_back(id);
                waiter->left.insert(id);
            }
            if (waiter->left.empty())
                answer_all(*waiter);
            else
                all_waiters.push_back(waiter);
            return;
        }
        auto id = id_param(request);
        if (!id) {
            responder.error(id.error());
            return;
        }
        if (active.contains(*id)) {
            waiters.emplace(*id, std::move(responder));
            return;
        }
        auto result = summary(*id);
        if (result)
            responder.result(*result);
        else
            responder.error(result.error());
    });

    // job.purge {"id"}: that inactive job; without an id, every inactive job.
    const Handler purge = [this](const api::Request& request, Responder responder) {
        if (!request.params.contains("id")) {
            auto purged = store.purge_inactive();
            if (purged)
                responder.result({{"purged", *purged}});
            else
                responder.error(purged.error());
            return;
        }
        auto id = id_param(request);
        if (!id) {
            responder.error(id.error());
            return;
        }
        if (!store.job(*id)) {
            responder.error(no_such_job(*id));
            return;
        }
        if (active.contains(*id)) {
            responder.error(Error("job " + std::to_string(*id), "is still active"));
            return;
        }
        if (auto purged = store.purge(*id); !purged) {
            responder.error(purged.error());
            return;
        }
        responder.result({{"purged", 1}});
    };
    broker.register_method("job.purge", purge);
    broker.register_method("job.reap", purge);  // RFC 8's name

    broker.register_method("job.new", [this](const api::Request& request, Responder responder) {
        std::string name = "program";
        if (const auto given = request.params.find("name"); given != request.params.end()) {
            if (!given->is_string()) {
                responder.error(param_error(request, "\"name\" must be a string"));
                return;
            }
            name = given->get<std::string>();
        }
        auto id = create_program(name, responder.peer());
        if (id)
            responder.result({{"id", *id}});
        else
            responder.error(id.error());
    });

    // job.grow / job.shrink {"id","R"}: a program's resources.
    for (const bool growing : {true, false}) {
        register_job_method(
            {growing ? "job.grow" : "job.shrink"},
            [this, growing](JobId id, const api::Request& request, Responder responder) {
                auto R = ResourceSet::from_json(request.params.value("R", Json()));
                if (!R) {
                    responder.error(Error(request.method, "\"R\": " + R.error().str()));
                    return;
                }
                Active* job = program(id, responder);
                if (!job)
                    return;
                auto changed = growing ? grow(*job, *R) : shrink(*job, *R);
                if (!changed) {
                    responder.error(changed.error());
                    return;
                }
                responder.result({{"R", job->R ? job->R->to_json() : Json(nullptr)}});
            });
    }

    // job.map {"id","jobspec"}: the jobspec's apps become the program's
    // pending tasks; its attributes (environment, directory, limits) are
    // those the next exec runs with.
    register_job_method(
        {"job.map"}, [this](JobId id, const api::Request& request, Responder responder) {
            auto spec = Jobspec::from_json(request.params.value("jobspec", Json()));
            if (!spec) {
                responder.error(spec.error());
                return;
            }
            if (auto allowed = check_for_instance(*spec, request.method); !allowed) {
                responder.error(allowed.error());
                return;
            }
            Active* job = program(id, responder);
            if (!job)
                return;
            std::vector<Jobspec::App> apps = std::move(spec->apps);
            spec->apps = job->spec.apps;
            job->spec = std::move(*spec);
            job->pending_apps.insert(job->pending_apps.end(), apps.begin(), apps.end());
            post_event(*job, "map", {{"apps", apps.size()}});
            responder.result({{"pending_apps", job->pending_apps.size()}});
        });

    register_job_method({"job.exec"}, [this](JobId id, const api::Request&, Responder responder) {
        Active* job = program(id, responder);
        if (!job)
            return;
        auto ranks = exec(*job);
        if (ranks)
            responder.result({{"ranks", ranks->encode()}});
        else
            responder.error(ranks.error());
    });

    // job.terminate {"id"}: ends any job and answers once it is INACTIVE.
    register_job_method(
        {"job.terminate"}, [this](JobId id, const api::Request&, Responder responder) {
            Active* job = running_job(id, responder);
            if (!job)
                return;
            const std::uint32_t uid = responder.peer().uid;
            waiters.emplace(id, std::move(responder));
            if (!job->manual)
                raise(*job, "cancel", "terminated by uid " + std::to_string(uid), uid);
            else if (!job->terminating)
                terminate(*job);
        });
}

JobManager::Impl::Active* JobManager::Impl::program(JobId id, Responder& responder) {
    Active* job = running_job(id, responder);
    if (job && !job->manual) {
        responder.error(Error("job " + std::to_string(id),
                              "was submitted, not made by job.new: the instance runs it"));
        return nullptr;
    }
    if (job && job->terminating) {
        responder.error(Error("job " + std::to_string(id), "is ending"));
        return nullptr;
    }
    return job;
}

// --- JobManager ------------------------------------------------------------------

Result<std::unique_ptr<JobManager>> JobManager::open(asio::io_context& loop, Broker& broker,
                                                     const std::string& state_dir,
                                                     const ResourceSet& inventory,
                                                     const RankTopologies& topologies,
                                                     const std::string& shell_program) {
    auto store = Store::open(std::filesystem::path(state_dir) / Store::kFileName);
    if (!store)
        return store.error();
    auto impl = std::make_unique<Impl>(loop, broker, std::move(*store), inventory, topologies,
                                       shell_program);
    if (auto restored = impl->restore(); !restored)
        return restored.error();
    impl->register_methods();
    return std::unique_ptr<JobManager>(new JobManager(std::move(impl)));
}

Status check_ranks_have_brokers(const ResourceSet& R) {
    // The ranks with a broker to start job shells: this one alone, until
    // brokers on other nodes join an instance.
    const IdSet unserved = R.ranks() - IdSet{0};
    if (unserved.empty())
        return {};
    return Error("", "R names rank" + std::string(unserved.count() > 1 ? "s " : " ") +
                         unserved.encode() +
                         ", where no broker runs (this instance has one broker, rank 0)");
}

JobManager::JobManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobManager::~JobManager() = default;

JobCounts JobManager::counts() const {
    JobCounts counts;
    for (const auto& [id, job] : impl_->active) {
        if (job.state == JobState::Run || job.state == JobState::Cleanup)
            ++counts.running;
        else
            ++counts.pending;
    }
    if (auto inactive = impl_->store.count({{JobState::Inactive}}))
        counts.inactive = *inactive;
    return counts;
}

void JobManager::stop(std::function<void()> done) {
    if (impl_->none_running()) {
        impl_->answer_shutdown();
        done();
        return;
    }
    impl_->on_stopped = [impl = impl_.get(), done = std::move(done)] {
        impl->answer_shutdown();
        done();
    };
    for (auto& [id, job] : impl_->active)
        if (!job.execs.empty())
            impl_->raise(job, "shutdown", "the instance is ending");
}

}  // namespace gantry::broker
