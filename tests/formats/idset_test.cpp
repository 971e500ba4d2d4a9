// IdSet: RFC 22 parsing and encoding, the range representation, lookups and
// set operations, stated as tables so that they hold without the vectors.
#include "formats/idset.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace gantry {
namespace {

using Range = IdSet::Range;

IdSet parsed(std::string_view text) {
    return IdSet::parse(text).value();
}

std::string plain(const IdSet& set) {
    return set.encode({.ranges = false, .brackets = false});
}
std::string bracketed(const IdSet& set) {
    return set.encode({.ranges = true, .brackets = true});
}

// The same set, held as std::set<uint32_t>, for cross-checking operations.
std::set<IdSet::Id> expanded(const IdSet& set) {
    return {set.begin(), set.end()};
}

struct Valid {
    std::string_view input;
    std::uint64_t count;
    std::string_view canonical;  // ranges, no brackets
    std::string_view plain;      // no ranges, no brackets
    std::string_view bracketed;  // ranges, brackets when more than one id
};

// RFC 22's examples and flux-core's test cases, plus gantry's decisions.
constexpr Valid kValid[] = {
    {"2", 1, "2", "2", "2"},
    {"7-9", 3, "7-9", "7,8,9", "[7-9]"},
    {"1,7-9", 4, "1,7-9", "1,7,8,9", "[1,7-9]"},
    {"1,7-9,16", 5, "1,7-9,16", "1,7,8,9,16", "[1,7-9,16]"},
    {"1,7-9,14,16", 6, "1,7-9,14,16", "1,7,8,9,14,16", "[1,7-9,14,16]"},
    {"1-3,7-9,14,16", 8, "1-3,7-9,14,16", "1,2,3,7,8,9,14,16", "[1-3,7-9,14,16]"},
    {"2,3,4,5", 4, "2-5", "2,3,4,5", "[2-5]"},
    {"", 0, "", "", ""},
    {"1048576", 1, "1048576", "1048576", "1048576"},
    {"[2]", 1, "2", "2", "2"},
    {"[7-9]", 3, "7-9", "7,8,9", "[7-9]"},
    {"[2,3,4,5]", 4, "2-5", "2,3,4,5", "[2-5]"},
    {"[0]", 1, "0", "0", "0"},
    {"[]", 0, "", "", ""},
    {"1,2", 2, "1-2", "1,2", "[1-2]"},
    {"0,5,9", 3, "0,5,9", "0,5,9", "[0,5,9]"},
    {"0-3,7", 5, "0-3,7", "0,1,2,3,7", "[0-3,7]"},
    // Empty fields are accepted and ignored.
    {"1,,2", 2, "1-2", "1,2", "[1-2]"},
    {",1", 1, "1", "1", "1"},
    {"1,", 1, "1", "1", "1"},
    {",", 0, "", "", ""},
    {",,", 0, "", "", ""},
    {"[,]", 0, "", "", ""},
    // Adjacent fields merge.
    {"1-3,4", 4, "1-4", "1,2,3,4", "[1-4]"},
    {"5-6,7-8", 4, "5-8", "5,6,7,8", "[5-8]"},
    // The largest id.
    {"2147483647", 1, "2147483647", "2147483647", "2147483647"},
    {"2147483646,2147483647", 2, "2147483646-2147483647", "2147483646,2147483647",
     "[2147483646-2147483647]"},
};

TEST(IdSetParse, ValidInputsAndEveryEncoding) {
    for (const auto& c : kValid) {
        const auto set = IdSet::parse(c.input);
        ASSERT_TRUE(set.ok()) << c.input << ": " << set.error().str();
        EXPECT_EQ(set->count(), c.count) << c.input;
        EXPECT_EQ(set->encode(), c.canonical) << c.input;
        EXPECT_EQ(set->str(), c.canonical) << c.input;
        EXPECT_EQ(plain(*set), c.plain) << c.input;
        EXPECT_EQ(bracketed(*set), c.bracketed) << c.input;
    }
}

struct Invalid {
    std::string_view input;
    std::string_view error;
};

constexpr Invalid kInvalid[] = {
    {"3,2", R"(idset: ids out of order at offset 2 in "3,2")"},
    {"2,2,2,2", R"(idset: ids out of order at offset 2 in "2,2,2,2")"},
    {"2,1,0", R"(idset: ids out of order at offset 2 in "2,1,0")"},
    {"1-3,2-5", R"(idset: ids out of order at offset 4 in "1-3,2-5")"},
    {"4.2", R"(idset: unexpected '.' at offset 1 in "4.2")"},
    {"x", R"(idset: expected an id, found 'x' at offset 0 in "x")"},
    {"1-2x", R"(idset: unexpected 'x' at offset 3 in "1-2x")"},
    {"01,2", R"(idset: id has a leading zero at offset 0 in "01,2")"},
    {"00", R"(idset: id has a leading zero at offset 0 in "00")"},
    {"3-0", R"(idset: range end is below its start at offset 1 in "3-0")"},
    {"1-1", R"(idset: range must span two or more ids at offset 1 in "1-1")"},
    {"0-0", R"(idset: range must span two or more ids at offset 1 in "0-0")"},
    {"[0", R"(idset: '[' is never closed at offset 0 in "[0")"},
    {"[", R"(idset: '[' is never closed at offset 0 in "[")"},
    {"[0-1", R"(idset: '[' is never closed at offset 0 in "[0-1")"},
    {"0]", R"(idset: ']' without '[' at offset 1 in "0]")"},
    {"]", R"(idset: ']' without '[' at offset 0 in "]")"},
    {"[[0]]", R"(idset: nested '[' at offset 1 in "[[0]]")"},
    {"[[]]", R"(idset: nested '[' at offset 1 in "[[]]")"},
    {"[[0,2]", R"(idset: nested '[' at offset 1 in "[[0,2]")"},
    {"[0,2]]", R"(idset: ']' may only close the whole idset at offset 4 in "[0,2]]")"},
    {"0,[2", R"(idset: '[' may only open the whole idset at offset 2 in "0,[2")"},
    {"0]2", R"(idset: ']' without '[' at offset 1 in "0]2")"},
    {"[1-3],[5]", R"(idset: ']' may only close the whole idset at offset 4 in "[1-3],[5]")"},
    {"0-", R"(idset: expected an id at offset 2 in "0-")"},
    {"[0-]", R"(idset: expected an id at offset 3 in "[0-]")"},
    {"-5", R"(idset: expected an id, found '-' at offset 0 in "-5")"},
    {"[-5]", R"(idset: expected an id, found '-' at offset 1 in "[-5]")"},
    {"-", R"(idset: expected an id, found '-' at offset 0 in "-")"},
    {"1--3", R"(idset: expected an id, found '-' at offset 2 in "1--3")"},
    {"1-3-5", R"(idset: unexpected '-' at offset 3 in "1-3-5")"},
    {"0-255xxx", R"(idset: unexpected 'x' at offset 5 in "0-255xxx")"},
    {" 1", R"(idset: expected an id, found a space at offset 0 in " 1")"},
    {"1 ", R"(idset: unexpected a space at offset 1 in "1 ")"},
    {"[ ]", R"(idset: expected an id, found a space at offset 1 in "[ ]")"},
    {"1\t2", R"(idset: unexpected byte "\t" at offset 1 in "1\t2")"},
    {"+1", R"(idset: expected an id, found '+' at offset 0 in "+1")"},
    {"1-+3", R"(idset: expected an id, found '+' at offset 2 in "1-+3")"},
    {"0x10", R"(idset: unexpected 'x' at offset 1 in "0x10")"},
    {"1e3", R"(idset: unexpected 'e' at offset 1 in "1e3")"},
    {"1;2", R"(idset: unexpected ';' at offset 1 in "1;2")"},
    {"1:2", R"(idset: unexpected ':' at offset 1 in "1:2")"},
    // Ids above 2^31 - 1 are rejected, never wrapped.
    {"2147483648", R"(idset: id is larger than 2147483647 at offset 0 in "2147483648")"},
    {"4294967294", R"(idset: id is larger than 2147483647 at offset 0 in "4294967294")"},
    {"4294967295", R"(idset: id is larger than 2147483647 at offset 0 in "4294967295")"},
    {"4294967296", R"(idset: id is larger than 2147483647 at offset 0 in "4294967296")"},
    {"99999999999", R"(idset: id is larger than 2147483647 at offset 0 in "99999999999")"},
    {"18446744073709551616",
     R"(idset: id is larger than 2147483647 at offset 0 in "18446744073709551616")"},
    {"1,5-99999999999999999999999",
     R"(idset: id is larger than 2147483647 at offset 4 in "1,5-99999999999999999999999")"},
};

TEST(IdSetParse, InvalidInputsNameTheProblemAndOffset) {
    for (const auto& c : kInvalid) {
        const auto set = IdSet::parse(c.input);
        ASSERT_FALSE(set.ok()) << c.input << " parsed as " << set->encode();
        EXPECT_EQ(set.error().str(), c.error) << c.input;
        EXPECT_EQ(set.error().domain(), "idset");
        EXPECT_EQ(set.error().input(), std::string(c.input));
    }
}

TEST(IdSetParse, FullRangeIsOneRange) {
    const auto set = parsed("0-2147483647");
    ASSERT_EQ(set.ranges().size(), 1u);
    EXPECT_EQ(set.ranges()[0], (Range{0, IdSet::kMaxId}));
    EXPECT_EQ(set.count(), 2147483648u);
    EXPECT_EQ(set.encode(), "0-2147483647");
    EXPECT_EQ(bracketed(set), "[0-2147483647]");
    EXPECT_EQ(set.last(), IdSet::kMaxId);
    EXPECT_EQ(set.nth(2147483647), IdSet::kMaxId);
    EXPECT_EQ(set.nth(2147483648), std::nullopt);
    EXPECT_EQ(set.index_of(IdSet::kMaxId), 2147483647u);
}

TEST(IdSetParse, AdjacentFieldsBecomeOneRange) {
    EXPECT_EQ(parsed("1,2,3,5,6").ranges().size(), 2u);
    EXPECT_EQ(parsed("0-9,10-19,20").ranges().size(), 1u);
}

TEST(IdSet, ConstructionKeepsRangesDisjointAndNonAdjacent) {
    EXPECT_EQ(IdSet({5, 1, 3, 2, 3}).encode(), "1-3,5");
    EXPECT_EQ(IdSet({}).encode(), "");
    EXPECT_EQ(IdSet::range(3, 7).encode(), "3-7");
    EXPECT_EQ(IdSet::range(7, 3).encode(), "");
    EXPECT_EQ(IdSet::range(4, 4).encode(), "4");
    // Ids above kMaxId are never members.
    EXPECT_EQ(IdSet::range(IdSet::kMaxId - 1, 4294967295u).encode(), "2147483646-2147483647");
    EXPECT_EQ(IdSet({4294967295u}).encode(), "");
}

TEST(IdSet, InsertAndEraseFollowFluxSetClearSequence) {
    IdSet set;
    set.insert(3);
    EXPECT_EQ(set.encode(), "3");
    set.erase(3);
    EXPECT_EQ(set.encode(), "");
    set.insert(3, 7);
    EXPECT_EQ(set.encode(), "3-7");
    set.erase(4, 5);
    EXPECT_EQ(set.encode(), "3,6-7");
}

TEST(IdSet, InsertMergesWithEveryTouchingRange) {
    IdSet set = parsed("1-2,5,8-9,20");
    set.insert(3, 7);
    EXPECT_EQ(set.encode(), "1-9,20");
    set.insert(0);
    EXPECT_EQ(set.encode(), "0-9,20");
    set.insert(15);
    EXPECT_EQ(set.encode(), "0-9,15,20");
    set.insert(10, 30);
    EXPECT_EQ(set.encode(), "0-30");
    set.insert(IdSet::kMaxId);
    EXPECT_EQ(set.encode(), "0-30,2147483647");
    set.insert(31, IdSet::kMaxId - 1);
    EXPECT_EQ(set.encode(), "0-2147483647");
    EXPECT_EQ(set.ranges().size(), 1u);
}

TEST(IdSet, EraseSplitsAndTrimsRanges) {
    IdSet set = parsed("0-2147483647");
    set.erase(10, 19);
    EXPECT_EQ(set.encode(), "0-9,20-2147483647");
    set.erase(IdSet::kMaxId);
    EXPECT_EQ(set.encode(), "0-9,20-2147483646");
    set.erase(0);
    EXPECT_EQ(set.encode(), "1-9,20-2147483646");
    set.erase(5, 25);
    EXPECT_EQ(set.encode(), "1-4,26-2147483646");
    set.erase(100, 50);  // reversed bounds erase nothing
    EXPECT_EQ(set.encode(), "1-4,26-2147483646");
    set.erase(0, 4294967295u);
    EXPECT_TRUE(set.empty());
}

TEST(IdSet, LookupsOnAnEmptySet) {
    const IdSet set;
    EXPECT_TRUE(set.empty());
    EXPECT_EQ(set.count(), 0u);
    EXPECT_EQ(set.first(), std::nullopt);
    EXPECT_EQ(set.last(), std::nullopt);
    EXPECT_EQ(set.next(0), std::nullopt);
    EXPECT_EQ(set.nth(0), std::nullopt);
    EXPECT_EQ(set.index_of(0), std::nullopt);
    EXPECT_FALSE(set.contains(0));
    EXPECT_TRUE(set.contains(IdSet{}));
    EXPECT_EQ(set.begin(), set.end());
}

TEST(IdSet, Lookups) {
    const IdSet set = parsed("1-3,7,10-12");
    EXPECT_EQ(set.first(), 1u);
    EXPECT_EQ(set.last(), 12u);

    const std::vector<std::pair<IdSet::Id, std::optional<IdSet::Id>>> nexts = {
        {0, 1},
        {1, 2},
        {3, 7},
        {6, 7},
        {7, 10},
        {11, 12},
        {12, std::nullopt},
        {4294967295u, std::nullopt}};
    for (const auto& [after, expected] : nexts)
        EXPECT_EQ(set.next(after), expected) << after;

    const std::vector<IdSet::Id> members = {1, 2, 3, 7, 10, 11, 12};
    for (std::uint64_t i = 0; i < members.size(); ++i) {
        EXPECT_EQ(set.nth(i), members[i]) << i;
        EXPECT_EQ(set.index_of(members[i]), i) << members[i];
        EXPECT_TRUE(set.contains(members[i])) << members[i];
    }
    EXPECT_EQ(set.nth(7), std::nullopt);
    for (const IdSet::Id absent : {0u, 4u, 6u, 8u, 9u, 13u, 4294967295u}) {
        EXPECT_FALSE(set.contains(absent)) << absent;
        EXPECT_EQ(set.index_of(absent), std::nullopt) << absent;
    }
    EXPECT_EQ(std::vector<IdSet::Id>(set.begin(), set.end()), members);
}

TEST(IdSet, NextAtTheLargestId) {
    const IdSet set = parsed("5,2147483647");
    EXPECT_EQ(set.next(5), IdSet::kMaxId);
    EXPECT_EQ(set.next(IdSet::kMaxId), std::nullopt);
}

TEST(IdSet, SubsetAndIntersects) {
    const IdSet set = parsed("1-10,20-30");
    EXPECT_TRUE(set.contains(parsed("")));
    EXPECT_TRUE(set.contains(parsed("1-10")));
    EXPECT_TRUE(set.contains(parsed("2,5-9,20,25-30")));
    EXPECT_FALSE(set.contains(parsed("10-11")));
    EXPECT_FALSE(set.contains(parsed("0")));
    EXPECT_FALSE(set.contains(parsed("31")));
    EXPECT_FALSE(set.contains(parsed("5-25")));
    EXPECT_TRUE(set.intersects(parsed("10-11")));
    EXPECT_TRUE(set.intersects(parsed("0,30")));
    EXPECT_FALSE(set.intersects(parsed("11-19,31-40")));
    EXPECT_FALSE(set.intersects(parsed("")));
    EXPECT_FALSE(IdSet{}.intersects(set));
}

struct BinaryOp {
    std::string_view a;
    std::string_view b;
    std::string_view result;
};

// flux-core's idset.c and t0021-idset.py cases, then gantry's own.
constexpr BinaryOp kUnion[] = {
    {"[0]", "", "0"},
    {"[0]", "[0]", "0"},
    {"[0]", "[1]", "0-1"},
    {"0-10", "5-15", "0-15"},
    {"0-1", "3-4", "0-1,3-4"},
    {"0-9", "10-11", "0-11"},
    {"0-11", "20,21", "0-11,20-21"},
    {"0-11,20-21", "", "0-11,20-21"},
    {"", "", ""},
    {"1,5,9", "2-4,6-8", "1-9"},
    {"0-2147483646", "2147483647", "0-2147483647"},
    {"3,7", "0-100", "0-100"},
    {"0-3,10-13", "5-8", "0-3,5-8,10-13"},
};

constexpr BinaryOp kDifference[] = {
    {"[0]", "", "0"},
    {"[0]", "[0]", ""},
    {"[0-1]", "[0]", "1"},
    {"0,1", "1", "0"},
    {"0,1", "2", "0-1"},
    {"0-10", "0-3", "4-10"},
    {"0-10", "0-10", ""},
    {"0-1", "0-10", ""},
    {"0-1024", "500-600", "0-499,601-1024"},
    {"0-11,20-21", "11-20", "0-10,21"},
    {"0-10,21", "0-10", "21"},
    {"21", "21", ""},
    {"", "1-5", ""},
    {"0-20,30-40", "5,7-9,15-32,39", "0-4,6,10-14,33-38,40"},
    {"0-2147483647", "1-2147483646", "0,2147483647"},
};

constexpr BinaryOp kIntersection[] = {
    {"[0-1]", "[2-3]", ""},
    {"[0-1]", "[1-2]", "1"},
    {"[0-1]", "[0-1]", "0-1"},
    {"0-10", "0-5", "0-5"},
    {"0-1", "3-4", ""},
    {"0-1024", "500-600", "500-600"},
    {"", "1-3", ""},
    {"0-20,30-40", "5,7-9,15-32,39", "5,7-9,15-20,30-32,39"},
    {"0-2147483647", "7,2147483647", "7,2147483647"},
};

TEST(IdSetOps, Union) {
    for (const auto& c : kUnion) {
        EXPECT_EQ((parsed(c.a) | parsed(c.b)).encode(), c.result) << c.a << " | " << c.b;
        EXPECT_EQ((parsed(c.b) | parsed(c.a)).encode(), c.result) << c.b << " | " << c.a;
    }
}

TEST(IdSetOps, FromRangesInAnyOrder) {
    using R = IdSet::Range;
    EXPECT_EQ(IdSet::from_ranges({R{7, 9}, R{0, 2}, R{3, 3}, R{8, 12}, R{20, 20}}).encode(),
              "0-3,7-12,20");
    EXPECT_EQ(IdSet::from_ranges({}).encode(), "");
    EXPECT_EQ(IdSet::from_ranges({R{5, 4}}).encode(), "");  // reversed: empty, as range()
    EXPECT_EQ(IdSet::from_ranges({R{IdSet::kMaxId, 4294967295u}}).encode(), "2147483647");
    EXPECT_EQ(IdSet::from_ranges({R{4, 4}, R{2, 2}}).count(), 2u);
}

TEST(IdSetOps, UnionWithFewRangesInPlace) {
    IdSet set = IdSet::range(0, 9);
    set |= IdSet{10};
    set |= IdSet{20, 30};
    set |= IdSet{5, 15, 25};
    EXPECT_EQ(set.encode(), "0-10,15,20,25,30");
    EXPECT_EQ(set.count(), 15u);
    EXPECT_EQ(set.nth(14), 30u);
}

TEST(IdSetOps, Difference) {
    for (const auto& c : kDifference)
        EXPECT_EQ((parsed(c.a) - parsed(c.b)).encode(), c.result) << c.a << " - " << c.b;
}

TEST(IdSetOps, Intersection) {
    for (const auto& c : kIntersection) {
        EXPECT_EQ((parsed(c.a) & parsed(c.b)).encode(), c.result) << c.a << " & " << c.b;
        EXPECT_EQ((parsed(c.b) & parsed(c.a)).encode(), c.result) << c.b << " & " << c.a;
    }
}

TEST(IdSetOps, ChainsFromFluxPythonTests) {
    EXPECT_EQ((parsed("0-10") & parsed("0-5") & parsed("0-3")).encode(), "0-3");
    EXPECT_EQ((parsed("0-10") | parsed("5-15") | parsed("0-3")).encode(), "0-15");
    EXPECT_EQ((parsed("0-10") - parsed("5-7") - parsed("1-3")).encode(), "0,4,8-10");
}

TEST(IdSetOps, OperationsNeverExpandTheFullRange) {
    const IdSet all = parsed("0-2147483647");
    const IdSet odd_bits = parsed("1,3,1000000-2000000,2147483647");
    EXPECT_EQ((all - odd_bits).encode(), "0,2,4-999999,2000001-2147483646");
    EXPECT_EQ((all & odd_bits), odd_bits);
    EXPECT_EQ((all | odd_bits), all);
    EXPECT_EQ(((all - odd_bits) | odd_bits), all);
}

TEST(IdSet, ValueSemantics) {
    const IdSet a = parsed("1-3");
    IdSet b = a;
    b.insert(4);
    EXPECT_EQ(a.encode(), "1-3");
    EXPECT_EQ(b.encode(), "1-4");
    EXPECT_NE(a, b);
    EXPECT_EQ(parsed("1,2,3"), parsed("[1-3]"));
}

// Random sets over a small universe, checked against std::set (fixed seed).
IdSet random_set(std::mt19937& rng, IdSet::Id universe) {
    IdSet set;
    std::uniform_int_distribution<IdSet::Id> id(0, universe);
    std::uniform_int_distribution<int> how(0, 3);
    const int steps = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int i = 0; i < steps; ++i) {
        const IdSet::Id a = id(rng);
        const IdSet::Id b = std::min<IdSet::Id>(a + id(rng) / 8, universe);
        if (how(rng) == 0)
            set.erase(a, b);
        else
            set.insert(a, b);
    }
    return set;
}

void expect_well_formed(const IdSet& set) {
    const auto ranges = set.ranges();
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        ASSERT_LE(ranges[i].lo, ranges[i].hi);
        if (i > 0) {
            ASSERT_GT(ranges[i].lo, std::uint64_t{ranges[i - 1].hi} + 1) << set.encode();
        }
    }
}

