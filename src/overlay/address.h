// The address a broker tells its children to connect to, when a launcher
// starts the brokers on hosts it chose (bootstrap by PMI) and nothing names
// the address: the host name is no answer, since it may resolve to a
// loopback address (Debian maps it to 127.0.1.1), nor is "every interface",
// which names no address to publish.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry::overlay {

// An address of one of this host's network interfaces.
struct InterfaceAddress {
    std::string interface;  // "eth0"
    std::string address;    // numeric: "10.0.0.2", "fd00::2"
    bool ipv6 = false;
    bool up = false;
    bool loopback = false;
    bool operator==(const InterfaceAddress&) const = default;
};

// This host's interface addresses (getifaddrs), in the kernel's order.
Result<std::vector<InterfaceAddress>> interface_addresses();

// The interface of the IPv4 default route, from the text of
// /proc/net/route; none when there is no default route.
std::optional<std::string> default_route_interface(std::string_view proc_net_route);

// The address to publish, from a hint:
//   ""         the address of the default route's interface, else the first
//              interface up that is not loopback, else 127.0.0.1 (IPv4
//              before IPv6 in each case);
//   a numeric IPv4 or IPv6 address: itself, which must be this host's;
//   an interface name: its address (IPv4 first).
// An Error names the hint when no address fits.
Result<std::string> choose_address(std::string_view hint,
                                   const std::vector<InterfaceAddress>& interfaces,
                                   const std::optional<std::string>& default_interface);

// The address this host sends from to reach `host` (a name or an address):
// the one a broker there can reach this one at. Nothing is sent.
Result<std::string> route_source_address(std::string_view host);

// choose_address() with this host's interfaces and routes; a hint
// "to:HOST" is route_source_address(HOST).
Result<std::string> local_address(std::string_view hint);

}  // namespace gantry::overlay
