// Building text fast: encoders of large maps and sets append numbers to one
// string, without a temporary std::string per number.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace gantry {

// Appends the decimal digits of `n` to `out`.
inline void append_number(std::string& out, std::uint64_t n) {
    char digits[20];  // 2^64 - 1 has 20
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    out.append(digits, end);
}

}  // namespace gantry
