// parse_json and to_compact: the fast path gantry's own messages take and
// nlohmann's agree on every value and every byte written; what the fast
// path leaves alone (escapes of surrogates, what is not UTF-8, big
// numbers, deep nesting, errors) is nlohmann's, errors as before.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/json.h"

namespace gantry {
namespace {

// Parsed by both paths to the same value, written back the same.
void expect_same(const std::string& text, bool fast) {
    const auto parsed = parse_json("test", text);
    ASSERT_TRUE(parsed) << parsed.error().str();
    const Json reference = Json::parse(text);
    EXPECT_EQ(*parsed, reference) << text;
    EXPECT_EQ(detail::to_compact_nlohmann(*parsed), detail::to_compact_nlohmann(reference));
    EXPECT_EQ(detail::parse_json_fast(text).has_value(), fast) << text;
    EXPECT_EQ(to_compact(reference), detail::to_compact_nlohmann(reference)) << text;
}

TEST(Json, AMessageWithOutputTakesTheFastPath) {
    const std::string data(200000, 'Q');
    // Keys in order, as to_compact writes them.
    const std::string text = R"({"id":7,"more":true,"result":{"output":[{"data":")" + data +
                             R"(","rank":-1,"seq":3,"stream":"stdout"}]}})";
    const auto fast = detail::parse_json_fast(text);
    ASSERT_TRUE(fast);
    EXPECT_EQ((*fast)["result"]["output"][0]["data"], data);
    EXPECT_TRUE((*fast)["result"]["output"][0]["seq"].is_number_unsigned());
    EXPECT_TRUE((*fast)["result"]["output"][0]["rank"].is_number_integer());
    EXPECT_TRUE(to_compact(*fast) == text);
    expect_same(text, true);
}

// Strings are scanned eight bytes at a time: a byte the fast path does not
// take as it is, at every place in and around a word, is still seen.
TEST(Json, EveryByteOfAStringIsLookedAt) {
    const std::vector<std::string> specials = {"\"",   "\\",   "\n", "\x01",
                                               "\x1f", "\x7f", " ",  "\xc3\xa9"};
    for (const std::string& special : specials) {
        for (std::size_t length = 1; length <= 40; ++length) {
            for (std::size_t at = 0; at < length; ++at) {
                std::string text(length, 'A');
                text.replace(at, 1, special);
                SCOPED_TRACE("byte " + std::to_string(static_cast<unsigned char>(special[0])) +
                             " at " + std::to_string(at) + " of " + std::to_string(length));
                const Json value = text;
                EXPECT_EQ(to_compact(value), detail::to_compact_nlohmann(value));
                const auto parsed = parse_json("test", detail::to_compact_nlohmann(value));
                ASSERT_TRUE(parsed) << parsed.error().str();
                EXPECT_EQ(parsed->get<std::string>(), text);
            }
        }
    }
}

TEST(Json, ValuesAgreeWithNlohmann) {
    for (const std::string text :
         {R"({})", R"([])", R"("")", R"(0)", R"(-0)", R"(-0.0)", R"(1.5e3)", R"(2E-2)",
          R"(18446744073709551615)", R"(-9223372036854775808)", R"(true)", R"( [ null , false ] )",
          R"({"a":1,"a":2})", R"({"b":{"c":[1,[2,[3]]]},"a":"x"})",
          "\t{\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}\r\n", "{\"x\":\"~ \x7f\"}", R"(0.1)",
          R"(123456789012345678.5)", R"(1e308)"})
        expect_same(text, true);
}

