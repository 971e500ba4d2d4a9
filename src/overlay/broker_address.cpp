#include "overlay/broker_address.h"

#include <optional>

namespace gantry::overlay {

namespace {

constexpr std::string_view kDomain = "bootstrap";

std::string to_hex(std::string_view text) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(text.size() * 2);
    for (const unsigned char c : text) {
        hex += kDigits[c >> 4];
        hex += kDigits[c & 15];
    }
    return hex;
}

std::optional<std::string> from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0)
        return std::nullopt;
    const auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        return -1;
    };
    std::string text;
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const int high = digit(hex[i]);
        const int low = digit(hex[i + 1]);
        if (high < 0 || low < 0)
            return std::nullopt;
        text += static_cast<char>(high * 16 + low);
    }
    return text;
}

}  // namespace

std::string encode_address(const BrokerAddress& address) {
    return address.endpoint + "," + to_hex(address.public_key);
}

Result<BrokerAddress> parse_address(std::string_view key, std::string_view value) {
    const auto comma = value.rfind(',');
    if (comma == std::string_view::npos)
        return Error(std::string(kDomain),
                     std::string(key) + ": no ',' in \"" + std::string(value) + "\"");
    const auto public_key = from_hex(value.substr(comma + 1));
    if (!public_key || public_key->size() != 40)
        return Error(std::string(kDomain), std::string(key) +
                                               ": the key after ',' is not 80 hex digits (offset " +
                                               std::to_string(comma + 1) + ")");
    const std::string_view endpoint = value.substr(0, comma);
    if (!endpoint.empty() && !endpoint.starts_with("tcp://"))
        return Error(std::string(kDomain), std::string(key) + ": the endpoint \"" +
                                               std::string(endpoint) + "\" is not tcp://HOST:PORT");
    return BrokerAddress{std::string(endpoint), *public_key};
}

}  // namespace gantry::overlay
