// The local API: message framing, the blocking client, and the broker's
// handling of clients over a real Unix socket (the broker's loop runs in a
// thread of the test; other peers are forked processes).
#include "broker/api.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/other_user.h"
#include "support/process.h"
#include "support/raw_peer.h"
#include "support/scratch.h"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"

namespace gantry {
namespace {

using api::Client;
using api::LineBuffer;
using broker::Broker;
using broker::Responder;

// --- Framing -------------------------------------------------------------------

TEST(ApiEncode, RequestsAndReplies) {
    EXPECT_EQ(api::encode_request({1, "instance.info", Json::object()}),
              "{\"id\":1,\"method\":\"instance.info\",\"params\":{}}\n");
    EXPECT_EQ(api::encode_request({-9223372036854775807 - 1, "x", {{"force", true}}}),
              "{\"id\":-9223372036854775808,\"method\":\"x\",\"params\":{\"force\":true}}\n");
    EXPECT_EQ(api::encode_result(7, {{"a", 1}}), "{\"id\":7,\"result\":{\"a\":1}}\n");
    EXPECT_EQ(api::encode_result(7, 3, true), "{\"id\":7,\"result\":3,\"more\":true}\n");
    EXPECT_EQ(api::encode_error(8, "gantry: no"),
              "{\"id\":8,\"error\":{\"message\":\"gantry: no\"}}\n");
    EXPECT_EQ(api::encode_error(std::nullopt, "gantry: \"q\"\n"),
              "{\"error\":{\"message\":\"gantry: \\\"q\\\"\\n\"}}\n");
}

struct RequestCase {
    std::string_view line;
    std::optional<std::int64_t> id;  // the id an error reply carries
    std::string_view error;          // empty: a good request
};

constexpr RequestCase kRequests[] = {
    {R"({"id":1,"method":"m"})", 1, ""},
    {R"({"id":0,"method":"m","params":{"a":[1]},"extra":null})", 0, ""},
    {R"( {"method":"m","id":-4} )", -4, ""},
    {"garbage", std::nullopt, R"(api: malformed request: invalid JSON at offset 0 in "garbage")"},
    {R"({"id":1,"method":"m")", std::nullopt,
     R"(api: malformed request: invalid JSON at offset 20 in "{\"id\":1,\"method\":\"m\"")"},
    {"[1,2]", std::nullopt, "api: malformed request: expected a JSON object, got an array"},
    {"\"x\"", std::nullopt, "api: malformed request: expected a JSON object, got a string"},
    {R"({"method":"m"})", std::nullopt, R"(api: malformed request: no "id")"},
    {R"({"id":"1","method":"m"})", std::nullopt,
     R"(api: malformed request: "id" is a string, expected an integer)"},
    {R"({"id":1.5,"method":"m"})", std::nullopt,
     R"(api: malformed request: "id" is a number, expected an integer)"},
    {R"({"id":9223372036854775808,"method":"m"})", std::nullopt,
     R"(api: malformed request: "id" is out of range)"},
    {R"({"id":5})", 5, R"(api: malformed request: no "method")"},
    {R"({"id":5,"method":{}})", 5,
     R"(api: malformed request: "method" is an object, expected a string)"},
    {R"({"id":6,"method":"m","params":[]})", 6,
     R"(api: malformed request: "params" is an array, expected an object)"},
};

TEST(ApiParse, Requests) {
    for (const auto& c : kRequests) {
        std::optional<std::int64_t> id = 99;
        const auto request = api::parse_request(c.line, id);
        EXPECT_EQ(id, c.id) << c.line;
        if (c.error.empty()) {
            ASSERT_TRUE(request.ok()) << c.line << ": " << request.error().str();
            EXPECT_EQ(request->method, "m") << c.line;
            EXPECT_TRUE(request->params.is_object()) << c.line;
        } else {
            ASSERT_FALSE(request.ok()) << c.line;
            EXPECT_EQ(request.error().str(), c.error) << c.line;
        }
    }
}

TEST(ApiParse, RequestParamsAreKept) {
    std::optional<std::int64_t> id;
    const auto request = api::parse_request(R"({"id":3,"method":"m","params":{"a":[1,"b"]}})", id);
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(request->id, 3);
    EXPECT_EQ(to_compact(request->params), R"({"a":[1,"b"]})");
}

TEST(ApiParse, Replies) {
    auto reply = api::parse_reply(R"({"id":2,"result":{"x":1},"more":true})");
    ASSERT_TRUE(reply.ok());
    EXPECT_EQ(reply->id, 2);
    EXPECT_EQ(to_compact(*reply->result), R"({"x":1})");
    EXPECT_TRUE(reply->more);
    EXPECT_FALSE(reply->message);

    reply = api::parse_reply(R"({"error":{"message":"gantry: refused"}})");
    ASSERT_TRUE(reply.ok());
    EXPECT_FALSE(reply->id);
    EXPECT_EQ(reply->message, "gantry: refused");
    EXPECT_FALSE(reply->more);

    struct Bad {
        std::string_view line, error;
    };
    const Bad bad[] = {
        {"1", "api: malformed reply: expected a JSON object, got a number"},
        {R"({"id":1})", R"(api: malformed reply: expected one of "result" and "error")"},
        {R"({"id":1,"result":1,"error":{}})",
         R"(api: malformed reply: expected one of "result" and "error")"},
        {R"({"id":1,"error":"x"})", R"(api: malformed reply: "error" has no string "message")"},
        {R"({"id":1,"result":1,"more":1})",
         R"(api: malformed reply: "more" is a number, expected a boolean)"},
        {R"({"id":1,"error":{"message":"m"},"more":true})",
         R"(api: malformed reply: an error reply is the last one; it has no "more")"},
    };
    for (const auto& b : bad) {
        const auto parsed = api::parse_reply(b.line);
        ASSERT_FALSE(parsed.ok()) << b.line;
        EXPECT_EQ(parsed.error().str(), b.error) << b.line;
    }
}

TEST(ApiUri, UnixPathsOnly) {
    EXPECT_EQ(api::uri_of("/tmp/x/socket"), "unix:///tmp/x/socket");
    EXPECT_EQ(api::socket_path_of("unix:///tmp/x/socket").value(), "/tmp/x/socket");
    for (const std::string_view bad : {"", "unix://", "unix://relative/socket", "/tmp/x/socket",
                                       "tcp://host:80", "unix:/tmp/socket"}) {
        const auto path = api::socket_path_of(bad);
        ASSERT_FALSE(path.ok()) << bad;
        EXPECT_EQ(path.error().str(),
                  "api: expected a URI of the form unix:///PATH/TO/SOCKET in " + quote(bad));
    }
}

TEST(ApiLineBuffer, CutsLinesAcrossReads) {
    LineBuffer buffer;
    buffer.append("ab", 2);
    EXPECT_FALSE(buffer.next_line());
    buffer.append("c\nd\n\ne", 6);
    EXPECT_EQ(buffer.next_line(), "abc");
    EXPECT_EQ(buffer.next_line(), "d");
    EXPECT_EQ(buffer.next_line(), "");
    EXPECT_FALSE(buffer.next_line());
    EXPECT_EQ(buffer.size(), 1u);
    buffer.append("f\n", 2);
    EXPECT_EQ(buffer.next_line(), "ef");
    buffer.append("tail", 4);
    EXPECT_EQ(buffer.take_rest(), "tail");
    EXPECT_EQ(buffer.size(), 0u);
}

TEST(ApiLineBuffer, OverflowsOnlyWithoutANewline) {
    LineBuffer buffer;
    const std::string block(1 << 20, 'x');
    for (std::size_t i = 0; i < api::kMaxMessage / block.size(); ++i)
        buffer.append(block.data(), block.size());
    EXPECT_FALSE(buffer.overflowed());
    buffer.append("x", 1);
    EXPECT_TRUE(buffer.overflowed());
    buffer.append("\n", 1);
    EXPECT_FALSE(buffer.overflowed());
    EXPECT_EQ(buffer.next_line()->size(), api::kMaxMessage + 1);
}

// --- A broker on a real socket -----------------------------------------------

// Test methods: test.echo (its params), test.count {"n"} (n stream replies,
// then {"done":n}), test.later (answers from a timer), test.hold (answers
// when test.release is called), test.throw, test.silent (drops its
// responder).
class BrokerTest : public testing::Test {
protected:
    void SetUp() override {
        broker_.register_method("test.echo", [](const api::Request& request, Responder r) {
            r.result(request.params);
        });
        broker_.register_method("test.count", [](const api::Request& request, Responder r) {
            const int n = request.params.at("n").get<int>();
            for (int i = 0; i < n; ++i)
                r.more({{"i", i}});
            r.result({{"done", n}});
        });
        broker_.register_method("test.later", [this](const api::Request&, Responder r) {
            auto timer = std::make_shared<asio::steady_timer>(loop_, std::chrono::milliseconds(50));
            timer->async_wait([timer, r](const asio::error_code&) mutable { r.result("late"); });
        });
        broker_.register_method("test.hold", [this](const api::Request&, Responder r) {
            r.more("held");
            held_.push_back(r);
        });
        broker_.register_method("test.release", [this](const api::Request&, Responder r) {
            for (auto& held : held_)
                held.result("released");
            held_.clear();
            r.result(Json::object());
        });
        broker_.register_method("test.throw", [](const api::Request& request, Responder) {
            (void)request.params.at("missing");
        });
        broker_.register_method("test.silent", [](const api::Request&, Responder) {});
        broker_.register_method("test.peer", [](const api::Request&, Responder r) {
            r.result({{"uid", r.peer().uid}, {"pid", r.peer().pid}});
        });
        ASSERT_TRUE(broker_.listen(socket_).ok());
        loop_thread_ = std::thread([this] { loop_.run(); });
    }

    void TearDown() override {
        asio::post(loop_, [this] {
            held_.clear();
            broker_.disconnect_all();
            loop_.stop();
        });
        if (loop_thread_.joinable())
            loop_thread_.join();
    }

    std::string uri() const { return "unix://" + socket_; }

    Client connect() {
        auto client = Client::connect(uri());
        EXPECT_TRUE(client.ok()) << client.error().str();
        return std::move(client).value();
    }

    asio::io_context loop_;
    Broker broker_{loop_, ::getuid()};
    std::vector<Responder> held_;  // the loop thread's
    std::thread loop_thread_;
    const test::ScratchDir dir_{"gantry-api-test"};
    const std::string socket_ = dir_ / "socket";
};

using test::RawPeer;

TEST_F(BrokerTest, CallReturnsTheResult) {
    Client client = connect();
    const auto reply = client.call("test.echo", {{"a", {1, 2}}});
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(to_compact(*reply), R"({"a":[1,2]})");
    EXPECT_EQ(client.uri(), uri());
}

TEST_F(BrokerTest, StreamRepliesComeBeforeTheFinalOne) {
    Client client = connect();
    std::vector<std::string> seen;
    const auto reply = client.call("test.count", {{"n", 3}},
                                   [&](const Json& more) { seen.push_back(to_compact(more)); });
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(seen, (std::vector<std::string>{R"({"i":0})", R"({"i":1})", R"({"i":2})"}));
    EXPECT_EQ(to_compact(*reply), R"({"done":3})");
}

TEST_F(BrokerTest, StreamOnTheWire) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send("{\"id\":4,\"method\":\"test.count\",\"params\":{\"n\":2}}\n");
    EXPECT_EQ(peer.read_line(), "{\"id\":4,\"result\":{\"i\":0},\"more\":true}\n");
    EXPECT_EQ(peer.read_line(), "{\"id\":4,\"result\":{\"i\":1},\"more\":true}\n");
    EXPECT_EQ(peer.read_line(), "{\"id\":4,\"result\":{\"done\":2}}\n");
}

TEST_F(BrokerTest, SendThenReceiveAStreamReplyByReply) {
    Client client = connect();
    const auto id = client.send("test.count", {{"n", 2}});
    ASSERT_TRUE(id.ok()) << id.error().str();
    // Nothing is read before receive(): poll(2) is what says a reply came.
    EXPECT_FALSE(client.has_reply());
    pollfd ready{client.native_handle(), POLLIN, 0};
    ASSERT_EQ(::poll(&ready, 1, 10000), 1);
    std::vector<std::string> seen;
    for (bool more = true; more;) {
        const auto reply = client.receive();
        ASSERT_TRUE(reply.ok()) << reply.error().str();
        EXPECT_EQ(reply->id, *id);
        ASSERT_TRUE(reply->result);
        seen.push_back(to_compact(*reply->result));
        more = reply->more;
    }
    EXPECT_EQ(seen, (std::vector<std::string>{R"({"i":0})", R"({"i":1})", R"({"done":2})"}));
    EXPECT_FALSE(client.has_reply());
    // call() goes on with the next id.
    const auto reply = client.call("test.echo", {{"after", true}});
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(to_compact(*reply), R"({"after":true})");
}

TEST_F(BrokerTest, RepliesReadTogetherAreBufferedForReceive) {
    Client client = connect();
    const auto first = client.send("test.echo", {{"n", 1}});
    const auto second = client.send("test.echo", {{"n", 2}});
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(*second, *first + 1);
    // Wait until both replies are on the socket, so that one read takes both.
    const int both = static_cast<int>(std::strlen("{\"id\":1,\"result\":{\"n\":1}}\n") * 2);
    ASSERT_TRUE(test::eventually([&] {
        int queued = 0;
        return ::ioctl(client.native_handle(), FIONREAD, &queued) == 0 && queued == both;
    }));
    const auto one = client.receive();
    ASSERT_TRUE(one.ok()) << one.error().str();
    EXPECT_EQ(one->id, *first);
    EXPECT_TRUE(client.has_reply());
    const auto two = client.receive();
    ASSERT_TRUE(two.ok()) << two.error().str();
    EXPECT_EQ(two->id, *second);
    EXPECT_EQ(to_compact(*two->result), R"({"n":2})");
    EXPECT_FALSE(client.has_reply());
}

TEST_F(BrokerTest, ReceiveGivesErrorRepliesAsReplies) {
    Client client = connect();
    const auto id = client.send("no.such.method");
    ASSERT_TRUE(id.ok()) << id.error().str();
    const auto reply = client.receive();
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(reply->id, *id);
    EXPECT_FALSE(reply->result);
    EXPECT_EQ(reply->message, R"(gantry: api: unknown method "no.such.method")");
    EXPECT_EQ(api::error_of(*reply).str(), R"(api: unknown method "no.such.method")");
}

TEST_F(BrokerTest, ErrorsOfMethodsKeepTheConnection) {
    Client client = connect();
    auto reply = client.call("no.such.method");
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().str(), R"(api: unknown method "no.such.method")");
    reply = client.call("test.throw");
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().str(),
              "test.throw: [json.exception.out_of_range.403] key 'missing' not found");
    reply = client.call("test.silent");
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().str(), "test.silent: no reply");
    reply = client.call("test.echo", {{"still", "here"}});
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(to_compact(*reply), R"({"still":"here"})");
}

