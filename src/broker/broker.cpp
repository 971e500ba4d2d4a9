#include "broker/broker.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <exception>
#include <utility>
#include <vector>

#include <asio/post.hpp>
#include <asio/write.hpp>

namespace gantry::broker {

namespace {

// Read more while fewer bytes than this wait behind a request being answered.
constexpr std::size_t kReadAhead = std::size_t{64} << 10;
// A client that leaves this many bytes of replies unread is disconnected.
constexpr std::size_t kMaxQueued = std::size_t{64} << 20;
// A stream that paces itself (Responder::behind) waits while this many bytes
// of replies are unread, and goes on once no more than kCaughtUp are: well
// below kMaxQueued, and enough to keep the client busy meanwhile.
constexpr std::size_t kBehind = std::size_t{4} << 20;
constexpr std::size_t kCaughtUp = std::size_t{1} << 20;

std::string whole_line(const Error& error) {
    return "gantry: " + error.str();
}

}  // namespace

// One request being answered.
struct Call {
    std::weak_ptr<Session> session;
    // Set instead of `session` for a request from another broker: where its
    // replies go (back along the overlay).
    std::function<void(overlay::Reply)> remote;
    std::int64_t id = 0;
    std::string method;
    Peer peer;
    bool done = false;

    ~Call();
};

// One client's connection.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(Broker& broker, asio::local::stream_protocol::socket socket)
        : broker_(&broker), socket_(std::move(socket)) {}

    void start();
    // Sends one line (ending in '\n') after those queued before it.
    void send(std::string line);
    // The final reply of the request being answered has been queued.
    void finished();
    // Stops reading and answering; replies already given are still written.
    void quiesce() { quiescing_ = true; }
    // Closes the connection now.
    void close();
    // The broker is going: never touch it again.
    void detach() {
        broker_ = nullptr;
        close();
    }
    bool drained() const { return closed_ || (!writing_ && output_.empty()); }
    bool open() const { return !closed_; }
    // `gone` is posted on the loop when the connection closes, unless the
    // broker goes first.
    void when_closed(std::function<void()> gone) { on_close_.push_back(std::move(gone)); }
    bool behind() const { return queued_ >= kBehind; }
    // `ready` is posted on the loop once no more than kCaughtUp bytes wait,
    // or the connection closes.
    void when_caught_up(std::function<void()> ready);
    void post(std::function<void()> work) { asio::post(socket_.get_executor(), std::move(work)); }

private:
    void read();
    bool peer_closed();
    void pump();
    void dispatch(const std::string& line);
    void fail(std::optional<std::int64_t> id, const Error& error);
    void write_next();

    Broker* broker_;
    asio::local::stream_protocol::socket socket_;
    Peer peer_;
    overlay::LineBuffer input_;
    std::array<char, 1 << 16> block_{};
    std::deque<std::string> output_;
    std::size_t queued_ = 0;  // bytes in output_
    bool reading_ = false;
    bool writing_ = false;
    bool end_of_input_ = false;
    bool busy_ = false;         // a request is being answered
    bool dispatching_ = false;  // inside pump()
    bool last_sent_ = false;    // close once the output is written
    bool quiescing_ = false;
    bool closed_ = false;
    std::vector<std::function<void()>> on_close_;
    std::vector<std::function<void()>> on_caught_up_;
};

// Each reply of a call goes to the client's session or, for a request from
// another broker, to its remote sink.
void send_reply(Call& call, overlay::Reply reply) {
    if (call.remote) {
        reply.id = call.id;
        call.remote(std::move(reply));
        return;
    }
    const auto client = call.session.lock();
    if (!client)
        return;
    client->send(overlay::encode_reply(
        overlay::Reply{call.id, reply.result, reply.message, reply.error_type, reply.more}));
    if (!reply.more)
        client->finished();
}

overlay::Reply result_reply(const Json& result, bool more) {
    return overlay::Reply{std::nullopt, result, std::nullopt, {}, more};
}

overlay::Reply error_reply(std::string message, std::string_view type) {
    return overlay::Reply{std::nullopt, std::nullopt, std::move(message), std::string(type)};
}

