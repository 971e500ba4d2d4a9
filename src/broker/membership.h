// A broker's membership of an instance of many brokers: its key pair, its
// place in the overlay's tree (overlay/overlay.h), found through the
// bootstrap (bootstrap.h), and the Peers through which it calls the others.
//
// Losses are reported where the record is: a broker that loses a child
// tells rank 0 which ranks went with it (broker.lost {ranks, why}); rank 0
// hears its own children's loss directly.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <asio/io_context.hpp>

#include "broker/bootstrap.h"
#include "broker/broker.h"
#include "broker/peers.h"
#include "formats/idset.h"
#include "overlay/overlay.h"

namespace gantry::broker {

struct MembershipOptions {
    // Where this broker's children connect: an address of this host.
    std::string bind_host = "127.0.0.1";
    std::chrono::milliseconds heartbeat{1000};
    std::chrono::milliseconds lost_after{5000};
    // How long a broker waits for its parent's broker to be there.
    std::chrono::milliseconds hello_timeout{30000};
};

class Membership {
public:
    struct Events {
        // Rank 0: `ranks` are gone (a child's subtree, or what another
        // broker reported).
        std::function<void(const IdSet& ranks, const std::string& why)> lost;
        // Other ranks: the parent answered hello; requests may go up.
        std::function<void()> parent_up;
        // Other ranks: the way to rank 0 is gone.
        std::function<void(const std::string& why)> parent_lost;
        // A peer failed the CURVE handshake (overlay.h).
        std::function<void(const std::string& why)> refused;
        // Rank 0 of brokers it launched (Bootstrap::launched()): every host
        // was answered, or the launch failed (one line naming the host).
        std::function<void(const Status& answered)> launched;
    };

    // Makes the key pair, binds, exchanges addresses through `bootstrap`
    // and connects to the parent. Rank 0 of brokers it launched exchanges
    // in `loop` instead, from when it runs: each child is let in as it is
    // heard from, and events.launched says how it ended.
    static Result<std::unique_ptr<Membership>> join(asio::io_context& loop, Broker& broker,
                                                    Bootstrap& bootstrap,
                                                    const MembershipOptions& options,
                                                    Events events);
    Membership(const Membership&) = delete;
    Membership& operator=(const Membership&) = delete;

    overlay::Rank rank() const { return overlay_->rank(); }
    overlay::Rank size() const { return overlay_->tree().size; }
    const overlay::Tree& tree() const { return overlay_->tree(); }
    Peers& peers() { return *peers_; }
    overlay::Overlay& overlay() { return *overlay_; }

private:
    Membership(Broker& broker, Events events) : broker_(broker), events_(std::move(events)) {}
    void child_lost(overlay::Rank child, const std::string& why);

    Broker& broker_;
    Events events_;
    std::unique_ptr<overlay::Overlay> overlay_;
    std::unique_ptr<Peers> peers_;
    std::unique_ptr<Bootstrap::Exchange> launch_;  // last: its events use the above
};

}  // namespace gantry::broker
