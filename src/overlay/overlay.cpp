#include "overlay/overlay.h"

#include <zmq.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <utility>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace gantry::overlay {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kDomain = "overlay";
// Messages a socket's handler takes in one turn of the event loop.
constexpr std::size_t kReceiveBatch = 64;
// Messages ZeroMQ queues each way on a connection (its default: 1000). What
// it cannot take waits in the broker's outboxes, which are bounded for
// output (Overlay::parent_congested); so is then the memory a flood of
// output holds: a message of output is up to about 90 KB.
constexpr int kQueuedMessages = 100;
// Except what a parent has read from each child and not yet taken: that
// queue is one per child, and a flat tree has up to fanout (32) of them
// (100 messages each held up to 9 MB per child at rank 0 under a flood).
// The rest waits in the kernel's socket buffers and the child's outbox.
constexpr int kQueuedFromEachChild = 8;

// The endpoint on which libzmq asks a context's ZAP handler about each
// handshake (RFC 27).
constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";
constexpr std::string_view kZapDomain = "gantry";

// The first frame of every overlay message: what it is. A second frame, when
// there is one, is its JSON.
constexpr std::string_view kRequest = "request";      // encode_message's line
constexpr std::string_view kReply = "reply";          // encode_reply's line
constexpr std::string_view kHello = "hello";          // {"rank":R,...}, child to parent
constexpr std::string_view kHelloOk = "hello-ok";     // {"rank":P}, parent to child
constexpr std::string_view kRefused = "refused";      // {"message":"..."}, parent to child
constexpr std::string_view kHeartbeat = "heartbeat";  // no JSON, either way
constexpr std::string_view kGoodbye = "goodbye";      // {"message":"..."}, either way

// The longest frame a peer may send: a message and its JSON around it.
constexpr std::int64_t kMaxFrame = static_cast<std::int64_t>(kMaxMessage) + (64 << 10);

// An overlay message: its kind, then its JSON when it has one.
using Frames = std::vector<std::string>;

Error invalid(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

Error no_route(Rank rank) {
    return invalid("no route to rank " + std::to_string(rank));
}

std::string without_newline(std::string line) {
    if (!line.empty() && line.back() == '\n')
        line.pop_back();
    return line;
}

std::string milliseconds(std::chrono::milliseconds duration) {
    return std::to_string(duration.count()) + " ms";
}

std::array<std::uint8_t, 32> key_bytes(const std::string& key) {
    std::array<std::uint8_t, 32> bytes{};
    zmq_z85_decode(bytes.data(), key.c_str());
    return bytes;
}

void set_key(zmq::socket_t& socket, int option, const std::string& key) {
    const auto bytes = key_bytes(key);
    if (zmq_setsockopt(socket.handle(), option, bytes.data(), bytes.size()) != 0)
        throw zmq::error_t();
}

// A host as a tcp:// endpoint writes it: IPv6 addresses in brackets.
std::string url_host(const std::string& host) {
    return host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host;
}

// A routing id for one connection to the parent: the same across the
// reconnections libzmq makes for it, another for the next connection.
std::string new_routing_id(Rank rank) {
    std::random_device random;
    std::string id = "rank-" + std::to_string(rank) + "-";
    for (int i = 0; i < 4; ++i) {
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(random()));
        id += hex;
    }
    return id;
}

Json json_of(std::string_view key, std::string_view value) {
    Json json = Json::object();
    json[std::string(key)] = value;
    return json;
}

}  // namespace

// One ZeroMQ socket that the loop watches through its ZMQ_FD.
struct Watched {
    Watched(asio::io_context& loop, zmq::socket_t zmq_socket)
        : socket(std::move(zmq_socket)), descriptor(loop, socket.get(zmq::sockopt::fd)) {}
    ~Watched() { retire(); }
    // Hands the descriptor back (libzmq owns it) and closes the socket.
    void retire() {
        if (descriptor.is_open())
            descriptor.release();
        if (socket)
            socket.close();
    }

    zmq::socket_t socket;
    asio::posix::stream_descriptor descriptor;
    bool waiting = false;       // an async_wait is pending
    bool drain_posted = false;  // a drain is posted
};

struct Overlay::State : std::enable_shared_from_this<State> {
    State(asio::io_context& io, OverlayOptions opts, Handlers hs)
        : loop(io), options(std::move(opts)), handlers(std::move(hs)), timer(io) {}

