#include "overlay/message.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "util/text.h"

namespace gantry::overlay {

namespace {

// The words of the local API's errors, which clients have seen since
// before the overlay: "api: malformed request: ...".
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

// An integer that fits in 64 signed bits.
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

// An integer from 0 to 2^32 - 1: a rank or a uid.
std::optional<std::uint32_t> integer_32(const Json& value) {
    if (!value.is_number_unsigned())
        return std::nullopt;
    const auto n = value.get<std::uint64_t>();
    if (n > std::numeric_limits<std::uint32_t>::max())
        return std::nullopt;
    return static_cast<std::uint32_t>(n);
}

// The error about `key`, which holds `value`, not an integer from 0 to 2^32 - 1.
std::string not_32_bits(std::string_view key, const Json& value) {
    if (value.is_number_integer())
        return "\"" + std::string(key) + "\" is out of range: expected 0 to 4294967295";
    return wrong_type(key, value, "an integer");
}

Result<std::vector<Rank>> route_of(const Json& value, Error (*bad)(std::string)) {
    if (!value.is_array())
        return bad(wrong_type("route", value, "an array of ranks"));
    std::vector<Rank> route;
    route.reserve(value.size());
    for (const auto& hop : value) {
        const auto rank = integer_32(hop);
        if (!rank)
            return bad(hop.is_number_integer()
                           ? std::string("\"route\" holds a rank out of range: expected 0 to "
                                         "4294967295")
                           : "\"route\" holds " + with_article(hop) + ", expected ranks");
        route.push_back(*rank);
    }
    return route;
}

void append_id(std::string& line, std::int64_t id) {
    if (id < 0) {
        line += '-';
        append_number(line, static_cast<std::uint64_t>(-(id + 1)) + 1);
    } else {
        append_number(line, static_cast<std::uint64_t>(id));
    }
}

void append_route(std::string& line, const std::vector<Rank>& route) {
    line += ",\"route\":[";
    for (std::size_t i = 0; i < route.size(); ++i) {
        if (i > 0)
            line += ',';
        append_number(line, route[i]);
    }
    line += ']';
}

// `{"id":N,"method":M,"params":P` and `,"rank":R` when the request names
// one: what a client sends, left open for what a broker adds.
std::string open_request(const Message& request) {
    std::string line = "{\"id\":";
    append_id(line, request.id);
    line += ",\"method\":" + to_compact(Json(request.method));
    line += ",\"params\":" + to_compact(request.params);
    if (request.rank) {
        line += ",\"rank\":";
        append_number(line, *request.rank);
    }
    return line;
}

// `{` and `"id":N,` when there is an id.
std::string open_reply(std::optional<std::int64_t> id) {
    std::string line = "{";
    if (id) {
        line += "\"id\":";
        append_id(line, *id);
        line += ',';
    }
    return line;
}

void append_error(std::string& line, std::string_view message, std::string_view type) {
    line += "\"error\":{\"message\":" + to_compact(Json(std::string(message)));
    if (!type.empty())
        line += ",\"type\":" + to_compact(Json(std::string(type)));
    line += '}';
}

// The object of a request line, its id, and what a client may send: method,
// params, rank.
Result<Message> parse_client_fields(std::string_view line, Json& json,
                                    std::optional<std::int64_t>& id) {
    id.reset();
    auto parsed = parse_json(kBadRequest, line);
    if (!parsed)
        return parsed.error();
    json = std::move(*parsed);
    if (!json.is_object())
        return bad_request("expected a JSON object, got " + with_article(json));
    const auto id_field = json.find("id");
    if (id_field == json.end())
        return bad_request("no \"id\"");
    id = integer_id(*id_field);
    if (!id)
        return bad_request(id_field->is_number_integer()
                               ? std::string("\"id\" is out of range")
                               : wrong_type("id", *id_field, "an integer"));
    Message request;
    request.id = *id;
    const auto method = json.find("method");
    if (method == json.end())
        return bad_request("no \"method\"");
    if (!method->is_string())
        return bad_request(wrong_type("method", *method, "a string"));
    request.method = method->get<std::string>();
    if (const auto params = json.find("params"); params != json.end()) {
        if (!params->is_object())
            return bad_request(wrong_type("params", *params, "an object"));
        request.params = std::move(*params);
    }
    if (const auto rank = json.find("rank"); rank != json.end()) {
        request.rank = integer_32(*rank);
        if (!request.rank)
            return bad_request(not_32_bits("rank", *rank));
    }
    return request;
}

}  // namespace

// --- Encoding ----------------------------------------------------------------

std::string encode_request(const Message& request) {
    return open_request(request) + "}\n";
}

std::string encode_message(const Message& message) {
    std::string line = open_request(message);
    line += ",\"uid\":";
    append_number(line, message.uid);
    append_route(line, message.route);
    line += "}\n";
    return line;
}

std::string encode_result(std::int64_t id, const Json& result, bool more) {
    std::string line = open_reply(id);
    line += "\"result\":" + to_compact(result);
    line += more ? ",\"more\":true}\n" : "}\n";
    return line;
}

std::string encode_error(std::optional<std::int64_t> id, std::string_view message,
                         std::string_view type) {
    std::string line = open_reply(id);
    append_error(line, message, type);
    line += "}\n";
    return line;
}

std::string encode_reply(const Reply& reply) {
    std::string line = open_reply(reply.id);
    if (reply.result)
        line += "\"result\":" + to_compact(*reply.result);
    else
        append_error(line, reply.message.value_or(""), reply.error_type);
    if (reply.more)
        line += ",\"more\":true";
    if (!reply.route.empty())
        append_route(line, reply.route);
    line += "}\n";
    return line;
}

// --- Decoding ----------------------------------------------------------------

Result<Message> parse_request(std::string_view line, uid_t sender,
                              std::optional<std::int64_t>& id) {
    Json json;
    auto request = parse_client_fields(line, json, id);
    if (!request)
        return request;
    // A client that could name its uid could act as anyone; one that names
    // a route expects a say in it it does not have: refused, not ignored.
    for (const std::string_view key : {"uid", "route"})
        if (json.contains(std::string(key)))
            return bad_request("\"" + std::string(key) +
                               "\" is set by the instance, not by the client");
    request->uid = sender;
    return request;
}

Result<Message> parse_message(std::string_view line, std::optional<std::int64_t>& id) {
    Json json;
    auto message = parse_client_fields(line, json, id);
    if (!message)
        return message;
    const auto uid = json.find("uid");
    if (uid == json.end())
        return bad_request("no \"uid\"");
    const auto sender = integer_32(*uid);
    if (!sender)
        return bad_request(not_32_bits("uid", *uid));
    message->uid = *sender;
    const auto route = json.find("route");
    if (route == json.end())
        return bad_request("no \"route\"");
    auto hops = route_of(*route, bad_request);
    if (!hops)
        return hops.error();
    message->route = std::move(*hops);
    return message;
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
    if (const auto route = json->find("route"); route != json->end()) {
        auto hops = route_of(*route, bad_reply);
        if (!hops)
            return hops.error();
        reply.route = std::move(*hops);
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

}  // namespace gantry::overlay
