// The broker's side of the local API: its handling of clients over a real
// Unix socket, through the blocking client (the broker's loop runs in a
// thread of the test; other peers are forked processes), and its methods
// looked up by rank.
#include "broker/broker.h"

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

#include "overlay/client.h"

namespace gantry {
namespace {

using broker::Broker;
using broker::Methods;
using broker::Responder;
using broker::ServedOn;
using overlay::Client;

// --- A broker on a real socket -----------------------------------------------

// Test methods: test.echo (its params), test.count {"n"} (n stream replies,
// then {"done":n}), test.later (answers from a timer), test.hold (answers
// when test.release is called), test.throw, test.silent (drops its
// responder), test.peer (the peer's credentials), test.sender (the
// request's uid, route and rank).
class BrokerTest : public testing::Test {
protected:
    void SetUp() override {
        broker_.register_method("test.echo", [](const overlay::Message& request, Responder r) {
            r.result(request.params);
        });
        broker_.register_method("test.count", [](const overlay::Message& request, Responder r) {
            const int n = request.params.at("n").get<int>();
            for (int i = 0; i < n; ++i)
                r.more({{"i", i}});
            r.result({{"done", n}});
        });
        broker_.register_method("test.later", [this](const overlay::Message&, Responder r) {
            auto timer = std::make_shared<asio::steady_timer>(loop_, std::chrono::milliseconds(50));
            timer->async_wait([timer, r](const asio::error_code&) mutable { r.result("late"); });
        });
        broker_.register_method("test.hold", [this](const overlay::Message&, Responder r) {
            r.more("held");
            held_.push_back(r);
        });
        broker_.register_method("test.release", [this](const overlay::Message&, Responder r) {
            for (auto& held : held_)
                held.result("released");
            held_.clear();
            r.result(Json::object());
        });
        broker_.register_method("test.throw", [](const overlay::Message& request, Responder) {
            (void)request.params.at("missing");
        });
        broker_.register_method("test.silent", [](const overlay::Message&, Responder) {});
        broker_.register_method("test.peer", [](const overlay::Message&, Responder r) {
            r.result({{"uid", r.peer().uid}, {"pid", r.peer().pid}});
        });
        broker_.register_method("test.sender", [](const overlay::Message& request, Responder r) {
            r.result({{"uid", request.uid},
                      {"peer_uid", r.peer().uid},
                      {"route", request.route},
                      {"rank", request.rank ? Json(*request.rank) : Json()}});
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
    const test::ScratchDir dir_{"gantry-broker-test"};
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
    EXPECT_EQ(overlay::error_of(*reply).str(), R"(api: unknown method "no.such.method")");
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
    for (std::size_t sent = 0; sent <= overlay::kMaxMessage; sent += block.size())
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

TEST_F(BrokerTest, ARequestsUidIsThePeersAndALocalRequestHasNoRoute) {
    Client client = connect();
    const auto reply = client.call("test.sender");
    ASSERT_TRUE(reply.ok()) << reply.error().str();
    EXPECT_EQ(to_compact(*reply),
              "{\"peer_uid\":" + std::to_string(::getuid()) +
                  ",\"rank\":null,\"route\":[],\"uid\":" + std::to_string(::getuid()) + "}");
}

TEST_F(BrokerTest, AClientThatNamesAUidIsRefusedAndDisconnected) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send(
        "{\"id\":1,\"method\":\"test.sender\"}\n"
        "{\"id\":2,\"method\":\"test.sender\",\"uid\":0}\n"
        "{\"id\":3,\"method\":\"test.echo\"}\n");
    const std::string uid = std::to_string(::getuid());
    EXPECT_EQ(peer.read_to_end(),
              "{\"id\":1,\"result\":{\"peer_uid\":" + uid +
                  ",\"rank\":null,\"route\":[],\"uid\":" + uid +
                  "}}\n"
                  "{\"id\":2,\"error\":{\"message\":\"gantry: api: malformed request: \\\"uid\\\" "
                  "is set by the instance, not by the client\"}}\n");
}

TEST_F(BrokerTest, AClientThatNamesARouteIsRefusedAndDisconnected) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send("{\"id\":4,\"method\":\"test.sender\",\"route\":[0,1]}\n");
    EXPECT_EQ(peer.read_to_end(),
              "{\"id\":4,\"error\":{\"message\":\"gantry: api: malformed request: \\\"route\\\" "
              "is set by the instance, not by the client\"}}\n");
}

TEST_F(BrokerTest, ARequestForAnotherRankHasNoRoute) {
    RawPeer peer(socket_);
    ASSERT_TRUE(peer.connected());
    peer.send(
        "{\"id\":1,\"method\":\"test.echo\",\"rank\":1}\n"
        "{\"id\":2,\"method\":\"test.sender\",\"rank\":0}\n"
        "{\"id\":3,\"method\":\"no.such.method\",\"rank\":7}\n");
    EXPECT_EQ(peer.read_line(),
              "{\"id\":1,\"error\":{\"message\":\"gantry: api: no route to rank 1\"}}\n");
    const std::string uid = std::to_string(::getuid());
    EXPECT_EQ(peer.read_line(), "{\"id\":2,\"result\":{\"peer_uid\":" + uid +
                                    ",\"rank\":0,\"route\":[],\"uid\":" + uid + "}}\n");
    EXPECT_EQ(peer.read_line(),
              "{\"id\":3,\"error\":{\"message\":\"gantry: api: no route to rank 7\"}}\n");
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

// --- Methods by rank --------------------------------------------------------

TEST(Methods, AreFoundOnTheRanksThatServeThem) {
    Methods methods;
    std::vector<std::string> called;
    methods.add(
        "job.list", [&](const overlay::Message&, Responder) { called.push_back("job.list"); },
        ServedOn::kRankZero);
    methods.add(
        "node.info", [&](const overlay::Message&, Responder) { called.push_back("node.info"); },
        ServedOn::kEveryRank);
    EXPECT_NE(methods.find("job.list", 0), nullptr);
    EXPECT_EQ(methods.find("job.list", 1), nullptr);
    EXPECT_NE(methods.find("node.info", 0), nullptr);
    EXPECT_NE(methods.find("node.info", 1), nullptr);
    EXPECT_NE(methods.find("node.info", 4294967295u), nullptr);
    EXPECT_EQ(methods.find("job.lis", 0), nullptr);
    EXPECT_TRUE(methods.contains("job.list"));
    EXPECT_FALSE(methods.contains("job.lis"));
    // The handlers found are those added.
    (*methods.find("node.info", 3))({}, Responder(nullptr));
    (*methods.find("job.list", 0))({}, Responder(nullptr));
    EXPECT_EQ(called, (std::vector<std::string>{"node.info", "job.list"}));
    // Adding again replaces the handler and where it is served.
    methods.add(
        "job.list", [&](const overlay::Message&, Responder) { called.push_back("again"); },
        ServedOn::kEveryRank);
    (*methods.find("job.list", 1))({}, Responder(nullptr));
    EXPECT_EQ(called.back(), "again");
}

// A broker of rank 1 serves its every-rank methods, not those of rank 0.
TEST(BrokerOfRank, ServesWhatItsRankServes) {
    const test::ScratchDir dir{"gantry-broker-test"};
    const std::string socket = dir / "socket";
    asio::io_context loop;
    broker::Broker broker(loop, ::getuid(), 1);
    EXPECT_EQ(broker.rank(), 1u);
    broker.register_method("test.zero",
                           [](const overlay::Message&, Responder r) { r.result("zero"); });
    broker.register_method(
        "test.every", [](const overlay::Message&, Responder r) { r.result("every"); },
        ServedOn::kEveryRank);
    ASSERT_TRUE(broker.listen(socket).ok());
    std::thread loop_thread([&] { loop.run(); });
    {
        RawPeer peer(socket);
        ASSERT_TRUE(peer.connected());
        peer.send(
            "{\"id\":1,\"method\":\"test.every\"}\n"
            "{\"id\":2,\"method\":\"test.zero\"}\n"
            "{\"id\":3,\"method\":\"test.every\",\"rank\":1}\n"
            "{\"id\":4,\"method\":\"test.every\",\"rank\":0}\n"
            "{\"id\":5,\"method\":\"test.nothing\"}\n");
        peer.close_writing();
        EXPECT_EQ(peer.read_to_end(),
                  "{\"id\":1,\"result\":\"every\"}\n"
                  "{\"id\":2,\"error\":{\"message\":\"gantry: api: method \\\"test.zero\\\" is not "
                  "served on rank 1\"}}\n"
                  "{\"id\":3,\"result\":\"every\"}\n"
                  "{\"id\":4,\"error\":{\"message\":\"gantry: api: no route to rank 0\"}}\n"
                  "{\"id\":5,\"error\":{\"message\":\"gantry: api: unknown method "
                  "\\\"test.nothing\\\"\"}}\n");
    }
    asio::post(loop, [&] {
        broker.disconnect_all();
        loop.stop();
    });
    loop_thread.join();
}

}  // namespace
}  // namespace gantry
