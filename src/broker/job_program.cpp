#include "broker/job_manager.h"

#include "broker/job_params.h"
#include "util/duration.h"

namespace gantry::broker {

// job.new: an empty program, RUN at once, holding nothing until grown.
Result<JobId> JobManager::Impl::create_program(const std::string& name, const Peer& peer) {
    Jobspec empty;
    empty.attributes.name = name;
    auto id = store.create_job(
        {empty.encode(), name, peer.uid, epoch_seconds(), Jobspec::kUrgencyDefault});
    if (!id)
        return id.error();
    Active& job = active[*id];
    job.id = *id;
    job.spec = std::move(empty);
    job.owner = peer.uid;
    job.manual = true;
    post_event(job, "depend");
    post_event(job, "alloc");
    enter(job, JobState::kRun);
    return *id;
}

// The scheduler holds what a program has: `R` from now on.
Status JobManager::Impl::hold(Active& job, const ResourceSet& R) {
    if (job.in_scheduler && scheduler.find_running(job.id))
        check(scheduler.release(job.id));
    job.in_scheduler = false;
    if (R.empty())
        return {};
    if (auto held = scheduler.restore(job.id, R, epoch_seconds(), 0); !held)
        return held;
    job.in_scheduler = true;
    return {};
}

Status JobManager::Impl::grow(Active& job, const ResourceSet& added) {
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
Result<std::set<const JobManager::Impl::Exec*>> JobManager::Impl::shrink(
    Active& job, const ResourceSet& removed) {
    const ResourceSet before = job.R.value_or(ResourceSet());
    const ResourceSet taken = before.intersect(removed);
    if (taken.empty())
        return Error("job.shrink", "the job holds none of it");
    const ResourceSet after = before.diff(removed);
    check(hold(job, after));
    job.R = after;
    check(store.replace_R(job.id, after.encode()));
    post_event(job, "shrink", {{"R", taken.to_json()}});
    std::set<const Exec*> ending;
    for (const auto& run : job.execs)
        if (!run->R.intersect(taken).empty()) {
            ending.insert(run.get());
            run->execution->terminate();
        }
    return ending;
}

void JobManager::Impl::register_program_methods() {
    broker.register_method("job.new", [this](const overlay::Message& request, Responder responder) {
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
            [this, growing](JobId id, const overlay::Message& request, Responder responder) {
                auto R = ResourceSet::from_json(request.params.value("R", Json()));
                if (!R) {
                    responder.error(Error(request.method, "\"R\": " + R.error().str()));
                    return;
                }
                Active* job = program(id, responder);
                if (!job)
                    return;
                if (growing) {
                    if (auto grown = grow(*job, *R); !grown) {
                        responder.error(grown.error());
                        return;
                    }
                    responder.result({{"R", job->R->to_json()}});
                    return;
                }
                auto ending = shrink(*job, *R);
                if (!ending) {
                    responder.error(ending.error());
                    return;
                }
                Json result = {{"R", job->R ? job->R->to_json() : Json(nullptr)}};
                if (ending->empty())
                    responder.result(result);
                else
                    job->shrink_replies.push_back(
                        {std::move(responder), std::move(*ending), std::move(result)});
            });
    }

    // job.map {"id","jobspec"}: the jobspec's apps become the program's
    // pending tasks; its attributes (environment, directory, limits) are
    // those the next exec runs with.
    register_job_method(
        {"job.map"}, [this](JobId id, const overlay::Message& request, Responder responder) {
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

    register_job_method({"job.exec"},
                        [this](JobId id, const overlay::Message&, Responder responder) {
                            Active* job = program(id, responder);
                            if (!job)
                                return;
                            auto ranks = exec(*job);
                            if (ranks)
                                job->execs.back()->exec_reply = std::move(responder);
                            else
                                responder.error(ranks.error());
                        });

    // job.terminate {"id"}: ends any job and answers once it is INACTIVE.
    register_job_method(
        {"job.terminate"}, [this](JobId id, const overlay::Message&, Responder responder) {
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

}  // namespace gantry::broker
