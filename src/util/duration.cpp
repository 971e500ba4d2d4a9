#include "util/duration.h"

#include <cmath>
#include <cstdlib>

namespace gantry {
namespace {

struct Unit {
    std::string_view suffix;
    double milliseconds;
};

// Longest suffix first, so that "ms" is not read as "m".
constexpr Unit kUnits[] = {{"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}, {"d", 86400e3}};

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
    if (end != digits.c_str() + digits.size() || !std::isfinite(ms) || ms > 1e15)
        return bad();
    return std::chrono::milliseconds(static_cast<long long>(ms));
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

}  // namespace gantry
