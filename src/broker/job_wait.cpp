#include "broker/job_manager.h"

#include "broker/job_params.h"

namespace gantry::broker {

void JobManager::Impl::answer_waiters(JobId id) {
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
void JobManager::Impl::answer_shutdown() {
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
        it->second->responder.error(shut_down(it->first), overlay::kShutdownError);
        it = followers.erase(it);
    }
    for (auto& [id, responder] : waiters)
        responder.error(shut_down(id), overlay::kShutdownError);
    waiters.clear();
    for (const auto& waiter : std::exchange(all_waiters, {}))
        waiter->responder.error(Error("job.wait", "the instance shut down before every job ended"),
                                overlay::kShutdownError);
}

void JobManager::Impl::answer_all(AllWaiter& waiter) {
    Json jobs = Json::array();
    for (const JobId id : waiter.ids)
        if (auto result = summary(id))
            jobs.push_back(*result);
    waiter.responder.result({{"jobs", std::move(jobs)}});
}

void JobManager::Impl::register_wait_methods() {
    broker.register_method(
        "job.wait", [this](const overlay::Message& request, Responder responder) {
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
    const Handler purge = [this](const overlay::Message& request, Responder responder) {
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
        if (auto record = record_of(*id); !record) {
            responder.error(record.error());
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
}

}  // namespace gantry::broker
