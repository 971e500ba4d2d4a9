// The local API socket's URI.
#include "overlay/uri.h"

#include <gtest/gtest.h>

#include <string_view>

namespace gantry {
namespace {

TEST(Uri, UnixPathsOnly) {
    EXPECT_EQ(overlay::uri_of("/tmp/x/socket"), "unix:///tmp/x/socket");
    EXPECT_EQ(overlay::socket_path_of("unix:///tmp/x/socket").value(), "/tmp/x/socket");
    for (const std::string_view bad : {"", "unix://", "unix://relative/socket", "/tmp/x/socket",
                                       "tcp://host:80", "unix:/tmp/socket"}) {
        const auto path = overlay::socket_path_of(bad);
        ASSERT_FALSE(path.ok()) << bad;
        EXPECT_EQ(path.error().str(),
                  "api: expected a URI of the form unix:///PATH/TO/SOCKET in " + quote(bad));
    }
}

}  // namespace
}  // namespace gantry
