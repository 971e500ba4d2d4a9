#include "overlay/address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

#include "util/file.h"

namespace gantry::overlay {

namespace {

constexpr std::string_view kDomain = "overlay";

bool is_numeric_address(std::string_view text) {
    const std::string copy(text);
    unsigned char buffer[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, copy.c_str(), buffer) == 1 ||
           ::inet_pton(AF_INET6, copy.c_str(), buffer) == 1;
}

// The first address of `interfaces` that `fits`, IPv4 before IPv6.
template <typename Fits>
std::optional<std::string> first(const std::vector<InterfaceAddress>& interfaces, Fits fits) {
    for (const bool ipv6 : {false, true})
        for (const InterfaceAddress& entry : interfaces)
            if (entry.ipv6 == ipv6 && fits(entry))
                return entry.address;
    return std::nullopt;
}

}  // namespace

Result<std::vector<InterfaceAddress>> interface_addresses() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0)
        return Error::system(std::string(kDomain), std::string("cannot list the network "
                                                               "interfaces: ") +
                                                       std::strerror(errno));
    const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owned(list, ::freeifaddrs);
    std::vector<InterfaceAddress> addresses;
    for (const ifaddrs* entry = list; entry; entry = entry->ifa_next) {
        if (!entry->ifa_addr)
            continue;
        const int family = entry->ifa_addr->sa_family;
        if (family != AF_INET && family != AF_INET6)
            continue;
        char text[INET6_ADDRSTRLEN] = {};
        const void* raw =
            family == AF_INET
                ? static_cast<const void*>(
                      &reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr)
                : static_cast<const void*>(
                      &reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr);
        if (!::inet_ntop(family, raw, text, sizeof text))
            continue;
        // A link-local IPv6 address needs its scope to be reached: not one
        // to publish.
        if (family == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(
                &reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr))
            continue;
        addresses.push_back({entry->ifa_name, text, family == AF_INET6,
                             (entry->ifa_flags & IFF_UP) != 0,
                             (entry->ifa_flags & IFF_LOOPBACK) != 0});
    }
    return addresses;
}

std::optional<std::string> default_route_interface(std::string_view proc_net_route) {
    // Iface Destination Gateway Flags ...: the default route's destination
    // is 00000000; the first line is the header.
    std::istringstream lines{std::string(proc_net_route)};
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string interface, destination;
        if (fields >> interface >> destination && destination == "00000000")
            return interface;
    }
    return std::nullopt;
}

Result<std::string> choose_address(std::string_view hint,
                                   const std::vector<InterfaceAddress>& interfaces,
                                   const std::optional<std::string>& default_interface) {
    if (hint.empty()) {
        if (default_interface)
            if (auto address = first(interfaces, [&](const InterfaceAddress& entry) {
                    return entry.up && entry.interface == *default_interface;
                }))
                return *address;
        if (auto address = first(interfaces, [](const InterfaceAddress& entry) {
                return entry.up && !entry.loopback;
            }))
            return *address;
        return std::string("127.0.0.1");
    }
    if (is_numeric_address(hint)) {
        if (first(interfaces, [&](const InterfaceAddress& entry) { return entry.address == hint; }))
            return std::string(hint);
        return Error(std::string(kDomain),
                     "\"" + std::string(hint) + "\" is no address of this host");
    }
    if (auto address = first(
            interfaces, [&](const InterfaceAddress& entry) { return entry.interface == hint; }))
        return *address;
    return Error(std::string(kDomain), "\"" + std::string(hint) +
                                           "\" is neither an address nor a network interface "
                                           "of this host");
}

Result<std::string> route_source_address(std::string_view host) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    const std::string name(host);
    if (const int failed = ::getaddrinfo(name.c_str(), "9", &hints, &found); failed != 0)
        return Error(std::string(kDomain), "host " + name + ": " + ::gai_strerror(failed));
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
    // A datagram socket's connect sends nothing: it only picks the route.
    const int fd = ::socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return Error(std::string(kDomain), std::string("socket: ") + std::strerror(errno));
    sockaddr_storage own{};
    socklen_t length = sizeof own;
    const bool routed = ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                        ::getsockname(fd, reinterpret_cast<sockaddr*>(&own), &length) == 0;
    const int saved = errno;
    ::close(fd);
    if (!routed)
        return Error(std::string(kDomain),
                     "no route to host " + name + ": " + std::strerror(saved));
    char text[INET6_ADDRSTRLEN] = {};
    const void* address =
        own.ss_family == AF_INET6
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&own)->sin6_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&own)->sin_addr);
    ::inet_ntop(own.ss_family, address, text, sizeof text);
    return std::string(text);
}

Result<std::string> local_address(std::string_view hint) {
    if (hint.starts_with("to:"))
        return route_source_address(hint.substr(3));
    auto interfaces = interface_addresses();
    if (!interfaces)
        return interfaces.error();
    // Without /proc/net/route (another kernel, no procfs) there is just no
    // default route to prefer.
    auto routes = read_named_file(std::string(kDomain), "routes", "/proc/net/route");
    return choose_address(hint, *interfaces,
                          routes ? default_route_interface(*routes) : std::nullopt);
}

}  // namespace gantry::overlay