TEST_F(BrokerTest, RequestsOfOneClientAreAnsweredInOrder) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    // All three in one write; the first is answered last by its method.
    peer.send(
        "{\"id\":1,\"method\":\"test.later\"}\n"
        "{\"id\":2,\"method\":\"test.echo\",\"params\":{\"n\":2}}\n"
        "{\"id\":3,\"method\":\"nope\"}\n");
    EXPECT_EQ(peer.read_line(), "{\"id\":1,\"result\":\"late\"}\n");
    EXPECT_EQ(peer.read_line(), "{\"id\":2,\"result\":{\"n\":2}}\n");
    EXPECT_EQ(peer.read_line(),
              "{\"id\":3,\"error\":{\"message\":\"gantry: api: unknown method \\\"nope\\\"\"}}\n");
}

TEST_F(BrokerTest, LastLineNeedsNoNewlineAndEndOfInputEndsTheConnection) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send("\n{\"id\":1,\"method\":\"test.later\"}\n{\"id\":2,\"method\":\"test.echo\"}");
    peer.close_writing();
    EXPECT_EQ(peer.read_to_end(),
              "{\"id\":1,\"result\":\"late\"}\n"
              "{\"id\":2,\"result\":{}}\n");
}

TEST_F(BrokerTest, GarbageGetsAnErrorAndTheClientIsDisconnected) {
    Client other = connect();
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send("garbage\n{\"id\":2,\"method\":\"test.echo\"}\n");
    EXPECT_EQ(peer.read_to_end(),
              "{\"error\":{\"message\":\"gantry: api: malformed request: invalid JSON at offset "
              "0 in \\\"garbage\\\"\"}}\n");
    // The other client goes on, and new ones get in.
    const auto reply = other.call("test.echo", {{"x", 1}});
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(to_compact(*reply), R"({"x":1})");
    Client later = connect();
    EXPECT_TRUE(later.call("test.echo").ok());
}

