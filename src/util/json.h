// JSON through nlohmann::json, with errors as gantry Errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace gantry {

using Json = nlohmann::json;

// Parse `text` as one JSON value; errors name `domain` and the byte offset.
// What gantry's messages hold (UTF-8 strings, output among them) takes a
// path of its own, many times as fast as nlohmann's on a reply of output
// (bench/util_bench.cpp); anything else is nlohmann's, which gives the same
// values and every error.
Result<Json> parse_json(std::string_view domain, std::string_view text);

// Compact encoding with no spaces (`{"a":[1,2]}`), the form flux tools print:
// exactly nlohmann's dump(), invalid UTF-8 replaced, with UTF-8 strings
// copied run by run between their escapes.
std::string to_compact(const Json& value);

// Name of a JSON value's type for messages ("string", "array", ...).
std::string json_type_name(const Json& value);

namespace detail {
// The two paths, for the tests and the fuzz target that hold them to each
// other: the fast parse (nullopt where it leaves the text to nlohmann), and
// nlohmann's own compact dump.
std::optional<Json> parse_json_fast(std::string_view text);
std::string to_compact_nlohmann(const Json& value);
}  // namespace detail

}  // namespace gantry