// Output is text: lines, tabs, colours (ESC as \u001b), UTF-8 of every
// length, and the \u escapes of anything but surrogates.
TEST(Json, TextWithEscapesAndUtf8TakesTheFastPath) {
    for (const std::string text :
         {"\"caf\xc3\xa9\"", R"({"x":"~ \u007f"})", R"("\u00e9\u20AC\u0000\u001b[1m\uffff")",
          "{\"data\":\"line 1\\n\\u001b[31mred\\u001b[0m\\t\xe2\x82\xac "
          "\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\xed\x9f\xbf\\n\"}"})
        expect_same(text, true);
    EXPECT_EQ(detail::parse_json_fast(R"("\u00e9\u20ac\u0041")")->get<std::string>(),
              "\xc3\xa9\xe2\x82\xac"
              "A");
}

TEST(Json, WhatTheFastPathLeavesIsNlohmanns) {
    std::string deep;
    for (int i = 0; i < 200; ++i)
        deep += '[';
    deep += std::string(200, ']');
    for (const std::string& text :
         std::vector<std::string>{R"("\u00e9\ud83d\ude00")", R"(18446744073709551616)",
                                  R"(-9223372036854775809)", R"(1e-400)", deep})
        expect_same(text, false);
}

// What is not UTF-8 (a stray continuation byte, an overlong form, a
// surrogate, beyond U+10FFFF, a cut sequence) the fast path leaves to
// nlohmann, which refuses it.
TEST(Json, WhatIsNotUtf8IsRefused) {
    for (const std::string bytes :
         {"\x80", "\xc0\x80", "\xc1\xbf", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xf0\x8f\xbf\xbf",
          "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xe2\x82", "\xff"}) {
        const std::string text = "\"a" + bytes + "b\"";
        EXPECT_FALSE(detail::parse_json_fast(text)) << text;
        EXPECT_FALSE(parse_json("test", text)) << text;
    }
}

TEST(Json, ErrorsAreNlohmannsWithTheirOffsets) {
    EXPECT_EQ(parse_json("test", "garbage").error().str(),
              "test: invalid JSON at offset 0 in \"garbage\"");
    EXPECT_EQ(parse_json("test", R"({"a":})").error().str(),
              "test: invalid JSON at offset 5 in \"{\\\"a\\\":}\"");
    EXPECT_EQ(parse_json("test", "[1,]").error().str(),
              "test: invalid JSON at offset 3 in \"[1,]\"");
    EXPECT_EQ(parse_json("test", "01").error().str(), "test: invalid JSON at offset 1 in \"01\"");
    EXPECT_EQ(parse_json("test", "\"a\nb\"").error().str(),
              "test: invalid JSON at offset 2 in \"\\\"a\\nb\\\"\"");
    EXPECT_EQ(parse_json("test", "1e999").error().str(),
              "test: invalid JSON: a number is out of range in \"1e999\"");
    for (const std::string text : {"", " ", "{", "[1", "\"abc", "tru", "nul", "-", "1.", "1e",
                                   "{\"a\" 1}", "{1:2}", "[1 2]", "\"\\x\"", "1 2"})
        EXPECT_FALSE(parse_json("test", text)) << text;
}

// Every control byte, every length of UTF-8 and what is not UTF-8 (which
// nlohmann replaces with U+FFFD), each written as nlohmann writes it.
TEST(Json, StringsAreWrittenAsNlohmannWritesThem) {
    std::string controls;
    for (int c = 0; c < 0x20; ++c)
        controls += static_cast<char>(c);
    for (const std::string& text :
         {controls, std::string("\x7f\"\\/"),
          std::string("\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"),
          std::string("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"), std::string("ok\xc0\x80 then \xe2\x82"),
          std::string("\xed\xa0\x80"), std::string("line\n") + std::string(100, 'x') + "\xff"}) {
        const Json value = text;
        EXPECT_EQ(to_compact(value), detail::to_compact_nlohmann(value)) << text;
    }
    EXPECT_EQ(to_compact(Json("\x1b[1m\t\xe2\x82\xac\n")), "\"\\u001b[1m\\t\xe2\x82\xac\\n\"");
}

TEST(Json, CompactIsNlohmannsDumpExactly) {
    Json value = {{"z", {1, -2, 3.5, true, nullptr}},
                  {"a", "x\"y\\z\n\x01\x7f/caf\xc3\xa9"},
                  {"bad", "\xff\xfe"},
                  {"n", Json::object()},
                  {"e", Json::array()},
                  {"\x02key", 0.1}};
    EXPECT_EQ(to_compact(value), detail::to_compact_nlohmann(value));
    EXPECT_EQ(to_compact(value),
              "{\"\\u0002key\":0.1,\"a\":\"x\\\"y\\\\z\\n\\u0001\x7f/caf\xc3\xa9\",\"bad\":"
              "\"\xef\xbf\xbd\xef\xbf\xbd\",\"e\":[],\"n\":{},\"z\":[1,-2,3.5,true,null]}");
}

}  // namespace
}  // namespace gantry
