#include "broker/job_manager.h"

#include <algorithm>
#include <cmath>

#include "broker/job_params.h"
#include "formats/hostlist.h"
#include "util/duration.h"
#include "util/text.h"

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

// The ranks `targets` names: an idset of ranks, or a hostlist of the
// instance's host names; all of them the instance's.
Result<IdSet> JobManager::Impl::ranks_named(const std::string& method, const Json& targets) const {
    if (!targets.is_string() || targets.get<std::string>().empty())
        return Error(method, "\"targets\" must be ranks (an idset) or host names (a hostlist)");
    const std::string text = targets.get<std::string>();
    const IdSet all = inventory.ranks();
    if (auto ranks = IdSet::parse(text)) {
        if (const IdSet unknown = *ranks - all; !unknown.empty())
            return Error(method, "no rank " + unknown.encode() + " in this instance (ranks " +
                                     all.encode() + ")");
        return *ranks;
    }
    auto hosts = Hostlist::parse(text);
    if (!hosts)
        return Error(method,
                     quote(text) + " is neither ranks nor host names: " + hosts.error().message());
    IdSet ranks;
    for (const std::string& host : hosts->expand()) {
        const auto found =
            std::find_if(inventory.targets().begin(), inventory.targets().end(),
                         [&host](const auto& entry) { return entry.second.hostname == host; });
        if (found == inventory.targets().end())
            return Error(method, "no node " + host + " in this instance (" +
                                     inventory.nodelist().encode() + ")");
        ranks.insert(found->first);
    }
    return ranks;
}

// The scheduler's view: what no job holds is free, unless its node is
// down or drained; each state's R, and each drained node's reason.
Json JobManager::Impl::resource_list() {
    const ResourceSet free = scheduler.free_resources();
    const ResourceSet down = scheduler.down_resources();
    const ResourceSet drained = scheduler.drained_resources();
    Json drain = Json::array();
    const auto drained_nodes = store.drained();
    check(drained_nodes);
    for (const DrainedNode& node : drained_nodes ? *drained_nodes : std::vector<DrainedNode>{})
        drain.push_back({{"rank", node.rank},
                         {"host", inventory.find(node.rank) ? inventory.find(node.rank)->hostname
                                                            : std::string()},
                         {"reason", node.reason},
                         {"time", node.time}});
    return {{"all", inventory.to_json()},
            {"free", free.to_json()},
            {"allocated", inventory.diff(free).diff(down).diff(drained).to_json()},
            {"down", down.to_json()},
            {"drained", drained.to_json()},
            {"drain", std::move(drain)}};
}

void JobManager::Impl::register_sched_methods() {
    broker.register_method("resource.list", [this](const overlay::Message&, Responder responder) {
        responder.result(resource_list());
    });
    // resource.drain {"targets", "reason"}: nothing new is placed on those
    // nodes; what runs there goes on. resource.undrain {"targets"}.
    broker.register_method(
        "resource.drain", [this](const overlay::Message& request, Responder responder) {
            auto ranks = ranks_named(request.method, request.params.value("targets", Json()));
            if (!ranks) {
                responder.error(ranks.error());
                return;
            }
            const Json reason = request.params.value("reason", Json(""));
            if (!reason.is_string()) {
                responder.error(param_error(request, "\"reason\" must be a string"));
                return;
            }
            check(store.set_drained(*ranks, reason.get<std::string>(), epoch_seconds()));
            scheduler.set_drained(*ranks);
            responder.result({{"ranks", ranks->encode()}});
        });
    broker.register_method(
        "resource.undrain", [this](const overlay::Message& request, Responder responder) {
            auto ranks = ranks_named(request.method, request.params.value("targets", Json()));
            if (!ranks) {
                responder.error(ranks.error());
                return;
            }
            if (const IdSet not_drained = *ranks - scheduler.drained(); !not_drained.empty()) {
                responder.error(
                    Error(request.method, "rank " + not_drained.encode() + " is not drained"));
                return;
            }
            check(store.set_undrained(*ranks));
            scheduler.set_undrained(*ranks);
            schedule_soon();
            responder.result({{"ranks", ranks->encode()}});
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
