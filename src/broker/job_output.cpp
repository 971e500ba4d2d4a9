#include "broker/job_manager.h"

#include "broker/job_params.h"
#include "util/base64.h"

namespace gantry::broker {

namespace {

// Output sent to a follower in one reply at most.
constexpr std::size_t kReplyBytes = std::size_t{1} << 20;

Json event_json(const JobEvent& event) {
    return {
        {"seq", event.seq}, {"time", event.time}, {"name", event.name}, {"context", event.context}};
}

Json chunk_json(const OutputChunk& chunk) {
    Json json{{"seq", chunk.seq},
              {"stream", to_string(chunk.stream)},
              {"rank", chunk.rank == kShellRank ? std::int64_t{-1} : std::int64_t{chunk.rank}}};
    put_data(json, chunk.bytes);
    return json;
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

// The nodes of the job's R as flux jobs shows them: a hostlist (its ranks
// when R names no hosts), and their number; none before it is allocated.
std::pair<std::string, std::uint64_t> nodes_of_record(const JobRecord& record) {
    if (!record.R)
        return {"", 0};
    auto R = ResourceSet::parse(*record.R);
    if (!R)
        return {"", 0};
    return {R->has_hostnames() ? R->nodelist().encode() : R->ranks().encode(), R->nnodes()};
}

}  // namespace

std::optional<Json> JobManager::Impl::first_exception(JobId id) {
    auto events = store.events(id);
    if (!events)
        return std::nullopt;
    for (const JobEvent& event : *events)
        if (event.name == "exception")
            return Json{{"type", event.context.value("type", "")},
                        {"note", event.context.value("note", "")}};
    return std::nullopt;
}

Json JobManager::Impl::summary(const JobRecord& record) {
    Json exception = nullptr;
    if (auto found = first_exception(record.id))
        exception = *found;
    const auto [nodelist, nnodes] = nodes_of_record(record);
    return {{"id", record.id},
            {"name", record.name},
            {"state", to_string(record.state)},
            {"urgency", record.urgency},
            {"userid", record.owner},
            {"submit_time", record.submit_time},
            {"state_time", record.state_time},
            {"ntasks", ntasks_of_record(record)},
            {"nnodes", nnodes},
            {"nodelist", nodelist},
            {"exit_code", record.exit_code ? Json(*record.exit_code) : Json(nullptr)},
            {"exception", exception}};
}

Result<Json> JobManager::Impl::summary(JobId id) {
    auto record = record_of(id);
    if (!record)
        return record.error();
    return summary(*record);
}

void JobManager::Impl::touch(JobId id) {
    if (!followers.contains(id))
        return;
    touched.insert(id);
    post_once(pump_posted, [this] { pump(); });
}

void JobManager::Impl::pump() {
    // Output followers read what is committed: the buffer goes first.
    check(store.flush());
    const std::set<JobId> jobs = std::exchange(touched, {});
    for (const JobId id : jobs) {
        std::vector<std::shared_ptr<Follower>> of_job;
        const auto [first, last] = followers.equal_range(id);
        for (auto it = first; it != last; ++it)
            of_job.push_back(it->second);
        for (const auto& follower : of_job)
            if (!feed(follower))
                forget(follower);
    }
}

// Sends what the follower has not seen; false once it is done with. An
// attached client is sent output at the pace it reads it: the rest stays in
// the store, and the events and the end wait behind it, in order.
bool JobManager::Impl::feed(const std::shared_ptr<Follower>& waiting) {
    Follower& follower = *waiting;
    if (!follower.responder.connected() || follower.responder.done())
        return false;
    if (follower.waiting_for_reader)
        return true;
    const bool ended = !active.contains(follower.id);
    if (follower.output) {
        for (;;) {
            if (follower.responder.behind()) {
                wait_for_reader(waiting);
                return true;
            }
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

// Feeds the follower again once its client has read most of what waits
// (or has gone, which feed() then finds).
// The follower is this manager's alone: while it lives, so does the manager.
void JobManager::Impl::wait_for_reader(const std::shared_ptr<Follower>& follower) {
    follower->waiting_for_reader = true;
    follower->responder.when_caught_up([this, weak = std::weak_ptr<Follower>(follower)] {
        const auto follower = weak.lock();
        if (!follower)
            return;
        follower->waiting_for_reader = false;
        touch(follower->id);
    });
}

void JobManager::Impl::forget(const std::shared_ptr<Follower>& follower) {
    const auto [first, last] = followers.equal_range(follower->id);
    for (auto it = first; it != last; ++it)
        if (it->second == follower) {
            followers.erase(it);
            return;
        }
}

void JobManager::Impl::follow(Responder responder, JobId id, bool output, bool keep_following) {
    auto record = record_of(id);
    if (!record) {
        responder.error(record.error());
        return;
    }
    auto follower = std::make_shared<Follower>(
        Follower{std::move(responder), id, output, keep_following, 0, 0});
    if (output)
        follower->responder.more({{"jobspec", *parse_json("jobspec", record->jobspec)}});
    check(store.flush());
    if (feed(follower))
        followers.emplace(id, follower);
}

void JobManager::Impl::register_output_methods() {
    broker.register_method(
        "job.list", [this](const overlay::Message& request, Responder responder) {
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

    const auto info = [this](JobId id, const overlay::Message&, Responder responder) {
        auto record = record_of(id);
        if (!record) {
            responder.error(record.error());
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
                        [this](JobId id, const overlay::Message& request, Responder responder) {
                            auto keep = bool_param(request, "follow");
                            if (!keep) {
                                responder.error(keep.error());
                                return;
                            }
                            follow(std::move(responder), id, false, *keep);
                        });

    register_job_method({"job.attach"},
                        [this](JobId id, const overlay::Message&, Responder responder) {
                            follow(std::move(responder), id, true, true);
                        });
}

}  // namespace gantry::broker
