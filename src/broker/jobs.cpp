#include "broker/jobs.h"

#include <unistd.h>

#include "broker/job_manager.h"
#include "broker/job_params.h"
#include "shell/map_io.h"
#include "util/duration.h"

namespace gantry::broker {

// --- Records -------------------------------------------------------------------

void JobManager::Impl::report(const Error& error) {
    ::dprintf(STDERR_FILENO, "gantry: %s\n", error.str().c_str());
}

void JobManager::Impl::post_event(Active& job, std::string_view name, const Json& context) {
    check(store.append_event(job.id, epoch_seconds(), name, context));
    touch(job.id);
}

void JobManager::Impl::enter(Active& job, JobState state) {
    job.state = state;
    check(store.set_state(job.id, state, epoch_seconds()));
}

Result<JobRecord> JobManager::Impl::record_of(JobId id) {
    auto record = store.job(id);
    if (record)
        return record;
    if (record.error().is_not_found())
        return no_such_job(id);
    report(record.error());
    return record.error();
}

MapInputs JobManager::Impl::map_inputs(const Jobspec& spec) const {
    MapInputs inputs = shell::read_map_inputs(spec);
    inputs.ranks = topologies;
    return inputs;
}

// --- Restarting ----------------------------------------------------------------

// The jobs a broker left unfinished on this state directory: those that
// ran were lost with it (their shells killed their tasks when it ended);
// those waiting wait again, in their order.
Status JobManager::Impl::restore() {
    // Nodes drained before the instance stopped stay drained.
    auto drained = store.drained();
    if (!drained)
        return drained.error();
    IdSet ranks;
    for (const DrainedNode& node : *drained)
        ranks.insert(node.rank);
    scheduler.set_drained(ranks);
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
        if (job.state == JobState::kRun || job.state == JobState::kCleanup || !spec) {
            job.lost_R = job.state == JobState::kRun || job.state == JobState::kCleanup;
            raise(job, "lost",
                  spec || job.lost_R ? "the broker ended while the job ran"
                                     : "its jobspec cannot be read: " + spec.error().str());
            continue;
        }
        if (was_interactive(id)) {
            raise(job, "cancel", kFrontEndGone);
            continue;
        }
        if (job.state == JobState::kSched) {
            queue(job);
            continue;
        }
        enter(job, JobState::kDepend);
        resolve_dependencies(job);
    }
    return {};
}

bool JobManager::Impl::was_interactive(JobId id) {
    auto events = store.events(id);
    return events && !events->empty() && events->front().name == "submit" &&
           events->front().context.value("interactive", false);
}

// --- Methods -------------------------------------------------------------------

void JobManager::Impl::register_methods() {
    register_submit_methods();
    register_sched_methods();
    register_exec_methods();
    register_output_methods();
    register_wait_methods();
    register_program_methods();
}

JobManager::Impl::Active* JobManager::Impl::running_job(JobId id, Responder& responder) {
    const auto job = active.find(id);
    if (job == active.end()) {
        auto record = record_of(id);
        responder.error(record ? Error("job " + std::to_string(id), "has ended") : record.error());
        return nullptr;
    }
    return &job->second;
}

// --- JobManager ------------------------------------------------------------------

Result<std::unique_ptr<JobManager>> JobManager::open(asio::io_context& loop, Broker& broker,
                                                     Store store, const ResourceSet& inventory,
                                                     const RankTopologies& topologies,
                                                     std::unique_ptr<ExecService> exec_service) {
    auto impl = std::make_unique<Impl>(loop, broker, std::move(store), inventory, topologies,
                                       std::move(exec_service));
    if (auto restored = impl->restore(); !restored)
        return restored.error();
    impl->register_methods();
    return std::unique_ptr<JobManager>(new JobManager(std::move(impl)));
}

JobManager::JobManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobManager::~JobManager() = default;

void JobManager::nodes_down(const IdSet& ranks) {
    impl_->scheduler.set_down(ranks);
}

std::map<std::uint32_t, std::string> JobManager::drained() const {
    std::map<std::uint32_t, std::string> reasons;
    for (const IdSet::Id rank : impl_->scheduler.drained())
        reasons[static_cast<std::uint32_t>(rank)];
    if (const auto nodes = impl_->store.drained())
        for (const DrainedNode& node : *nodes)
            reasons[node.rank] = node.reason;
    return reasons;
}

void JobManager::nodes_up(const IdSet& ranks) {
    impl_->scheduler.set_up(ranks);
    impl_->schedule_soon();
}

JobCounts JobManager::counts() const {
    JobCounts counts;
    for (const auto& [id, job] : impl_->active) {
        if (job.state == JobState::kRun || job.state == JobState::kCleanup)
            ++counts.running;
        else
            ++counts.pending;
    }
    if (auto inactive = impl_->store.count({{JobState::kInactive}}))
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