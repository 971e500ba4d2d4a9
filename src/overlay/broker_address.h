// What a broker tells the others of itself when they bootstrap
// (broker/bootstrap.h): where its children connect, and the key its socket
// presents, as one entry of the launcher's key-value space or one line of
// its stream:
//
//   ENDPOINT,KEY     (ENDPOINT: tcp://HOST:PORT, empty for a broker without
//                     children; KEY: the Z85 public key in hex, so that no
//                     launcher trips on its '=')
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry::overlay {

struct BrokerAddress {
    std::string endpoint;    // tcp://HOST:PORT, empty for a broker without children
    std::string public_key;  // Z85
    bool operator==(const BrokerAddress&) const = default;
};

// The entry's value, and back. Errors name `key`, the entry's name.
std::string encode_address(const BrokerAddress& address);
Result<BrokerAddress> parse_address(std::string_view key, std::string_view value);

}  // namespace gantry::overlay
