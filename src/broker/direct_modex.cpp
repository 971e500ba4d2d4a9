#include "broker/direct_modex.h"

#include <algorithm>
#include <utility>

#include "util/base64.h"

namespace gantry::broker {

DirectModex::DirectModex(asio::io_context& loop, Broker& broker, Peers& peers, FindShell find)
    : loop_(loop), peers_(peers), find_(std::move(find)) {
    broker.register_method(
        "exec.modex",
        [this](const overlay::Message& request, Responder responder) {
            const auto job = request.params.find("job");
            const auto task = request.params.find("task");
            if (job == request.params.end() || !job->is_number_unsigned() ||
                task == request.params.end() || !task->is_number_unsigned() ||
                task->get<std::uint64_t>() > UINT32_MAX) {
                responder.error(Error(request.method, "\"job\" and \"task\" must be numbers"));
                return;
            }
            const auto id = job->get<std::uint64_t>();
            const auto rank = task->get<std::uint32_t>();
            std::string key = request.params.value("key", "");
            if (Execution* shell = find_(id)) {
                serve(*shell, id, rank, key, std::move(responder));
                return;
            }
            if (started_.contains(id)) {
                responder.error(
                    Error(request.method, "job " + std::to_string(id) + " has ended here: task " +
                                              std::to_string(rank) + " has nothing to give"));
                return;
            }
            auto& waiting =
                waiting_.emplace_back(Waiting{id, rank, std::move(key), std::move(responder),
                                              asio::steady_timer(loop_, kShellWait)});
            waiting.deadline.async_wait([this, entry = &waiting](const std::error_code& error) {
                if (error)
                    return;  // served, or the broker is going
                // Served since the timer expired: it is gone from the list.
                const auto found = std::find_if(waiting_.begin(), waiting_.end(),
                                                [entry](const Waiting& w) { return &w == entry; });
                if (found == waiting_.end())
                    return;
                found->responder.error(Error(
                    "exec.modex", "job " + std::to_string(found->job) + " has no shell here"));
                waiting_.erase(found);
            });
        },
        ServedOn::kEveryRank);
}

void DirectModex::serve(Execution& shell, std::uint64_t job, std::uint32_t task,
                        const std::string& key, Responder responder) {
    shell.serve_modex(task, key, [responder, job, task](std::optional<std::string> data) mutable {
        if (data)
            responder.result({{"data", base64_encode(*data)}});
        else
            responder.error(Error("exec.modex", "task " + std::to_string(task) + " of job " +
                                                    std::to_string(job) + " has nothing to give"));
    });
}

void DirectModex::shell_started(std::uint64_t job) {
    // Enough to tell a job that ended here from one not started yet, for
    // as long as a request may be on its way.
    constexpr std::size_t kRemembered = 4096;
    started_.insert(job);
    while (started_.size() > kRemembered)
        started_.erase(started_.begin());
    Execution* shell = find_(job);
    if (!shell)
        return;
    for (auto entry = waiting_.begin(); entry != waiting_.end();) {
        if (entry->job != job) {
            ++entry;
            continue;
        }
        serve(*shell, job, entry->task, entry->key, std::move(entry->responder));
        entry = waiting_.erase(entry);  // cancels its timer
    }
}

void DirectModex::ask(std::uint64_t job, std::uint32_t rank, std::uint32_t task,
                      const std::string& key, Execution::ModexAnswer answer) {
    peers_.call(rank, "exec.modex", {{"job", job}, {"task", task}, {"key", key}},
                [answer = std::move(answer)](const overlay::Reply& reply) {
                    if (!reply.result) {
                        answer(std::nullopt);
                        return;
                    }
                    auto data = base64_decode(reply.result->value("data", ""));
                    answer(data ? std::optional<std::string>(std::move(*data)) : std::nullopt);
                });
}

}  // namespace gantry::broker
