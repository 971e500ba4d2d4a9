// The --requires query syntax (RFC 35) compiled to RFC 31 constraints:
// RFC 35's examples with properties as the default operator, flux's
// --requires examples, every error with its place, and what the compiled
// constraints select in an R.
#include "formats/constraint.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/rset.h"

namespace gantry {
namespace {

struct Case {
    std::string_view query;
    std::string_view json;
};

const Case kCompiled[] = {
    // RFC 35's examples, the default operator being properties.
    {"foo", R"({"properties":["foo"]})"},
    {"foo bar", R"({"and":[{"properties":["foo"]},{"properties":["bar"]}]})"},
    {"foo bar hostlist:x",
     R"({"and":[{"properties":["foo"]},{"properties":["bar"]},{"hostlist":["x"]}]})"},
    {"a|b|c", R"({"or":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]})"},
    {"a|b&c",
     R"({"or":[{"properties":["a"]},{"and":[{"properties":["b"]},{"properties":["c"]}]}]})"},
    {"(a|b)&c",
     R"({"and":[{"or":[{"properties":["a"]},{"properties":["b"]}]},{"properties":["c"]}]})"},
    {"(a|-b)&c",
     R"({"and":[{"or":[{"properties":["a"]},{"not":[{"properties":["b"]}]}]},{"properties":["c"]}]})"},
    // flux's --requires examples.
    {"a b c", R"({"and":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]})"},
    {"a&b&c", R"({"and":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]})"},
    {"a,b,c", R"({"properties":["a","b","c"]})"},
    {"a or b or c", R"({"or":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]})"},
    {"(a and b) or (b and c)", R"({"or":[{"and":[{"properties":["a"]},{"properties":["b"]}]},)"
                               R"({"and":[{"properties":["b"]},{"properties":["c"]}]}]})"},
    {"b|-c", R"({"or":[{"properties":["b"]},{"not":[{"properties":["c"]}]}]})"},
    {"b or not c", R"({"or":[{"properties":["b"]},{"not":[{"properties":["c"]}]}]})"},
    {"host:fluke[1-5]", R"({"hostlist":["fluke[1-5]"]})"},
    {"-host:fluke7", R"({"not":[{"hostlist":["fluke7"]}]})"},
    {"rank:0", R"({"ranks":["0"]})"},
    // Every spelling of each operator.
    {"gpu,-big,^slow", R"({"properties":["gpu","^big","^slow"]})"},
    {"property:gpu properties:a", R"({"and":[{"properties":["gpu"]},{"properties":["a"]}]})"},
    {"hosts:n[1-2] hostlist:m", R"({"and":[{"hostlist":["n[1-2]"]},{"hostlist":["m"]}]})"},
    {"ranks:0-3", R"({"ranks":["0-3"]})"},
    {"a && b || c",
     R"({"or":[{"and":[{"properties":["a"]},{"properties":["b"]}]},{"properties":["c"]}]})"},
    {"not (a|b)", R"({"not":[{"or":[{"properties":["a"]},{"properties":["b"]}]}]})"},
    {"not not a", R"({"not":[{"not":[{"properties":["a"]}]}]})"},
    // Parentheses add no level; blanks anywhere between tokens.
    {"((a))", R"({"properties":["a"]})"},
    {" \ta\n", R"({"properties":["a"]})"},
    {"(a)(b)", R"({"and":[{"properties":["a"]},{"properties":["b"]}]})"},
    // Quotes keep what they hold; the words and, or, not quoted are names.
    {"host:'n1'", R"({"hostlist":["n1"]})"},
    {R"("and")", R"({"properties":["and"]})"},
    {"'a:b'", R"({"properties":["a:b"]})"},
};

TEST(ConstraintQuery, CompilesToRfc31) {
    for (const Case& c : kCompiled) {
        const auto compiled = parse_constraint_query(c.query);
        ASSERT_TRUE(compiled) << c.query << ": " << compiled.error().str();
        EXPECT_EQ(compiled->dump(), Json::parse(c.json).dump()) << c.query;
    }
}

const Case kErrors[] = {
    {"", R"x(constraint: the query is empty at offset 0 in "")x"},
    {"  ", R"x(constraint: the query is empty at offset 0 in "  ")x"},
    {"gpu |",
     R"x(constraint: expected a term after 'or', found the end of the query at offset 5 in "gpu |")x"},
    {"a and",
     R"x(constraint: expected a term after 'and', found the end of the query at offset 5 in "a and")x"},
    {"not",
     R"x(constraint: expected a term after 'not', found the end of the query at offset 3 in "not")x"},
    {"a | & b",
     R"x(constraint: expected a term after 'or', found an 'and' at offset 4 in "a | & b")x"},
    {"(a", R"x(constraint: '(' without ')' at offset 0 in "(a")x"},
    {"a)", R"x(constraint: ')' without '(' at offset 1 in "a)")x"},
    {")", R"x(constraint: expected a term, found ')' at offset 0 in ")")x"},
    {"()", R"x(constraint: expected a term after '(', found ')' at offset 1 in "()")x"},
    {"-(a|b)", R"x(constraint: '-' negates a term, not '(' at offset 0 in "-(a|b)")x"},
    {"a -", R"x(constraint: '-' negates a term, not the end of the query at offset 2 in "a -")x"},
    {":a", R"x(constraint: expected an operator before ':' at offset 0 in ":a")x"},
    {"host:", R"x(constraint: "host:" needs an operand at offset 0 in "host:")x"},
    {"a colour:red",
     R"x(constraint: unknown operator "colour" (properties, hostlist, ranks) at offset 2 in "a colour:red")x"},
    {"a^b",
     R"x(constraint: properties: invalid character '^' in property name "a^b" at offset 0 in "a^b")x"},
    {"a,,b", R"x(constraint: properties: empty property name at offset 2 in "a,,b")x"},
    {"gpu,", R"x(constraint: properties: empty property name at offset 4 in "gpu,")x"},
    {"host:n[1-", R"x(constraint: host: '[' without ']' at offset 6 in "host:n[1-")x"},
    {"rank:x", R"x(constraint: rank: expected an id, found 'x' at offset 5 in "rank:x")x"},
    {"'abc", R"x(constraint: unterminated ' at offset 0 in "'abc")x"},
    {"a \"b", R"x(constraint: unterminated " at offset 2 in "a \"b")x"},
};

TEST(ConstraintQuery, ErrorsNameThePlace) {
    for (const Case& c : kErrors) {
        const auto compiled = parse_constraint_query(c.query);
        ASSERT_FALSE(compiled) << c.query << " gave " << compiled->dump();
        EXPECT_EQ(compiled.error().str(), c.json) << c.query;
    }
}

TEST(ConstraintQuery, NestingAndLengthAreBounded) {
    const std::string deep = std::string(101, '(') + "a" + std::string(101, ')');
    EXPECT_EQ(parse_constraint_query(deep).error().message(), "nested more than 100 deep");
    const std::string nots = [] {
        std::string text;
        for (int i = 0; i < 200; ++i)
            text += "not ";
        return text + "a";
    }();
    EXPECT_EQ(parse_constraint_query(nots).error().message(), "nested more than 100 deep");
    const std::string fine = std::string(100, '(') + "a" + std::string(100, ')');
    EXPECT_TRUE(parse_constraint_query(fine).ok());
    EXPECT_EQ(parse_constraint_query(std::string(64 * 1024 + 1, 'a')).error().str(),
              "constraint: the query is longer than 64 KiB");
    // A long flat chain is no deeper than its parts.
    std::string chain = "a";
    for (int i = 0; i < 5000; ++i)
        chain += i % 2 ? " | a" : " b";
    EXPECT_TRUE(parse_constraint_query(chain).ok());
}

// What the compiled constraints select: ranks 0-3 on hosts n[0-3], gpu on
// 2-3, big on 0; a host name counts as a property of its rank.
TEST(ConstraintQuery, SelectsTheRanksOfR) {
    ResourceSet set;
    for (ResourceSet::Rank rank = 0; rank < 4; ++rank)
        ASSERT_TRUE(set.insert(rank, {"n" + std::to_string(rank), IdSet::range(0, 1), {}}).ok());
    ASSERT_TRUE(set.set_property("gpu", IdSet::range(2, 3)).ok());
    ASSERT_TRUE(set.set_property("big", IdSet{0}).ok());
    const Case cases[] = {
        {"gpu", "2-3"},
        {"-gpu", "0-1"},
        {"gpu,-n3", "2"},
        {"big | rank:3", "0,3"},
        {"not host:n[1-2]", "0,3"},
        {"gpu and big", ""},
        {"n1", "1"},
        {"(big|gpu) -rank:2", "0,3"},
    };
    for (const Case& c : cases) {
        const auto ranks = set.constraint_ranks(parse_constraint_query(c.query).value(), "c");
        ASSERT_TRUE(ranks) << c.query << ": " << ranks.error().str();
        EXPECT_EQ(ranks->encode(), c.json) << c.query;
    }
}

}  // namespace
}  // namespace gantry
