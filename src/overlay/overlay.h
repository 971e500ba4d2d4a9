// The overlay: the connections between the brokers of one instance, which
// form the tree of tree.h. Each broker but rank 0 connects to its parent;
// each broker with children listens for them. Requests (message.h) travel
// toward the rank they name, up to the nearest common ancestor and down,
// each hop appending its rank to the route; replies come back along the
// route. ZeroMQ carries them, encrypted and authenticated with CURVE: a
// parent lets in only the keys it is given, a child talks only to the key
// it expects. Heartbeats tell each side the other is alive.
//
// An Overlay lives on one Asio loop and calls its handlers from it, never
// from inside one of its own methods. docs/overlay.md describes the wire.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "overlay/certificate.h"
#include "overlay/message.h"
#include "overlay/tree.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::overlay {

struct OverlayOptions {
    Rank rank = 0;
    Tree tree;
    Certificate certificate;  // this broker's key pair
    // Public keys allowed to connect as children (ZAP checks them); a peer
    // presenting any other key is refused at the handshake.
    std::vector<std::string> authorized_keys;
    std::string parent_public_key;        // the key the parent's socket presents (rank > 0)
    std::string bind_host = "127.0.0.1";  // where children connect (address or host name)
    std::uint16_t port = 0;               // 0: any free port
    // How often a broker tells its parent and children it is alive.
    std::chrono::milliseconds heartbeat{1000};
    // Silence after which a peer is declared lost (>= 2 * heartbeat). A
    // loss is noticed at the next heartbeat after it: at most heartbeat
    // later.
    std::chrono::milliseconds lost_after{5000};
    // How long a child waits for its parent's broker to accept a
    // connection (the parent may start later: a configured instance's
    // hosts start their brokers in any order). Once connected, lost_after
    // bounds the wait for the answer to hello.
    std::chrono::milliseconds hello_timeout{30000};
};

class Overlay {
public:
    struct Handlers {
        // A request to be served by this rank: its route is the ranks it came
        // through, the sender first (this rank last when it sent it itself).
        std::function<void(Message&& request)> request;
        // A reply whose route ends here.
        std::function<void(Reply&& reply)> reply;
        // A child said hello: its rank and its hello (with "rank").
        std::function<void(Rank child, const Json& hello)> child_up;
        // A child was silent for lost_after, or said goodbye: it and its
        // whole subtree are unreachable. Called once; the child may say hello
        // again later.
        std::function<void(Rank child, const std::string& why)> child_lost;
        // The parent was silent for lost_after (or never answered hello),
        // said goodbye, or refused hello (`why` is then its words); or its
        // broker accepted no connection within hello_timeout, or the CURVE
        // handshake with it failed (another certificate). Called once per
        // connect().
        std::function<void(const std::string& why)> parent_lost;
        // The parent answered hello: requests may now go up.
        std::function<void()> parent_up;
        // A peer failed the CURVE handshake with this broker, as its parent
        // or as its child (`why` names the address or endpoint); told at
        // most once per lost_after.
        std::function<void(const std::string& why)> refused;
    };

    // Checks the options and, when the tree gives this rank children, binds
    // their socket on bind_host:port (CURVE server; its ZAP handler lets in
    // authorized_keys only). Errors: bad options ("fanout 0", "lost_after
    // 150 ms is less than twice the heartbeat"), a bad key, a failed bind.
    static Result<std::unique_ptr<Overlay>> open(asio::io_context& loop, OverlayOptions options,
                                                 Handlers handlers);
    // Says goodbye to the parent and the children that are up, then closes
    // the sockets; it waits at most kGoodbyeLinger for the goodbyes to leave.
    ~Overlay();
    Overlay(const Overlay&) = delete;
    Overlay& operator=(const Overlay&) = delete;

    // "tcp://HOST:PORT" where children connect; empty when this rank has no
    // children.
    const std::string& endpoint() const;

    // rank > 0: connects to the parent at `parent_endpoint` (CURVE client,
    // expecting parent_public_key) and says hello: {"rank":R} with
    // `hello`'s members. The parent answers hello-ok (parent_up), or refuses
    // (a rank that is not its child, a rank already up: "rank 3 is already
    // up"), which reaches parent_lost with the parent's words. After
    // parent_lost, connect() again makes a new connection and says hello
    // again; called while the parent is up, it drops the connection without
    // a goodbye, and the parent refuses the new hello until it has lost the
    // old one.
    Status connect(const std::string& parent_endpoint, const Json& hello);
    // The keys children may present from now on (replacing authorized_keys):
    // a bootstrap learns them only after this broker has bound its socket.
    void authorize(std::vector<std::string> keys);
    // The key the parent must present at the next connect() (replacing
    // parent_public_key). Error: not a CURVE key.
    Status set_parent_key(const std::string& key);

    // Sends `request` toward request.rank (which must be set): down to the
    // child whose subtree holds it, else up to the parent; appends this rank
    // to the route. A request for this very rank goes to handlers.request
    // (posted). Error: "no route to rank N" when N >= size, or the child
    // toward it is not up, or the parent is not up.
    Status send(Message request);
    // Sends `reply` back along its route: the route's last rank is the next
    // hop, taken off as it goes. Error: "no route to rank N" when that rank
    // is not a neighbour that is up (or this rank: handlers.reply, posted),
    // "a reply with no route" when the route is empty.
    Status send_reply(Reply reply);

    // So many bytes wait to go up to the parent (ZeroMQ's own queue full)
    // that what sends them should wait for when_parent_has_room(): a node's
    // job shells are read no further meanwhile, so that their tasks block
    // in write rather than this broker's memory growing.
    bool parent_congested() const;
    // `room` runs (posted on the loop) once at most kParentRoom bytes wait
    // to go up, or the parent is lost, or connect() is called again.
    void when_parent_has_room(std::function<void()> room);
    static constexpr std::size_t kParentBacklog = std::size_t{8} << 20;
    static constexpr std::size_t kParentRoom = std::size_t{2} << 20;

    // The children that are up now, ascending.
    std::vector<Rank> children_up() const;
    // Whether the parent answered hello and was not lost since.
    bool parent_up() const;
    Rank rank() const;
    const Tree& tree() const;

    // The longest an Overlay's destruction waits for its goodbyes to leave.
    static constexpr std::chrono::milliseconds kGoodbyeLinger{100};

    struct State;  // the sockets and the peers, shared with the loop's handlers

private:
    explicit Overlay(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

}  // namespace gantry::overlay
