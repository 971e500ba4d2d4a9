// The overlay between brokers, with real sockets on 127.0.0.1: brokers of
// one instance in this process on one Asio loop (two, where a broker is to
// fall silent), requests to every rank and their replies, CURVE (keys
// refused at the handshake, nothing readable on the wire), heartbeats and
// losses, hellos refused.
#include "overlay/overlay.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/write.hpp>

namespace gantry {
namespace {

using namespace std::chrono_literals;
using overlay::Certificate;
using overlay::Message;
using overlay::Overlay;
using overlay::OverlayOptions;
using overlay::Rank;
using overlay::Reply;
using overlay::Tree;
using Clock = std::chrono::steady_clock;

// What one broker's handlers saw. Requests are answered with
// {"served_by":RANK,"params":PARAMS}, at once or after serve_time.
struct Broker {
    Rank rank = 0;
    std::chrono::milliseconds serve_time{0};  // a slow broker's: its loop waits
    std::unique_ptr<Overlay> overlay;
    std::vector<Message> requests;
    std::vector<Reply> replies;
    std::vector<std::pair<Rank, Json>> ups;
    std::vector<std::pair<Rank, std::string>> lost;
    std::vector<std::string> parent_lost;
    std::vector<std::string> refused;
    int parent_ups = 0;

    Overlay::Handlers handlers() {
        Overlay::Handlers h;
        h.request = [this](Message&& request) {
            std::this_thread::sleep_for(serve_time);
            Reply reply;
            reply.id = request.id;
            reply.result = Json{{"served_by", rank}, {"params", request.params}};
            reply.route = request.route;
            EXPECT_TRUE(overlay->send_reply(reply));
            requests.push_back(std::move(request));
        };
        h.reply = [this](Reply&& reply) { replies.push_back(std::move(reply)); };
        h.child_up = [this](Rank child, const Json& hello) { ups.emplace_back(child, hello); };
        h.child_lost = [this](Rank child, const std::string& why) {
            lost.emplace_back(child, why);
        };
        h.parent_lost = [this](const std::string& why) { parent_lost.push_back(why); };
        h.parent_up = [this] { ++parent_ups; };
        h.refused = [this](const std::string& why) { refused.push_back(why); };
        return h;
    }
};

// One certificate per rank.
std::vector<Certificate> certificates(std::size_t count) {
    std::vector<Certificate> all;
    for (std::size_t i = 0; i < count; ++i)
        all.push_back(overlay::make_certificate().value());
    return all;
}

// A rank's options: its own key pair, its children's public keys, its
// parent's.
OverlayOptions options_of(Rank rank, const Tree& tree, const std::vector<Certificate>& keys,
                          std::chrono::milliseconds heartbeat = 100ms,
                          std::chrono::milliseconds lost_after = 400ms) {
    OverlayOptions options;
    options.rank = rank;
    options.tree = tree;
    options.certificate = keys[rank];
    for (const Rank child : tree.children(rank))
        options.authorized_keys.push_back(keys[child].public_key);
    if (const auto parent = tree.parent(rank))
        options.parent_public_key = keys[*parent].public_key;
    options.heartbeat = heartbeat;
    options.lost_after = lost_after;
    return options;
}

// Runs the loops in turn until `done` or the deadline; false at the deadline.
bool run_until(std::vector<asio::io_context*> loops, const std::function<bool()>& done,
               std::chrono::milliseconds limit = 3000ms) {
    const auto deadline = Clock::now() + limit;
    while (!done()) {
        if (Clock::now() >= deadline)
            return false;
        for (auto* loop : loops) {
            loop->restart();
            loop->run_for(loops.size() > 1 ? 2ms : 10ms);
        }
    }
    return true;
}

bool run_until(asio::io_context& loop, const std::function<bool()>& done,
               std::chrono::milliseconds limit = 3000ms) {
    return run_until(std::vector<asio::io_context*>{&loop}, done, limit);
}

void run_for(asio::io_context& loop, std::chrono::milliseconds duration) {
    (void)run_until(
        loop, [] { return false; }, duration);
}

// Opens one broker on `loop`.
std::unique_ptr<Broker> open_broker(asio::io_context& loop, OverlayOptions options) {
    auto broker = std::make_unique<Broker>();
    broker->rank = options.rank;
    auto overlay = Overlay::open(loop, std::move(options), broker->handlers());
    EXPECT_TRUE(overlay) << overlay.error().str();
    if (overlay)
        broker->overlay = std::move(*overlay);
    return broker;
}

Json hello_of(Rank rank) {
    return Json{{"host", "node" + std::to_string(rank)}};
}

// The brokers of an instance, each on the loop `loop_of` gives it and
// connected to its parent.
struct Instance {
    Tree tree;
    std::vector<Certificate> keys;
    std::vector<std::unique_ptr<Broker>> brokers;