    asio::io_context& loop;
    OverlayOptions options;
    Handlers handlers;
    zmq::context_t context;
    std::shared_ptr<Watched> zap;       // REP: the ZAP handler
    std::shared_ptr<Watched> children;  // ROUTER: the children's socket
    std::shared_ptr<Watched> parent;    // DEALER: to the parent
    // PAIR sockets that hear libzmq's events of the two: how a CURVE
    // handshake failed, which no message says.
    std::shared_ptr<Watched> children_monitor;
    std::shared_ptr<Watched> parent_monitor;
    unsigned monitors = 0;  // for each monitor's own inproc name
    Clock::time_point last_refusal{};
    asio::steady_timer timer;
    std::string endpoint;
    bool closed = false;

    struct Child {
        std::string routing_id;
        Clock::time_point heard;
        std::deque<Frames> outbox;
    };
    std::map<Rank, Child> up;             // the children that are up
    std::map<std::string, Rank> rank_of;  // their routing ids

    enum class ParentState { kNone, kHello, kUp, kLost };
    ParentState parent_state = ParentState::kNone;
    Clock::time_point parent_heard;
    std::string parent_endpoint;
    bool parent_connected = false;   // a TCP connection is open, since connect()
    bool parent_handshaken = false;  // and its CURVE handshake succeeded
    std::deque<Frames> parent_outbox;
    std::size_t parent_outbox_bytes = 0;
    std::vector<std::function<void()>> on_parent_room;  // when_parent_has_room()
    bool children_held = false;                         // see hold_children()

    Rank self() const { return options.rank; }
    std::optional<Rank> parent_rank() const { return options.tree.parent(self()); }
    // So much waits to go up that what sends it should wait; room again once
    // little does (Overlay::parent_congested, when_parent_has_room).
    bool congested_up() const { return parent_outbox_bytes >= Overlay::kParentBacklog; }
    bool room_up() const { return parent_outbox_bytes <= Overlay::kParentRoom; }

    // --- The loop ------------------------------------------------------------

    void watch(const std::shared_ptr<Watched>& w) {
        if (closed || w->waiting)
            return;
        w->waiting = true;
        w->descriptor.async_wait(
            asio::posix::stream_descriptor::wait_read,
            [weak = weak_from_this(), watched = std::weak_ptr<Watched>(w)](std::error_code error) {
                const auto state = weak.lock();
                const auto w = watched.lock();
                if (error || !state || !w || state->closed)
                    return;
                w->waiting = false;
                state->drain(w);
            });
    }

    // A drain of `w` soon: after a send, which may have consumed the edge of
    // ZMQ_FD that announced a message.
    void kick(const std::shared_ptr<Watched>& w) {
        if (!w || w->drain_posted || closed)
            return;
        w->drain_posted = true;
        asio::post(loop, [weak = weak_from_this(), watched = std::weak_ptr<Watched>(w)] {
            const auto state = weak.lock();
            const auto w = watched.lock();
            if (!state || !w || state->closed)
                return;
            w->drain_posted = false;
            state->drain(w);
        });
    }

    bool current(const std::shared_ptr<Watched>& w) const {
        return !closed && (w == zap || w == children || w == parent || w == children_monitor ||
                           w == parent_monitor);
    }

    // Sends what waits and receives what came, while ZMQ_EVENTS says either
    // can go on; then waits for ZMQ_FD again. At most kReceiveBatch messages
    // a turn: then the loop's other work (timers, the heartbeat among them;
    // signals; clients) goes first, however fast messages come.
    void drain(const std::shared_ptr<Watched>& w) {
        std::size_t received = 0;
        for (bool progress = true; progress && current(w);) {
            if (received == kReceiveBatch) {
                kick(w);
                return;
            }
            progress = false;
            int events = 0;
            try {
                events = w->socket.get(zmq::sockopt::events);
            } catch (const zmq::error_t&) {
                return;
            }
            if ((events & ZMQ_POLLOUT) && flush(w))
                progress = true;
            if ((events & ZMQ_POLLIN) && current(w) && !hold_children(w) && receive(w)) {
                progress = true;
                ++received;
            }
        }
        if (current(w))
            watch(w);
    }

