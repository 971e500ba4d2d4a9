// Building text fast: encoders of large maps and sets append numbers to one
// string, without a temporary std::string per number. And the character
// classes and case changes the parsers share.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

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

}  // namespace gantry
