#include "overlay/uri.h"

namespace gantry::overlay {

namespace {

constexpr std::string_view kScheme = "unix://";

}  // namespace

std::string uri_of(std::string_view socket_path) {
    return std::string(kScheme) + std::string(socket_path);
}

Result<std::string> socket_path_of(std::string_view uri) {
    if (!uri.starts_with(kScheme) || uri.size() == kScheme.size() || uri[kScheme.size()] != '/')
        return Error::in("api", "expected a URI of the form unix:///PATH/TO/SOCKET", uri);
    return std::string(uri.substr(kScheme.size()));
}

}  // namespace gantry::overlay