TEST_F(BrokerTest, BadRequestWithAnIdGetsItsErrorWithTheId) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send("{\"id\":1,\"method\":\"test.echo\"}\n{\"id\":7,\"params\":{}}\n");
    EXPECT_EQ(peer.read_to_end(),
              "{\"id\":1,\"result\":{}}\n"
              "{\"id\":7,\"error\":{\"message\":\"gantry: api: malformed request: no "
              "\\\"method\\\"\"}}\n");
}

TEST_F(BrokerTest, InvalidUtf8IsReportedNotFatal) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send("\xff\xfe\n");
    const std::string reply = peer.read_to_end();
    EXPECT_TRUE(reply.starts_with(
        "{\"error\":{\"message\":\"gantry: api: malformed request: invalid JSON at offset 0 in "))
        << reply;
    Client client = connect();
    EXPECT_TRUE(client.call("test.echo").ok());
}

TEST_F(BrokerTest, OverlongRequestIsRefused) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    // The broker stops reading and closes once the line is too long, so
    // that the last block may not all be taken.
    const std::string block(1 << 20, ' ');
    for (std::size_t sent = 0; sent <= api::kMaxMessage; sent += block.size())
        peer.send_some(block);
    EXPECT_EQ(peer.read_to_end(),
              "{\"error\":{\"message\":\"gantry: api: a request is longer than 16777216 "
              "bytes\"}}\n");
}

