#include "util/base64.h"

#include <gtest/gtest.h>

namespace gantry {
namespace {

// RFC 4648 section 10.
TEST(Base64, RfcVectors) {
    const std::pair<std::string_view, std::string_view> vectors[] = {{"", ""},
                                                                     {"f", "Zg=="},
                                                                     {"fo", "Zm8="},
                                                                     {"foo", "Zm9v"},
                                                                     {"foob", "Zm9vYg=="},
                                                                     {"fooba", "Zm9vYmE="},
                                                                     {"foobar", "Zm9vYmFy"}};
    for (const auto& [bytes, text] : vectors) {
        EXPECT_EQ(base64_encode(bytes), text);
        EXPECT_EQ(base64_decode(text).value(), bytes);
    }
}

TEST(Base64, EveryByteRoundTrips) {
    std::string bytes;
    for (int c = 0; c < 256; ++c)
        bytes += static_cast<char>(c);
    EXPECT_EQ(base64_decode(base64_encode(bytes)).value(), bytes);
}

TEST(Base64, BadInput) {
    EXPECT_EQ(base64_decode("Zm9").error().str(), "base64: length 3 is not a multiple of 4");
    EXPECT_EQ(base64_decode("Zm9v*A==").error().str(), "base64: unexpected '*' at offset 4");
    EXPECT_EQ(base64_decode("Zg==Zm9v").error().str(), "base64: unexpected '=' at offset 2");
    EXPECT_EQ(base64_decode("Z===").error().str(), "base64: unexpected '=' at offset 1");
    EXPECT_EQ(base64_decode("Zm\n=").error().str(), "base64: unexpected '\\x0a' at offset 2");
    // One text per bytes: the bits after the last byte are zero.
    EXPECT_EQ(base64_decode("5gm=").error().str(),
              "base64: non-zero padding bits in 'm' at offset 2");
    EXPECT_EQ(base64_decode("Zh==").error().str(),
              "base64: non-zero padding bits in 'h' at offset 1");
    EXPECT_EQ(base64_decode("Zm9vYn==").error().str(),
              "base64: non-zero padding bits in 'n' at offset 5");
    EXPECT_EQ(base64_decode("5gk=").value(), "\xe6\x09");
    EXPECT_EQ(base64_decode("Zg==").value(), "f");
}

}  // namespace
}  // namespace gantry
