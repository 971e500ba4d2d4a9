// The broker's side of the local API: a listening Unix socket, its clients
// and the table of methods they may call, on the process's one event loop.
//
// Only the instance owner gets in: the broker reads each peer's credentials
// (SO_PEERCRED) on accept, and a peer of another uid receives one message
//   {"error":{"message":"gantry: instance of uid 1000: connection refused for uid 1001"}}
// and is disconnected. A client's requests are answered in the order they
// came: the next one is handed to its method once the previous one has had
// its final reply (a stream holds back that client's later requests, not
// other clients'). A line that is not a request gets an error reply, and
// the client is disconnected once it is written. The protocol:
// overlay/message.h.
//
// Methods are looked up by rank (Methods): a request from a client is
// served by this broker, at its rank, unless it names another rank, which
// goes to the forwarder (the overlay between brokers). A request that
// comes from another broker (serve) goes through the same table to the
// same handlers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>

#include "overlay/message.h"
#include "overlay/uri.h"  // uri() is one of its URIs
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// Who sent a request: on the local socket, the process at the other end of
// the connection (SO_PEERCRED). Its uid is the request's
// (overlay::Message::uid); a request from another broker will have no
// pid or gid.
struct Peer {
    uid_t uid = 0;
    gid_t gid = 0;
    pid_t pid = 0;
};

class Session;
struct Call;

// The answer to one request: any number of replies with "more", then one
// final result or error. Copies share the one answer. Replies after the
// final one, or to a client that has gone, are dropped. When the last copy
// goes without a final reply, the client gets the error "METHOD: no reply".
class Responder {
public:
    explicit Responder(std::shared_ptr<Call> call) : call_(std::move(call)) {}

    const std::string& method() const;
    const Peer& peer() const;
    // One reply of a stream: {"id":N,"result":RESULT,"more":true}.
    void more(const Json& result);
    // The final reply: {"id":N,"result":RESULT}.
    void result(const Json& result);
    // The final reply: {"id":N,"error":{"message":"gantry: " + error.str()}},
    // with "type" when `type` is not empty (overlay::kShutdownError).
    void error(const Error& error, std::string_view type = {});
    // A reply another broker gave, passed on as this request's own: the
    // final one when it has no "more".
    void relay(const overlay::Reply& reply);
    // The final reply was given.
    bool done() const;
    // The client is still connected (a stream may stop when it is not).
    bool connected() const;
    // The client leaves so many bytes of replies unread that a stream should
    // wait for when_caught_up() before it sends more (a client sent more
    // than it reads at all is disconnected). Never for another broker.
    bool behind() const;
    // `ready` runs on the loop once the client has read most of what waits,
    // or its connection has closed (at once, posted, when either is so).
    void when_caught_up(std::function<void()> ready) const;
    // `gone` runs on the loop once the client's connection closes (at once,
    // posted, when it already has); never when the broker is destroyed first.
    void when_disconnected(std::function<void()> gone) const;

private:
    std::shared_ptr<Call> call_;
};

// A method: called on the event loop with the request and its responder,
// which it may keep to answer later. An exception it throws becomes the
// error reply "METHOD: WHAT".
using Handler = std::function<void(const overlay::Message& request, Responder responder)>;

// The ranks whose brokers serve a method.
enum class ServedOn {
    kRankZero,   // the rank that keeps the record and schedules: the job methods
    kEveryRank,  // each broker, for its own node
};

// The methods of a broker, by name, with where each is served.
class Methods {
public:
    // Adds method `name`, or replaces an existing one.
    void add(std::string name, Handler handler, ServedOn where);
    // The handler of `method` on the broker of rank `rank`; none when there
    // is no such method or it is not served there.
    const Handler* find(std::string_view method, overlay::Rank rank) const;
    // `method` is served on some rank.
    bool contains(std::string_view method) const;

private:
    struct Method {
        Handler handler;
        ServedOn where;
    };
    std::map<std::string, Method, std::less<>> methods_;
};

class Broker {
public:
    // Lets in peers of uid `owner` only; serves the methods of rank `rank`.
    Broker(asio::io_context& loop, uid_t owner, overlay::Rank rank = 0);
    ~Broker();  // disconnects every client
    Broker(const Broker&) = delete;
    Broker& operator=(const Broker&) = delete;

    // Listens on a new socket at `socket_path` (absolute; nothing may be
    // there) and starts accepting clients. The socket is not removed here.
    Status listen(const std::string& socket_path);
    // unix://SOCKET_PATH once listening.
    const std::string& uri() const { return uri_; }
    uid_t owner() const { return owner_; }
    overlay::Rank rank() const { return rank_; }

    // Adds method `name`, or replaces the handler of an existing one. By
    // default it is served on rank 0, where the record is.
    void register_method(std::string name, Handler handler, ServedOn where = ServedOn::kRankZero);

    // Serves a request that came from another broker over the overlay: its
    // replies go to `send`, each carrying the request's id. A method not
    // served here is answered at once with the error.
    void serve(overlay::Message request, std::function<void(overlay::Reply)> send);
    // Where requests for other ranks go (the overlay). Without one they are
    // answered "no route to rank N".
    using Forwarder = std::function<void(overlay::Message request, Responder responder)>;
    void set_forwarder(Forwarder forward);
    // Stops accepting clients and reading requests; runs `done` on the loop
    // once every reply given so far is written, or after `grace` at most.
    // The clients stay connected until disconnect_all() or the destructor.
    void close(std::function<void()> done,
               std::chrono::milliseconds grace = std::chrono::milliseconds(1000));
    void disconnect_all();
    std::size_t client_count() const { return sessions_.size(); }

private:
    friend class Session;
    void accept();
    // Hands `request` to its method here, or to the forwarder when it names
    // another rank.
    void dispatch(overlay::Message request, Responder responder);
    void remove(const std::shared_ptr<Session>& session);
    void check_drained();
    // The handler that is to serve `request` here, or the error that
    // answers it: "no route to rank N", "unknown method ...".
    Result<const Handler*> handler_for(const overlay::Message& request) const;

    asio::io_context& loop_;
    uid_t owner_;
    overlay::Rank rank_;
    std::string uri_;
    asio::local::stream_protocol::acceptor acceptor_;
    asio::steady_timer retry_timer_;  // after accept fails for want of descriptors
    asio::steady_timer grace_timer_;
    Methods methods_;
    Forwarder forward_;
    std::set<std::shared_ptr<Session>> sessions_;
    std::function<void()> on_drained_;  // set while close() waits
    bool closed_ = false;
};

}  // namespace gantry::broker
