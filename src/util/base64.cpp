#include "util/base64.h"

#include <array>
#include <cstdint>

#include "util/text.h"

namespace gantry {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_values() {
    std::array<std::int8_t, 256> values{};
    values.fill(-1);
    for (std::size_t i = 0; i < kAlphabet.size(); ++i)
        values[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
    return values;
}
constexpr std::array<std::int8_t, 256> kValues = make_values();

Error unexpected(char c, std::size_t offset) {
    const std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, c) : "\\x" + [&] {
        static constexpr char kHex[] = "0123456789abcdef";
        const auto byte = static_cast<unsigned char>(c);
        return std::string{kHex[byte >> 4], kHex[byte & 15]};
    }();
    return Error("base64", "unexpected '" + shown + "' at offset " + std::to_string(offset));
}

}  // namespace

// Both write into a string sized once: output and stdin cross the instance
// in base64, and appending byte by byte was most of what that cost.
std::string base64_encode(std::string_view bytes) {
    std::string text((bytes.size() + 2) / 3 * 4, '\0');
    char* out = text.data();
    const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t n =
            std::uint32_t{in[i]} << 16 | std::uint32_t{in[i + 1]} << 8 | in[i + 2];
        *out++ = kAlphabet[n >> 18];
        *out++ = kAlphabet[n >> 12 & 63];
        *out++ = kAlphabet[n >> 6 & 63];
        *out++ = kAlphabet[n & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest > 0) {
        std::uint32_t n = std::uint32_t{in[i]} << 16;
        if (rest == 2)
            n |= std::uint32_t{in[i + 1]} << 8;
        *out++ = kAlphabet[n >> 18];
        *out++ = kAlphabet[n >> 12 & 63];
        *out++ = rest == 2 ? kAlphabet[n >> 6 & 63] : '=';
        *out++ = '=';
    }
    return text;
}

Result<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0)
        return Error("base64", "length " + std::to_string(text.size()) + " is not a multiple of 4");
    std::string bytes(text.size() / 4 * 3, '\0');
    char* out = bytes.data();
    const auto value_at = [&](std::size_t offset) {
        return kValues[static_cast<unsigned char>(text[offset])];
    };
    // Every group but the last is four symbols, no padding.
    const std::size_t body = text.empty() ? 0 : text.size() - 4;
    for (std::size_t i = 0; i < body; i += 4) {
        const std::int8_t a = value_at(i), b = value_at(i + 1), c = value_at(i + 2),
                          d = value_at(i + 3);
        if ((a | b | c | d) < 0) {
            std::size_t k = 0;
            while (value_at(i + k) >= 0)
                ++k;
            return unexpected(text[i + k], i + k);
        }
        const std::uint32_t n = std::uint32_t(a) << 18 | std::uint32_t(b) << 12 |
                                std::uint32_t(c) << 6 | std::uint32_t(d);
        *out++ = static_cast<char>(n >> 16);
        *out++ = static_cast<char>(n >> 8 & 0xff);
        *out++ = static_cast<char>(n & 0xff);
    }
    if (!text.empty()) {
        const std::size_t i = body;
        std::uint32_t n = 0;
        int padding = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char c = text[i + k];
            if (c == '=' && k >= 2 && (k == 3 || text[i + 3] == '=')) {
                ++padding;
                n <<= 6;
                continue;
            }
            const std::int8_t value = kValues[static_cast<unsigned char>(c)];
            if (value < 0 || padding > 0)
                return unexpected(c, i + k);
            n = n << 6 | static_cast<std::uint32_t>(value);
        }
        // Only one text encodes given bytes (RFC 4648 3.5): the bits that
        // padding leaves over must be zero, or "5gm=" and "5go=" would both
        // decode to what encodes as "5gk=".
        const std::uint32_t left_over = padding == 2 ? n & 0xffff : padding == 1 ? n & 0xff : 0;
        if (left_over != 0) {
            const std::size_t last_symbol = i + 3 - static_cast<std::size_t>(padding);
            return Error("base64", "non-zero padding bits in '" +
                                       std::string(1, text[last_symbol]) + "' at offset " +
                                       std::to_string(last_symbol));
        }
        *out++ = static_cast<char>(n >> 16);
        if (padding < 2)
            *out++ = static_cast<char>(n >> 8 & 0xff);
        if (padding < 1)
            *out++ = static_cast<char>(n & 0xff);
    }
    bytes.resize(static_cast<std::size_t>(out - bytes.data()));
    return bytes;
}

void put_data(Json& object, std::string_view bytes) {
    if (is_utf8(bytes)) {
        object["data"] = std::string(bytes);
        return;
    }
    object["data"] = base64_encode(bytes);
    object["encoding"] = "base64";
}

Result<std::string> data_of(const Json& object) {
    const auto data = object.find("data");
    if (data == object.end())
        return std::string();
    if (!data->is_string())
        return Error("data", "\"data\" must be a string, not " + json_type_name(*data));
    const auto encoding = object.find("encoding");
    if (encoding == object.end())
        return data->get<std::string>();
    if (!encoding->is_string() || encoding->get_ref<const std::string&>() != "base64")
        return Error("data", "unknown \"encoding\" " + to_compact(*encoding) +
                                 " (only \"base64\" is known)");
    auto bytes = base64_decode(data->get_ref<const std::string&>());
    if (!bytes)
        return Error("data", bytes.error().str());
    return bytes;
}

}  // namespace gantry