    // Whether the children's messages are left where they are: a broker
    // between others relays its children's output up, and a parent slower
    // than they are would otherwise grow this broker's outbox without bound.
    // Held from kParentBacklog bytes waiting up to kParentRoom, they fill
    // ZeroMQ's queues, then the children's own outboxes, whose congestion
    // holds their job shells in turn (parent_congested).
    bool hold_children(const std::shared_ptr<Watched>& w) {
        if (w != children)
            return false;
        if (children_held)
            return true;
        if (!congested_up())
            return false;
        children_held = true;
        on_parent_room.push_back([weak = weak_from_this()] {
            const auto state = weak.lock();
            if (!state || state->closed)
                return;
            state->children_held = false;
            state->kick(state->children);
        });
        return true;
    }

    // Receives and handles one message; false when none was there.
    bool receive(const std::shared_ptr<Watched>& w) {
        std::vector<zmq::message_t> parts;
        try {
            if (!zmq::recv_multipart(w->socket, std::back_inserter(parts),
                                     zmq::recv_flags::dontwait))
                return false;
        } catch (const zmq::error_t&) {
            return false;
        }
        if (w == zap)
            answer_zap(parts);
        else if ((w == parent_monitor || w == children_monitor) && parts.size() == 2 &&
                 parts[0].size() >= 2)
            monitor_event(w == parent_monitor, parts[0]);
        else if (w == children && parts.size() >= 2)
            from_child(parts[0].to_string(), parts[1].to_string_view(),
                       parts.size() >= 3 ? parts[2].to_string_view() : std::string_view());
        else if (w == parent && !parts.empty())
            from_parent(parts[0].to_string_view(),
                        parts.size() >= 2 ? parts[1].to_string_view() : std::string_view());
        return true;
    }

    // Sends what the outboxes hold until a socket would block; true when it
    // sent anything.
    bool flush(const std::shared_ptr<Watched>& w) {
        bool sent = false;
        if (w == parent) {
            while (!parent_outbox.empty() && current(w)) {
                const auto result = send_frames(*w, nullptr, parent_outbox.front());
                if (!result)
                    break;
                parent_outbox_bytes -= bytes_of(parent_outbox.front());
                parent_outbox.pop_front();
                sent = true;
            }
            if (room_up())
                make_room_up();
        } else if (w == children) {
            for (auto& [rank, child] : up) {
                while (!child.outbox.empty()) {
                    const auto result = send_frames(*w, &child.routing_id, child.outbox.front());
                    if (!result)
                        break;  // would block: this child's turn is over
                    sent = true;
                    Frames frames = std::move(child.outbox.front());
                    child.outbox.pop_front();
                    if (*result != 0)
                        undeliverable(frames);
                }
            }
        }
        return sent;
    }

    // Sends one message without blocking: nothing when it would block; 0 when
    // sent; an errno when it cannot be (EHOSTUNREACH: the peer is gone).
    std::optional<int> send_frames(Watched& w, const std::string* routing_id,
                                   const Frames& frames) {
        try {
            if (routing_id && !w.socket.send(zmq::buffer(*routing_id),
                                             zmq::send_flags::dontwait | zmq::send_flags::sndmore))
                return std::nullopt;
            for (std::size_t i = 0; i < frames.size(); ++i) {
                const auto flags = i + 1 < frames.size()
                                       ? zmq::send_flags::dontwait | zmq::send_flags::sndmore
                                       : zmq::send_flags::dontwait;
                // Once the first frame went, the others go (atomic multipart).
                if (!w.socket.send(zmq::buffer(frames[i]), flags) && i == 0 && !routing_id)
                    return std::nullopt;
            }
        } catch (const zmq::error_t& error) {
            return error.num();
        }
        return 0;
    }

    // A message that could not leave: a request is answered "no route" along
    // its route; anything else is dropped.
    void undeliverable(const Frames& frames) {
        if (frames.size() < 2 || frames[0] != kRequest)
            return;
        std::optional<std::int64_t> id;
        auto request = parse_message(frames[1], id);
        if (request && request->rank)  // its route ends here: the answer starts here
            answer_no_route(*request, *request->rank);
    }

    void answer_no_route(const Message& request, Rank rank) {
        Reply reply;
        reply.id = request.id;
        reply.message = "gantry: api: no route to rank " + std::to_string(rank);
        reply.route = request.route;
        (void)send_reply(std::move(reply));
    }

    // --- Sending -------------------------------------------------------------

    void to_child(Rank rank, Frames frames) {
        up.at(rank).outbox.push_back(std::move(frames));
        kick(children);
    }

    static std::size_t bytes_of(const Frames& frames) {
        std::size_t bytes = 0;
        for (const std::string& frame : frames)
            bytes += frame.size();
        return bytes;
    }

