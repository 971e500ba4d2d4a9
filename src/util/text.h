// Building text fast: encoders of large maps and sets append numbers to one
// string, without a temporary std::string per number. And the character
// classes and case changes the parsers share.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gantry {

// Appends the decimal digits of `n` to `out`.
inline void append_number(std::string& out, std::uint64_t n) {
    char digits[20];  // 2^64 - 1 has 20
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    out.append(digits, end);
}

// `n` and the noun, singular for 1 ("1 task", "2 tasks"); `plural` when
// the noun does not take an "s".
inline std::string counted(std::uint64_t n, std::string_view noun, std::string_view plural = {}) {
    std::string out;
    append_number(out, n);
    out += ' ';
    if (n == 1)
        out += noun;
    else if (!plural.empty())
        out += plural;
    else
        (out += noun) += 's';
    return out;
}

// '0' to '9' only, whatever the locale.
inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// JSON's whitespace (RFC 8259): space, tab, newline, carriage return.
inline bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// `text` with each letter in lower (upper) case, as std::tolower
// (std::toupper) changes it.
inline std::string lower_case(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}
inline std::string upper_case(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

// The length of the UTF-8 sequence that starts at `pos` in `text`, 0 when
// none does there. RFC 3629's, as JSON parsers take it: no overlong form,
// no surrogate, nothing above U+10FFFF.
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t pos) {
    const auto byte = [&](std::size_t i) {
        return pos + i < text.size() ? static_cast<unsigned char>(text[pos + i]) : 0u;
    };
    const auto continuation = [](unsigned c) { return c >= 0x80 && c <= 0xBF; };
    const unsigned lead = byte(0);
    if (pos >= text.size())
        return 0;
    if (lead < 0x80)
        return 1;
    if (lead >= 0xC2 && lead <= 0xDF)
        return continuation(byte(1)) ? 2 : 0;
    if (lead >= 0xE0 && lead <= 0xEF) {
        const unsigned second = byte(1);
        const bool ok = lead == 0xE0   ? second >= 0xA0 && second <= 0xBF
                        : lead == 0xED ? second >= 0x80 && second <= 0x9F
                                       : continuation(second);
        return ok && continuation(byte(2)) ? 3 : 0;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        const unsigned second = byte(1);
        const bool ok = lead == 0xF0   ? second >= 0x90 && second <= 0xBF
                        : lead == 0xF4 ? second >= 0x80 && second <= 0x8F
                                       : continuation(second);
        return ok && continuation(byte(2)) && continuation(byte(3)) ? 4 : 0;
    }
    return 0;
}

// Whether `text` is UTF-8 throughout; ASCII is looked at sixteen (or eight)
// bytes at a time, since output is mostly that.
inline bool is_utf8(std::string_view text) {
    constexpr std::uint64_t kHighs = 0x8080808080808080;
    std::size_t pos = 0;
    while (pos < text.size()) {
#ifdef __SSE2__
        if (pos + 16 <= text.size() &&
            _mm_movemask_epi8(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + pos))) == 0) {
            pos += 16;
            continue;
        }
#endif
        std::uint64_t word = 0;
        if (pos + 8 <= text.size()) {
            std::memcpy(&word, text.data() + pos, sizeof word);
            if ((word & kHighs) == 0) {
                pos += 8;
                continue;
            }
        }
        const std::size_t length = utf8_sequence_length(text, pos);
        if (length == 0)
            return false;
        pos += length;
    }
    return true;
}

}  // namespace gantry
