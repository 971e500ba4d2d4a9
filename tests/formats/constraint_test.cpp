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

// Ranks 0-3 on hosts n[0-3], gpu on 2-3, big on 0.
constexpr std::string_view kR =
    R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-1"}}],
        "nodelist":["n[0-3]"],"properties":{"gpu":"2-3","big":"0"},
        "starttime":0,"expiration":0}})";

const Case kCompiled[] = {
    // One of each shape.
    {"a", R"({"properties":["a"]})"},
    {"a,-b", R"({"properties":["a","^b"]})"},
    {"host:n[1-2]", R"({"hostlist":["n[1-2]"]})"},
    {"rank:0-3", R"({"ranks":["0-3"]})"},
    {"a b", R"({"and":[{"properties":["a"]},{"properties":["b"]}]})"},
    {"a&b", R"({"and":[{"properties":["a"]},{"properties":["b"]}]})"},
    {"a and b", R"({"and":[{"properties":["a"]},{"properties":["b"]}]})"},
    {"-a", R"({"not":[{"properties":["a"]}]})"},
    {"not a", R"({"not":[{"properties":["a"]}]})"},
    // RFC 35's examples, the default operator being properties.
    {"foo", R"({"properties":["foo"]})"},
    {"foo bar", R"({"and":[{"properties":["foo"]},{"properties":["bar"]}]})"},
    {"foo bar host:x",
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
    {"a||b", R"({"or":[{"properties":["a"]},{"properties":["b"]}]})"},
    {"not (a|b)", R"({"not":[{"or":[{"properties":["a"]},{"properties":["b"]}]}]})"},
    {"not not a", R"({"not":[{"not":[{"properties":["a"]}]}]})"},
    {"a -b", R"({"and":[{"properties":["a"]},{"not":[{"properties":["b"]}]}]})"},
    {"a not b", R"({"and":[{"properties":["a"]},{"not":[{"properties":["b"]}]}]})"},
    {"a-b", R"({"properties":["a-b"]})"},
    // Parentheses add no level; blanks anywhere between tokens.
    {"((a))", R"({"properties":["a"]})"},
    {"(a|b)", R"({"or":[{"properties":["a"]},{"properties":["b"]}]})"},
    {" \ta\n", R"({"properties":["a"]})"},
    {"(a)(b)", R"({"and":[{"properties":["a"]},{"properties":["b"]}]})"},
    {"( a | b ) c", R"({"and":[{"or":[{"properties":["a"]},{"properties":["b"]}]},)"
                    R"({"properties":["c"]}]})"},
    // Quotes keep what they hold and are removed; the words and, or, not
    // quoted are names; commas still separate property names.
    {"host:'n1'", R"({"hostlist":["n1"]})"},
    {R"(host:"n[1-2]")", R"({"hostlist":["n[1-2]"]})"},
    {R"("and")", R"({"properties":["and"]})"},
    {"'not' 'or'", R"({"and":[{"properties":["not"]},{"properties":["or"]}]})"},
    {"'a:b'", R"({"properties":["a:b"]})"},
    {"'a b'", R"({"properties":["a b"]})"},
    {R"(a'b c'"d")", R"({"properties":["ab cd"]})"},
    {"'a,-b'", R"({"properties":["a","^b"]})"},
    {"rank:'0-1'", R"({"ranks":["0-1"]})"},
};

TEST(ConstraintQuery, CompilesToRfc31) {
    const ResourceSet set = ResourceSet::parse(kR).value();
    for (const Case& c : kCompiled) {
        const auto compiled = parse_constraint_query(c.query);
        ASSERT_TRUE(compiled) << c.query << ": " << compiled.error().str();
        EXPECT_EQ(*compiled, Json::parse(c.json)) << c.query << " gave " << compiled->dump();
        // What it compiles to, ResourceSet evaluates.
        const auto ranks = set.constraint_ranks(*compiled, "constraint");
        EXPECT_TRUE(ranks.ok()) << c.query << ": " << ranks.error().str();
    }
}

const Case kErrors[] = {
    // Nothing to compile.
    {"", R"x(constraint: the query is empty at offset 0 in "")x"},
    {"  ", R"x(constraint: the query is empty at offset 0 in "  ")x"},
    // An operator with nothing after it, or two in a row.
    {"a |",
     R"x(constraint: expected a term after 'or', found the end of the query at offset 3 in "a |")x"},
    {"gpu |",
     R"x(constraint: expected a term after 'or', found the end of the query at offset 5 in "gpu |")x"},
    {"a and",
     R"x(constraint: expected a term after 'and', found the end of the query at offset 5 in "a and")x"},
    {"not",
     R"x(constraint: expected a term after 'not', found the end of the query at offset 3 in "not")x"},
    {"a | & b",
     R"x(constraint: expected a term after 'or', found an 'and' at offset 4 in "a | & b")x"},
    {"a and or b",
     R"x(constraint: expected a term after 'and', found an 'or' at offset 6 in "a and or b")x"},
    {"a|||b", R"x(constraint: expected a term after 'or', found an 'or' at offset 3 in "a|||b")x"},
    {"&a", R"x(constraint: expected a term, found an 'and' at offset 0 in "&a")x"},
    {"not )", R"x(constraint: expected a term after 'not', found ')' at offset 4 in "not )")x"},
    // Parentheses.
    {"(a", R"x(constraint: '(' without ')' at offset 0 in "(a")x"},
    {"((a)", R"x(constraint: '(' without ')' at offset 0 in "((a)")x"},
    {"a)", R"x(constraint: ')' without '(' at offset 1 in "a)")x"},
    {"(a))", R"x(constraint: ')' without '(' at offset 3 in "(a))")x"},
    {")", R"x(constraint: expected a term, found ')' at offset 0 in ")")x"},
    {"()", R"x(constraint: expected a term after '(', found ')' at offset 1 in "()")x"},
    // '-' negates a term only (RFC 35).
    {"-(a|b)", R"x(constraint: '-' negates a term, not '(' at offset 0 in "-(a|b)")x"},
    {"a -", R"x(constraint: '-' negates a term, not the end of the query at offset 2 in "a -")x"},
    {"--a", R"x(constraint: '-' negates a term, not '-' at offset 0 in "--a")x"},
    // Terms.
    {":a", R"x(constraint: expected an operator before ':' at offset 0 in ":a")x"},
    {"host:", R"x(constraint: "host:" needs an operand at offset 0 in "host:")x"},
    {"a rank:", R"x(constraint: "rank:" needs an operand at offset 2 in "a rank:")x"},
    {"a colour:red",
     R"x(constraint: unknown operator "colour" (properties, hostlist, ranks) at offset 2 in "a colour:red")x"},
    {"colour:",
     R"x(constraint: unknown operator "colour" (properties, hostlist, ranks) at offset 0 in "colour:")x"},
    {"a^b",
     R"x(constraint: properties: invalid character '^' in property name "a^b" at offset 0 in "a^b")x"},
    {"x property:a,b!",
     R"x(constraint: property: invalid character '!' in property name "b!" at offset 13 in "x property:a,b!")x"},
    {"a,,b", R"x(constraint: properties: empty property name at offset 2 in "a,,b")x"},
    {"gpu,", R"x(constraint: properties: empty property name at offset 4 in "gpu,")x"},
    {"a,-", R"x(constraint: properties: empty property name at offset 2 in "a,-")x"},
    {"''", R"x(constraint: properties: empty property name at offset 0 in "''")x"},
    {"host:n[1-", R"x(constraint: host: '[' without ']' at offset 6 in "host:n[1-")x"},
    {"hosts:n[3-1]", R"x(constraint: hosts: range goes down at offset 8 in "hosts:n[3-1]")x"},
    {"rank:x", R"x(constraint: rank: expected an id, found 'x' at offset 5 in "rank:x")x"},
    {"ranks:0-1,x",
     R"x(constraint: ranks: expected an id, found 'x' at offset 10 in "ranks:0-1,x")x"},
    // Quotes: unterminated; an operand's error at its place in the input.
    {"'abc", R"x(constraint: unterminated ' at offset 0 in "'abc")x"},
    {"a \"b", R"x(constraint: unterminated " at offset 2 in "a \"b")x"},
    {"host:'a b'", R"x(constraint: host: whitespace in a hostlist at offset 7 in "host:'a b'")x"},
    {R"(rank:"1"x)", R"x(constraint: rank: unexpected 'x' at offset 8 in "rank:\"1\"x")x"},
    {"'a|b'",
     R"x(constraint: properties: invalid character '|' in property name "a|b" at offset 1 in "'a|b'")x"},
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

// What the compiled constraints select in kR; a host name counts as a
// property of its rank.
TEST(ConstraintQuery, SelectsTheRanksOfR) {
    const ResourceSet set = ResourceSet::parse(kR).value();
    const Case cases[] = {
        {"gpu", "2-3"},
        {"-gpu", "0-1"},
        {"gpu,-n3", "2"},
        {"big | rank:3", "0,3"},
        {"not host:n[1-2]", "0,3"},
        {"host:n[0-1] || rank:3", "0-1,3"},
        {"gpu and big", ""},
        {"n1", "1"},
        {"(big|gpu) -rank:2", "0,3"},
        {"not (big|gpu)", "1"},
        {"gpu|big&rank:1", "2-3"},
        {"(gpu|big)&rank:0-2", "0,2"},
        {"nosuch", ""},
        {"-nosuch", "0-3"},
    };
    for (const Case& c : cases) {
        const auto ranks = set.constraint_ranks(parse_constraint_query(c.query).value(), "c");
        ASSERT_TRUE(ranks) << c.query << ": " << ranks.error().str();
        EXPECT_EQ(ranks->encode(), c.json) << c.query;
    }
}

}  // namespace
}  // namespace gantry
