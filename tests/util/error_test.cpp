#include "util/error.h"

#include <gtest/gtest.h>

#include "util/json.h"

namespace gantry {
namespace {

TEST(Error, FormatsDomainMessageOffsetAndInput) {
    EXPECT_EQ(Error::at("idset", "ids out of order", "3,2", 2).str(),
              "idset: ids out of order at offset 2 in \"3,2\"");
    EXPECT_EQ(Error::in("R", "version must be 1", "{}").str(), "R: version must be 1 in \"{}\"");
    EXPECT_EQ(Error("taskmap", "empty").str(), "taskmap: empty");
}

TEST(Error, KindsAreInvalidUnlessSaid) {
    EXPECT_EQ(Error("idset", "bad").kind(), ErrorKind::kInvalid);
    const Error missing = Error::not_found("store", "no job 3");
    EXPECT_EQ(missing.kind(), ErrorKind::kNotFound);
    EXPECT_TRUE(missing.is_not_found());
    EXPECT_EQ(missing.str(), "store: no job 3");
    const Error failed = Error::system("store", "reading job 3 failed: disk I/O error");
    EXPECT_TRUE(failed.is_system());
    EXPECT_FALSE(failed.is_not_found());
    // The kind is part of the error: the same words of another kind differ.
    EXPECT_NE(Error("store", "x"), Error::system("store", "x"));
}

TEST(Error, QuoteKeepsMessagesOnOneLine) {
    EXPECT_EQ(quote("a\nb\"c\\\x01"), "\"a\\nb\\\"c\\\\\\x01\"");
    EXPECT_EQ(quote(std::string(100, 'x'), 4), "\"xxxx\"...");
}

TEST(Result, HoldsValueOrError) {
    Result<int> good = 3;
    ASSERT_TRUE(good.ok());
    EXPECT_EQ(*good, 3);
    Result<int> bad = Error("x", "broken");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().str(), "x: broken");
    EXPECT_THROW((void)bad.value(), BadResultAccess);
    Status fine;
    EXPECT_TRUE(fine.ok());
    Status failed = Error("x", "no");
    EXPECT_THROW(failed.value(), BadResultAccess);
}

TEST(Json, ParseErrorsNameTheOffset) {
    const auto bad = parse_json("taskmap", "[[0,1,1,1]");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().str(), "taskmap: invalid JSON at offset 10 in \"[[0,1,1,1]\"");
    EXPECT_EQ(to_compact(parse_json("t", "{ \"a\" : [1, 2] }").value()), "{\"a\":[1,2]}");
    const auto huge = parse_json("R", "-6666e666666");
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.error().str(), "R: invalid JSON: a number is out of range in \"-6666e666666\"");
}

}  // namespace
}  // namespace gantry