    Instance(const Tree& shape, const std::function<asio::io_context&(Rank)>& loop_of,
             std::chrono::milliseconds heartbeat = 100ms,
             std::chrono::milliseconds lost_after = 400ms)
        : tree(shape), keys(certificates(shape.size)) {
        for (Rank rank = 0; rank < tree.size; ++rank)
            brokers.push_back(
                open_broker(loop_of(rank), options_of(rank, tree, keys, heartbeat, lost_after)));
        for (Rank rank = 1; rank < tree.size; ++rank)
            EXPECT_TRUE(brokers[rank]->overlay->connect(
                brokers[*tree.parent(rank)]->overlay->endpoint(), hello_of(rank)));
    }
    // The leaves first: a broker that closes says goodbye to its parent,
    // which waits (Overlay::kGoodbyeLinger) when the parent is gone.
    ~Instance() {
        for (auto broker = brokers.rbegin(); broker != brokers.rend(); ++broker)
            broker->reset();
    }
    Broker& operator[](Rank rank) { return *brokers[rank]; }
    bool all_up() const {
        for (Rank rank = 1; rank < tree.size; ++rank)
            if (!brokers[rank]->overlay || !brokers[rank]->overlay->parent_up())
                return false;
        return true;
    }
};

Message request_to(Rank to, std::int64_t id, Json params = Json::object()) {
    Message request{id, "test.echo", std::move(params)};
    request.rank = to;
    return request;
}

// The ranks a request from `from` to `to` goes through, `to` left out:
// up to their nearest common ancestor and down.
std::vector<Rank> expected_route(const Tree& tree, Rank from, Rank to) {
    if (from == to)
        return {from};
    std::vector<Rank> up{from};
    while (tree.parent(up.back()))
        up.push_back(*tree.parent(up.back()));
    std::vector<Rank> down{to};
    while (tree.parent(down.back()))
        down.push_back(*tree.parent(down.back()));
    while (up.size() > 1 && down.size() > 1 && up[up.size() - 2] == down[down.size() - 2]) {
        up.pop_back();
        down.pop_back();
    }
    std::vector<Rank> route = up;  // ends at the common ancestor
    for (std::size_t i = down.size() - 1; i-- > 0;)
        route.push_back(down[i]);
    route.pop_back();  // `to`
    return route;
}

TEST(OverlayTest, ExpectedRoutes) {
    const Tree tree{7, 2};
    EXPECT_EQ(expected_route(tree, 3, 5), (std::vector<Rank>{3, 1, 0, 2}));
    EXPECT_EQ(expected_route(tree, 6, 4), (std::vector<Rank>{6, 2, 0, 1}));
    EXPECT_EQ(expected_route(tree, 0, 6), (std::vector<Rank>{0, 2}));
    EXPECT_EQ(expected_route(tree, 4, 0), (std::vector<Rank>{4, 1}));
    EXPECT_EQ(expected_route(tree, 3, 4), (std::vector<Rank>{3, 1}));
    EXPECT_EQ(expected_route(tree, 1, 3), (std::vector<Rank>{1}));
    EXPECT_EQ(expected_route(tree, 2, 2), (std::vector<Rank>{2}));
}

TEST(OverlayTest, OptionsAreChecked) {
    asio::io_context loop;
    const auto keys = certificates(2);
    const auto error_of = [&](OverlayOptions options) {
        auto overlay = Overlay::open(loop, std::move(options), {});
        return overlay ? std::string("opened") : overlay.error().str();
    };
    OverlayOptions options = options_of(1, Tree{2, 2}, keys);
    options.lost_after = 150ms;
    EXPECT_EQ(error_of(options),
              "overlay: lost_after (150 ms) is less than twice the heartbeat (100 ms)");
    options = options_of(1, Tree{2, 2}, keys);
    options.tree.fanout = 0;
    EXPECT_EQ(error_of(options), "overlay: the tree's fanout is 0, expected at least 1");
    options = options_of(1, Tree{2, 2}, keys);
    options.rank = 2;
    EXPECT_EQ(error_of(options), "overlay: rank 2 is not in an instance of 2 brokers");
    options = options_of(1, Tree{2, 2}, keys);
    options.parent_public_key = "short";
    EXPECT_EQ(error_of(options), "overlay: parent_public_key is not a CURVE key");
    options = options_of(0, Tree{2, 2}, keys);
    options.authorized_keys.push_back("x");
    EXPECT_EQ(error_of(options), "overlay: authorized_keys[1] is not a CURVE key");
    // A leaf listens nowhere; rank 0 has no parent.
    const auto leaf = open_broker(loop, options_of(1, Tree{2, 2}, keys));
    EXPECT_EQ(leaf->overlay->endpoint(), "");
    const auto root = open_broker(loop, options_of(0, Tree{2, 2}, keys));
    EXPECT_EQ(root->overlay->endpoint().rfind("tcp://127.0.0.1:", 0), 0u)
        << root->overlay->endpoint();
    EXPECT_EQ(root->overlay->connect(root->overlay->endpoint(), Json::object()).error().str(),
              "overlay: rank 0 has no parent");
}

TEST(OverlayTest, EveryRankReachesEveryRankAndTheRepliesComeBack) {
    asio::io_context loop;
    Instance instance(Tree{7, 2}, [&](Rank) -> asio::io_context& { return loop; });
    ASSERT_TRUE(run_until(loop, [&] { return instance.all_up(); }));
    for (Rank rank = 0; rank < 7; ++rank) {
        const auto& ups = instance[rank].ups;
        std::vector<std::pair<Rank, Json>> expected;
        for (const Rank child : instance.tree.children(rank))
            expected.emplace_back(child,
                                  Json{{"host", "node" + std::to_string(child)}, {"rank", child}});
        std::sort(expected.begin(), expected.end());
        auto seen = ups;
        std::sort(seen.begin(), seen.end());
        EXPECT_EQ(seen, expected) << "rank " << rank;
        EXPECT_EQ(instance[rank].overlay->children_up(), instance.tree.children(rank));
        EXPECT_EQ(instance[rank].overlay->parent_up(), rank > 0);
    }

    for (Rank from = 0; from < 7; ++from)
        for (Rank to = 0; to < 7; ++to) {
            Message request = request_to(to, from * 10 + to, {{"from", from}});
            request.uid = 1000 + from;
            ASSERT_TRUE(instance[from].overlay->send(request));
        }
    ASSERT_TRUE(run_until(loop, [&] {
        for (Rank rank = 0; rank < 7; ++rank)
            if (instance[rank].replies.size() < 7)
                return false;
        return true;
    }));
    for (Rank to = 0; to < 7; ++to) {
        const auto& served = instance[to].requests;
        ASSERT_EQ(served.size(), 7u) << "rank " << to;
        for (const Message& request : served) {
            const auto from = static_cast<Rank>(request.id / 10);
            EXPECT_EQ(request.id % 10, to);
            EXPECT_EQ(request.method, "test.echo");
            EXPECT_EQ(request.params, (Json{{"from", from}}));
            EXPECT_EQ(request.rank, to);
            EXPECT_EQ(request.uid, 1000 + from);
            EXPECT_EQ(request.route, expected_route(instance.tree, from, to))
                << from << " to " << to;
        }
    }
    for (Rank from = 0; from < 7; ++from) {
        auto replies = instance[from].replies;
        std::sort(replies.begin(), replies.end(),
                  [](const Reply& a, const Reply& b) { return *a.id < *b.id; });
        ASSERT_EQ(replies.size(), 7u);
        for (Rank to = 0; to < 7; ++to) {
            const Reply& reply = replies[to];
            EXPECT_EQ(reply.id, from * 10 + to);
            EXPECT_EQ(reply.result, (Json{{"served_by", to}, {"params", {{"from", from}}}}));
            EXPECT_EQ(reply.route, std::vector<Rank>{});
            EXPECT_FALSE(reply.message);
        }
    }
    // One route checked by hand: 3 to 5 through 1, 0 and 2.
    const auto three_to_five =
        std::find_if(instance[5].requests.begin(), instance[5].requests.end(),
                     [](const Message& request) { return request.id == 35; });
    ASSERT_NE(three_to_five, instance[5].requests.end());
    EXPECT_EQ(three_to_five->route, (std::vector<Rank>{3, 1, 0, 2}));
}

TEST(OverlayTest, NoRoute) {
    asio::io_context loop;
    Instance instance(
        Tree{7, 2}, [&](Rank) -> asio::io_context& { return loop; }, 1000ms, 5000ms);
    ASSERT_TRUE(run_until(loop, [&] { return instance.all_up(); }));
    EXPECT_EQ(instance[0].overlay->send(request_to(9, 1)).error().str(),
              "overlay: no route to rank 9");
    EXPECT_EQ(instance[3].overlay->send(request_to(7, 1)).error().str(),
              "overlay: no route to rank 7");
    EXPECT_EQ(instance[0].overlay->send(Message{1, "test.echo"}).error().str(),
              "overlay: a request on the overlay must name its rank");
    Reply unrouted;
    unrouted.id = 1;
    unrouted.result = 1;
    EXPECT_EQ(instance[0].overlay->send_reply(unrouted).error().str(),
              "overlay: a reply with no route");

    // Rank 2 goes (saying goodbye): its subtree is out of reach.
    instance.brokers[2].reset();
    ASSERT_TRUE(run_until(
        loop, [&] { return !instance[0].lost.empty(); }, 1000ms));
    EXPECT_EQ(instance[0].lost,
              (std::vector<std::pair<Rank, std::string>>{{2, "rank 2 said goodbye"}}));
    EXPECT_EQ(instance[0].overlay->children_up(), std::vector<Rank>{1});
    EXPECT_EQ(instance[0].overlay->send(request_to(5, 1)).error().str(),
              "overlay: no route to rank 5");
    // Sent from farther away, the request is answered by the rank that
    // cannot pass it on.
    ASSERT_TRUE(instance[3].overlay->send(request_to(6, 36)));
    ASSERT_TRUE(run_until(loop, [&] { return !instance[3].replies.empty(); }));
    ASSERT_EQ(instance[3].replies.size(), 1u);
    EXPECT_EQ(instance[3].replies[0].id, 36);
    EXPECT_EQ(instance[3].replies[0].message, "gantry: api: no route to rank 6");
    EXPECT_EQ(instance[3].replies[0].route, std::vector<Rank>{});
    // Its children heard it go.
    ASSERT_TRUE(run_until(loop, [&] {
        return !instance[5].parent_lost.empty() && !instance[6].parent_lost.empty();
    }));
    EXPECT_EQ(instance[5].parent_lost, std::vector<std::string>{"rank 2 said goodbye"});
    EXPECT_EQ(instance[5].overlay->send(request_to(0, 1)).error().str(),
              "overlay: no route to rank 0");
}

TEST(OverlayTest, AKeyNotAuthorizedNeverComesUp) {
    asio::io_context loop;
    const Tree tree{3, 2};
    const auto keys = certificates(3);
    auto root = open_broker(loop, options_of(0, tree, keys));
    // Rank 2's key is not among those rank 0 lets in.
    OverlayOptions intruder_options = options_of(2, tree, keys);
    intruder_options.certificate = overlay::make_certificate().value();
    auto intruder = open_broker(loop, intruder_options);
    ASSERT_TRUE(intruder->overlay->connect(root->overlay->endpoint(), Json::object()));
    const auto start = Clock::now();
    ASSERT_TRUE(run_until(
        loop, [&] { return !intruder->parent_lost.empty(); }, 2000ms));
    EXPECT_LT(Clock::now() - start, 700ms);
    // Refused at the handshake, which both sides say at once.
    const std::string endpoint = root->overlay->endpoint();
    EXPECT_EQ(intruder->parent_lost,
              std::vector<std::string>{"rank 0 at " + endpoint +
                                       " refused this broker's key at the CURVE handshake "
                                       "(another instance's certificate?)"});
    ASSERT_EQ(root->refused.size(), 1u);
    EXPECT_EQ(root->refused[0],
              "refused a broker at 127.0.0.1: its key is not one of this rank's children's "
              "(another instance's certificate?)");
    EXPECT_EQ(intruder->parent_ups, 0);
    EXPECT_FALSE(intruder->overlay->parent_up());
    EXPECT_EQ(intruder->overlay->send(request_to(0, 1)).error().str(),
              "overlay: no route to rank 0");
    EXPECT_TRUE(root->ups.empty());
    EXPECT_TRUE(root->requests.empty());
    EXPECT_EQ(root->overlay->children_up(), std::vector<Rank>{});
    EXPECT_EQ(root->overlay->send(request_to(2, 1)).error().str(), "overlay: no route to rank 2");

    // A child that expects another key of its parent never comes up either.
    OverlayOptions wary_options = options_of(1, tree, keys);
    wary_options.parent_public_key = keys[2].public_key;
    auto wary = open_broker(loop, wary_options);
    ASSERT_TRUE(wary->overlay->connect(root->overlay->endpoint(), Json::object()));
    ASSERT_TRUE(run_until(
        loop, [&] { return !wary->parent_lost.empty(); }, 2000ms));
    EXPECT_EQ(wary->parent_lost,
              std::vector<std::string>{"rank 0 at " + endpoint +
                                       " ended the CURVE handshake: it does not hold the key "
                                       "this broker expects of it (another instance's "
                                       "certificate?)"});
    EXPECT_TRUE(root->ups.empty());
    // Told once per lost_after: the first refusal's line stands for both.
    EXPECT_EQ(root->refused.size(), 1u);
}

// A TCP relay on 127.0.0.1 that passes bytes both ways between the
// connections it accepts and `target`, and keeps a copy of them.
class Relay {
public:
    Relay(asio::io_context& loop, std::uint16_t target)
        : loop_(loop),
          acceptor_(loop, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
          target_(asio::ip::make_address("127.0.0.1"), target) {
        accept();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    const std::string& recorded() const { return recorded_; }

private:
    using Socket = std::shared_ptr<asio::ip::tcp::socket>;
    void accept() {
        acceptor_.async_accept([this](std::error_code error, asio::ip::tcp::socket accepted) {
            if (error)
                return;
            auto near = std::make_shared<asio::ip::tcp::socket>(std::move(accepted));
            auto far = std::make_shared<asio::ip::tcp::socket>(loop_);
            far->async_connect(target_, [this, near, far](std::error_code error) {
                if (error)
                    return;
                pump(near, far);
                pump(far, near);
            });
            accept();
        });
    }
    void pump(const Socket& from, const Socket& to) {
        auto buffer = std::make_shared<std::array<char, 4096>>();
        from->async_read_some(asio::buffer(*buffer), [this, from, to, buffer](std::error_code error,
                                                                              std::size_t size) {
            if (error) {
                to->close();
                return;
            }
            recorded_.append(buffer->data(), size);
            asio::async_write(*to, asio::buffer(buffer->data(), size),
                              [this, from, to, buffer](std::error_code error, std::size_t) {
                                  if (!error)
                                      pump(from, to);
                              });
        });
    }

    asio::io_context& loop_;
    asio::ip::tcp::acceptor acceptor_;
    asio::ip::tcp::endpoint target_;
    std::string recorded_;
};

TEST(OverlayTest, ATapSeesNothingReadable) {
    asio::io_context loop;
    const Tree tree{2, 2};
    const auto keys = certificates(2);
    auto root = open_broker(loop, options_of(0, tree, keys));
    auto child = open_broker(loop, options_of(1, tree, keys));
    const std::string& endpoint = root->overlay->endpoint();
    Relay relay(loop,
                static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
    ASSERT_TRUE(child->overlay->connect("tcp://127.0.0.1:" + std::to_string(relay.port()),
                                        Json{{"host", "tapped"}}));
    ASSERT_TRUE(run_until(loop, [&] { return child->overlay->parent_up(); }));
    ASSERT_TRUE(child->overlay->send(request_to(0, 7, {{"job", "secret-job-data-1234"}})));
    ASSERT_TRUE(run_until(loop, [&] { return !child->replies.empty(); }));
    ASSERT_EQ(root->requests.size(), 1u);
    EXPECT_EQ(root->requests[0].params, (Json{{"job", "secret-job-data-1234"}}));
    EXPECT_EQ(child->replies[0].result,
              (Json{{"served_by", 0}, {"params", {{"job", "secret-job-data-1234"}}}}));
    // The relay saw the connection (ZMTP's greeting names the mechanism in
    // clear) but none of what it carried.
    const std::string& wire = relay.recorded();
    EXPECT_NE(wire.find("CURVE"), std::string::npos);
    EXPECT_EQ(wire.find("secret-job-data-1234"), std::string::npos);
    EXPECT_EQ(wire.find("test.echo"), std::string::npos);
    EXPECT_EQ(wire.find("tapped"), std::string::npos);
    EXPECT_EQ(wire.find("hello"), std::string::npos);
}

TEST(OverlayTest, ASilentChildIsLostWithItsSubtree) {
    // Ranks 1, 3 and 4 on a loop of their own, which stops running: the
    // subtree of rank 1 falls silent with its connections open.
    asio::io_context loop;
    asio::io_context frozen;
    Instance instance(Tree{7, 2}, [&](Rank rank) -> asio::io_context& {
        return rank == 1 || rank == 3 || rank == 4 ? frozen : loop;
    });
    ASSERT_TRUE(run_until({&loop, &frozen}, [&] { return instance.all_up(); }));
    const auto start = Clock::now();
    ASSERT_TRUE(run_until(
        loop, [&] { return !instance[0].lost.empty(); }, 2000ms));
    const auto elapsed = Clock::now() - start;
    EXPECT_LT(elapsed, 400ms + 300ms);
    EXPECT_GE(elapsed, 400ms - 100ms - 20ms);  // heard at most a heartbeat before
    EXPECT_EQ(instance[0].lost,
              (std::vector<std::pair<Rank, std::string>>{{1, "no word from rank 1 in 400 ms"}}));
    EXPECT_EQ(instance[0].overlay->children_up(), std::vector<Rank>{2});
    for (const Rank rank : instance.tree.subtree(1))
        EXPECT_EQ(instance[0].overlay->send(request_to(rank, 1)).error().str(),
                  "overlay: no route to rank " + std::to_string(rank));
    ASSERT_TRUE(instance[0].overlay->send(request_to(5, 5)));
    ASSERT_TRUE(run_until(loop, [&] { return instance[0].replies.size() == 1; }));
    // Once only, and nothing else lost.
    run_for(loop, 300ms);
    EXPECT_EQ(instance[0].lost.size(), 1u);
    EXPECT_TRUE(instance[2].lost.empty());
    EXPECT_TRUE(instance[5].parent_lost.empty());

    // Running again, rank 1 finds its parent gone: rank 0 forgot it.
    ASSERT_TRUE(run_until(
        frozen, [&] { return !instance[1].parent_lost.empty(); }, 1000ms));
    run_for(frozen, 200ms);
    ASSERT_EQ(instance[1].parent_lost.size(), 1u);
    const std::string& why = instance[1].parent_lost[0];
    EXPECT_TRUE(why == "no word from the parent (rank 0) in 400 ms" ||
                why == "rank 0 does not know this broker: it must say hello again")
        << why;
}

TEST(OverlayTest, ASilentParentIsLostOnce) {
    asio::io_context loop;
    asio::io_context frozen;
    Instance instance(Tree{3, 2},
                      [&](Rank rank) -> asio::io_context& { return rank == 0 ? frozen : loop; });
    ASSERT_TRUE(run_until({&loop, &frozen}, [&] { return instance.all_up(); }));
    const auto start = Clock::now();
    ASSERT_TRUE(run_until(
        loop, [&] { return !instance[1].parent_lost.empty() && !instance[2].parent_lost.empty(); },
        2000ms));
    EXPECT_LT(Clock::now() - start, 400ms + 300ms);
    run_for(loop, 300ms);
    for (const Rank rank : {1, 2}) {
        EXPECT_EQ(instance[rank].parent_lost,
                  std::vector<std::string>{"no word from the parent (rank 0) in 400 ms"});
        EXPECT_FALSE(instance[rank].overlay->parent_up());
        EXPECT_EQ(instance[rank].overlay->send(request_to(0, 1)).error().str(),
                  "overlay: no route to rank 0");
    }
}

// A parent that reads nothing: what ZeroMQ cannot take waits in the
// child's outbox, which says it is congested past kParentBacklog bytes and
// has room again once the parent reads; everything arrives, in order.
TEST(OverlayTest, AParentThatReadsNothingCongestsTheWayUp) {
    asio::io_context loop;
    asio::io_context frozen;
    Instance instance(
        Tree{2, 2}, [&](Rank rank) -> asio::io_context& { return rank == 0 ? frozen : loop; },
        100ms, 10000ms);
    ASSERT_TRUE(run_until({&loop, &frozen}, [&] { return instance.all_up(); }));
    const std::string pad(16384, 'x');
    // 24 MiB: more than ZeroMQ's queues (100 messages) and the kernel's
    // socket buffers hold, by more than kParentBacklog.
    constexpr int kRequests = 1500;
    for (int id = 1; id <= kRequests; ++id)
        ASSERT_TRUE(instance[1].overlay->send(request_to(0, id, Json{{"pad", pad}})));
    run_for(loop, 200ms);
    ASSERT_TRUE(instance[1].overlay->parent_congested());
    bool room = false;
    instance[1].overlay->when_parent_has_room([&] { room = true; });
    run_for(loop, 100ms);
    EXPECT_FALSE(room);
    ASSERT_TRUE(run_until(
        {&frozen, &loop}, [&] { return room; }, 60000ms));
    EXPECT_FALSE(instance[1].overlay->parent_congested());
    ASSERT_TRUE(run_until(
        {&frozen, &loop}, [&] { return instance[1].replies.size() == kRequests; }, 60000ms));
    ASSERT_EQ(instance[0].requests.size(), std::size_t{kRequests});
    for (int i = 0; i < kRequests; ++i)
        ASSERT_EQ(instance[0].requests[i].id, i + 1);
    EXPECT_TRUE(instance[0].lost.empty());
    EXPECT_TRUE(instance[1].parent_lost.empty());
}

// A broker between others (0 -> 1 -> 2) whose parent reads slowly: it reads
// its child no further while kParentBacklog bytes wait to go up, so the
// congestion reaches the child, whose job shells it would hold; the child
// is not lost for the silence its parent causes (held for longer than
// lost_after), and everything arrives, in order.
TEST(OverlayTest, ABrokerBetweenHoldsItsChildrenWhileItsWayUpIsCongested) {
    asio::io_context loop;
    asio::io_context slow;
    Instance instance(
        Tree{3, 1}, [&](Rank rank) -> asio::io_context& { return rank == 0 ? slow : loop; }, 100ms,
        5000ms);
    ASSERT_TRUE(run_until({&loop, &slow}, [&] { return instance.all_up(); }));
    // Rank 0 on a thread of its own, 20 ms a request: it takes 64 messages
    // (1 MiB) in 1.3 s, then heartbeats, and so on.
    instance[0].serve_time = 20ms;
    std::atomic<bool> stop{false};
    std::thread rank_zero([&] {
        while (!stop) {
            slow.restart();
            slow.run_for(10ms);
        }
    });
    const std::string pad(16384, 'x');
    // 48 MiB: more than kParentBacklog on each of the two ranks, and than
    // ZeroMQ's queues and the kernel's socket buffers between them hold.
    constexpr int kRequests = 3000;
    // Sent from the loop, 50 at a time, so that the heartbeats go on
    // meanwhile however slow the sending (under a sanitizer, on a loaded
    // machine).
    int sent = 0;
    std::function<void()> send_some = [&] {
        for (int i = 0; i < 50 && sent < kRequests; ++i) {
            ++sent;
            const Status status =
                instance[2].overlay->send(request_to(0, sent, Json{{"pad", pad}}));
            ASSERT_TRUE(status) << "request " << sent << ": " << status.error().str();
        }
        if (sent < kRequests)
            asio::post(loop, send_some);
    };
    asio::post(loop, send_some);
    EXPECT_TRUE(run_until(
        loop, [&] { return instance[1].overlay->parent_congested(); }, 30000ms));
    // Longer than lost_after, in which rank 0 takes about 5 MiB: rank 2's
    // backlog waits where it is, rank 1 relaying no more of it.
    run_for(loop, 6500ms);
    EXPECT_TRUE(instance[2].overlay->parent_congested());
    stop = true;
    rank_zero.join();
    ASSERT_EQ(instance[1].lost, (std::vector<std::pair<Rank, std::string>>{}));
    instance[0].serve_time = 0ms;
    ASSERT_TRUE(run_until(
        {&slow, &loop}, [&] { return instance[2].replies.size() == kRequests; }, 60000ms))
        << instance[2].replies.size()
        << " replies; rank 1 lost its parent: " << testing::PrintToString(instance[1].parent_lost)
        << "; rank 2: " << testing::PrintToString(instance[2].parent_lost);
    ASSERT_EQ(instance[0].requests.size(), std::size_t{kRequests});
    for (int i = 0; i < kRequests; ++i)
        ASSERT_EQ(instance[0].requests[i].id, i + 1);
    EXPECT_FALSE(instance[1].overlay->parent_congested());
    EXPECT_FALSE(instance[2].overlay->parent_congested());
    EXPECT_TRUE(instance[0].lost.empty());
    EXPECT_TRUE(instance[1].lost.empty());
    EXPECT_TRUE(instance[1].parent_lost.empty());
    EXPECT_TRUE(instance[2].parent_lost.empty());
}

// A parent whose broker is not there (yet): the child waits hello_timeout
// for a connection, libzmq trying again, then says where it looked.
TEST(OverlayTest, AParentThatIsNotThereIsGivenUpAfterTheHelloTimeout) {
    asio::io_context loop;
    const auto keys = certificates(2);
    // A port nobody listens on: bound by a root broker that is then closed.
    std::string endpoint;
    {
        auto gone = open_broker(loop, options_of(0, Tree{2, 2}, keys));
        endpoint = gone->overlay->endpoint();
    }
    OverlayOptions options = options_of(1, Tree{2, 2}, keys);
    options.hello_timeout = 600ms;
    auto child = open_broker(loop, options);
    ASSERT_TRUE(child->overlay->connect(endpoint, Json::object()));
    const auto start = Clock::now();
    ASSERT_TRUE(run_until(
        loop, [&] { return !child->parent_lost.empty(); }, 3000ms));
    // Not after lost_after (400 ms): the parent may just start later.
    EXPECT_GE(Clock::now() - start, 600ms);
    EXPECT_LT(Clock::now() - start, 600ms + 300ms);
    EXPECT_EQ(child->parent_lost,
              std::vector<std::string>{"rank 0 at " + endpoint +
                                       " did not answer in 600 ms (is its broker running "
                                       "there?)"});
}

// A parent that starts after its child: the child's connection goes through
// once it is there, within hello_timeout.
TEST(OverlayTest, AParentThatStartsLaterIsWaitedFor) {
    asio::io_context loop;
    const auto keys = certificates(2);
    std::string endpoint;
    std::uint16_t port = 0;
    {
        auto gone = open_broker(loop, options_of(0, Tree{2, 2}, keys));
        endpoint = gone->overlay->endpoint();
        port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
    }
    auto child = open_broker(loop, options_of(1, Tree{2, 2}, keys));
    ASSERT_TRUE(child->overlay->connect(endpoint, Json::object()));
    run_for(loop, 700ms);  // longer than lost_after
    EXPECT_TRUE(child->parent_lost.empty());
    OverlayOptions root_options = options_of(0, Tree{2, 2}, keys);
    root_options.port = port;
    auto root = open_broker(loop, root_options);
    ASSERT_TRUE(run_until(
        loop, [&] { return child->parent_ups == 1; }, 3000ms));
    EXPECT_TRUE(child->parent_lost.empty());
}

TEST(OverlayTest, HellosRefusedAndARestartedChild) {
    asio::io_context loop;
    Instance instance(
        Tree{3, 2}, [&](Rank) -> asio::io_context& { return loop; }, 1000ms, 5000ms);
    ASSERT_TRUE(run_until(loop, [&] { return instance.all_up(); }));
    const std::string& root = instance[0].overlay->endpoint();

    // A second rank 1.
    auto twin = open_broker(loop, options_of(1, instance.tree, instance.keys, 1000ms, 5000ms));
    ASSERT_TRUE(twin->overlay->connect(root, Json::object()));
    ASSERT_TRUE(run_until(loop, [&] { return !twin->parent_lost.empty(); }));
    EXPECT_EQ(twin->parent_lost, std::vector<std::string>{"rank 1 is already up"});
    EXPECT_EQ(twin->parent_ups, 0);
    // A rank that is not a child of rank 0 (its key is one rank 0 lets in).
    OverlayOptions stray_options = options_of(1, instance.tree, instance.keys, 1000ms, 5000ms);
    stray_options.rank = 5;
    stray_options.tree = Tree{7, 2};
    auto stray = open_broker(loop, stray_options);
    ASSERT_TRUE(stray->overlay->connect(root, Json::object()));
    ASSERT_TRUE(run_until(loop, [&] { return !stray->parent_lost.empty(); }));
    EXPECT_EQ(stray->parent_lost, std::vector<std::string>{"rank 5 is not a child of rank 0"});
    EXPECT_EQ(instance[0].ups.size(), 2u);
    EXPECT_TRUE(instance[0].lost.empty());

    // Rank 1 closes and says goodbye: its parent knows at once, long before
    // lost_after.
    const auto start = Clock::now();
    instance.brokers[1].reset();
    ASSERT_TRUE(run_until(
        loop, [&] { return !instance[0].lost.empty(); }, 1000ms));
    EXPECT_LT(Clock::now() - start, 1000ms);
    EXPECT_EQ(instance[0].lost,
              (std::vector<std::pair<Rank, std::string>>{{1, "rank 1 said goodbye"}}));
    EXPECT_EQ(instance[0].overlay->children_up(), std::vector<Rank>{2});

    // Started again with the same rank, it comes up again and serves.
    instance.brokers[1] =
        open_broker(loop, options_of(1, instance.tree, instance.keys, 1000ms, 5000ms));
    ASSERT_TRUE(instance[1].overlay->connect(root, hello_of(1)));
    ASSERT_TRUE(run_until(loop, [&] { return instance[1].overlay->parent_up(); }));
    EXPECT_EQ(instance[0].ups.size(), 3u);
    EXPECT_EQ(instance[0].ups.back(), (std::pair<Rank, Json>{1, {{"host", "node1"}, {"rank", 1}}}));
    EXPECT_EQ(instance[0].overlay->children_up(), (std::vector<Rank>{1, 2}));
    ASSERT_TRUE(instance[2].overlay->send(request_to(1, 21)));
    ASSERT_TRUE(run_until(loop, [&] { return !instance[2].replies.empty(); }));
    EXPECT_EQ(instance[2].replies[0].result, (Json{{"served_by", 1}, {"params", Json::object()}}));
    EXPECT_EQ(instance[1].requests.at(0).route, (std::vector<Rank>{2, 0}));

    // Rank 0 closes: its children hear goodbye.
    instance.brokers[0].reset();
    ASSERT_TRUE(run_until(
        loop, [&] { return !instance[1].parent_lost.empty() && !instance[2].parent_lost.empty(); },
        1000ms));
    EXPECT_EQ(instance[1].parent_lost, std::vector<std::string>{"rank 0 said goodbye"});
    EXPECT_EQ(instance[2].parent_lost, std::vector<std::string>{"rank 0 said goodbye"});
    EXPECT_FALSE(instance[1].overlay->parent_up());
}

}  // namespace
}  // namespace gantry
