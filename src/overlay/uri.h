// The URI that names an instance's local API socket, and the environment
// variable that hands it to the programs run inside the instance.
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry::overlay {

// The environment variable that holds the enclosing instance's URI.
inline constexpr std::string_view kUriVariable = "GANTRY_URI";

// "unix://" followed by the socket's absolute path.
std::string uri_of(std::string_view socket_path);
// The socket path of a "unix://PATH" URI; PATH must be absolute.
Result<std::string> socket_path_of(std::string_view uri);

}  // namespace gantry::overlay