TEST(IdSetProperty, RoundTripAndOperationsMatchAnExpandedModel) {
    std::mt19937 rng(22);
    for (int trial = 0; trial < 2000; ++trial) {
        const IdSet a = random_set(rng, 200);
        const IdSet b = random_set(rng, 200);
        expect_well_formed(a);
        const auto ea = expanded(a);
        const auto eb = expanded(b);

        for (const IdSet::EncodeOptions options :
             {IdSet::EncodeOptions{true, false}, IdSet::EncodeOptions{true, true},
              IdSet::EncodeOptions{false, false}, IdSet::EncodeOptions{false, true}}) {
            ASSERT_EQ(parsed(a.encode(options)), a) << a.encode(options);
        }

        std::set<IdSet::Id> u, d, i;
        std::set_union(ea.begin(), ea.end(), eb.begin(), eb.end(), std::inserter(u, u.end()));
        std::set_difference(ea.begin(), ea.end(), eb.begin(), eb.end(), std::inserter(d, d.end()));
        std::set_intersection(ea.begin(), ea.end(), eb.begin(), eb.end(),
                              std::inserter(i, i.end()));
        const IdSet su = a | b, sd = a - b, si = a & b;
        expect_well_formed(su);
        expect_well_formed(sd);
        expect_well_formed(si);
        ASSERT_EQ(expanded(su), u) << a.encode() << " | " << b.encode();
        ASSERT_EQ(expanded(sd), d) << a.encode() << " - " << b.encode();
        ASSERT_EQ(expanded(si), i) << a.encode() << " & " << b.encode();
        ASSERT_EQ(a.intersects(b), !i.empty()) << a.encode() << " ? " << b.encode();
        ASSERT_EQ(a.contains(b), i.size() == eb.size()) << a.encode() << " >= " << b.encode();
        ASSERT_EQ(a.count(), ea.size());

        std::uint64_t index = 0;
        for (const IdSet::Id id : ea) {
            ASSERT_EQ(a.nth(index), id);
            ASSERT_EQ(a.index_of(id), index);
            ++index;
        }
        for (IdSet::Id id = 0; id <= 201; ++id) {
            ASSERT_EQ(a.contains(id), ea.count(id) == 1) << a.encode() << " has " << id;
            const auto it = ea.upper_bound(id);
            ASSERT_EQ(a.next(id), it == ea.end() ? std::nullopt : std::optional(*it));
        }
    }
}

}  // namespace
}  // namespace gantry