    // Those waiting for room on the way up go on.
    void make_room_up() {
        for (auto& room : std::exchange(on_parent_room, {}))
            asio::post(loop, std::move(room));
    }

    // What waits to go up, taken out (the way up is gone or made anew).
    std::deque<Frames> take_parent_outbox() {
        std::deque<Frames> unsent = std::exchange(parent_outbox, {});
        parent_outbox_bytes = 0;
        make_room_up();
        return unsent;
    }

    void to_parent(Frames frames) {
        parent_outbox_bytes += bytes_of(frames);
        parent_outbox.push_back(std::move(frames));
        kick(parent);
    }

    // Sends at once to a connection that has no outbox (one that is not up):
    // dropped when it cannot go.
    void to_connection(const std::string& routing_id, const Frames& frames) {
        if (children)
            (void)send_frames(*children, &routing_id, frames);
        kick(children);
    }

    Status send(Message request) {
        if (closed)
            return invalid("the overlay is closed");
        if (!request.rank)
            return invalid("a request on the overlay must name its rank");
        const Rank to = *request.rank;
        if (to >= options.tree.size)
            return no_route(to);
        request.route.push_back(self());
        if (to == self()) {
            asio::post(loop, [weak = weak_from_this(), request = std::move(request)]() mutable {
                const auto state = weak.lock();
                if (state && !state->closed && state->handlers.request)
                    state->handlers.request(std::move(request));
            });
            return {};
        }
        Frames frames{std::string(kRequest), without_newline(encode_message(request))};
        if (const auto child = options.tree.child_toward(self(), to)) {
            if (!up.count(*child))
                return no_route(to);
            to_child(*child, std::move(frames));
            return {};
        }
        if (parent_state != ParentState::kUp)
            return no_route(to);
        to_parent(std::move(frames));
        return {};
    }

    Status send_reply(Reply reply) {
        if (closed)
            return invalid("the overlay is closed");
        if (reply.route.empty())
            return invalid("a reply with no route");
        const Rank next = reply.route.back();
        reply.route.pop_back();
        if (next == self()) {
            if (!reply.route.empty())
                return send_reply(std::move(reply));
            asio::post(loop, [weak = weak_from_this(), reply = std::move(reply)]() mutable {
                const auto state = weak.lock();
                if (state && !state->closed && state->handlers.reply)
                    state->handlers.reply(std::move(reply));
            });
            return {};
        }
        Frames frames{std::string(kReply), without_newline(encode_reply(reply))};
        if (up.count(next)) {
            to_child(next, std::move(frames));
            return {};
        }
        if (next == parent_rank() && parent_state == ParentState::kUp) {
            to_parent(std::move(frames));
            return {};
        }
        return no_route(next);
    }

    // --- Receiving -----------------------------------------------------------

    // A request from a peer: served here, or passed on (answered "no route"
    // when it cannot be).
    void arrived(Message request, Rank from) {
        // Its last hop is the peer's own: a reply goes back that way.
        if (request.route.empty() || request.route.back() != from)
            return;
        if (!request.rank || *request.rank == self()) {
            if (handlers.request)
                handlers.request(std::move(request));
            return;
        }
        const Message original = request;
        if (!send(std::move(request)))
            answer_no_route(original, *original.rank);
    }

    void arrived(Reply reply) {
        if (reply.route.empty()) {
            if (handlers.reply)
                handlers.reply(std::move(reply));
            return;
        }
        (void)send_reply(std::move(reply));
    }

    void from_child(const std::string& routing_id, std::string_view kind, std::string_view body) {
        if (kind == kHello) {
            hello(routing_id, body);
            return;
        }
        const auto known = rank_of.find(routing_id);
        if (known == rank_of.end()) {
            // A child this rank forgot (lost) or never heard say hello.
            if (kind != kGoodbye)
                to_connection(routing_id,
                              {std::string(kGoodbye),
                               to_compact(json_of("message", "rank " + std::to_string(self()) +
                                                                 " does not know this broker: "
                                                                 "it must say hello again"))});
            return;
        }
        const Rank rank = known->second;
        up.at(rank).heard = Clock::now();
        if (kind == kGoodbye) {
            lose_child(rank, "rank " + std::to_string(rank) + " said goodbye");
        } else if (kind == kRequest) {
            std::optional<std::int64_t> id;
            if (auto request = parse_message(body, id))
                arrived(std::move(*request), rank);
        } else if (kind == kReply) {
            if (auto reply = parse_reply(body))
                arrived(std::move(*reply));
        }
    }

