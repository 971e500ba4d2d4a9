// The bootstrap of brokers that `gantry start -H` launches: each writes its
// entry as a line on its launcher's stream and reads its parent's and
// children's; rank 0, their launcher, reads the entries in its event loop
// as they come and answers each broker as soon as its neighbours' are in.
#include "broker/bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <asio/io_context.hpp>

#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::broker {
namespace {

using namespace std::chrono_literals;

// A public key of rank r: 40 bytes, as CURVE's are.
std::string key(char r) {
    return std::string(40, r);
}

BrokerAddress address_of(char r, const std::string& endpoint) {
    return BrokerAddress{endpoint, key(r)};
}

std::string read_fd(int fd) {
    std::string text;
    char buffer[256];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<std::size_t>(n));
    return text;
}

TEST(StreamBootstrap, WritesItsEntryThenReadsItsParentsAndChildrens) {
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    // Rank 1 of 4, fanout 2: parent 0, child 3.
    const BrokerAddress zero = address_of('0', "tcp://10.0.0.1:7000");
    const BrokerAddress three = address_of('3', "");
    const std::string answer = encode_address(zero) + "\n" + encode_address(three) + "\n";
    ASSERT_EQ(::write(in[1], answer.data(), answer.size()), static_cast<ssize_t>(answer.size()));
    Bootstrap bootstrap = Bootstrap::from_stream(in[0], out[1], 1, 4, 2, "10.0.0.1");
    EXPECT_EQ(bootstrap.lifeline(), in[0]);
    const BrokerAddress own = address_of('1', "tcp://10.0.0.2:7001");
    const auto neighbours = bootstrap.exchange(own);
    ASSERT_TRUE(neighbours) << neighbours.error().str();
    EXPECT_EQ(neighbours->parent, zero);
    EXPECT_EQ(neighbours->children, std::vector<BrokerAddress>{three});
    ::close(out[1]);
    EXPECT_EQ(read_fd(out[0]), encode_address(own) + " 10.0.0.1\n");
    for (const int fd : {in[0], in[1], out[0]})
        ::close(fd);
}

TEST(StreamBootstrap, ALauncherThatClosesItsStreamIsAnError) {
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    const std::string half = encode_address(address_of('0', "tcp://10.0.0.1:7000")) + "\n";
    ASSERT_EQ(::write(in[1], half.data(), half.size()), static_cast<ssize_t>(half.size()));
    ::close(in[1]);
    Bootstrap bootstrap = Bootstrap::from_stream(in[0], out[1], 1, 4, 2, "");
    const auto neighbours = bootstrap.exchange(address_of('1', "tcp://10.0.0.2:7001"));
    ASSERT_FALSE(neighbours);
    EXPECT_EQ(neighbours.error().str(),
              "bootstrap: the launcher closed its stream before giving this broker's neighbours");
    for (const int fd : {in[0], out[0], out[1]})
        ::close(fd);
}

// Hosts whose brokers write `entries` (one each, after `delays` seconds)
// and then copy what they are answered to a file named as the host.
class Launched : public ::testing::Test {
protected:
    std::shared_ptr<overlay::LaunchedHosts> launch(const std::vector<std::string>& entries,
                                                   const std::vector<std::string>& delays) {
        const std::string agent = scratch_ / "agent";
        std::ofstream(agent) << "#!/bin/sh\nshift\nexec sh -c \"$1\"\n";
        test::run_program({"chmod", "+x", agent});
        std::vector<overlay::LaunchedHosts::Launch> launches;
        for (std::size_t i = 0; i < entries.size(); ++i)
            launches.push_back(
                {hosts_[i],
                 {"sh", "-c",
                  "sleep " + delays[i] + "; echo '" + entries[i] + "'; cat > " + answer_file(i)}});
        auto launched = overlay::LaunchedHosts::start({agent}, std::move(launches));
        if (!launched)
            throw std::runtime_error(launched.error().str());
        return std::move(*launched);
    }
    std::string answer_file(std::size_t host) const { return scratch_ / hosts_[host]; }

    // Runs rank 0's exchange to its end: the keys let in at each step, and
    // the error if it failed. `letting_in`, if given, sees each step's keys
    // before they are let in.
    struct Exchanged {
        std::vector<std::vector<std::string>> authorized;
        bool done = false;
        std::optional<std::string> error;
    };
    Exchanged exchange(Bootstrap& bootstrap, const BrokerAddress& own,
                       std::function<void(const std::vector<std::string>&)> letting_in = {}) {
        asio::io_context loop;
        Exchanged exchanged;
        const auto running =
            bootstrap.exchange_launched(loop, own,
                                        {[&](std::vector<std::string> keys) {
                                             if (letting_in)
                                                 letting_in(keys);
                                             exchanged.authorized.push_back(std::move(keys));
                                         },
                                         [&] {
                                             exchanged.done = true;
                                             loop.stop();
                                         },
                                         [&](const Error& error) {
                                             exchanged.error = error.str();
                                             loop.stop();
                                         }});
        loop.run();
        return exchanged;
    }

