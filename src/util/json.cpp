#include "util/json.h"

namespace gantry {

Result<Json> parse_json(std::string_view domain, std::string_view text) {
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        // nlohmann reports the 1-based position of the byte that failed.
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        return Error::at(std::string(domain), "invalid JSON", text, offset);
    } catch (const Json::out_of_range&) {
        // A number too large for a double (`1e999`); nlohmann gives no position.
        return Error::in(std::string(domain), "invalid JSON: a number is out of range", text);
    }
}

std::string to_compact(const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string json_type_name(const Json& value) {
    return value.type_name();
}

}  // namespace gantry