Call::~Call() {
    if (done)
        return;
    if (remote) {
        send_reply(*this, error_reply("gantry: " + method + ": no reply", {}));
        return;
    }
    if (const auto client = session.lock()) {
        client->send(overlay::encode_error(id, "gantry: " + method + ": no reply"));
        client->finished();
    }
}

// --- Responder ---------------------------------------------------------------

const std::string& Responder::method() const {
    return call_->method;
}

const Peer& Responder::peer() const {
    return call_->peer;
}

void Responder::more(const Json& result) {
    if (!call_->done)
        send_reply(*call_, result_reply(result, true));
}

void Responder::result(const Json& result) {
    if (call_->done)
        return;
    call_->done = true;
    send_reply(*call_, result_reply(result, false));
}

void Responder::error(const Error& error, std::string_view type) {
    if (call_->done)
        return;
    call_->done = true;
    send_reply(*call_, error_reply(whole_line(error), type));
}

void Responder::relay(const overlay::Reply& reply) {
    if (call_->done)
        return;
    call_->done = !reply.more;
    overlay::Reply copy = reply;
    copy.route.clear();
    send_reply(*call_, std::move(copy));
}

bool Responder::done() const {
    return call_->done;
}

bool Responder::connected() const {
    if (call_->remote)
        return true;  // the overlay says when a broker is lost
    const auto client = call_->session.lock();
    return client && client->open();
}

bool Responder::behind() const {
    const auto client = call_->session.lock();
    return client && client->open() && client->behind();
}

void Responder::when_caught_up(std::function<void()> ready) const {
    if (const auto client = call_->session.lock())
        client->when_caught_up(std::move(ready));
}

void Responder::when_disconnected(std::function<void()> gone) const {
    const auto client = call_->session.lock();
    if (client && client->open()) {
        client->when_closed(std::move(gone));
        return;
    }
    if (client)
        client->post(std::move(gone));
}

// --- Session -----------------------------------------------------------------

void Session::start() {
    ucred credentials{};
    socklen_t size = sizeof credentials;
    if (getsockopt(socket_.native_handle(), SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
        fail(std::nullopt,
             Error("", std::string("cannot read the peer's credentials: ") + std::strerror(errno)));
        return;
    }
    peer_ = {credentials.uid, credentials.gid, credentials.pid};
    if (peer_.uid != broker_->owner()) {
        fail(std::nullopt, Error("instance of uid " + std::to_string(broker_->owner()),
                                 "connection refused for uid " + std::to_string(peer_.uid)));
        return;
    }
    read();
}

void Session::read() {
    if (reading_ || end_of_input_ || last_sent_ || quiescing_ || closed_)
        return;
    // Back-pressure: while a request waits, read only a little ahead.
    if (input_.has_line() && input_.size() >= kReadAhead)
        return;
    reading_ = true;
    socket_.async_read_some(
        asio::buffer(block_),
        [self = shared_from_this()](const asio::error_code& error, std::size_t n) {
            self->reading_ = false;
            if (self->closed_ || !self->broker_ || self->quiescing_)
                return;
            if (error) {
                if (error != asio::error::eof || self->peer_closed()) {
                    self->close();
                    return;
                }
                self->end_of_input_ = true;
            }
            self->input_.append(self->block_.data(), n);
            self->pump();
            self->read();
        });
}

// End of input is either a client that has stopped writing and waits for
// its replies (shutdown(SHUT_WR)) or one that has gone: only then does the
// socket report a hang-up. A gone client's streams end at once, and what
// was bound to its connection learns of it (Responder::when_disconnected).
bool Session::peer_closed() {
    pollfd socket{socket_.native_handle(), 0, 0};
    return ::poll(&socket, 1, 0) == 1 && (socket.revents & POLLHUP) != 0;
}

void Session::pump() {
    dispatching_ = true;
    while (!busy_ && !last_sent_ && !quiescing_ && !closed_) {
        if (auto line = input_.next_line()) {
            dispatch(*line);
            continue;
        }
        if (input_.overflowed()) {
            fail(std::nullopt, Error("api", "a request is longer than " +
                                                std::to_string(overlay::kMaxMessage) + " bytes"));
            break;
        }
        if (!end_of_input_)
            break;
        // The client has stopped writing: its last line needs no '\n'.
        if (const std::string rest = input_.take_rest();
            rest.find_first_not_of(" \t\r") != std::string::npos) {
            dispatch(rest);
            continue;
        }
        last_sent_ = true;
        write_next();  // closes once the replies are written
    }
    dispatching_ = false;
}

void Session::dispatch(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
        return;  // blank lines are allowed between requests
    std::optional<std::int64_t> id;
    // The uid is the connection's, whatever the line says.
    auto request = overlay::parse_request(line, peer_.uid, id);
    if (!request) {
        fail(id, request.error());
        return;
    }
    busy_ = true;
    auto call = std::make_shared<Call>();
    call->session = weak_from_this();
    call->id = request->id;
    call->method = request->method;
    call->peer = {request->uid, peer_.gid, peer_.pid};
    broker_->dispatch(std::move(*request), Responder(std::move(call)));
}

void Session::finished() {
    busy_ = false;
    if (dispatching_ || closed_)
        return;  // pump() goes on with the next request
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
        if (self->broker_ && !self->busy_) {
            self->pump();
            self->read();
        }
    });
}

