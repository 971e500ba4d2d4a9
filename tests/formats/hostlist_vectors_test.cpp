// Every record of the hostlist vectors (hostlist.json, hostlist_ops.json
// except the `flux hostlist` command records, which tests/cli covers).
// Where gantry follows the spec page rather than flux-core, the expected
// value is gantry's and the table below says why.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "formats/hostlist.h"
#include "support/vectors.h"

namespace gantry {
namespace {

// Inputs flux-core accepts and gantry rejects (spec page decisions).
const std::map<std::string, std::string> kRejected = {
    // Whitespace is an error in the library; flux-core reads it as a separator.
    {"foo 1", "whitespace"},
    {"foo1 foo2", "whitespace"},
    {"foo1\tfoo2", "whitespace"},
    {"  foo1  ", "whitespace"},
    // QUIRK: a second bracket group is rejected, not kept as a literal suffix.
    {"foo[1-3]bar[4-5]", "second bracket group"},
    {"node[01-03]-[1-2]", "second bracket group"},
    // QUIRK: an empty upper bound, signs and a stray ']' are errors.
    {"foo[1-]", "empty upper bound"},
    {"foo[+1]", "sign"},
    {"foo[1-+3]", "sign"},
    {"foo[1-2]]", "stray ']'"},
};

// Inputs whose hosts differ from flux-core's.
const std::map<std::string, std::string> kHosts = {
    // DIVERGES FROM RFC in flux-core: the first id's width applies to the whole list.
    {"foo[005,4,11-13]", "foo005,foo004,foo011,foo012,foo013"},
};

// Inputs whose canonical encoding differs from flux-core's.
const std::map<std::string, std::string> kEncodings = {
    // Names with a suffix are compressed too (spec page).
    {"foo[1,3]-bar", "foo[1,3]-bar"},
    {"[00-03]p", "[00-03]p"},
    {"p[00-3]p", "p[00-03]p"},
    {"foo[0-4]-eth2", "foo[0-4]-eth2"},
    {"foo[1-5]-eth0", "foo[1-5]-eth0"},
    {"[0-5]i", "[0-5]i"},
    {"foo[2-4]-eth2", "foo[2-4]-eth2"},
    {"foo.bar[1-2].com", "foo.bar[1-2].com"},
    {"foo[1-2].com,foo3.com", "foo[1-3].com"},
    {"host[1-3]a,host[1-3]b", "host[1-3]a,host[1-3]b"},
    {"foo[1]bar,foo2bar", "foo[1-2]bar"},
    // Different padding cannot share a bracket group: a parser applies the
    // first id's width to the whole group (RFC 29), so `foo[01,1]` would be
    // foo01,foo01.
    {"foo01,foo1", "foo01,foo1"},
    {"foo1,foo01", "foo1,foo01"},
    {"foo[005,4,11-13]", "foo[005,004,011-013]"},
};

std::string join(const std::vector<std::string>& hosts) {
    std::string out;
    for (const auto& host : hosts)
        out += (out.empty() ? "" : ",") + host;
    return out;
}

std::string join(const Json& hosts) {
    std::string out;
    for (const auto& host : hosts)
        out += (out.empty() ? "" : ",") + host.get<std::string>();
    return out;
}

Hostlist parsed(const std::string& text) {
    auto list = Hostlist::parse(text);
    EXPECT_TRUE(list.ok()) << text << ": " << (list.ok() ? "" : list.error().str());
    return list.ok() ? *list : Hostlist{};
}

TEST(HostlistVectors, DecodeAndEncode) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("hostlist.json");
    ASSERT_EQ(records.size(), 121u);
    std::size_t seen_rejected = 0;
    for (const auto& record : records) {
        const std::string input = record["input"];
        const auto list = Hostlist::parse(input);
        if (!record["valid"].get<bool>() || kRejected.contains(input)) {
            EXPECT_FALSE(list.ok()) << input;
            seen_rejected += kRejected.contains(input);
            continue;
        }
        ASSERT_TRUE(list.ok()) << input << ": " << list.error().str();
        EXPECT_EQ(list->count(), record["count"].get<std::size_t>()) << input;
        if (kHosts.contains(input)) {
            EXPECT_EQ(join(list->expand()), kHosts.at(input)) << input;
        } else if (record.contains("hosts")) {
            EXPECT_EQ(join(list->expand()), join(record["hosts"])) << input;
        } else {
            const auto& first_last = record["hosts_first_last"];
            EXPECT_EQ(list->nth(0), first_last[0].get<std::string>()) << input;
            EXPECT_EQ(list->nth(list->count() - 1), first_last[1].get<std::string>()) << input;
        }
        const std::string encoding = list->encode();
        if (kEncodings.contains(input)) {
            EXPECT_EQ(encoding, kEncodings.at(input)) << input;
        } else if (record["encode"].is_string()) {
            EXPECT_EQ(encoding, record["encode"].get<std::string>()) << input;
        }
        EXPECT_EQ(parsed(encoding), *list) << input;
        EXPECT_EQ(Hostlist::from_hosts(list->expand()), *list) << input;
        if (record["source"].get<std::string>().find("iterator_inputs") != std::string::npos) {
            EXPECT_EQ(Hostlist::from_hosts(list->expand()).encode(), input) << input;
        }
    }
    EXPECT_EQ(seen_rejected, kRejected.size());
}

// Sort results that differ from flux-core's, for the reasons above.
const std::map<std::string, std::pair<std::string, std::string>> kSorted = {
    {"[0-20],45,12,015", {"[0-12,12-20,45],015", "[0-20,45],015"}},
    {"foo10,foo9,foo010", {"foo[9-10],foo010", "foo[9-10],foo010"}},
    {"foo[1-3]-eth0,foo0", {"foo0,foo[1-3]-eth0", "foo0,foo[1-3]-eth0"}},
    {"foo01,foo1,foo001", {"foo1,foo01,foo001", "foo1,foo01,foo001"}},
};

TEST(HostlistVectors, SortAndUniq) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("hostlist_ops.json")["sort_uniq"];
    ASSERT_EQ(records.size(), 20u);
    for (const auto& record : records) {
        const std::string input = record["input"];
        Hostlist sorted = parsed(input);
        sorted.sort();
        Hostlist unique = parsed(input);
        unique.uniq();
        const bool differs = kSorted.contains(input);
        EXPECT_EQ(sorted.encode(),
                  differs ? kSorted.at(input).first : record["sorted"].get<std::string>())
            << input;
        EXPECT_EQ(unique.encode(),
                  differs ? kSorted.at(input).second : record["uniq"].get<std::string>())
            << input;
    }
}

