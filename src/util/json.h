// JSON through nlohmann::json, with errors as gantry Errors.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace gantry {

using Json = nlohmann::json;

// Parse `text` as one JSON value; errors name `domain` and the byte offset.
Result<Json> parse_json(std::string_view domain, std::string_view text);

// Compact encoding with no spaces (`{"a":[1,2]}`), the form flux tools print.
std::string to_compact(const Json& value);

// Name of a JSON value's type for messages ("string", "array", ...).
std::string json_type_name(const Json& value);

}  // namespace gantry
