// The message envelope: encoding and parsing of requests and replies, as
// clients send them on the local socket and as brokers will send them to
// each other (with the sender's uid and the route), and line framing.
#include "overlay/message.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace gantry {
namespace {

using overlay::LineBuffer;
using overlay::Message;
using overlay::Reply;

constexpr uid_t kSender = 1000;

// --- Encoding ----------------------------------------------------------------

TEST(MessageEncode, RequestsAndReplies) {
    EXPECT_EQ(overlay::encode_request({1, "instance.info", Json::object()}),
              "{\"id\":1,\"method\":\"instance.info\",\"params\":{}}\n");
    EXPECT_EQ(overlay::encode_request({-9223372036854775807 - 1, "x", {{"force", true}}}),
              "{\"id\":-9223372036854775808,\"method\":\"x\",\"params\":{\"force\":true}}\n");
    EXPECT_EQ(overlay::encode_result(7, {{"a", 1}}), "{\"id\":7,\"result\":{\"a\":1}}\n");
    EXPECT_EQ(overlay::encode_result(7, 3, true), "{\"id\":7,\"result\":3,\"more\":true}\n");
    EXPECT_EQ(overlay::encode_error(8, "gantry: no"),
              "{\"id\":8,\"error\":{\"message\":\"gantry: no\"}}\n");
    EXPECT_EQ(overlay::encode_error(std::nullopt, "gantry: \"q\"\n"),
              "{\"error\":{\"message\":\"gantry: \\\"q\\\"\\n\"}}\n");
}

TEST(MessageEncode, AClientsRequestNeverCarriesTheUidOrTheRoute) {
    Message request{5, "job.list", Json::object()};
    request.uid = 0;
    request.route = {0, 3};
    EXPECT_EQ(overlay::encode_request(request),
              "{\"id\":5,\"method\":\"job.list\",\"params\":{}}\n");
    request.rank = 2;
    EXPECT_EQ(overlay::encode_request(request),
              "{\"id\":5,\"method\":\"job.list\",\"params\":{},\"rank\":2}\n");
}

TEST(MessageEncode, ABrokersMessageCarriesTheUidAndTheRoute) {
    Message message{5, "job.list", {{"limit", 1}}};
    message.uid = 1000;
    message.route = {3, 1};
    EXPECT_EQ(overlay::encode_message(message),
              "{\"id\":5,\"method\":\"job.list\",\"params\":{\"limit\":1},\"uid\":1000,"
              "\"route\":[3,1]}\n");
    message.rank = 0;
    message.route.clear();
    EXPECT_EQ(overlay::encode_message(message),
              "{\"id\":5,\"method\":\"job.list\",\"params\":{\"limit\":1},\"rank\":0,"
              "\"uid\":1000,\"route\":[]}\n");
}

TEST(MessageEncode, RepliesWithARoute) {
    Reply reply;
    reply.id = 7;
    reply.result = Json{{"a", 1}};
    EXPECT_EQ(overlay::encode_reply(reply), overlay::encode_result(7, {{"a", 1}}));
    reply.more = true;
    reply.route = {2, 0};
    EXPECT_EQ(overlay::encode_reply(reply),
              "{\"id\":7,\"result\":{\"a\":1},\"more\":true,\"route\":[2,0]}\n");
    Reply error;
    error.id = 8;
    error.message = "gantry: job 7: gone";
    error.error_type = overlay::kShutdownError;
    EXPECT_EQ(overlay::encode_reply(error),
              overlay::encode_error(8, "gantry: job 7: gone", overlay::kShutdownError));
    error.route = {4};
    EXPECT_EQ(overlay::encode_reply(error),
              "{\"id\":8,\"error\":{\"message\":\"gantry: job 7: gone\",\"type\":\"shutdown\"},"
              "\"route\":[4]}\n");
}

// --- Parsing a client's request ----------------------------------------------

struct RequestCase {
    std::string_view line;
    std::optional<std::int64_t> id;  // the id an error reply carries
    std::string_view error;          // empty: a good request
};

constexpr RequestCase kRequests[] = {
    {R"({"id":1,"method":"m"})", 1, ""},
    {R"({"id":0,"method":"m","params":{"a":[1]},"extra":null})", 0, ""},
    {R"( {"method":"m","id":-4} )", -4, ""},
    {R"({"id":2,"method":"m","rank":4294967295})", 2, ""},
    {"garbage", std::nullopt, R"(api: malformed request: invalid JSON at offset 0 in "garbage")"},
    {R"({"id":1,"method":"m")", std::nullopt,
     R"(api: malformed request: invalid JSON at offset 20 in "{\"id\":1,\"method\":\"m\"")"},
    {"[1,2]", std::nullopt, "api: malformed request: expected a JSON object, got an array"},
    {"\"x\"", std::nullopt, "api: malformed request: expected a JSON object, got a string"},
    {R"({"method":"m"})", std::nullopt, R"(api: malformed request: no "id")"},
    {R"({"id":"1","method":"m"})", std::nullopt,
     R"(api: malformed request: "id" is a string, expected an integer)"},
    {R"({"id":1.5,"method":"m"})", std::nullopt,
     R"(api: malformed request: "id" is a number, expected an integer)"},
    {R"({"id":9223372036854775808,"method":"m"})", std::nullopt,
     R"(api: malformed request: "id" is out of range)"},
    {R"({"id":5})", 5, R"(api: malformed request: no "method")"},
    {R"({"id":5,"method":{}})", 5,
     R"(api: malformed request: "method" is an object, expected a string)"},
    {R"({"id":6,"method":"m","params":[]})", 6,
     R"(api: malformed request: "params" is an array, expected an object)"},
    {R"({"id":7,"method":"m","rank":"0"})", 7,
     R"(api: malformed request: "rank" is a string, expected an integer)"},
    {R"({"id":7,"method":"m","rank":-1})", 7,
     R"(api: malformed request: "rank" is out of range: expected 0 to 4294967295)"},
    {R"({"id":7,"method":"m","rank":4294967296})", 7,
     R"(api: malformed request: "rank" is out of range: expected 0 to 4294967295)"},
    // Only the receiving side knows who sent a request, and where from.
    {R"({"id":8,"method":"m","uid":0})", 8,
     R"(api: malformed request: "uid" is set by the instance, not by the client)"},
    {R"({"id":8,"method":"m","uid":null})", 8,
     R"(api: malformed request: "uid" is set by the instance, not by the client)"},
    {R"({"id":9,"method":"m","route":[0]})", 9,
     R"(api: malformed request: "route" is set by the instance, not by the client)"},
};

TEST(MessageParse, Requests) {
    for (const auto& c : kRequests) {
        std::optional<std::int64_t> id = 99;
        const auto request = overlay::parse_request(c.line, kSender, id);
        EXPECT_EQ(id, c.id) << c.line;
        if (c.error.empty()) {
            ASSERT_TRUE(request.ok()) << c.line << ": " << request.error().str();
            EXPECT_EQ(request->method, "m") << c.line;
            EXPECT_TRUE(request->params.is_object()) << c.line;
        } else {
            ASSERT_FALSE(request.ok()) << c.line;
            EXPECT_EQ(request.error().str(), c.error) << c.line;
        }
    }
}

TEST(MessageParse, RequestParamsAreKept) {
    std::optional<std::int64_t> id;
    const auto request =
        overlay::parse_request(R"({"id":3,"method":"m","params":{"a":[1,"b"]}})", kSender, id);
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(request->id, 3);
    EXPECT_EQ(to_compact(request->params), R"({"a":[1,"b"]})");
}

TEST(MessageParse, ARequestsUidIsTheSendersAndItHasNoRoute) {
    std::optional<std::int64_t> id;
    const auto request = overlay::parse_request(R"({"id":3,"method":"m"})", kSender, id);
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(*request, (Message{3, "m", Json::object(), std::nullopt, 1000, {}}));
    const auto ranked = overlay::parse_request(R"({"id":4,"method":"m","rank":1})", 0, id);
    ASSERT_TRUE(ranked.ok());
    EXPECT_EQ(*ranked, (Message{4, "m", Json::object(), 1, 0, {}}));
}

TEST(MessageParse, ARequestIsReadBackAsItWasEncoded) {
    Message request{12, "job.submit", {{"jobspec", {{"version", 1}}}}, 3};
    request.uid = kSender;
    std::optional<std::int64_t> id;
    const auto parsed = overlay::parse_request(overlay::encode_request(request), kSender, id);
    ASSERT_TRUE(parsed.ok()) << parsed.error().str();
    EXPECT_EQ(*parsed, request);
}

// --- Parsing a broker's message ----------------------------------------------

TEST(MessageParse, ABrokersMessageIsReadBackWithItsUidAndRoute) {
    const Message messages[] = {
        {1, "job.list", Json::object(), std::nullopt, 1000, {3, 1}},
        {-2, "instance.info", {{"x", {1, 2}}}, 0, 0, {}},
        {3, "m", Json::object(), 4294967295u, 4294967295u, {4294967295u, 0, 7}},
    };
    for (const Message& message : messages) {
        const std::string line = overlay::encode_message(message);
        std::optional<std::int64_t> id;
        const auto parsed = overlay::parse_message(line.substr(0, line.size() - 1), id);
        ASSERT_TRUE(parsed.ok()) << line << parsed.error().str();
        EXPECT_EQ(*parsed, message) << line;
        EXPECT_EQ(id, message.id) << line;
    }
}

TEST(MessageParse, ABrokersMessageNeedsAUidAndARoute) {
    struct Bad {
        std::string_view line, error;
    };
    const Bad bad[] = {
        {R"({"id":1,"method":"m","route":[]})", R"(api: malformed request: no "uid")"},
        {R"({"id":1,"method":"m","uid":0})", R"(api: malformed request: no "route")"},
        {R"({"id":1,"method":"m","uid":-1,"route":[]})",
         R"(api: malformed request: "uid" is out of range: expected 0 to 4294967295)"},
        {R"({"id":1,"method":"m","uid":"root","route":[]})",
         R"(api: malformed request: "uid" is a string, expected an integer)"},
        {R"({"id":1,"method":"m","uid":0,"route":{}})",
         R"(api: malformed request: "route" is an object, expected an array of ranks)"},
        {R"({"id":1,"method":"m","uid":0,"route":[0,"1"]})",
         R"(api: malformed request: "route" holds a string, expected ranks)"},
        {R"({"id":1,"method":"m","uid":0,"route":[4294967296]})",
         R"(api: malformed request: "route" holds a rank out of range: expected 0 to 4294967295)"},
    };
    for (const auto& b : bad) {
        std::optional<std::int64_t> id;
        const auto parsed = overlay::parse_message(b.line, id);
        ASSERT_FALSE(parsed.ok()) << b.line;
        EXPECT_EQ(parsed.error().str(), b.error) << b.line;
        EXPECT_EQ(id, 1) << b.line;
    }
}

// --- Parsing replies -----------------------------------------------------------

TEST(MessageParse, Replies) {
    auto reply = overlay::parse_reply(R"({"id":2,"result":{"x":1},"more":true})");
    ASSERT_TRUE(reply.ok());
    EXPECT_EQ(reply->id, 2);
    EXPECT_EQ(to_compact(*reply->result), R"({"x":1})");
    EXPECT_TRUE(reply->more);
    EXPECT_FALSE(reply->message);

    reply = overlay::parse_reply(R"({"error":{"message":"gantry: refused"}})");
    ASSERT_TRUE(reply.ok());
    EXPECT_FALSE(reply->id);
    EXPECT_EQ(reply->message, "gantry: refused");
    EXPECT_FALSE(reply->more);

    struct Bad {
        std::string_view line, error;
    };
    const Bad bad[] = {
        {"1", "api: malformed reply: expected a JSON object, got a number"},
        {R"({"id":1})", R"(api: malformed reply: expected one of "result" and "error")"},
        {R"({"id":1,"result":1,"error":{}})",
         R"(api: malformed reply: expected one of "result" and "error")"},
        {R"({"id":1,"error":"x"})", R"(api: malformed reply: "error" has no string "message")"},
        {R"({"id":1,"result":1,"more":1})",
         R"(api: malformed reply: "more" is a number, expected a boolean)"},
        {R"({"id":1,"error":{"message":"m"},"more":true})",
         R"(api: malformed reply: an error reply is the last one; it has no "more")"},
        {R"({"id":1,"result":1,"route":[-1]})",
         R"(api: malformed reply: "route" holds a rank out of range: expected 0 to 4294967295)"},
    };
    for (const auto& b : bad) {
        const auto parsed = overlay::parse_reply(b.line);
        ASSERT_FALSE(parsed.ok()) << b.line;
        EXPECT_EQ(parsed.error().str(), b.error) << b.line;
    }
}

TEST(MessageParse, RepliesAreReadBackWithTheirRoute) {
    Reply result;
    result.id = 7;
    result.result = Json{{"a", {1, 2}}};
    result.more = true;
    result.route = {5, 2, 0};
    Reply error;
    error.message = "gantry: no route to rank 9";
    error.error_type = "x";
    error.route = {1};
    for (const Reply& reply : {result, error}) {
        const std::string line = overlay::encode_reply(reply);
        const auto parsed = overlay::parse_reply(line.substr(0, line.size() - 1));
        ASSERT_TRUE(parsed.ok()) << line << parsed.error().str();
        EXPECT_EQ(*parsed, reply) << line;
    }
}

// --- Framing -------------------------------------------------------------------

TEST(MessageLineBuffer, CutsLinesAcrossReads) {
    LineBuffer buffer;
    buffer.append("ab", 2);
    EXPECT_FALSE(buffer.next_line());
    buffer.append("c\nd\n\ne", 6);
    EXPECT_EQ(buffer.next_line(), "abc");
    EXPECT_EQ(buffer.next_line(), "d");
    EXPECT_EQ(buffer.next_line(), "");
    EXPECT_FALSE(buffer.next_line());
    EXPECT_EQ(buffer.size(), 1u);
    buffer.append("f\n", 2);
    EXPECT_EQ(buffer.next_line(), "ef");
    buffer.append("tail", 4);
    EXPECT_EQ(buffer.take_rest(), "tail");
    EXPECT_EQ(buffer.size(), 0u);
}

TEST(MessageLineBuffer, OverflowsOnlyWithoutANewline) {
    LineBuffer buffer;
    const std::string block(1 << 20, 'x');
    for (std::size_t i = 0; i < overlay::kMaxMessage / block.size(); ++i)
        buffer.append(block.data(), block.size());
    EXPECT_FALSE(buffer.overflowed());
    buffer.append("x", 1);
    EXPECT_TRUE(buffer.overflowed());
    buffer.append("\n", 1);
    EXPECT_FALSE(buffer.overflowed());
    EXPECT_EQ(buffer.next_line()->size(), overlay::kMaxMessage + 1);
}

}  // namespace
}  // namespace gantry
