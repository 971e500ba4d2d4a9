#include "broker/job_manager.h"

#include <chrono>

namespace gantry::broker {

JobManager::Impl::Verdict JobManager::Impl::verdict_of(const Jobspec::Dependency& dependency) {
    if (active.contains(dependency.id))
        return Verdict::kWaiting;
    auto record = store.job(dependency.id);
    if (!record && record.error().is_not_found())
        return Verdict::kNever;  // purged
    if (!record) {
        // The store cannot say now (busy, I/O): that is no verdict on the
        // job, which asks again later.
        report(record.error());
        return Verdict::kUnknown;
    }
    const bool ok = record->exit_code == 0;
    switch (dependency.type) {
        case Jobspec::Dependency::Type::kAfterAny:
            return Verdict::kMet;
        case Jobspec::Dependency::Type::kAfterOk:
            return ok ? Verdict::kMet : Verdict::kNever;
        case Jobspec::Dependency::Type::kAfterNotOk:
            return ok ? Verdict::kNever : Verdict::kMet;
    }
    return Verdict::kNever;
}

void JobManager::Impl::resolve_dependencies(Active& job) {
    bool waiting = false;
    for (const Jobspec::Dependency& dependency : job.spec.attributes.dependencies) {
        switch (verdict_of(dependency)) {
            case Verdict::kNever:
                raise(job, "dependency",
                      std::string(dependency_type_name(dependency.type)) + ":" +
                          std::to_string(dependency.id) + " can never be satisfied");
                return;
            case Verdict::kWaiting:
                waiting = true;
                break;
            case Verdict::kMet:
                break;
            case Verdict::kUnknown:
                depend_retry.insert(job.id);
                retry_dependencies_later();
                return;
        }
    }
    if (waiting) {
        for (const Jobspec::Dependency& dependency : job.spec.attributes.dependencies)
            dependents.emplace(dependency.id, job.id);
        return;
    }
    post_event(job, "depend");
    enter(job, JobState::kSched);
    queue(job);
}

// A job has ended: those that waited for it may go on.
void JobManager::Impl::release_dependents(JobId ended) {
    std::set<JobId> waiting;
    const auto [first, last] = dependents.equal_range(ended);
    for (auto it = first; it != last; ++it)
        waiting.insert(it->second);
    dependents.erase(first, last);
    for (const JobId id : waiting) {
        const auto job = active.find(id);
        if (job == active.end() || job->second.state != JobState::kDepend)
            continue;
        // Still listed under its other dependencies: forget those first.
        std::erase_if(dependents, [id](const auto& entry) { return entry.second == id; });
        resolve_dependencies(job->second);
    }
}

// Jobs whose dependencies the store could not check are checked again
// after a second, as long as the store keeps failing.
void JobManager::Impl::retry_dependencies_later() {
    if (depend_retry_armed)
        return;
    depend_retry_armed = true;
    depend_retry_timer.expires_after(std::chrono::seconds(1));
    depend_retry_timer.async_wait([this](const asio::error_code& failure) {
        depend_retry_armed = false;
        if (failure)
            return;
        for (const JobId id : std::exchange(depend_retry, {})) {
            const auto job = active.find(id);
            if (job == active.end() || job->second.state != JobState::kDepend)
                continue;
            std::erase_if(dependents, [id](const auto& entry) { return entry.second == id; });
            resolve_dependencies(job->second);
        }
    });
}

}  // namespace gantry::broker
