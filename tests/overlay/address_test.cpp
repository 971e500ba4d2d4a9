// The address a broker bootstrapped by a launcher publishes to its children.
#include "overlay/address.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace gantry::overlay {
namespace {

const std::vector<InterfaceAddress> kHost = {
    {"lo", "127.0.0.1", false, true, true},      {"eth0", "10.1.0.5", false, true, false},
    {"eth1", "fd00::7", true, true, false},      {"eth1", "192.168.3.2", false, true, false},
    {"eth2", "172.16.0.9", false, false, false}, {"lo", "::1", true, true, true},
};

constexpr std::string_view kRoutes =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth1\t0003A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "eth1\t00000000\t0103A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";

TEST(Address, TheDefaultRoutesInterface) {
    EXPECT_EQ(default_route_interface(kRoutes), "eth1");
    EXPECT_EQ(default_route_interface("Iface\tDestination\n"), std::nullopt);
    EXPECT_EQ(default_route_interface(""), std::nullopt);
}

TEST(Address, ByDefaultTheDefaultRoutesIpv4Address) {
    EXPECT_EQ(choose_address("", kHost, "eth1").value(), "192.168.3.2");
}

TEST(Address, WithoutDefaultRouteTheFirstInterfaceUpThatIsNotLoopback) {
    EXPECT_EQ(choose_address("", kHost, std::nullopt).value(), "10.1.0.5");
    // A default route through an interface that is down does not count.
    EXPECT_EQ(choose_address("", kHost, "eth2").value(), "10.1.0.5");
    const std::vector<InterfaceAddress> only_ipv6 = {{"lo", "127.0.0.1", false, true, true},
                                                     {"eth0", "fd00::1", true, true, false}};
    EXPECT_EQ(choose_address("", only_ipv6, std::nullopt).value(), "fd00::1");
}

TEST(Address, OnlyLoopbackGivesLoopback) {
    EXPECT_EQ(choose_address("", {{"lo", "127.0.0.1", false, true, true}}, std::nullopt).value(),
              "127.0.0.1");
    EXPECT_EQ(choose_address("", {}, std::nullopt).value(), "127.0.0.1");
}

TEST(Address, AHintNamesAnAddressOrAnInterface) {
    EXPECT_EQ(choose_address("fd00::7", kHost, "eth1").value(), "fd00::7");
    EXPECT_EQ(choose_address("10.1.0.5", kHost, "eth1").value(), "10.1.0.5");
    EXPECT_EQ(choose_address("eth1", kHost, std::nullopt).value(), "192.168.3.2");
    EXPECT_EQ(choose_address("lo", kHost, std::nullopt).value(), "127.0.0.1");
}

TEST(Address, AHintThatFitsNothingIsAnError) {
    EXPECT_EQ(choose_address("10.9.9.9", kHost, std::nullopt).error().str(),
              "overlay: \"10.9.9.9\" is no address of this host");
    EXPECT_EQ(choose_address("wlan0", kHost, std::nullopt).error().str(),
              "overlay: \"wlan0\" is neither an address nor a network interface of this host");
}

TEST(Address, ThisHostHasLoopback) {
    const auto interfaces = interface_addresses();
    ASSERT_TRUE(interfaces) << interfaces.error().str();
    EXPECT_EQ(local_address("lo").value(), "127.0.0.1");
    EXPECT_EQ(local_address("127.0.0.1").value(), "127.0.0.1");
}

// The address this host sends from to reach another: loopback's own for
// loopback; nothing is sent to find it.
TEST(Address, TheRoutesSourceAddress) {
    EXPECT_EQ(route_source_address("127.0.0.1").value(), "127.0.0.1");
    EXPECT_EQ(route_source_address("127.0.0.2").value(), "127.0.0.1");
    EXPECT_EQ(route_source_address("::1").value(), "::1");
    EXPECT_EQ(local_address("to:127.0.0.3").value(), "127.0.0.1");
}

}  // namespace
}  // namespace gantry::overlay
