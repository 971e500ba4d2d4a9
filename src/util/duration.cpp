#include "util/duration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

namespace gantry {
namespace {

struct Unit {
    std::string_view suffix;
    double milliseconds;
};

// About 31,000 years: far beyond any limit, and exact in a double.
constexpr long long kLongestMilliseconds = 1'000'000'000'000'000;

// Longest suffix first, so that "ms" is not read as "m".
constexpr Unit kUnits[] = {{"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}, {"d", 86400e3}};

// A non-negative decimal integer of at most 9 digits: each field of a
// Slurm time is small, and a bound keeps the sum far from overflow.
std::optional<long long> field_of(std::string_view text) {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != text.npos)
        return std::nullopt;
    long long value = 0;
    for (const char digit : text)
        value = value * 10 + (digit - '0');
    return value;
}

// Slurm's D-H, D-H:M, D-H:M:S, M:S and H:M:S, in seconds.
std::optional<long long> slurm_seconds(std::string_view text) {
    long long days = 0;
    const std::size_t dash = text.find('-');
    const bool has_days = dash != std::string_view::npos;
    if (has_days) {
        const auto d = field_of(text.substr(0, dash));
        if (!d)
            return std::nullopt;
        days = *d;
        text = text.substr(dash + 1);
    }
    std::vector<long long> fields;
    for (std::size_t start = 0;;) {
        const std::size_t colon = text.find(':', start);
        const auto field = field_of(text.substr(start, colon - start));
        if (!field || fields.size() == 3)
            return std::nullopt;
        fields.push_back(*field);
        if (colon == std::string_view::npos)
            break;
        start = colon + 1;
    }
    // With days the fields are H[:M[:S]]; without, M:S or H:M:S.
    if (!has_days && fields.size() == 2)
        fields.insert(fields.begin(), 0);
    if (!has_days && fields.size() != 3)
        return std::nullopt;
    fields.resize(3, 0);
    return ((days * 24 + fields[0]) * 60 + fields[1]) * 60 + fields[2];
}

bool equals_ignoring_case(std::string_view text, std::string_view word) {
    return text.size() == word.size() &&
           std::equal(text.begin(), text.end(), word.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == b;
           });
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view domain, std::string_view text) {
    const auto bad = [&] {
        return Error::in(std::string(domain), "bad duration (say 30s, 5m, 1h)", text);
    };
    double scale = 1e3;
    std::string_view number = text;
    for (const Unit& unit : kUnits)
        if (text.ends_with(unit.suffix)) {
            number = text.substr(0, text.size() - unit.suffix.size());
            scale = unit.milliseconds;
            break;
        }
    if (number.empty() || number.size() > 32 ||
        number.find_first_not_of("0123456789.") != std::string_view::npos)
        return bad();
    const std::string digits(number);
    char* end = nullptr;
    const double value = std::strtod(digits.c_str(), &end);
    const double ms = std::round(value * scale);
    if (end != digits.c_str() + digits.size() || !std::isfinite(ms) || ms > kLongestMilliseconds)
        return bad();
    return std::chrono::milliseconds(static_cast<long long>(ms));
}

Result<std::chrono::milliseconds> parse_time_limit(std::string_view domain, std::string_view text) {
    const auto bad = [&] {
        return Error::in(std::string(domain),
                         "bad time limit (minutes as 30, [D-]H:M:S as 1:00:00 or 2-00:00:00, or "
                         "90s, 1.5h, 1d)",
                         text);
    };
    if (equals_ignoring_case(text, "unlimited") || equals_ignoring_case(text, "infinite"))
        return std::chrono::milliseconds(0);
    if (text.find_first_of("-:") != std::string_view::npos) {
        const auto seconds = slurm_seconds(text);
        // The bound parse_duration keeps, so that any limit reads back.
        if (!seconds || *seconds > kLongestMilliseconds / 1000)
            return bad();
        return std::chrono::milliseconds(*seconds * 1000);
    }
    const bool has_unit = !text.empty() && std::isalpha(static_cast<unsigned char>(text.back()));
    auto limit = parse_duration(domain, has_unit ? std::string(text) : std::string(text) + "m");
    if (!limit)
        return bad();
    return limit;
}

std::string format_duration(std::chrono::milliseconds duration) {
    const long long ms = duration.count();
    for (auto unit = std::rbegin(kUnits); unit != std::rend(kUnits); ++unit) {
        const auto per = static_cast<long long>(unit->milliseconds);
        if (ms != 0 && ms % per == 0 && unit->suffix != "d")
            return std::to_string(ms / per) + std::string(unit->suffix);
    }
    return std::to_string(ms) + "ms";
}

double epoch_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace gantry
