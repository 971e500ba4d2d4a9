// The bootstrap of brokers that `gantry start -H` launches: each writes its
// entry as a line on its launcher's stream and reads its parent's and
// children's; rank 0, their launcher, answers each once it has them all.
#include "broker/bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

// Rank 0 on every interface: the child that says where its connection came
// to connects there, the other to rank 0's address on the route to it; a
// broker lower down gets its parent's own endpoint.
TEST(LaunchedBootstrap, RankZeroAnswersEachWithItsNeighbours) {
    test::ScratchDir scratch{"bootstrap-test"};
    const std::string agent = scratch / "agent";
    std::ofstream(agent) << "#!/bin/sh\nshift\nexec sh -c \"$1\"\n";
    test::run_program({"chmod", "+x", agent});
    const std::vector<std::string> entries = {
        encode_address(address_of('1', "tcp://10.0.0.2:7001")) + " 10.0.0.1",
        encode_address(address_of('2', "")), encode_address(address_of('3', ""))};
    std::vector<overlay::LaunchedHosts::Launch> launches;
    const std::vector<std::string> hosts = {"127.0.0.2", "127.0.0.3", "127.0.0.4"};
    for (std::size_t i = 0; i < 3; ++i)
        launches.push_back(
            {hosts[i], {"sh", "-c", "echo '" + entries[i] + "'; cat > " + scratch / hosts[i]}});
    auto launched = overlay::LaunchedHosts::start({agent}, std::move(launches));
    ASSERT_TRUE(launched) << launched.error().str();
    std::shared_ptr<overlay::LaunchedHosts> shared = std::move(*launched);
    Bootstrap bootstrap = Bootstrap::from_launched(shared, 2, 5s);
    EXPECT_EQ(bootstrap.tree().size, 4u);
    const auto neighbours = bootstrap.exchange(address_of('0', "tcp://*:7000"));
    ASSERT_TRUE(neighbours) << neighbours.error().str();
    EXPECT_EQ(neighbours->parent, std::nullopt);
    EXPECT_EQ(
        neighbours->children,
        (std::vector<BrokerAddress>{address_of('1', "tcp://10.0.0.2:7001"), address_of('2', "")}));
    shared->finish(5s);
    EXPECT_EQ(test::read_file(scratch / "127.0.0.2"),
              encode_address(address_of('0', "tcp://10.0.0.1:7000")) + "\n" +
                  encode_address(address_of('3', "")) + "\n");
    EXPECT_EQ(test::read_file(scratch / "127.0.0.3"),
              encode_address(address_of('0', "tcp://127.0.0.1:7000")) + "\n");
    EXPECT_EQ(test::read_file(scratch / "127.0.0.4"),
              encode_address(address_of('1', "tcp://10.0.0.2:7001")) + "\n");
}

}  // namespace
}  // namespace gantry::broker