TEST(HostlistVectors, Delete) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("hostlist_ops.json")["delete"];
    ASSERT_EQ(records.size(), 10u);
    for (const auto& record : records) {
        // "foo[0-10] minus foo5": the record continues the previous one.
        std::string input = record["input"];
        Hostlist list;
        if (const auto minus = input.find(" minus "); minus != std::string::npos) {
            list = parsed(input.substr(0, minus));
            list.remove_each(parsed(input.substr(minus + 7)));
        } else {
            list = parsed(input);
        }
        EXPECT_EQ(list.remove_each(parsed(record["delete"])), record["deleted"].get<std::size_t>())
            << input;
        if (record["result"].is_null())
            continue;
        // Hosts with a suffix stay compressed (flux-core: foo2-eth2,foo4-eth2).
        const std::string expected =
            input == "foo[2-4]-eth2" ? "foo[2,4]-eth2" : record["result"].get<std::string>();
        EXPECT_EQ(list.encode(), expected) << input;
    }
}

TEST(HostlistVectors, FindAndNth) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("hostlist_ops.json");
    ASSERT_EQ(ops["find"].size(), 21u);
    for (const auto& record : ops["find"]) {
        const int index = record["index"];
        const auto found = parsed(record["hostlist"]).find(record["host"].get<std::string>());
        EXPECT_EQ(found, index < 0 ? std::nullopt : std::optional<std::size_t>(index)) << record;
    }
    ASSERT_EQ(ops["nth"].size(), 10u);
    for (const auto& record : ops["nth"]) {
        const Hostlist list = parsed(record["hostlist"]);
        // A negative index counts from the end (the Python binding's reading).
        const long long n = record["n"];
        const long long index = n < 0 ? static_cast<long long>(list.count()) + n : n;
        const auto host = list.nth(static_cast<std::size_t>(index));
        if (record["host"].is_null())
            EXPECT_EQ(host, std::nullopt) << record;
        else
            EXPECT_EQ(host, record["host"].get<std::string>()) << record;
    }
}

TEST(HostlistVectors, Append) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("hostlist_ops.json")["append"];
    ASSERT_EQ(records.size(), 6u);
    for (const auto& record : records) {
        Hostlist list = parsed(record["start"]);
        if (record.contains("append_list")) {
            const Hostlist more = parsed(record["append_list"]);
            list.append(more);
            EXPECT_EQ(more.count(), record["returns"].get<std::size_t>());
        } else if (record["append"].is_string()) {  // "host" appended 8192 times
            for (int i = 0; i < 8192; ++i)
                list.append("host");
            EXPECT_EQ(list.count(), record["result_count"].get<std::size_t>());
            EXPECT_EQ(parsed(list.encode()).count(), 8192u);
            continue;
        } else {
            for (std::size_t i = 0; i < record["append"].size(); ++i) {
                const Hostlist more = parsed(record["append"][i]);
                list.append(more);
                if (record.contains("returns")) {
                    EXPECT_EQ(more.count(), record["returns"][i].get<std::size_t>());
                }
            }
        }
        EXPECT_EQ(list.encode(), record["result"].get<std::string>()) << record;
    }
}

TEST(HostlistVectors, IndicesOfHosts) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("hostlist_ops.json")["python_index"];
    ASSERT_EQ(records.size(), 5u);
    for (const auto& record : records) {
        const Hostlist list = parsed(record["hostlist"]);
        std::vector<std::size_t> indices;
        bool missing = false;
        for (const auto& host : parsed(record["query"]).expand()) {
            const auto index = list.find(host);
            missing = missing || !index;
            if (index)
                indices.push_back(*index);
        }
        if (record["indices"].is_null()) {  // an error when misses are not ignored
            EXPECT_TRUE(missing) << record;
            continue;
        }
        EXPECT_EQ(indices, record["indices"].get<std::vector<std::size_t>>()) << record;
    }
}

}  // namespace
}  // namespace gantry