    void hello(const std::string& routing_id, std::string_view body) {
        const auto refuse = [&](const std::string& message) {
            to_connection(routing_id,
                          {std::string(kRefused), to_compact(json_of("message", message))});
        };
        const auto json = parse_json(kDomain, body);
        if (!json || !json->is_object() || !json->contains("rank") ||
            !(*json)["rank"].is_number_unsigned() ||
            (*json)["rank"].get<std::uint64_t>() > std::numeric_limits<Rank>::max()) {
            refuse("malformed hello: expected a JSON object with a \"rank\"");
            return;
        }
        const auto rank = (*json)["rank"].get<Rank>();
        const auto mine = options.tree.children(self());
        if (std::find(mine.begin(), mine.end(), rank) == mine.end()) {
            refuse("rank " + std::to_string(rank) + " is not a child of rank " +
                   std::to_string(self()));
            return;
        }
        if (up.count(rank)) {
            refuse("rank " + std::to_string(rank) + " is already up");
            return;
        }
        if (const auto other = rank_of.find(routing_id); other != rank_of.end()) {
            refuse("this connection is rank " + std::to_string(other->second) + "'s");
            return;
        }
        up[rank] = Child{routing_id, Clock::now(), {}};
        rank_of[routing_id] = rank;
        to_child(rank, {std::string(kHelloOk), to_compact(Json{{"rank", self()}})});
        if (handlers.child_up)
            handlers.child_up(rank, *json);
    }

    void from_parent(std::string_view kind, std::string_view body) {
        if (parent_state != ParentState::kHello && parent_state != ParentState::kUp)
            return;
        parent_heard = Clock::now();
        if (kind == kHelloOk) {
            if (parent_state == ParentState::kHello) {
                parent_state = ParentState::kUp;
                if (handlers.parent_up)
                    handlers.parent_up();
            }
        } else if (kind == kRefused || kind == kGoodbye) {
            std::string why =
                kind == kRefused ? "the parent refused this broker" : "the parent said goodbye";
            if (const auto json = parse_json(kDomain, body); json && json->is_object() &&
                                                             json->contains("message") &&
                                                             (*json)["message"].is_string())
                why = (*json)["message"].get<std::string>();
            lose_parent(why);
        } else if (parent_state != ParentState::kUp) {
            return;  // nothing but an answer to hello before it
        } else if (kind == kRequest) {
            std::optional<std::int64_t> id;
            if (auto request = parse_message(body, id))
                arrived(std::move(*request), *parent_rank());
        } else if (kind == kReply) {
            if (auto reply = parse_reply(body))
                arrived(std::move(*reply));
        }
    }

    // A PAIR socket that hears `events` of `socket` (zmq_socket_monitor).
    std::shared_ptr<Watched> monitor(zmq::socket_t& socket, int events) {
        const std::string name = "inproc://gantry.monitor." + std::to_string(++monitors);
        if (zmq_socket_monitor(socket.handle(), name.c_str(), events) != 0)
            throw zmq::error_t();
        zmq::socket_t pair(context, zmq::socket_type::pair);
        pair.set(zmq::sockopt::linger, 0);
        pair.connect(name);
        return std::make_shared<Watched>(loop, std::move(pair));
    }

