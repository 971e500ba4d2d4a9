// The instance's local API: newline-delimited JSON messages over a Unix
// stream socket, the URI that names it, and a blocking client for commands.
//
// Every message is one JSON object on one line, ended by '\n'. A client
// sends requests; the broker answers each with one reply or, for a stream,
// several replies of which only the last has no "more":
//
//   -> {"id":1,"method":"instance.info","params":{}}
//   <- {"id":1,"result":{"uri":"unix:///tmp/gantry-x/socket",...}}
//   -> {"id":2,"method":"(a streaming method)","params":{...}}
//   <- {"id":2,"result":{...},"more":true}        (any number of these)
//   <- {"id":2,"result":{...}}                     (or an error: the end)
//   <- {"id":3,"error":{"message":"gantry: unknown method \"x\""}}
//   <- {"id":4,"error":{"message":"gantry: job 7: ...","type":"shutdown"}}
//
// Ids are the client's (integers); a reply carries its request's id. A
// message without an id is about the connection itself (a refused peer, a
// malformed request without a usable id) and is the last one sent on it.
// Error messages are whole lines as a command prints them ("gantry: ...").
// docs/commands/instance.md describes the protocol for users.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/json.h"

namespace gantry::api {

// The longest message either side accepts, newline excluded.
inline constexpr std::size_t kMaxMessage = std::size_t{16} << 20;

// The environment variable that holds the enclosing instance's URI.
inline constexpr std::string_view kUriVariable = "GANTRY_URI";

struct Request {
    std::int64_t id = 0;
    std::string method;
    Json params = Json::object();
};

struct Reply {
    std::optional<std::int64_t> id;      // none: about the connection itself
    std::optional<Json> result;          // set on success
    std::optional<std::string> message;  // set on error: "gantry: ..."
    std::string error_type;              // an error's "type", when it has one
    bool more = false;                   // another reply to the same id follows
};

// --- Addresses ---------------------------------------------------------------

// "unix://" followed by the socket's absolute path.
std::string uri_of(std::string_view socket_path);
// The socket path of a "unix://PATH" URI; PATH must be absolute.
Result<std::string> socket_path_of(std::string_view uri);

// --- Encoding (each line ends with '\n') -------------------------------------

std::string encode_request(const Request& request);
// A success reply; `more` marks one reply of a stream that goes on.
std::string encode_result(std::int64_t id, const Json& result, bool more = false);
// An error reply; without an id, an error about the connection. A `type`
// lets clients tell an error apart without reading its words: "shutdown"
// (the instance ended before the request could be answered).
std::string encode_error(std::optional<std::int64_t> id, std::string_view message,
                         std::string_view type = {});

// The error type of a request the instance could not answer because it
// shut down.
inline constexpr std::string_view kShutdownError = "shutdown";

// --- Decoding ----------------------------------------------------------------

// One request line (without its '\n'): a JSON object with an integer "id", a
// string "method" and an optional object "params". `id` is set as soon as a
// usable id is read, so that the error reply about a bad request can carry it.
Result<Request> parse_request(std::string_view line, std::optional<std::int64_t>& id);
// One reply line (without its '\n').
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

// --- The client --------------------------------------------------------------

// The error an error reply carries, as a command prints it after "gantry: "
// (the broker's "gantry: " left out).
Error error_of(const Reply& reply);

// A blocking connection to an instance, for commands: one request at a time
// through call(); or, for a front end that also waits on other things
// (stdin, signals), send() and receive() as poll(2) on native_handle() says.
class Client {
public:
    // The URI in GANTRY_URI; without it: "not inside an instance
    // (GANTRY_URI is not set); give --uri".
    static Result<std::string> default_uri();
    // Connects to `uri`. Error: "cannot connect to URI: REASON".
    static Result<Client> connect(std::string_view uri);

    Client(Client&& other) noexcept;
    Client& operator=(Client&& other) noexcept;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client();

    // Sends one request and returns its final reply's result, or its error
    // (the broker's message, "gantry: " left out). Replies of a stream that
    // come before the final one are handed to `on_more` in order.
    Result<Json> call(std::string_view method, const Json& params = Json::object(),
                      const std::function<void(const Json&)>& on_more = {});
    // Waits until the instance closes the connection (it does once it has
    // ended, after instance.shutdown).
    Status wait_closed();

    // Sends one request without waiting for its replies; returns its id.
    Result<std::int64_t> send(std::string_view method, const Json& params = Json::object());
    // The next reply, read from the socket when none is buffered: blocks
    // until one comes. Error replies are replies here, not errors.
    Result<Reply> receive();
    // A whole reply is buffered: receive() returns it without reading, and
    // poll(2) on the socket would not announce it.
    bool has_reply() const { return buffer_.has_line(); }
    // The socket, to poll(2) for the next reply.
    int native_handle() const { return fd_; }

    const std::string& uri() const { return uri_; }
    // The connection broke or the instance closed it (an error said so).
    bool lost_connection() const { return lost_; }
    // The "type" of the error reply the last call() returned, if it had one.
    const std::string& last_error_type() const { return last_error_type_; }

private:
    Client(int fd, std::string uri) : fd_(fd), uri_(std::move(uri)) {}
    Error lost();

    int fd_ = -1;
    std::string uri_;
    LineBuffer buffer_;
    std::int64_t next_id_ = 1;
    bool lost_ = false;
    std::string last_error_type_;
};

}  // namespace gantry::api