TEST_F(BrokerTest, TwoClientsAtOnce) {
    // The first client's stream is held open while the second one calls;
    // the second releases it.
    RawPeer first(socket_);
    ASSERT_TRUE(first.connected());
    first.send("{\"id\":1,\"method\":\"test.hold\"}\n{\"id\":2,\"method\":\"test.echo\"}\n");
    EXPECT_EQ(first.read_line(), "{\"id\":1,\"result\":\"held\",\"more\":true}\n");
    Client second = connect();
    auto reply = second.call("test.echo", {{"second", true}});
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(to_compact(*reply), R"({"second":true})");
    reply = second.call("test.release");
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(first.read_line(), "{\"id\":1,\"result\":\"released\"}\n");
    EXPECT_EQ(first.read_line(), "{\"id\":2,\"result\":{}}\n");
}

TEST_F(BrokerTest, PeerCredentialsReachTheMethod) {
    Client client = connect();
    const auto reply = client.call("test.peer");
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(reply->at("uid").get<uid_t>(), ::getuid());
    EXPECT_EQ(reply->at("pid").get<pid_t>(), ::getpid());
}

TEST_F(BrokerTest, PeerOfAnotherUidIsRefused) {
    if (::getuid() != 0)
        GTEST_SKIP() << "needs root to become another uid";
    // Open the way to the socket, which the instance keeps in a 0700
    // directory, so that only the credentials check stands.
    ::chmod(dir_.path().c_str(), 0755);
    ::chmod(socket_.c_str(), 0777);
    EXPECT_EQ(test::connect_as_nobody(socket_),
              "{\"error\":{\"message\":\"gantry: instance of uid 0: connection refused for uid "
              "65534\"}}\n");
    Client client = connect();
    EXPECT_TRUE(client.call("test.echo").ok());
}