    void monitor_event(bool of_parent, const zmq::message_t& header) {
        std::uint16_t event = 0;
        std::memcpy(&event, header.data(), sizeof event);
        if (!of_parent) {
            // A connection whose CURVE hello could not be opened with this
            // broker's key: its peer expects another (ZAP's refusals of a
            // key are told in answer_zap, with the peer's address).
            if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
                event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
                refused("a connection on " + endpoint +
                        " failed the CURVE handshake: its broker expects another key of this "
                        "one (another instance's certificate?)");
            return;
        }
        // A parent that started after this broker (waited for up to
        // hello_timeout) has lost_after from now to answer hello, not from
        // the connect() long before.
        if (event == ZMQ_EVENT_CONNECTED) {
            parent_connected = true;
            parent_heard = Clock::now();
        }
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            parent_handshaken = true;
        if (parent_state != ParentState::kHello || parent_handshaken)
            return;
        const std::string parent =
            "rank " + std::to_string(*parent_rank()) + " at " + parent_endpoint;
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
            lose_parent(parent +
                        " refused this broker's key at the CURVE handshake (another "
                        "instance's certificate?)");
        else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
                 event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
                 (event == ZMQ_EVENT_DISCONNECTED && parent_connected))
            lose_parent(parent +
                        " ended the CURVE handshake: it does not hold the key this "
                        "broker expects of it (another instance's certificate?)");
    }

    // A peer failed the handshake: said, at most once per lost_after, so
    // that a peer trying again and again does not flood the log.
    void refused(const std::string& why) {
        const auto now = Clock::now();
        if (last_refusal != Clock::time_point{} && now - last_refusal < options.lost_after)
            return;
        last_refusal = now;
        if (handlers.refused)
            handlers.refused(why);
    }

    void answer_zap(const std::vector<zmq::message_t>& parts) {
        // version, request id, domain, address, routing id, mechanism,
        // credentials (CURVE: the client's 32-byte public key).
        // A REP socket answers every request, even one it cannot read.
        bool allowed = false;
        std::string key;
        if (parts.size() == 7 && parts[5].to_string_view() == "CURVE" && parts[6].size() == 32) {
            std::array<char, kKeyLength + 1> text{};
            if (zmq_z85_encode(text.data(), static_cast<const std::uint8_t*>(parts[6].data()),
                               32)) {
                key = text.data();
                const auto& keys = options.authorized_keys;
                allowed = std::find(keys.begin(), keys.end(), key) != keys.end();
            }
        }
        const Frames reply = {"1.0",
                              parts.size() > 1 ? parts[1].to_string() : "",
                              allowed ? "200" : "400",
                              allowed ? "OK" : "key not authorized",
                              allowed ? key : "",
                              ""};
        (void)send_frames(*zap, nullptr, reply);
        if (!allowed)
            refused("refused a broker at " + (parts.size() > 3 ? parts[3].to_string() : "?") +
                    ": its key is not one of this rank's children's (another instance's "
                    "certificate?)");
    }

    // --- Liveness ------------------------------------------------------------

    void lose_child(Rank rank, const std::string& why) {
        const auto child = up.find(rank);
        if (child == up.end())
            return;
        rank_of.erase(child->second.routing_id);
        const std::deque<Frames> unsent = std::move(child->second.outbox);
        up.erase(child);
        for (const Frames& frames : unsent)
            undeliverable(frames);
        if (handlers.child_lost)
            handlers.child_lost(rank, why);
    }

    void lose_parent(const std::string& why) {
        parent_state = ParentState::kLost;
        for (const Frames& frames : take_parent_outbox())
            undeliverable(frames);
        for (auto* w : {&parent, &parent_monitor})
            if (*w) {
                (*w)->retire();
                w->reset();
            }
        if (handlers.parent_lost)
            handlers.parent_lost(why);
    }

    void start_timer() {
        timer.expires_after(options.heartbeat);
        timer.async_wait([weak = weak_from_this()](std::error_code error) {
            const auto state = weak.lock();
            if (error || !state || state->closed)
                return;
            state->tick();
        });
    }

    void tick() {
        const auto now = Clock::now();
        const auto silent = [&](Clock::time_point heard) {
            return now - heard >= options.lost_after;
        };
        std::vector<Rank> lost;
        for (auto& [rank, child] : up) {
            if (children_held)
                child.heard = now;  // its words wait unread here: its silence is this broker's
            if (silent(child.heard))
                lost.push_back(rank);
            else if (child.outbox.empty())
                to_child(rank, {std::string(kHeartbeat)});
        }
        for (const Rank rank : lost) {
            lose_child(rank, "no word from rank " + std::to_string(rank) + " in " +
                                 milliseconds(options.lost_after));
            if (closed)
                return;
        }
        if (parent_state == ParentState::kHello && !parent_connected &&
            now - parent_heard >= options.hello_timeout) {
            lose_parent("rank " + std::to_string(*parent_rank()) + " at " + parent_endpoint +
                        " did not answer in " + milliseconds(options.hello_timeout) +
                        " (is its broker running there?)");
            if (closed)
                return;
        } else if (parent_state == ParentState::kHello && !parent_connected) {
            // Waiting for the parent's broker to start: libzmq tries again.
        } else if (parent_state == ParentState::kHello || parent_state == ParentState::kUp) {
            if (silent(parent_heard)) {
                lose_parent("no word from the parent (rank " + std::to_string(*parent_rank()) +
                            ") in " + milliseconds(options.lost_after));
                if (closed)
                    return;
            } else if (parent_state == ParentState::kUp && parent_outbox.empty()) {
                to_parent({std::string(kHeartbeat)});
            }
        }
        start_timer();
    }

    // --- Opening and closing -------------------------------------------------

    Status listen() {
        const std::string host = url_host(options.bind_host);
        const std::string address =
            "tcp://" + host + ":" + (options.port ? std::to_string(options.port) : "*");
        try {
            // The ZAP handler first: libzmq asks it about every handshake of
            // the sockets of this context once it is bound.
            zmq::socket_t rep(context, zmq::socket_type::rep);
            rep.set(zmq::sockopt::linger, 0);
            rep.bind(kZapEndpoint);
            zap = std::make_shared<Watched>(loop, std::move(rep));

            zmq::socket_t router(context, zmq::socket_type::router);
            router.set(zmq::sockopt::linger, 0);
            router.set(zmq::sockopt::router_mandatory, true);
            router.set(zmq::sockopt::sndhwm, kQueuedMessages);
            router.set(zmq::sockopt::rcvhwm, kQueuedFromEachChild);
            router.set(zmq::sockopt::maxmsgsize, kMaxFrame);
            router.set(zmq::sockopt::curve_server, true);
            set_key(router, ZMQ_CURVE_SECRETKEY, options.certificate.secret_key);
            router.set(zmq::sockopt::zap_domain, std::string(kZapDomain));
            if (host.front() == '[')
                router.set(zmq::sockopt::ipv6, true);
            children_monitor = monitor(
                router, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
            router.bind(address);
            const std::string bound = router.get(zmq::sockopt::last_endpoint);
            endpoint = "tcp://" + host + bound.substr(bound.rfind(':'));
            children = std::make_shared<Watched>(loop, std::move(router));
        } catch (const zmq::error_t& error) {
            return Error::system(std::string(kDomain),
                                 "cannot listen on " + address + ": " + error.what());
        }
        watch(zap);
        watch(children);
        kick(children_monitor);
        return {};
    }

    Status connect(const std::string& parent_endpoint_given, const Json& hello) {
        if (closed)
            return invalid("the overlay is closed");
        if (!parent_rank())
            return invalid("rank 0 has no parent");
        if (!hello.is_object() && !hello.is_null())
            return invalid("hello must be a JSON object");
        for (auto* w : {&parent, &parent_monitor})
            if (*w) {
                (*w)->retire();
                w->reset();
            }
        (void)take_parent_outbox();
        parent_state = ParentState::kNone;
        parent_endpoint = parent_endpoint_given;
        parent_connected = false;
        parent_handshaken = false;
        try {
            zmq::socket_t dealer(context, zmq::socket_type::dealer);
            dealer.set(zmq::sockopt::linger, 0);
            // Not ZMQ_IMMEDIATE: with it, libzmq 4.3.4 throws away what
            // arrived on a connection when the connection ends before the
            // socket was read, and a closing parent's goodbye with it. The
            // overlay sends nothing up before the parent answered hello and
            // after it was lost; between, during a reconnection, libzmq
            // keeps what is sent until the connection is back.
            dealer.set(zmq::sockopt::immediate, false);
            dealer.set(zmq::sockopt::maxmsgsize, kMaxFrame);
            dealer.set(zmq::sockopt::sndhwm, kQueuedMessages);
            dealer.set(zmq::sockopt::rcvhwm, kQueuedMessages);
            dealer.set(zmq::sockopt::routing_id, new_routing_id(self()));
            set_key(dealer, ZMQ_CURVE_SERVERKEY, options.parent_public_key);
            set_key(dealer, ZMQ_CURVE_PUBLICKEY, options.certificate.public_key);
            set_key(dealer, ZMQ_CURVE_SECRETKEY, options.certificate.secret_key);
            if (parent_endpoint.find('[') != std::string::npos)
                dealer.set(zmq::sockopt::ipv6, true);
            parent_monitor = monitor(dealer, ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                                                 ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
            dealer.connect(parent_endpoint);
            parent = std::make_shared<Watched>(loop, std::move(dealer));
        } catch (const zmq::error_t& error) {
            return Error::system(std::string(kDomain),
                                 "cannot connect to " + parent_endpoint + ": " + error.what());
        }
        Json said = hello.is_object() ? hello : Json::object();
        said["rank"] = self();
        parent_state = ParentState::kHello;
        parent_heard = Clock::now();
        to_parent({std::string(kHello), to_compact(said)});
        watch(parent);
        kick(parent_monitor);
        return {};
    }

    void close() {
        if (closed)
            return;
        closed = true;
        timer.cancel();
        const auto goodbye = [&](const std::shared_ptr<Watched>& w, const std::string* routing_id) {
            try {
                w->socket.set(zmq::sockopt::linger,
                              static_cast<int>(Overlay::kGoodbyeLinger.count()));
            } catch (const zmq::error_t&) {
            }
            (void)send_frames(*w, routing_id,
                              {std::string(kGoodbye),
                               to_compact(json_of("message", "rank " + std::to_string(self()) +
                                                                 " said goodbye"))});
        };
        if (parent && (parent_state == ParentState::kHello || parent_state == ParentState::kUp))
            goodbye(parent, nullptr);
        if (children)
            for (const auto& [rank, child] : up)
                goodbye(children, &child.routing_id);
        for (auto* w : {&parent_monitor, &children_monitor, &parent, &children, &zap}) {
            if (*w)
                (*w)->retire();
            w->reset();
        }
        // Waits for the goodbyes, kGoodbyeLinger at most.
        context.close();
    }
};

Result<std::unique_ptr<Overlay>> Overlay::open(asio::io_context& loop, OverlayOptions options,
                                               Handlers handlers) {
    const Tree& tree = options.tree;
    if (tree.fanout < 1)
        return invalid("the tree's fanout is 0, expected at least 1");
    if (tree.size < 1 || options.rank >= tree.size)
        return invalid("rank " + std::to_string(options.rank) + " is not in an instance of " +
                       std::to_string(tree.size) + " brokers");
    if (options.heartbeat.count() <= 0)
        return invalid("the heartbeat must be longer than 0 ms");
    if (options.lost_after < 2 * options.heartbeat)
        return invalid("lost_after (" + milliseconds(options.lost_after) +
                       ") is less than twice the heartbeat (" + milliseconds(options.heartbeat) +
                       ")");
    if (!is_key(options.certificate.public_key) || !is_key(options.certificate.secret_key))
        return invalid("the certificate's keys are not CURVE keys");
    for (std::size_t i = 0; i < options.authorized_keys.size(); ++i)
        if (!is_key(options.authorized_keys[i]))
            return invalid("authorized_keys[" + std::to_string(i) + "] is not a CURVE key");
    if (options.rank > 0 && !options.parent_public_key.empty() &&
        !is_key(options.parent_public_key))
        return invalid("parent_public_key is not a CURVE key");

    auto state = std::make_shared<State>(loop, std::move(options), std::move(handlers));
    if (!state->options.tree.children(state->self()).empty())
        if (auto status = state->listen(); !status) {
            state->close();
            return status.error();
        }
    state->start_timer();
    return std::unique_ptr<Overlay>(new Overlay(std::move(state)));
}

Overlay::~Overlay() {
    state_->close();
}

const std::string& Overlay::endpoint() const {
    return state_->endpoint;
}

Status Overlay::connect(const std::string& parent_endpoint, const Json& hello) {
    if (state_->options.rank > 0 && !is_key(state_->options.parent_public_key))
        return invalid("parent_public_key is not a CURVE key");
    return state_->connect(parent_endpoint, hello);
}

void Overlay::authorize(std::vector<std::string> keys) {
    state_->options.authorized_keys = std::move(keys);
}

Status Overlay::set_parent_key(const std::string& key) {
    if (!is_key(key))
        return invalid("parent_public_key is not a CURVE key");
    state_->options.parent_public_key = key;
    return {};
}

Status Overlay::send(Message request) {
    return state_->send(std::move(request));
}

Status Overlay::send_reply(Reply reply) {
    return state_->send_reply(std::move(reply));
}

std::vector<Rank> Overlay::children_up() const {
    std::vector<Rank> ranks;
    for (const auto& [rank, child] : state_->up)
        ranks.push_back(rank);
    return ranks;
}

bool Overlay::parent_congested() const {
    return state_->congested_up();
}

void Overlay::when_parent_has_room(std::function<void()> room) {
    if (state_->room_up()) {
        asio::post(state_->loop, std::move(room));
        return;
    }
    state_->on_parent_room.push_back(std::move(room));
}

bool Overlay::parent_up() const {
    return state_->parent_state == State::ParentState::kUp;
}

Rank Overlay::rank() const {
    return state_->self();
}

const Tree& Overlay::tree() const {
    return state_->options.tree;
}

}  // namespace gantry::overlay
