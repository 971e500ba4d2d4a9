#include "overlay/client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gantry::overlay {

namespace {

std::string_view without_prefix(std::string_view message) {
    constexpr std::string_view kPrefix = "gantry: ";
    if (message.starts_with(kPrefix))
        message.remove_prefix(kPrefix.size());
    return message;
}

// A reply that answers another request than the one waited for.
Error unexpected_reply(std::string message) {
    return Error("api: malformed reply", std::move(message));
}

}  // namespace

// --- Client ------------------------------------------------------------------

Error error_of(const Reply& reply) {
    return Error("", std::string(without_prefix(reply.message.value_or(""))));
}

Result<std::string> Client::default_uri() {
    const char* uri = std::getenv(std::string(kUriVariable).c_str());
    if (uri == nullptr || *uri == '\0')
        return Error("", "not inside an instance (GANTRY_URI is not set); give --uri");
    return std::string(uri);
}

Result<Client> Client::connect(std::string_view uri) {
    auto path = socket_path_of(uri);
    if (!path)
        return path.error();
    const std::string prefix = "cannot connect to " + std::string(uri) + ": ";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path->size() >= sizeof address.sun_path)
        return Error("", prefix + "the socket path is longer than " +
                             std::to_string(sizeof address.sun_path - 1) + " bytes");
    std::memcpy(address.sun_path, path->c_str(), path->size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return Error("", prefix + std::strerror(errno));
    while (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        if (errno == EINTR)
            continue;
        const int error = errno;
        ::close(fd);
        return Error("", prefix + std::strerror(error));
    }
    return Client(fd, std::string(uri));
}

Client::Client(Client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      uri_(std::move(other.uri_)),
      buffer_(std::move(other.buffer_)),
      next_id_(other.next_id_),
      lost_(other.lost_),
      last_error_type_(std::move(other.last_error_type_)) {}

Client& Client::operator=(Client&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        uri_ = std::move(other.uri_);
        buffer_ = std::move(other.buffer_);
        next_id_ = other.next_id_;
        lost_ = other.lost_;
        last_error_type_ = std::move(other.last_error_type_);
    }
    return *this;
}

Client::~Client() {
    if (fd_ >= 0)
        ::close(fd_);
}

Error Client::lost() {
    lost_ = true;
    return Error("", "lost the connection to the instance at " + uri_);
}

Result<Reply> Client::receive() {
    for (;;) {
        if (auto line = buffer_.next_line())
            return parse_reply(*line);
        if (buffer_.overflowed())
            return Error("", "a reply from " + uri_ + " is longer than " +
                                 std::to_string(kMaxMessage) + " bytes");
        char block[1 << 16];
        const ssize_t n = ::read(fd_, block, sizeof block);
        if (n > 0)
            buffer_.append(block, static_cast<std::size_t>(n));
        else if (n < 0 && errno == EINTR)
            continue;
        else
            return lost();
    }
}

Result<std::int64_t> Client::send(std::string_view method, const Json& params) {
    if (fd_ < 0)
        return lost();
    const std::int64_t id = next_id_++;
    const std::string line = encode_request({id, std::string(method), params});
    for (std::size_t sent = 0; sent < line.size();) {
        const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
        if (n >= 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (errno == EINTR)
            continue;
        // A refused peer may find the socket closed before it writes: the
        // broker's one message about the connection says why.
        if (auto reply = receive(); reply && !reply->id && reply->message)
            return error_of(*reply);
        return lost();
    }
    return id;
}

Result<Json> Client::call(std::string_view method, const Json& params,
                          const std::function<void(const Json&)>& on_more) {
    last_error_type_.clear();
    const auto id = send(method, params);
    if (!id)
        return id.error();
    for (;;) {
        auto reply = receive();
        if (!reply)
            return reply.error();
        if (reply->message && (!reply->id || *reply->id == *id)) {
            last_error_type_ = reply->error_type;
            return error_of(*reply);
        }
        if (!reply->id || *reply->id != *id)
            return unexpected_reply(
                "a reply to request " +
                (reply->id ? std::to_string(*reply->id) : std::string("(none)")) +
                " while waiting for request " + std::to_string(*id));
        if (!reply->more)
            return std::move(*reply->result);
        if (on_more)
            on_more(*reply->result);
    }
}

Status Client::wait_closed() {
    char block[4096];
    for (;;) {
        const ssize_t n = ::read(fd_, block, sizeof block);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return {};
        if (n < 0 && errno != EINTR)
            return Error("", "reading from " + uri_ + ": " + std::strerror(errno));
    }
}

}  // namespace gantry::overlay