    test::ScratchDir scratch_{"bootstrap-test"};
    const std::vector<std::string> hosts_ = {"127.0.0.2", "127.0.0.3", "127.0.0.4"};
};

// Rank 0 on every interface: the child that says where its connection came
// to connects there, the other to rank 0's address on the route to it; a
// broker lower down gets its parent's own endpoint. Rank 0 lets in the keys
// of its children only.
TEST_F(Launched, RankZeroAnswersEachWithItsNeighbours) {
    const auto hosts =
        launch({encode_address(address_of('1', "tcp://10.0.0.2:7001")) + " 10.0.0.1",
                encode_address(address_of('2', "")), encode_address(address_of('3', ""))},
               {"0", "0", "0"});
    Bootstrap bootstrap = Bootstrap::from_launched(hosts, 2, 5s);
    EXPECT_EQ(bootstrap.tree().size, 4u);
    EXPECT_TRUE(bootstrap.launched());
    const Exchanged exchanged = exchange(bootstrap, address_of('0', "tcp://*:7000"));
    EXPECT_EQ(exchanged.error, std::nullopt);
    EXPECT_TRUE(exchanged.done);
    ASSERT_FALSE(exchanged.authorized.empty());
    std::vector<std::string> keys = exchanged.authorized.back();
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{key('1'), key('2')}));
    hosts->finish(5s);
    EXPECT_EQ(test::read_file(answer_file(0)),
              encode_address(address_of('0', "tcp://10.0.0.1:7000")) + "\n" +
                  encode_address(address_of('3', "")) + "\n");
    EXPECT_EQ(test::read_file(answer_file(1)),
              encode_address(address_of('0', "tcp://127.0.0.1:7000")) + "\n");
    EXPECT_EQ(test::read_file(answer_file(2)),
              encode_address(address_of('1', "tcp://10.0.0.2:7001")) + "\n");
}

// A broker is answered as soon as its own entry and its neighbours' are
// in, not once every host's is: while rank 1 is slow to answer, rank 2 has
// its answer already, and rank 3, rank 1's child, waits for rank 1's.
TEST_F(Launched, EachIsAnsweredAsSoonAsItsNeighboursAreIn) {
    const auto hosts =
        launch({encode_address(address_of('1', "tcp://10.0.0.2:7001")),
                encode_address(address_of('2', "")), encode_address(address_of('3', ""))},
               {"0.5", "0", "0"});
    Bootstrap bootstrap = Bootstrap::from_launched(hosts, 2, 5s);
    // What ranks 1, 2 and 3 had been answered when rank 1 was heard.
    std::vector<std::string> when_rank_1_was_heard;
    const Exchanged exchanged =
        exchange(bootstrap, address_of('0', "tcp://127.0.0.1:7000"),
                 [&](const std::vector<std::string>& keys) {
                     if (keys.size() == 2)
                         for (std::size_t host = 0; host < 3; ++host)
                             when_rank_1_was_heard.push_back(test::read_file(answer_file(host)));
                 });
    EXPECT_TRUE(exchanged.done);
    EXPECT_EQ(exchanged.authorized,
              (std::vector<std::vector<std::string>>{{key('2')}, {key('2'), key('1')}}));
    EXPECT_EQ(when_rank_1_was_heard,
              (std::vector<std::string>{
                  "", encode_address(address_of('0', "tcp://127.0.0.1:7000")) + "\n", ""}));
    hosts->finish(5s);
    EXPECT_EQ(test::read_file(answer_file(2)),
              encode_address(address_of('1', "tcp://10.0.0.2:7001")) + "\n");
}

// A host whose entry is not one fails the exchange, naming the host.
TEST_F(Launched, ABadEntryNamesItsHost) {
    const auto hosts = launch(
        {"nonsense", encode_address(address_of('2', "")), encode_address(address_of('3', ""))},
        {"0", "0", "0"});
    Bootstrap bootstrap = Bootstrap::from_launched(hosts, 2, 5s);
    const Exchanged exchanged = exchange(bootstrap, address_of('0', "tcp://127.0.0.1:7000"));
    EXPECT_FALSE(exchanged.done);
    EXPECT_EQ(exchanged.error, R"(bootstrap: host 127.0.0.2: no ',' in "nonsense")");
    hosts->finish(1s);
}

}  // namespace
}  // namespace gantry::broker