TEST_F(BrokerTest, ClientSeesTheCloseAfterShutdown) {
    Client client = connect();
    ASSERT_TRUE(client.call("test.echo").ok());
    asio::post(loop_, [this] { broker_.close([this] { broker_.disconnect_all(); }); });
    EXPECT_TRUE(client.wait_closed().ok());
    const auto reply = client.call("test.echo");
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().str(), "lost the connection to the instance at " + uri());
    EXPECT_EQ(Client::connect(uri()).error().str(),
              "cannot connect to " + uri() + ": Connection refused");
}

TEST(ApiClient, ConnectErrorsSayWhere) {
    EXPECT_EQ(Client::connect("unix:///nonexistent/socket").error().str(),
              "cannot connect to unix:///nonexistent/socket: No such file or directory");
    EXPECT_EQ(Client::connect("unix:///" + std::string(120, 'x')).error().str(),
              "cannot connect to unix:///" + std::string(120, 'x') +
                  ": the socket path is longer than 107 bytes");
}

TEST(ApiClient, DefaultUriIsGantryUri) {
    ::setenv("GANTRY_URI", "unix:///tmp/x/socket", 1);
    EXPECT_EQ(Client::default_uri().value(), "unix:///tmp/x/socket");
    ::unsetenv("GANTRY_URI");
    EXPECT_EQ(Client::default_uri().error().str(),
              "not inside an instance (GANTRY_URI is not set); give --uri");
}

}  // namespace
}  // namespace gantry
