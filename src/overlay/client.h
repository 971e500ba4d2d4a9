// A blocking client of an instance's local API, for commands: the envelope
// of message.h over the Unix socket that uri.h names.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "overlay/message.h"
#include "overlay/uri.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::overlay {

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

}  // namespace gantry::overlay
