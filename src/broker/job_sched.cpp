#include "broker/job_manager.h"

#include <cmath>

#include "broker/job_params.h"
#include "util/duration.h"

namespace gantry::broker {

void JobManager::Impl::queue(Active& job) {
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
void JobManager::Impl::start_immediately(Active& job) {
    const ResourceSet& R = *job.spec.resources.R;
    if (auto held = scheduler.restore(job.id, R, epoch_seconds(), job.spec.attributes.time_limit);
        !held) {
        raise(job, "alloc", "--resources: " + held.error().str());
        return;
    }
    job.in_scheduler = true;
    start(job, R);
}

void JobManager::Impl::schedule_soon() {
    post_once(schedule_posted, [this] { schedule(); });
}

void JobManager::Impl::schedule() {
    if (on_stopped)
        return;  // the instance is ending: nothing more starts
    const double time = epoch_seconds();
    for (const Allocation& allocation : scheduler.schedule(time)) {
        const auto job = active.find(allocation.id);
        if (job != active.end())
            start(job->second, allocation.R);
    }
    begin_timer.cancel();
    if (const auto next = scheduler.next_begin_time(time)) {
        begin_timer.expires_after(
            std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil((*next - time) * 1000))));
        begin_timer.async_wait([this](const asio::error_code& failure) {
            if (!failure)
                schedule_soon();
        });
    }
}

void JobManager::Impl::register_sched_methods() {
    broker.register_method("resource.list", [this](const overlay::Message&, Responder responder) {
        // The scheduler's view: what no job holds is free, unless its node
        // is down.
        const ResourceSet free = scheduler.free_resources();
        const ResourceSet down = scheduler.down_resources();
        responder.result({{"all", inventory.to_json()},
                          {"free", free.to_json()},
                          {"allocated", inventory.diff(free).diff(down).to_json()},
                          {"down", down.to_json()}});
    });
    register_job_method(
        {"job.urgency"}, [this](JobId id, const overlay::Message& request, Responder responder) {
            auto urgency = int_param(request, "urgency", -1);
            if (!urgency) {
                responder.error(urgency.error());
                return;
            }
            if (*urgency < Jobspec::kUrgencyHold || *urgency > Jobspec::kUrgencyExpedite) {
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
}

}  // namespace gantry::broker
