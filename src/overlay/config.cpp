#include "overlay/config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "formats/hostlist.h"
#include "formats/rset.h"
#include "util/json.h"

namespace gantry::overlay {

namespace {

constexpr std::string_view kDomain = "config";

Error bad(std::string_view name, const std::string& what) {
    return Error(std::string(kDomain), std::string(name) + ": " + what);
}

// A host address as ZeroMQ takes it in an endpoint: no spaces, no '/', no
// "tcp://" prefix.
bool plausible_address(const std::string& address) {
    return !address.empty() && address.find_first_of(" \t\n/") == std::string::npos;
}

// "properties": {"NAME": "HOSTLIST", ...}, every host one of `config`'s.
Result<std::map<std::string, IdSet>> read_properties(const Json& value, const Config& config) {
    const std::string what = "\"properties\"";
    if (!value.is_object())
        return Error(std::string(kDomain), what + " must be an object of hostlists");
    std::map<std::string, IdSet> properties;
    for (const auto& [property, hosts] : value.items()) {
        const std::string where = what + "." + property;
        if (const auto problem = property_name_problem(property))
            return Error(std::string(kDomain), where + ": " + *problem);
        if (!hosts.is_string())
            return Error(std::string(kDomain), where + " must be a hostlist string");
        auto list = Hostlist::parse(hosts.get<std::string>());
        if (!list)
            return Error(std::string(kDomain), where + ": " + list.error().str());
        IdSet ranks;
        for (const auto& host : list->expand()) {
            auto rank = config.rank_of(host);
            if (!rank)
                return Error(std::string(kDomain), where + ": " + rank.error().message());
            ranks.insert(*rank);
        }
        properties.emplace(property, std::move(ranks));
    }
    return properties;
}

}  // namespace

Result<Rank> Config::rank_of(std::string_view hostname) const {
    for (std::size_t i = 0; i < hosts.size(); ++i)
        if (hosts[i] == hostname)
            return static_cast<Rank>(i);
    return Error(std::string(kDomain), "host \"" + std::string(hostname) +
                                           "\" is not among the configuration's hosts (" +
                                           Hostlist::from_hosts(hosts).encode() + ")");
}

std::string Config::endpoint(Rank rank) const {
    const std::string& address = addresses.at(rank);
    const bool ipv6 = address.find(':') != std::string::npos;
    return "tcp://" + (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

Result<Config> parse_config(std::string_view text, std::string_view name) {
    auto json = parse_json(std::string(kDomain) + ": " + std::string(name), text);
    if (!json)
        return json.error();
    if (!json->is_object())
        return bad(name, "the configuration is " + json_type_name(*json) + ", expected an object");
    for (const auto& [key, value] : json->items())
        if (key != "hosts" && key != "addresses" && key != "port" && key != "certificate" &&
            key != "fanout" && key != "properties")
            return bad(name, "unknown key \"" + key + "\"");
    Config config;

    const auto hosts = json->find("hosts");
    if (hosts == json->end() || !hosts->is_string())
        return bad(name, "\"hosts\" must be a hostlist string");
    auto list = Hostlist::parse(hosts->get<std::string>());
    if (!list)
        return bad(name, "\"hosts\": " + list.error().str());
    if (list->empty())
        return bad(name, "\"hosts\" names no host");
    config.hosts = list->expand();
    for (std::size_t i = 0; i < config.hosts.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (config.hosts[i] == config.hosts[j])
                return bad(name, "\"hosts\" names " + config.hosts[i] + " twice (ranks " +
                                     std::to_string(j) + " and " + std::to_string(i) + ")");

    if (const auto addresses = json->find("addresses"); addresses != json->end()) {
        if (!addresses->is_array() || addresses->size() != config.hosts.size())
            return bad(name, "\"addresses\" must be an array of " +
                                 std::to_string(config.hosts.size()) + " strings, one per host");
        for (std::size_t i = 0; i < addresses->size(); ++i) {
            const Json& address = (*addresses)[i];
            if (!address.is_string() || !plausible_address(address.get<std::string>()))
                return bad(name, "\"addresses\"[" + std::to_string(i) + "] is not a host address");
            config.addresses.push_back(address.get<std::string>());
        }
    } else {
        config.addresses = config.hosts;
    }

    const auto port = json->find("port");
    if (port == json->end() || !port->is_number_unsigned() || port->get<std::uint64_t>() < 1 ||
        port->get<std::uint64_t>() > 65535)
        return bad(name, "\"port\" must be a TCP port, 1 to 65535");
    config.port = static_cast<std::uint16_t>(port->get<std::uint64_t>());

    const auto certificate = json->find("certificate");
    if (certificate == json->end() || !certificate->is_string() ||
        certificate->get<std::string>().empty())
        return bad(name, "\"certificate\" must be the path of the instance's certificate");
    config.certificate = certificate->get<std::string>();

    if (const auto fanout = json->find("fanout"); fanout != json->end()) {
        if (!fanout->is_number_unsigned() || fanout->get<std::uint64_t>() < 1 ||
            fanout->get<std::uint64_t>() > 1024)
            return bad(name, "\"fanout\" must be a number from 1 to 1024");
        config.fanout = static_cast<unsigned>(fanout->get<std::uint64_t>());
    }

    if (const auto properties = json->find("properties"); properties != json->end()) {
        auto read = read_properties(*properties, config);
        if (!read)
            return bad(name, read.error().message());
        config.properties = std::move(*read);
    }
    return config;
}

Result<Config> read_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error(std::string(kDomain), "cannot read " + path + ": " + std::strerror(errno),
                     ErrorKind::kSystem);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return parse_config(text, path);
}

}  // namespace gantry::overlay
