// The configuration of an instance whose brokers are started one per host
// by an administrator or a service manager rather than by a launcher
// (`gantry start --config FILE` on each host; docs/overlay.md,
// "Configuration"). A JSON object:
//
//   {
//     "hosts": "node[0-3]",                 RFC 29 hostlist: rank = position
//     "addresses": ["10.0.0.1", ...],       optional: each host's address, in
//                                           host order (default: the host name)
//     "port": 8050,                         every broker's overlay port
//     "certificate": "/etc/gantry/curve",   the instance's key pair
//                                           (certificate.h), readable by the
//                                           owner only
//     "fanout": 2,                          optional (default 32, tree.h)
//     "properties": {"gpu": "node[2-3]"}    optional: each property's hosts
//   }
//
// Every broker presents the one certificate and lets in only peers that
// present it too.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/idset.h"
#include "overlay/message.h"
#include "overlay/tree.h"
#include "util/error.h"

namespace gantry::overlay {

struct Config {
    std::vector<std::string> hosts;      // expanded, in rank order
    std::vector<std::string> addresses;  // one per host
    std::uint16_t port = 0;
    std::string certificate;  // a path
    unsigned fanout = kDefaultFanout;
    // Properties of the nodes (RFC 20), by rank: what `--requires` asks for.
    std::map<std::string, IdSet> properties;

    // The rank of `hostname`: its position in hosts. Error: not there
    // ("config: host \"x\" is not among the configuration's hosts (node[0-3])").
    Result<Rank> rank_of(std::string_view hostname) const;
    // tcp://ADDRESS:PORT of `rank`.
    std::string endpoint(Rank rank) const;

    bool operator==(const Config&) const = default;
};

// Parses the configuration `text` read from `name` (for messages): one
// line naming the file and the key at fault.
Result<Config> parse_config(std::string_view text, std::string_view name);
// Reads and parses the file at `path`.
Result<Config> read_config(const std::string& path);

}  // namespace gantry::overlay
