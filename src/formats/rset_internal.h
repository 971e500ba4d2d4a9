// Helpers shared by the files of the R library (rset*.cpp); not part of its API.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rset.h"

namespace gantry::rset_detail {

inline constexpr std::string_view kDomain = "R";
// RFC 20: property names MUST NOT contain these.
inline constexpr std::string_view kIllegalPropertyCharacters = "!&'\"^`|()";

Error error(std::string message);
// `R: <path>: <message>`
Error error_at(const std::string& path, std::string_view message);
// An error of another domain (idset, hostlist, JSON) re-told at a JSON path,
// keeping its input and offset.
Error nested(const std::string& path, const Error& inner);
Error wrong_type(const std::string& path, std::string_view expected, const Json& value);

std::string number_str(double value);
std::string bracketed(const IdSet& ids);  // `0`, `[0-3]`
bool valid_utf8(std::string_view text);

// Ranks that hold identical children, in the order of their first rank.
struct Group {
    IdSet ranks;
    const Target* children;
};
std::vector<Group> group_by_children(const std::map<ResourceSet::Rank, Target>& targets);

}  // namespace gantry::rset_detail
