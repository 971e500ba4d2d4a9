#include "broker/membership.h"

#include <utility>

namespace gantry::broker {

Result<std::unique_ptr<Membership>> Membership::join(asio::io_context& loop, Broker& broker,
                                                     Bootstrap& bootstrap,
                                                     const MembershipOptions& options,
                                                     Events events) {
    auto certificate = bootstrap.certificate();
    if (!certificate)
        return certificate.error();
    std::unique_ptr<Membership> membership(new Membership(broker, std::move(events)));
    Membership* self = membership.get();
    overlay::OverlayOptions settings;
    settings.rank = bootstrap.rank();
    settings.tree = bootstrap.tree();
    settings.certificate = *certificate;
    settings.bind_host = options.bind_host;
    if (const auto bind = bootstrap.bind_address()) {
        settings.bind_host = bind->first;
        settings.port = bind->second;
    }
    settings.heartbeat = options.heartbeat;
    settings.lost_after = options.lost_after;
    settings.hello_timeout = options.hello_timeout;
    overlay::Overlay::Handlers handlers;
    handlers.request = [self](overlay::Message&& request) {
        self->peers_->receive_request(std::move(request));
    };
    handlers.reply = [self](overlay::Reply&& reply) {
        self->peers_->receive_reply(std::move(reply));
    };
    handlers.child_up = [](overlay::Rank, const Json&) {};
    handlers.child_lost = [self](overlay::Rank child, const std::string& why) {
        self->child_lost(child, why);
    };
    handlers.parent_up = [self] {
        if (self->events_.parent_up)
            self->events_.parent_up();
    };
    handlers.parent_lost = [self](const std::string& why) {
        if (self->events_.parent_lost)
            self->events_.parent_lost(why);
    };
    handlers.refused = [self](const std::string& why) {
        if (self->events_.refused)
            self->events_.refused(why);
    };
    auto overlay = overlay::Overlay::open(loop, settings, std::move(handlers));
    if (!overlay)
        return overlay.error();
    membership->overlay_ = std::move(*overlay);
    membership->peers_ = std::make_unique<Peers>(*membership->overlay_, broker);

    const BrokerAddress own{membership->overlay_->endpoint(), certificate->public_key};
    if (bootstrap.launched()) {
        membership->launch_ = bootstrap.exchange_launched(
            loop, own,
            {[self](std::vector<std::string> keys) { self->overlay_->authorize(std::move(keys)); },
             [self] {
                 if (self->events_.launched)
                     self->events_.launched(Status{});
             },
             [self](const Error& error) {
                 if (self->events_.launched)
                     self->events_.launched(error);
             }});
        return membership;
    }
    auto neighbours = bootstrap.exchange(own);
    if (!neighbours)
        return neighbours.error();
    std::vector<std::string> keys;
    for (const BrokerAddress& child : neighbours->children)
        keys.push_back(child.public_key);
    membership->overlay_->authorize(std::move(keys));
    if (neighbours->parent) {
        if (auto key = membership->overlay_->set_parent_key(neighbours->parent->public_key); !key)
            return key.error();
        if (auto connected =
                membership->overlay_->connect(neighbours->parent->endpoint, Json::object());
            !connected)
            return connected.error();
    }
    return membership;
}

void Membership::child_lost(overlay::Rank child, const std::string& why) {
    std::vector<overlay::Rank> subtree = overlay_->tree().subtree(child);
    IdSet ranks;
    for (const overlay::Rank rank : subtree)
        ranks.insert(rank);
    peers_->lost(ranks, why);
    if (rank() == 0) {
        if (events_.lost)
            events_.lost(ranks, why);
        return;
    }
    peers_->call(0, "broker.lost", {{"ranks", ranks.encode()}, {"why", why}},
                 [](const overlay::Reply&) {});
}

}  // namespace gantry::broker