void Session::fail(std::optional<std::int64_t> id, const Error& error) {
    send(overlay::encode_error(id, whole_line(error)));
    last_sent_ = true;
    write_next();
}

void Session::send(std::string line) {
    if (closed_)
        return;
    queued_ += line.size();
    output_.push_back(std::move(line));
    if (queued_ > kMaxQueued) {
        close();
        return;
    }
    write_next();
}

void Session::when_caught_up(std::function<void()> ready) {
    if (closed_ || queued_ <= kCaughtUp) {
        post(std::move(ready));
        return;
    }
    on_caught_up_.push_back(std::move(ready));
}

void Session::write_next() {
    if (writing_ || closed_)
        return;
    if (output_.empty()) {
        if (last_sent_)
            close();
        else if (broker_)
            broker_->check_drained();
        return;
    }
    writing_ = true;
    asio::async_write(socket_, asio::buffer(output_.front()),
                      [self = shared_from_this()](const asio::error_code& error, std::size_t) {
                          self->writing_ = false;
                          if (self->closed_)
                              return;
                          if (error) {
                              self->close();
                              return;
                          }
                          self->queued_ -= self->output_.front().size();
                          self->output_.pop_front();
                          if (self->queued_ <= kCaughtUp)
                              for (auto& ready : std::exchange(self->on_caught_up_, {}))
                                  self->post(std::move(ready));
                          self->write_next();
                      });
}

void Session::close() {
    if (closed_)
        return;
    closed_ = true;
    asio::error_code ignored;
    socket_.close(ignored);
    output_.clear();
    queued_ = 0;
    if (broker_) {
        for (auto& gone : std::exchange(on_close_, {}))
            post(std::move(gone));
        for (auto& ready : std::exchange(on_caught_up_, {}))
            post(std::move(ready));
        auto self = shared_from_this();
        broker_->remove(self);
        broker_->check_drained();
    }
}

// --- Methods -----------------------------------------------------------------

void Methods::add(std::string name, Handler handler, ServedOn where) {
    methods_[std::move(name)] = {std::move(handler), where};
}

const Handler* Methods::find(std::string_view method, overlay::Rank rank) const {
    const auto found = methods_.find(method);
    if (found == methods_.end())
        return nullptr;
    if (found->second.where == ServedOn::kRankZero && rank != 0)
        return nullptr;
    return &found->second.handler;
}

bool Methods::contains(std::string_view method) const {
    return methods_.find(method) != methods_.end();
}

// --- Broker ------------------------------------------------------------------

Broker::Broker(asio::io_context& loop, uid_t owner, overlay::Rank rank)
    : loop_(loop),
      owner_(owner),
      rank_(rank),
      acceptor_(loop),
      retry_timer_(loop),
      grace_timer_(loop) {}

Broker::~Broker() {
    disconnect_all();
}

