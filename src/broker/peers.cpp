#include "broker/peers.h"

#include <unistd.h>

#include <utility>
#include <vector>

namespace gantry::broker {

namespace {

overlay::Reply failure(std::int64_t id, const std::string& message, std::string_view type) {
    return overlay::Reply{id, std::nullopt, "gantry: " + message, std::string(type)};
}

}  // namespace

Peers::Peers(overlay::Overlay& overlay, Broker& broker) : overlay_(overlay), broker_(broker) {
    broker_.set_forwarder([this](overlay::Message request, Responder responder) {
        call(std::move(request),
             [responder](const overlay::Reply& reply) mutable { responder.relay(reply); });
    });
}

void Peers::call(overlay::Rank rank, std::string method, Json params, OnReply on_reply) {
    overlay::Message request;
    request.method = std::move(method);
    request.params = std::move(params);
    request.rank = rank;
    request.uid = ::getuid();
    call(std::move(request), std::move(on_reply));
}

void Peers::call(overlay::Message request, OnReply on_reply) {
    const std::int64_t id = next_id_++;
    const overlay::Rank rank = request.rank.value_or(overlay_.rank());
    request.id = id;
    request.route.clear();
    calls_[id] = Pending{rank, std::move(on_reply)};
    if (auto sent = overlay_.send(std::move(request)); !sent) {
        auto pending = std::move(calls_[id]);
        calls_.erase(id);
        pending.on_reply(failure(id, sent.error().str(), kNodeFailure));
    }
}

void Peers::receive_request(overlay::Message&& request) {
    const std::vector<overlay::Rank> route = request.route;
    broker_.serve(std::move(request), [this, route](overlay::Reply reply) {
        reply.route = route;
        // A reply whose way back is gone has nobody to reach.
        (void)overlay_.send_reply(std::move(reply));
    });
}

void Peers::receive_reply(overlay::Reply&& reply) {
    if (!reply.id)
        return;
    const auto found = calls_.find(*reply.id);
    if (found == calls_.end())
        return;  // its call was failed already (its rank was lost)
    if (reply.more) {
        // Copied: the handler may make calls of its own.
        const OnReply on_reply = found->second.on_reply;
        on_reply(reply);
        return;
    }
    const OnReply on_reply = std::move(found->second.on_reply);
    calls_.erase(found);
    on_reply(reply);
}

void Peers::lost(const IdSet& ranks, const std::string& why) {
    std::vector<std::pair<std::int64_t, OnReply>> failed;
    for (auto it = calls_.begin(); it != calls_.end();) {
        if (ranks.contains(it->second.rank)) {
            failed.emplace_back(it->first, std::move(it->second.on_reply));
            it = calls_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& [id, on_reply] : failed)
        on_reply(failure(id, why, kNodeFailure));
}

}  // namespace gantry::broker
