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

// Text goes as it is, as flux's output events carry it; what is not UTF-8
// goes in base64, said by "encoding".
TEST(Data, TextAsItIsTheRestInBase64) {
    Json text;
    put_data(text, "line 1\n\x1b[1m\xe2\x82\xac\n");
    EXPECT_EQ(to_compact(text), "{\"data\":\"line 1\\n\\u001b[1m\xe2\x82\xac\\n\"}");
    EXPECT_EQ(data_of(text).value(), "line 1\n\x1b[1m\xe2\x82\xac\n");

    Json binary{{"id", 3}};
    put_data(binary, std::string("a\xff\0b", 4));
    EXPECT_EQ(to_compact(binary), R"({"data":"Yf8AYg==","encoding":"base64","id":3})");
    EXPECT_EQ(data_of(binary).value(), std::string("a\xff\0b", 4));

    // A UTF-8 sequence cut at the end of a chunk is not UTF-8.
    Json cut;
    put_data(cut, "\xe2\x82");
    EXPECT_EQ(to_compact(cut), R"({"data":"4oI=","encoding":"base64"})");

    Json empty;
    put_data(empty, "");
    EXPECT_EQ(to_compact(empty), R"({"data":""})");
    EXPECT_EQ(data_of(Json::object()).value(), "");
}

TEST(Data, EveryByteRoundTrips) {
    for (int c = 0; c < 256; ++c) {
        const std::string bytes = "x" + std::string(1, static_cast<char>(c)) + "y";
        Json object;
        put_data(object, bytes);
        const auto again = parse_json("test", to_compact(object));
        ASSERT_TRUE(again);
        EXPECT_EQ(data_of(*again).value(), bytes) << c;
        EXPECT_EQ(again->contains("encoding"), c >= 0x80) << c;
    }
}

TEST(Data, BadInput) {
    EXPECT_EQ(data_of({{"data", 7}}).error().str(), "data: \"data\" must be a string, not number");
    EXPECT_EQ(data_of({{"data", "Zg=="}, {"encoding", "utf-8"}}).error().str(),
              "data: unknown \"encoding\" \"utf-8\" (only \"base64\" is known)");
    EXPECT_EQ(data_of({{"data", "Zg=="}, {"encoding", 1}}).error().str(),
              "data: unknown \"encoding\" 1 (only \"base64\" is known)");
    EXPECT_EQ(data_of({{"data", "Zm9v*A=="}, {"encoding", "base64"}}).error().str(),
              "data: base64: unexpected '*' at offset 4");
}

}  // namespace
}  // namespace gantry
