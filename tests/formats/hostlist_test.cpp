#include "formats/hostlist.h"

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace gantry {
namespace {

std::string join(const std::vector<std::string>& hosts) {
    std::string out;
    for (const auto& host : hosts)
        out += (out.empty() ? "" : ",") + host;
    return out;
}

Hostlist parsed(std::string_view text) {
    auto list = Hostlist::parse(text);
    EXPECT_TRUE(list.ok()) << text << ": " << (list.ok() ? "" : list.error().str());
    return list.ok() ? *list : Hostlist{};
}

struct Case {
    std::string_view text;
    std::string_view hosts;   // expanded, comma separated
    std::string_view encode;  // canonical encoding
};

// RFC 29's own test vectors.
constexpr Case kRfc29[] = {
    {"", "", ""},
    {"foox,fooy,fooz", "foox,fooy,fooz", "foox,fooy,fooz"},
    {"[1-3,5-6]", "1,2,3,5,6", "[1-3,5-6]"},
    {"foo[1-5]", "foo1,foo2,foo3,foo4,foo5", "foo[1-5]"},
    // Suffixes are compressed too (flux-core writes each host out).
    {"foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2", "foo[0-4]-eth2"},
    {"foo1,foo1,foo1", "foo1,foo1,foo1", "foo[1,1,1]"},
    {"[00-02]", "00,01,02", "[00-02]"},
    {"[00-2]", "00,01,02", "[00-02]"},
    {"foo[1,1,2,1]", "foo1,foo1,foo2,foo1", "foo[1,1-2,1]"},
};

// The decisions of the spec page and flux-core's library behaviour that we share.
constexpr Case kDecisions[] = {
    // The first id's width applies to the whole idlist (RFC 29; flux-core pads per id).
    {"foo[005,4,11-13]", "foo005,foo004,foo011,foo012,foo013", "foo[005,004,011-013]"},
    {"foo[8-011]", "foo8,foo9,foo10,foo11", "foo[8-11]"},
    {"foo[1,01]", "foo1,foo1", "foo[1,1]"},
    {"foo[1-1]", "foo1", "foo1"},
    {"foo[0-0]", "foo0", "foo0"},
    {"foo[1]", "foo1", "foo1"},
    {"foo[01]", "foo01", "foo01"},
    {"foo9,foo10", "foo9,foo10", "foo[9-10]"},
    {"foo09,foo10", "foo09,foo10", "foo[09-10]"},
    // Different padding never shares a bracket group: `foo[01,1]` would read foo01,foo01.
    {"foo01,foo1", "foo01,foo1", "foo01,foo1"},
    {"foo1,foo01", "foo1,foo01", "foo1,foo01"},
    {"foo[099-101]", "foo099,foo100,foo101", "foo[099-101]"},
    {"foo[001-003],foo004", "foo001,foo002,foo003,foo004", "foo[001-004]"},
    {"foo[1-3],foo[4-6]", "foo1,foo2,foo3,foo4,foo5,foo6", "foo[1-6]"},
    {"foo[4-6],foo[1-3]", "foo4,foo5,foo6,foo1,foo2,foo3", "foo[4-6,1-3]"},
    {"foo[1-3,3-5]", "foo1,foo2,foo3,foo3,foo4,foo5", "foo[1-3,3-5]"},
    {"foo1,fooi,foo2,foo3", "foo1,fooi,foo2,foo3", "foo1,fooi,foo[2-3]"},
    {",1,2,3,4,5,9,", "1,2,3,4,5,9", "[1-5,9]"},
    {"foo1,,foo2", "foo1,foo2", "foo[1-2]"},
    {"host,host", "host,host", "host,host"},
    {"a1,a2,b1,b2", "a1,a2,b1,b2", "a[1-2],b[1-2]"},
    {"rack1-node[1-2]", "rack1-node1,rack1-node2", "rack1-node[1-2]"},
    {"f00[7-8,10]", "f007,f008,f0010", "f00[7-8,10]"},
    {"foo-1a-2,foo-1a-3", "foo-1a-2,foo-1a-3", "foo-1a-[2-3]"},
    // Suffix compression, in both directions of reading a name.
    {"foo0-eth2,foo1-eth2", "foo0-eth2,foo1-eth2", "foo[0-1]-eth2"},
    {"foo[1,3]-bar", "foo1-bar,foo3-bar", "foo[1,3]-bar"},
    {"[00-03]p", "00p,01p,02p,03p", "[00-03]p"},
    {"host[1-3]a,host[1-3]b", "host1a,host2a,host3a,host1b,host2b,host3b", "host[1-3]a,host[1-3]b"},
    {"foo.bar[1-2].com,foo.bar3.com", "foo.bar1.com,foo.bar2.com,foo.bar3.com", "foo.bar[1-3].com"},
};

TEST(Hostlist, Rfc29Vectors) {
    for (const auto& c : kRfc29) {
        const Hostlist list = parsed(c.text);
        EXPECT_EQ(join(list.expand()), c.hosts) << c.text;
        EXPECT_EQ(list.encode(), c.encode) << c.text;
    }
}

TEST(Hostlist, Decisions) {
    for (const auto& c : kDecisions) {
        const Hostlist list = parsed(c.text);
        EXPECT_EQ(join(list.expand()), c.hosts) << c.text;
        EXPECT_EQ(list.encode(), c.encode) << c.text;
        EXPECT_EQ(parsed(list.encode()), list) << c.text;
    }
}

struct BadCase {
    std::string_view text;
    std::string_view error;
};

constexpr BadCase kBad[] = {
    {"[]", "hostlist: empty id in brackets at offset 1 in \"[]\""},
    {"foo[]", "hostlist: empty id in brackets at offset 4 in \"foo[]\""},
    {"foo[", "hostlist: '[' without ']' at offset 3 in \"foo[\""},
    {"foo[1,3", "hostlist: '[' without ']' at offset 3 in \"foo[1,3\""},
    {"foo[1-3", "hostlist: '[' without ']' at offset 3 in \"foo[1-3\""},
    {"foo[[1,3]", "hostlist: expected an id, found \"[\" at offset 4 in \"foo[[1,3]\""},
    {"foo]", "hostlist: unexpected ']' at offset 3 in \"foo]\""},
    {"foo[x-y]", "hostlist: expected an id, found \"x\" at offset 4 in \"foo[x-y]\""},
    {"foo[0-1,2--5]", "hostlist: expected an id, found \"-\" at offset 10 in \"foo[0-1,2--5]\""},
    {"foo[0-1048576]",
     "hostlist: range of 1048577 hosts is larger than 1048576 at offset 4 in \"foo[0-1048576]\""},
    {"foo[3-1]", "hostlist: range goes down at offset 4 in \"foo[3-1]\""},
    {"foo[-1]", "hostlist: expected an id, found \"-\" at offset 4 in \"foo[-1]\""},
    {"foo[1-]", "hostlist: empty id in brackets at offset 6 in \"foo[1-]\""},
    {"foo[1,,2]", "hostlist: empty id in brackets at offset 6 in \"foo[1,,2]\""},
    {"foo[,1]", "hostlist: empty id in brackets at offset 4 in \"foo[,1]\""},
    {"foo[+1]", "hostlist: expected an id, found \"+\" at offset 4 in \"foo[+1]\""},
    {"foo[1 ]", "hostlist: unexpected \" \" in brackets at offset 5 in \"foo[1 ]\""},
    {"foo[0x1]", "hostlist: unexpected \"x\" in brackets at offset 5 in \"foo[0x1]\""},
    {"foo 1", "hostlist: whitespace in a hostlist at offset 3 in \"foo 1\""},
    {"foo1\tfoo2", "hostlist: whitespace in a hostlist at offset 4 in \"foo1\\tfoo2\""},
    {"foo[1-3]bar[4-5]",
     "hostlist: a second bracket group is not allowed at offset 11 in \"foo[1-3]bar[4-5]\""},
    {"foo[1-2]]", "hostlist: unexpected ']' at offset 8 in \"foo[1-2]]\""},
    {"foo]bar[", "hostlist: unexpected ']' at offset 3 in \"foo]bar[\""},
    {"foo[1234567890123456789]",
     "hostlist: id has more than 18 digits at offset 4 in \"foo[1234567890123456789]\""},
    {"f\x01o", "hostlist: invalid character in a host name at offset 1 in \"f\\x01o\""},
};

TEST(Hostlist, RejectsBadInput) {
    for (const auto& c : kBad) {
        const auto list = Hostlist::parse(c.text);
        ASSERT_FALSE(list.ok()) << c.text;
        EXPECT_EQ(list.error().str(), c.error) << c.text;
    }
}

TEST(Hostlist, LargestRange) {
    const Hostlist list = parsed("foo[0-1048575]");
    EXPECT_EQ(list.count(), 1048576u);
    EXPECT_EQ(list.nth(1048575), "foo1048575");
    EXPECT_EQ(list.find("foo524288"), 524288u);
    EXPECT_EQ(list.encode(), "foo[0-1048575]");
}

TEST(Hostlist, EncodingSplitsRangesLargerThanOneElement) {
    Hostlist list = parsed("foo[0-1048575]");
    list.append("foo1048576");
    EXPECT_EQ(list.count(), 1048577u);
    EXPECT_EQ(list.encode(), "foo[0-1048575,1048576]");
    EXPECT_EQ(parsed(list.encode()), list);
}

struct IndexCase {
    std::string_view list;
    std::string_view host;
    std::optional<std::size_t> index;
};

constexpr IndexCase kFind[] = {
    {"tst0", "tst", std::nullopt},
    {"tst0,tst", "tst", 1},
    {"tst,tst0", "tst", 0},
    {"foo[1-5]-eth0", "foo3-eth0", 2},
    {"foo[1-5]", "foo3-eth0", std::nullopt},
    {"[0-5]", "3", 3},
    {"[0-5]i", "0", std::nullopt},
    {"i[0-5]", "i00", std::nullopt},
    {"i[00-05]", "i04", 4},
    {"f00[7-8,10]", "f0010", 2},
    {"f0010001[07-08]", "f001000108", 1},
    {"corn1-p2", "corn2", std::nullopt},
    {"foo[0-3]", "foo4", std::nullopt},
    {"foo[09-10]", "foo10", 1},
    {"foo[09-10]", "foo010", std::nullopt},
};

TEST(Hostlist, Find) {
    for (const auto& c : kFind)
        EXPECT_EQ(parsed(c.list).find(c.host), c.index) << c.list << " " << c.host;
}

TEST(Hostlist, Nth) {
    const Hostlist list = parsed("foo[1-2,4,5],bar");
    EXPECT_EQ(list.nth(0), "foo1");
    EXPECT_EQ(list.nth(2), "foo4");
    EXPECT_EQ(list.nth(4), "bar");
    EXPECT_EQ(list.nth(5), std::nullopt);
    EXPECT_EQ(list.count(), 5u);
}

TEST(Hostlist, Append) {
    Hostlist list;
    list.append(parsed(""));
    list.append("foo12");
    list.append(parsed("foo[4,1-2]"));
    EXPECT_EQ(list.encode(), "foo[12,4,1-2]");
    list.append(parsed("bar[26-30]"));
    EXPECT_EQ(list.encode(), "foo[12,4,1-2],bar[26-30]");
    list.append("bar31");
    list.append("bar");
    EXPECT_EQ(list.encode(), "foo[12,4,1-2],bar[26-31],bar");
    EXPECT_EQ(list.count(), 11u);
}

TEST(Hostlist, Slice) {
    const Hostlist list = parsed("foo[1-10],bar");
    EXPECT_EQ(list.slice(1, 3).encode(), "foo[2-3]");
    EXPECT_EQ(list.slice(8, 20).encode(), "foo[9-10],bar");
    EXPECT_EQ(list.slice(5, 5).encode(), "");
}

struct RemoveCase {
    std::string_view list;
    std::string_view hosts;
    std::size_t removed;
    std::string_view result;
};

// flux's hostlist_delete: the first occurrence of each host given.
constexpr RemoveCase kRemoveEach[] = {
    {"foo[2-5]", "foo6", 0, "foo[2-5]"},
    {"foo[2-5]", "foo3", 1, "foo[2,4-5]"},
    {"foo[2-5],fooi", "fooi", 1, "foo[2-5]"},
    {"foo[2-5],fooi", "foo[1-2]", 1, "foo[3-5],fooi"},
    {"foo[0-7]", "foo[1,0,2-7]", 8, ""},
    // Hosts with a suffix stay compressed (flux-core: foo2-eth2,foo4-eth2).
    {"foo[2-4]-eth2", "foo3-eth2", 1, "foo[2,4]-eth2"},
    {"foo[0,2,4,6-10]", "foo[6-7]", 2, "foo[0,2,4,8-10]"},
    {"host[1,1,1]", "host1", 1, "host[1,1]"},
    {"host[1-10]", "host[2-3],host[5-10]", 8, "host[1,4]"},
    {"f00[1-9]", "f[003-005]", 3, "f00[1-2,6-9]"},
};

TEST(Hostlist, RemoveEach) {
    for (const auto& c : kRemoveEach) {
        Hostlist list = parsed(c.list);
        EXPECT_EQ(list.remove_each(parsed(c.hosts)), c.removed) << c.list << " - " << c.hosts;
        EXPECT_EQ(list.encode(), c.result) << c.list << " - " << c.hosts;
    }
}

TEST(Hostlist, RemoveEveryOccurrence) {
    Hostlist list = parsed("foo[1-3],foo2,bar,foo2");
    EXPECT_EQ(list.remove("foo2"), 3u);
    EXPECT_EQ(list.encode(), "foo[1,3],bar");
    EXPECT_EQ(list.remove("nothere"), 0u);
}

struct SortCase {
    std::string_view list;
    std::string_view sorted;
    std::string_view uniq;
};

constexpr SortCase kSort[] = {
    {"foo,f,bar,baz", "bar,baz,f,foo", "bar,baz,f,foo"},
    {"[5-6],[3-4],[1-2,0]", "[0-6]", "[0-6]"},
    {"[0-20],12,15", "[0-12,12-15,15-20]", "[0-20]"},
    {"0,1,2,3,4,5,1,5", "[0-1,1-5,5]", "[0-5]"},
    // 015 has three digits: after every two-digit number (flux-core agrees);
    // it cannot share the group that `0` opens, whose width is 1.
    {"[0-20],45,12,015", "[0-12,12-20,45],015", "[0-20,45],015"},
    {"bar1,bar2,foo1,foo,foo", "bar[1-2],foo,foo,foo1", "bar[1-2],foo,foo1"},
    {"foo[5-6],foo[4-7]", "foo[4-5,5-6,6-7]", "foo[4-7]"},
    {"foo[0-2],foo[0-2],foo[0-2]", "foo[0,0,0-1,1,1-2,2,2]", "foo[0-2]"},
    {"foo10,foo9,foo010", "foo[9-10],foo010", "foo[9-10],foo010"},
    {"b1,a1,a", "a,a1,b1", "a,a1,b1"},
    {"foo[1-3]-eth0,foo0", "foo0,foo[1-3]-eth0", "foo0,foo[1-3]-eth0"},
    {"foo01,foo1,foo001", "foo1,foo01,foo001", "foo1,foo01,foo001"},
    // Runs that interleave in the natural order are split where they cross.
    {"a[1-3]b,a2", "a1b,a2,a[2-3]b", "a1b,a2,a[2-3]b"},
    {"rack[1-3]-node5,rack1-node[1-9]", "rack1-node[1-5,5-9],rack[2-3]-node5",
     "rack1-node[1-9],rack[2-3]-node5"},
    {"f00[7-8],f007", "f00[7,7-8]", "f00[7-8]"},
};

TEST(Hostlist, SortAndUniq) {
    for (const auto& c : kSort) {
        Hostlist sorted = parsed(c.list);
        sorted.sort();
        EXPECT_EQ(sorted.encode(), c.sorted) << c.list;
        Hostlist unique = parsed(c.list);
        unique.uniq();
        EXPECT_EQ(unique.encode(), c.uniq) << c.list;
    }
}

TEST(Hostlist, NaturalOrder) {
    constexpr std::string_view kAscending[] = {
        "", "1", "9", "01", "10", "010", "a", "a1", "a1b", "a2", "a10", "a-1", "ab", "b",
    };
    for (std::size_t i = 0; i + 1 < std::size(kAscending); ++i) {
        EXPECT_TRUE(Hostlist::compare(kAscending[i], kAscending[i + 1]) < 0) << kAscending[i];
        EXPECT_TRUE(Hostlist::compare(kAscending[i + 1], kAscending[i]) > 0) << kAscending[i];
        EXPECT_TRUE(Hostlist::compare(kAscending[i], kAscending[i]) == 0) << kAscending[i];
    }
}

// The order as its definition reads: chunk by chunk.
int reference_compare(std::string_view a, std::string_view b) {
    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    const auto chunk = [&](std::string_view text, std::size_t& pos) {
        const std::size_t start = pos;
        const bool digits = is_digit(text[pos]);
        while (pos < text.size() && is_digit(text[pos]) == digits)
            ++pos;
        return text.substr(start, pos - start);
    };
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.size() && j < b.size()) {
        const bool a_digits = is_digit(a[i]);
        if (a_digits != is_digit(b[j]))
            return a_digits ? -1 : 1;
        const std::string_view x = chunk(a, i);
        const std::string_view y = chunk(b, j);
        if (a_digits && x.size() != y.size())
            return x.size() < y.size() ? -1 : 1;
        if (const int c = x.compare(y); c != 0)
            return c < 0 ? -1 : 1;
    }
    return i < a.size() ? 1 : (j < b.size() ? -1 : 0);
}

TEST(Hostlist, NaturalOrderMatchesItsDefinition) {
    std::mt19937 rng(20);
    constexpr std::string_view kBytes = "ab-01290";
    const auto random_name = [&] {
        std::string name;
        for (unsigned n = rng() % 7; n > 0; --n)
            name += kBytes[rng() % kBytes.size()];
        return name;
    };
    for (int round = 0; round < 100000; ++round) {
        const std::string a = random_name();
        const std::string b = random_name();
        const auto order = Hostlist::compare(a, b);
        const int expected = reference_compare(a, b);
        ASSERT_EQ(order < 0 ? -1 : (order > 0 ? 1 : 0), expected) << a << " <=> " << b;
    }
}

struct SetCase {
    std::string_view a;
    std::string_view b;
    std::string_view union_;
    std::string_view intersection;
    std::string_view difference;
    std::string_view xor_;
};

constexpr SetCase kSets[] = {
    {"host[1-3]", "host[2-5]", "host[1-5]", "host[2-3]", "host1", "host[1,4-5]"},
    {"host[1-10]", "host[2-3]", "host[1-10]", "host[2-3]", "host[1,4-10]", "host[1,4-10]"},
    {"host[1-3]", "bar,baz", "bar,baz,host[1-3]", "", "host[1-3]", "bar,baz,host[1-3]"},
    {"foo[1-1000000]", "foo[5-10]", "foo[1-1000000]", "foo[5-10]", "foo[1-4,11-1000000]",
     "foo[1-4,11-1000000]"},
    {"host[3,1,2,1]", "host1", "host[1-3]", "host1", "host[2-3]", "host[2-3]"},
    // The same hosts read with other numbers still meet.
    {"f00[1-9]", "f[003-005],f0010", "f00[1-10]", "f00[3-5]", "f00[1-2,6-9]", "f00[1-2,6-10]"},
    {"foo[0-3]-eth2", "foo1-eth2,foo9", "foo[0-3]-eth2,foo9", "foo1-eth2", "foo[0,2-3]-eth2",
     "foo[0,2-3]-eth2,foo9"},
    {"", "a", "a", "", "", "a"},
};

TEST(Hostlist, SetOperations) {
    for (const auto& c : kSets) {
        const Hostlist a = parsed(c.a);
        const Hostlist b = parsed(c.b);
        EXPECT_EQ(Hostlist::set_union(a, b).encode(), c.union_) << c.a << " | " << c.b;
        EXPECT_EQ(Hostlist::set_intersection(a, b).encode(), c.intersection) << c.a << " & " << c.b;
        EXPECT_EQ(Hostlist::set_difference(a, b).encode(), c.difference) << c.a << " - " << c.b;
        EXPECT_EQ(Hostlist::set_xor(a, b).encode(), c.xor_) << c.a << " ^ " << c.b;
    }
}

TEST(Hostlist, EqualityComparesHostsNotSpelling) {
    EXPECT_EQ(parsed("f00[7-8]"), parsed("f007,f008"));
    EXPECT_EQ(parsed("foo[0-1]-eth2"), parsed("foo0-eth2,foo1-eth2"));
    EXPECT_EQ(parsed("foo[1-1000000]"), parsed("foo[1-500000],foo[500001-1000000]"));
    EXPECT_FALSE(parsed("foo[1-2]") == parsed("foo[2,1]"));
    EXPECT_FALSE(parsed("foo1") == parsed("foo01"));
    EXPECT_FALSE(parsed("foo[1-3]") == parsed("foo[1-2]"));
}

// Random lists of names (some padded, some with suffixes, some repeated):
// the encoding parses back to the same hosts, and the run-based sort and set
// operations agree with the same operations done host by host.
std::vector<std::string> random_hosts(std::mt19937& rng) {
    static constexpr std::string_view kPrefixes[] = {"n", "node", "rack1-n", "x", ""};
    static constexpr std::string_view kSuffixes[] = {"", "", "", "-eth0", "b"};
    std::vector<std::string> hosts;
    const int length = static_cast<int>(rng() % 40);
    for (int i = 0; i < length; ++i) {
        std::string host(kPrefixes[rng() % std::size(kPrefixes)]);
        const unsigned number = rng() % 25;
        const unsigned width = rng() % 4 == 0 ? 3 : 0;
        std::string digits = std::to_string(number);
        if (digits.size() < width)
            digits.insert(0, width - digits.size(), '0');
        host += digits;
        host += kSuffixes[rng() % std::size(kSuffixes)];
        if (rng() % 10 == 0)
            host = "lit";
        hosts.push_back(host.empty() ? "z" : host);
    }
    return hosts;
}

std::vector<std::string> sorted_hosts(std::vector<std::string> hosts, bool unique) {
    std::sort(hosts.begin(), hosts.end(),
              [](const auto& a, const auto& b) { return Hostlist::compare(a, b) < 0; });
    if (unique)
        hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    return hosts;
}

TEST(Hostlist, RandomRoundTrips) {
    std::mt19937 rng(29);
    for (int round = 0; round < 2000; ++round) {
        const std::vector<std::string> hosts = random_hosts(rng);
        const Hostlist list = Hostlist::from_hosts(hosts);
        ASSERT_EQ(list.expand(), hosts) << join(hosts);
        ASSERT_EQ(list.count(), hosts.size());
        const auto reparsed = Hostlist::parse(list.encode());
        ASSERT_TRUE(reparsed.ok()) << list.encode();
        ASSERT_EQ(reparsed->expand(), hosts) << list.encode();
        ASSERT_EQ(*reparsed, list) << list.encode();
        for (std::size_t i = 0; i < hosts.size(); ++i) {
            ASSERT_EQ(list.nth(i), hosts[i]);
            const auto first = std::find(hosts.begin(), hosts.end(), hosts[i]) - hosts.begin();
            ASSERT_EQ(list.find(hosts[i]), static_cast<std::size_t>(first)) << hosts[i];
        }
        Hostlist sorted = list;
        sorted.sort();
        ASSERT_EQ(sorted.expand(), sorted_hosts(hosts, false)) << join(hosts);
        Hostlist unique = list;
        unique.uniq();
        ASSERT_EQ(unique.expand(), sorted_hosts(hosts, true)) << join(hosts);
    }
}

TEST(Hostlist, RandomSetOperations) {
    std::mt19937 rng(22);
    for (int round = 0; round < 1000; ++round) {
        const auto a_hosts = random_hosts(rng);
        const auto b_hosts = random_hosts(rng);
        const Hostlist a = Hostlist::from_hosts(a_hosts);
        const Hostlist b = Hostlist::from_hosts(b_hosts);
        const auto a_set = sorted_hosts(a_hosts, true);
        const auto b_set = sorted_hosts(b_hosts, true);
        const auto natural = [](const auto& x, const auto& y) {
            return Hostlist::compare(x, y) < 0;
        };
        std::vector<std::string> expected;
        std::set_union(a_set.begin(), a_set.end(), b_set.begin(), b_set.end(),
                       std::back_inserter(expected), natural);
        ASSERT_EQ(Hostlist::set_union(a, b).expand(), expected)
            << a.encode() << " | " << b.encode();
        expected.clear();
        std::set_intersection(a_set.begin(), a_set.end(), b_set.begin(), b_set.end(),
                              std::back_inserter(expected), natural);
        ASSERT_EQ(Hostlist::set_intersection(a, b).expand(), expected)
            << a.encode() << " & " << b.encode();
        expected.clear();
        std::set_difference(a_set.begin(), a_set.end(), b_set.begin(), b_set.end(),
                            std::back_inserter(expected), natural);
        ASSERT_EQ(Hostlist::set_difference(a, b).expand(), expected)
            << a.encode() << " - " << b.encode();
        expected.clear();
        std::set_symmetric_difference(a_set.begin(), a_set.end(), b_set.begin(), b_set.end(),
                                      std::back_inserter(expected), natural);
        ASSERT_EQ(Hostlist::set_xor(a, b).expand(), expected) << a.encode() << " ^ " << b.encode();

        // remove_each against a host-by-host model.
        std::vector<std::string> model = a_hosts;
        std::size_t removed = 0;
        for (const auto& host : b_hosts)
            if (auto it = std::find(model.begin(), model.end(), host); it != model.end()) {
                model.erase(it);
                ++removed;
            }
        Hostlist rest = a;
        ASSERT_EQ(rest.remove_each(b), removed) << a.encode() << " - " << b.encode();
        ASSERT_EQ(rest.expand(), model) << a.encode() << " - " << b.encode();
    }
}

}  // namespace
}  // namespace gantry
