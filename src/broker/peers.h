// The other brokers of an instance, as this broker sees them through the
// overlay (overlay/overlay.h): the requests it sends them, the replies that
// come back, and their requests, which it serves with its own methods
// (Broker::serve). Requests that local clients address to another rank go
// the same way (Broker::set_forwarder).
//
// A call to a rank that is lost before its last reply ends with an error
// of type kNodeFailure, so that nothing waits for a broker that is gone.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "broker/broker.h"
#include "formats/idset.h"
#include "overlay/message.h"
#include "overlay/overlay.h"

namespace gantry::broker {

// The error type of a reply that will not come: its rank was lost.
inline constexpr std::string_view kNodeFailure = "node-failure";

class Peers {
public:
    using OnReply = std::function<void(const overlay::Reply& reply)>;

    // Serves the overlay's requests with `broker`'s methods.
    Peers(overlay::Overlay& overlay, Broker& broker);
    Peers(const Peers&) = delete;
    Peers& operator=(const Peers&) = delete;

    // Sends `request` to the broker of its rank (which must be set); the
    // request's id is replaced by one of this broker's. `on_reply` hears
    // each reply, the last one without "more"; an error when the rank
    // cannot be reached or is lost first.
    void call(overlay::Message request, OnReply on_reply);
    // The same, from this broker as the instance owner.
    void call(overlay::Rank rank, std::string method, Json params, OnReply on_reply);

    // The overlay the calls go through.
    overlay::Overlay& overlay() { return overlay_; }

    // For the overlay's handlers.
    void receive_request(overlay::Message&& request);
    void receive_reply(overlay::Reply&& reply);
    // `ranks` are gone: the calls still waiting on them end with `why`.
    void lost(const IdSet& ranks, const std::string& why);

    std::size_t pending() const { return calls_.size(); }

private:
    struct Pending {
        overlay::Rank rank = 0;
        OnReply on_reply;
    };

    overlay::Overlay& overlay_;
    Broker& broker_;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, Pending> calls_;
};

}  // namespace gantry::broker
