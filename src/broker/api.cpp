#include "broker/api.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "util/text.h"

namespace gantry::api {

namespace {

constexpr std::string_view kScheme = "unix://";
constexpr std::string_view kBadRequest = "api: malformed request";
constexpr std::string_view kBadReply = "api: malformed reply";

Error bad_request(std::string message) {
    return Error(std::string(kBadRequest), std::move(message));
}

Error bad_reply(std::string message) {
    return Error(std::string(kBadReply), std::move(message));
}

// "a string", "an array"
std::string with_article(const Json& value) {
    const std::string name = json_type_name(value);
    return (name.front() == 'a' || name.front() == 'o' ? "an " : "a ") + name;
}

// `"id" is a string, expected an integer`
std::string wrong_type(std::string_view key, const Json& value, std::string_view expected) {
    return "\"" + std::string(key) + "\" is " + with_article(value) + ", expected " +
           std::string(expected);
}

// An integer id that fits in 64 signed bits.
std::optional<std::int64_t> integer_id(const Json& value) {
    if (value.is_number_unsigned()) {
        const auto id = value.get<std::uint64_t>();
        if (id > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return std::nullopt;
        return static_cast<std::int64_t>(id);
    }
    if (value.is_number_integer())
        return value.get<std::int64_t>();
    return std::nullopt;
}

std::string_view without_prefix(std::string_view message) {
    constexpr std::string_view kPrefix = "gantry: ";
    if (message.starts_with(kPrefix))
        message.remove_prefix(kPrefix.size());
    return message;
}

void append_id(std::string& line, std::int64_t id) {
    if (id < 0) {
        line += '-';
        append_number(line, static_cast<std::uint64_t>(-(id + 1)) + 1);
    } else {
        append_number(line, static_cast<std::uint64_t>(id));
    }
}

}  // namespace

// --- Addresses ---------------------------------------------------------------

std::string uri_of(std::string_view socket_path) {
    return std::string(kScheme) + std::string(socket_path);
}

Result<std::string> socket_path_of(std::string_view uri) {
    if (!uri.starts_with(kScheme) || uri.size() == kScheme.size() || uri[kScheme.size()] != '/')
        return Error::in("api", "expected a URI of the form unix:///PATH/TO/SOCKET", uri);
    return std::string(uri.substr(kScheme.size()));
}

// --- Encoding ----------------------------------------------------------------

std::string encode_request(const Request& request) {
    std::string line = "{\"id\":";
    append_id(line, request.id);
    line += ",\"method\":" + to_compact(Json(request.method));
    line += ",\"params\":" + to_compact(request.params) + "}\n";
    return line;
}

std::string encode_result(std::int64_t id, const Json& result, bool more) {
    std::string line = "{\"id\":";
    append_id(line, id);
    line += ",\"result\":" + to_compact(result);
    line += more ? ",\"more\":true}\n" : "}\n";
    return line;
}

std::string encode_error(std::optional<std::int64_t> id, std::string_view message,
                         std::string_view type) {
    std::string line = "{";
    if (id) {
        line += "\"id\":";
        append_id(line, *id);
        line += ',';
    }
    line += "\"error\":{\"message\":" + to_compact(Json(std::string(message)));
    if (!type.empty())
        line += ",\"type\":" + to_compact(Json(std::string(type)));
    line += "}}\n";
    return line;
}

// --- Decoding ----------------------------------------------------------------

Result<Request> parse_request(std::string_view line, std::optional<std::int64_t>& id) {
    id.reset();
    auto json = parse_json(kBadRequest, line);
    if (!json)
        return json.error();
    if (!json->is_object())
        return bad_request("expected a JSON object, got " + with_article(*json));
    const auto id_field = json->find("id");
    if (id_field == json->end())
        return bad_request("no \"id\"");
    id = integer_id(*id_field);
    if (!id)
        return bad_request(id_field->is_number_integer()
                               ? std::string("\"id\" is out of range")
                               : wrong_type("id", *id_field, "an integer"));
    Request request;
    request.id = *id;
    const auto method = json->find("method");
    if (method == json->end())
        return bad_request("no \"method\"");
    if (!method->is_string())
        return bad_request(wrong_type("method", *method, "a string"));
    request.method = method->get<std::string>();
    if (const auto params = json->find("params"); params != json->end()) {
        if (!params->is_object())
            return bad_request(wrong_type("params", *params, "an object"));
        request.params = std::move(*params);
    }
    return request;
}

Result<Reply> parse_reply(std::string_view line) {
    auto json = parse_json(kBadReply, line);
    if (!json)
        return json.error();
    if (!json->is_object())
        return bad_reply("expected a JSON object, got " + with_article(*json));
    Reply reply;
    if (const auto id = json->find("id"); id != json->end()) {
        reply.id = integer_id(*id);
        if (!reply.id)
            return bad_reply(wrong_type("id", *id, "an integer"));
    }
    const auto result = json->find("result");
    const auto error = json->find("error");
    if ((result == json->end()) == (error == json->end()))
        return bad_reply("expected one of \"result\" and \"error\"");
    if (result != json->end()) {
        reply.result = std::move(*result);
    } else {
        const auto message = error->is_object() ? error->find("message") : error->end();
        if (!error->is_object() || message == error->end() || !message->is_string())
            return bad_reply("\"error\" has no string \"message\"");
        reply.message = message->get<std::string>();
        if (const auto type = error->find("type"); type != error->end() && type->is_string())
            reply.error_type = type->get<std::string>();
    }
    if (const auto more = json->find("more"); more != json->end()) {
        if (!more->is_boolean())
            return bad_reply(wrong_type("more", *more, "a boolean"));
        reply.more = more->get<bool>();
        if (reply.more && reply.message)
            return bad_reply("an error reply is the last one; it has no \"more\"");
    }
    return reply;
}

// --- LineBuffer --------------------------------------------------------------

bool LineBuffer::has_line() const {
    const auto newline = buffer_.find('\n', std::max(scanned_, start_));
    scanned_ = newline == std::string::npos ? buffer_.size() : newline;
    return newline != std::string::npos;
}

std::optional<std::string> LineBuffer::next_line() {
    if (!has_line())
        return std::nullopt;
    const std::size_t newline = scanned_;
    std::string line = buffer_.substr(start_, newline - start_);
    start_ = newline + 1;
    scanned_ = start_;
    // Drop what was taken once it is most of the buffer: amortized O(1) a byte.
    if (start_ > buffer_.size() / 2) {
        buffer_.erase(0, start_);
        scanned_ -= start_;
        start_ = 0;
    }
    return line;
}

std::string LineBuffer::take_rest() {
    std::string rest = buffer_.substr(start_);
    buffer_.clear();
    start_ = scanned_ = 0;
    return rest;
}

bool LineBuffer::overflowed() const {
    return !has_line() && size() > kMaxMessage;
}

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
            return bad_reply("a reply to request " +
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

}  // namespace gantry::api