Status Broker::listen(const std::string& socket_path) {
    const std::string prefix = "cannot listen on " + socket_path + ": ";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof address.sun_path)
        return Error("", prefix + "the path is longer than " +
                             std::to_string(sizeof address.sun_path - 1) + " bytes");
    std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return Error("", prefix + std::strerror(errno));
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd, SOMAXCONN) != 0) {
        const int error = errno;
        ::close(fd);
        return Error("", prefix + std::strerror(error));
    }
    asio::error_code error;
    acceptor_.assign(asio::local::stream_protocol(), fd, error);
    if (error) {
        ::close(fd);
        return Error("", prefix + error.message());
    }
    uri_ = overlay::uri_of(socket_path);
    accept();
    return {};
}

void Broker::register_method(std::string name, Handler handler, ServedOn where) {
    methods_.add(std::move(name), std::move(handler), where);
}

void Broker::set_forwarder(Forwarder forward) {
    forward_ = std::move(forward);
}

void Broker::serve(overlay::Message request, std::function<void(overlay::Reply)> send) {
    auto call = std::make_shared<Call>();
    call->remote = std::move(send);
    call->id = request.id;
    call->method = request.method;
    call->peer = {request.uid, 0, 0};
    dispatch(std::move(request), Responder(std::move(call)));
}

void Broker::dispatch(overlay::Message request, Responder responder) {
    if (request.rank && *request.rank != rank_ && forward_) {
        forward_(std::move(request), std::move(responder));
        return;
    }
    const auto handler = handler_for(request);
    if (!handler) {
        responder.error(handler.error());
        return;
    }
    try {
        (**handler)(request, responder);
    } catch (const std::exception& e) {
        responder.error(Error(request.method, e.what()));
    }
}

Result<const Handler*> Broker::handler_for(const overlay::Message& request) const {
    const overlay::Rank rank = request.rank.value_or(rank_);
    // Another rank's broker is reached through the overlay, when there is one.
    if (rank != rank_)
        return Error("api", "no route to rank " + std::to_string(rank));
    if (const Handler* handler = methods_.find(request.method, rank))
        return handler;
    if (methods_.contains(request.method))
        return Error("api", "method " + quote(request.method) + " is not served on rank " +
                                std::to_string(rank));
    return Error("api", "unknown method " + quote(request.method));
}

void Broker::accept() {
    acceptor_.async_accept(
        [this](const asio::error_code& error, asio::local::stream_protocol::socket socket) {
            if (error == asio::error::operation_aborted || closed_)
                return;
            if (error) {
                // Out of descriptors (or another passing failure): try again soon
                // rather than spin.
                retry_timer_.expires_after(std::chrono::milliseconds(100));
                retry_timer_.async_wait([this](const asio::error_code& e) {
                    if (!e && !closed_)
                        accept();
                });
                return;
            }
            // Children the broker starts must not inherit its clients.
            ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
            auto session = std::make_shared<Session>(*this, std::move(socket));
            sessions_.insert(session);
            session->start();
            accept();
        });
}

void Broker::remove(const std::shared_ptr<Session>& session) {
    sessions_.erase(session);
}

void Broker::close(std::function<void()> done, std::chrono::milliseconds grace) {
    closed_ = true;
    asio::error_code ignored;
    acceptor_.close(ignored);
    retry_timer_.cancel();
    for (const auto& session : sessions_)
        session->quiesce();
    on_drained_ = std::move(done);
    grace_timer_.expires_after(grace);
    grace_timer_.async_wait([this](const asio::error_code& error) {
        if (!error && on_drained_)
            asio::post(loop_, std::exchange(on_drained_, nullptr));
    });
    check_drained();
}

void Broker::check_drained() {
    if (!on_drained_)
        return;
    for (const auto& session : sessions_)
        if (!session->drained())
            return;
    grace_timer_.cancel();
    asio::post(loop_, std::exchange(on_drained_, nullptr));
}

void Broker::disconnect_all() {
    closed_ = true;
    asio::error_code ignored;
    acceptor_.close(ignored);
    const auto sessions = std::exchange(sessions_, {});
    for (const auto& session : sessions)
        session->detach();
}

}  // namespace gantry::broker
