// Building text fast: encoders of large maps and sets append numbers to one
// string, without a temporary std::string per number.
#pragma once

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

}  // namespace gantry
