// The message envelope: what a client sends an instance on its local API
// socket, and what brokers of one instance will send each other over the
// overlay. Newline-delimited JSON, one object a line, ended by '\n'.
//
// A client sends requests; the broker answers each with one reply or, for a
// stream, several replies of which only the last has no "more":
//
//   -> {"id":1,"method":"instance.info","params":{}}
//   <- {"id":1,"result":{"uri":"unix:///tmp/gantry-x/socket",...}}
//   -> {"id":2,"method":"(a streaming method)","params":{...}}
//   <- {"id":2,"result":{...},"more":true}        (any number of these)
//   <- {"id":2,"result":{...}}                     (or an error: the end)
//   <- {"id":3,"error":{"message":"gantry: api: unknown method \"x\""}}
//   <- {"id":4,"error":{"message":"gantry: job 7: ...","type":"shutdown"}}
//
// Ids are the client's (integers); a reply carries its request's id. A
// message without an id is about the connection itself (a refused peer, a
// malformed request without a usable id) and is the last one sent on it.
// Error messages are whole lines as a command prints them ("gantry: ...").
// A request may name the "rank" of the broker that is to serve it.
//
// Two things a request carries are never a client's word: the sender's uid,
// which the receiving side takes from the connection (SO_PEERCRED on the
// local socket), and its route. A client's request that names either is
// malformed. Between brokers, which the overlay authenticates, both travel
// in the message (encode_message, parse_message).
// docs/commands/instance.md describes the protocol for users.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"
#include "util/json.h"

namespace gantry::overlay {

// A broker's rank in its instance (its node's): 0 keeps the record.
using Rank = std::uint32_t;

// The uid of a message whose sender nobody has named: it matches no user
// (as (uid_t)-1 matches none for the kernel), so that a forgotten uid
// never passes for root's 0.
inline constexpr uid_t kUnknownUid = static_cast<uid_t>(-1);

// The longest message either side accepts, newline excluded.
inline constexpr std::size_t kMaxMessage = std::size_t{16} << 20;

// The error type of a request the instance could not answer because it
// shut down.
inline constexpr std::string_view kShutdownError = "shutdown";

// A request.
struct Message {
    std::int64_t id = 0;  // the sender's: its replies carry it
    std::string method;
    Json params = Json::object();
    // The rank of the broker that is to serve it; none: the broker that
    // receives it.
    std::optional<Rank> rank = std::nullopt;
    // The sender's uid, set by the side that received it: from the peer's
    // credentials on the local socket, from the message a peer broker sent
    // on the overlay. Never from a client's JSON.
    uid_t uid = kUnknownUid;
    // The brokers it went through, the first one first; empty for a
    // request that came on the local socket.
    std::vector<Rank> route = {};

    bool operator==(const Message&) const = default;
};

// A reply: to a request, or (no id) about the connection itself.
struct Reply {
    std::optional<std::int64_t> id;      // none: about the connection itself
    std::optional<Json> result;          // set on success
    std::optional<std::string> message;  // set on error: "gantry: ..."
    std::string error_type;              // an error's "type", when it has one
    bool more = false;                   // another reply to the same id follows
    // Its request's route, which it goes back along; empty on the local
    // socket. A reply has no uid: the instance answers.
    std::vector<Rank> route = {};

    bool operator==(const Reply&) const = default;
};

// --- Encoding (each line ends with '\n') -------------------------------------

// A request as a client sends it: id, method, params, and the rank when it
// names one; never a uid or a route.
std::string encode_request(const Message& request);
// A request as a broker sends it to another: all of it, the uid and the
// route included.
std::string encode_message(const Message& message);

// A success reply; `more` marks one reply of a stream that goes on.
std::string encode_result(std::int64_t id, const Json& result, bool more = false);
// An error reply; without an id, an error about the connection. A `type`
// lets clients tell an error apart without reading its words:
// kShutdownError.
std::string encode_error(std::optional<std::int64_t> id, std::string_view message,
                         std::string_view type = {});
// Any reply, its route with it when it has one (between brokers).
std::string encode_reply(const Reply& reply);

// --- Decoding ----------------------------------------------------------------

// One request line from a client (without its '\n'): a JSON object with an
// integer "id", a string "method", an optional object "params" and an
// optional "rank"; "uid" and "route" are refused. The message's uid is
// `sender`'s, the uid of the connection's peer. `id` is set as soon as a
// usable id is read, so that the error reply about a bad request can carry
// it.
Result<Message> parse_request(std::string_view line, uid_t sender, std::optional<std::int64_t>& id);
// One request line from another broker: as a client's, and with the
// sender's "uid" and the "route" it took, both required.
Result<Message> parse_message(std::string_view line, std::optional<std::int64_t>& id);
// One reply line (without its '\n'), with a "route" when it has one.
Result<Reply> parse_reply(std::string_view line);

// Bytes as they arrive, cut into lines.
class LineBuffer {
public:
    void append(const char* bytes, std::size_t size) { buffer_.append(bytes, size); }
    // The next whole line without its '\n', if one has arrived.
    std::optional<std::string> next_line();
    // What remains: an unfinished line (at the end of input, the last line).
    std::string take_rest();
    // True when no whole line is there and the unfinished one exceeds kMaxMessage.
    bool overflowed() const;
    bool has_line() const;
    std::size_t size() const { return buffer_.size() - start_; }

private:
    std::string buffer_;
    std::size_t start_ = 0;            // lines before it were taken
    mutable std::size_t scanned_ = 0;  // no '\n' in [start_, scanned_)
};

}  // namespace gantry::overlay
