#include "broker/job_manager.h"

#include <algorithm>
#include <unordered_map>

#include "broker/job_params.h"
#include "mapper/jobspec_map.h"
#include "util/duration.h"

namespace gantry::broker {

// --- Checks -------------------------------------------------------------------

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
    request.constraint = spec.resources.constraint;
    request.time_limit = spec.attributes.time_limit;
    return request;
}

// What an instance accepts of a jobspec: its nodes are the instance's.
// In the jobspec's words: the command that built it says it in its own
// (cli/instance_client.h) before it asks.
Status check_for_instance(const Jobspec& spec, const std::string& method) {
    const auto refusal = instance_refusal(spec);
    if (!refusal)
        return {};
    using Reason = InstanceRefusal::Reason;
    const std::string app = "apps[" + std::to_string(refusal->app) + "]";
    switch (refusal->reason) {
        case Reason::kSimulatedTopology:
            return Error(method, "job.topology simulates nodes, where nothing can run");
        case Reason::kAppWithoutNtasks:
            return Error(method, app +
                                     ".ntasks is 0: every app of an MPMD program needs a task "
                                     "count inside an instance");
    }
    return {};
}

// The jobspec the shell runs inside `R`: one task per allocated slot when
// the command line gave no -n (unless a ppr policy derives the count, as
// mpirun's --map-by ppr:N:node without -n does), and -c cores bound to each
// task.
Jobspec placed_jobspec(Jobspec spec, const ResourceSet& R) {
    const bool names_hosts = !spec.job.hosts.empty() || !spec.job.hostfile.empty();
    Jobspec::App& app = spec.apps[0];
    const std::string pe = spec.resources.cores_per_task > 1
                               ? ":PE=" + std::to_string(spec.resources.cores_per_task)
                               : "";
    if (spec.apps.size() == 1 && app.ntasks == 0 && !app.map_by.starts_with("ppr:") &&
        !names_hosts) {
        const std::int64_t slots =
            std::max<std::int64_t>(1, R.nslots().value_or(static_cast<std::int64_t>(R.nnodes())));
        const auto nodes = static_cast<std::int64_t>(R.nnodes());
        // -N without -n: each node runs its own slots' tasks, as srun and
        // flux run place them, even where whole nodes hold more cores.
        if (spec.resources.nodes > 0 && app.map_by.empty() && nodes > 0 && slots % nodes == 0)
            app.map_by = "ppr:" + std::to_string(slots / nodes) + ":node" + pe;
        else
            app.ntasks = static_cast<std::uint32_t>(slots);
    }
    if (!pe.empty() && app.map_by.empty())
        app.map_by = "slot" + pe;
    return spec;
}

// The instance's nodes a job names with -H or --hostfile (its own or an
// app's), whole: the R it runs on. Nothing when it names none.
Result<std::optional<ResourceSet>> named_nodes(const Jobspec& spec, const MapInputs& inputs,
                                               const ResourceSet& inventory) {
    auto hosts = jobspec_hosts(spec, inputs);
    if (!hosts)
        return hosts.error();
    if (hosts->empty())
        return std::optional<ResourceSet>{};
    const auto& targets = inventory.targets();
    std::unordered_map<std::string_view, ResourceSet::Rank> rank_of_host;
    for (const auto& [rank, target] : targets)
        rank_of_host.emplace(target.hostname, rank);  // the first of a name
    ResourceSet named;
    for (const std::string& host : *hosts) {
        const auto found = rank_of_host.find(host);
        if (found == rank_of_host.end()) {
            std::string names;
            for (const auto& [rank, target] : targets)
                names += (names.empty() ? "" : ",") + target.hostname;
            return Error("job.submit",
                         "host " + host + " is not one of the instance's nodes (" + names + ")");
        }
        if (auto added = named.insert(found->second, *inventory.find(found->second)); !added)
            return added.error();
    }
    return std::optional<ResourceSet>(std::move(named));
}

Result<JobId> JobManager::Impl::submit(const Json& document, const Peer& peer, bool interactive) {
    auto spec = Jobspec::from_json(document);
    if (!spec)
        return spec.error();
    if (auto status = check_for_instance(*spec, "job.submit"); !status)
        return status.error();
    const Request request = request_of(*spec);
    // A job naming hosts runs on those nodes, at once, as one given an R.
    if (!spec->resources.R) {
        auto named = named_nodes(*spec, map_inputs(*spec), inventory);
        if (!named)
            return named.error();
        spec->resources.R = std::move(*named);
    }
    if (spec->resources.R) {
        if (!spec->resources.R->diff(inventory).empty())
            return Error("job.submit", "--resources: not in the instance: " +
                                           spec->resources.R->diff(inventory).short_form());
    } else if (auto fits = scheduler.feasible(request); !fits) {
        return fits.error();
    }
    for (const Jobspec::Dependency& dependency : spec->attributes.dependencies) {
        if (active.contains(dependency.id))
            continue;
        if (auto found = store.job(dependency.id); !found) {
            if (!found.error().is_not_found())
                return found.error();  // the store cannot tell: not the job's fault
            return Error("job.submit",
                         "--dependency=" + std::string(dependency_type_name(dependency.type)) +
                             ":" + std::to_string(dependency.id) + ": no such job");
        }
    }
    // The policies and options are checked now, on the whole inventory
    // (or the given R), so that a job that cannot be mapped is refused
    // rather than failing later.
    const ResourceSet& pool = spec->resources.R ? *spec->resources.R : inventory;
    if (auto map = map_jobspec(placed_jobspec(*spec, pool), map_inputs(*spec), pool); !map)
        return map.error();

    NewJob record{spec->encode(),  spec->attributes.name,    peer.uid,
                  epoch_seconds(), spec->attributes.urgency, interactive};
    auto id = store.create_job(record);
    if (!id)
        return id.error();
    Active& job = active[*id];
    job.id = *id;
    job.spec = std::move(*spec);
    job.owner = peer.uid;
    job.interactive = interactive;
    enter(job, JobState::kDepend);
    touch(job.id);
    resolve_dependencies(job);
    return *id;
}

// The connection of an interactive job's front end has closed: it never
// starts without it; one running gets the end of its stdin, as a
// terminal's hangup would give it (it goes on, and keeps its output).
void JobManager::Impl::front_end_gone(JobId id) {
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
        job.execs.front()->execution->close_stdin();
}

void JobManager::Impl::register_submit_methods() {
    broker.register_method(
        "job.submit", [this](const overlay::Message& request, Responder responder) {
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
}

}  // namespace gantry::broker
