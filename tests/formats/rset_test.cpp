// RFC 20 R: parsing, validation, emission and the short form, as tables of
// the RFC's example and our own cases.
#include "formats/rset.h"

#include <gtest/gtest.h>

#include <random>

namespace gantry {
namespace {

ResourceSet parse_ok(std::string_view text) {
    auto set = ResourceSet::parse(text);
    EXPECT_TRUE(set.ok()) << text << ": " << (set.ok() ? "" : set.error().str());
    return set.ok() ? *set : ResourceSet{};
}

// The RFC 20 example (data/spec_20/example1.json).
constexpr std::string_view kRfcExample = R"({
  "version": 1,
  "execution": {
    "R_lite": [{"rank": "19-22", "children": {"core": "0-47", "gpu": "0-7"}}],
    "nodelist": ["node[186-189]"],
    "nslots": 32,
    "starttime": 1676560542,
    "expiration": 1676562342
  }
})";

TEST(ResourceSet, RfcExample) {
    const ResourceSet set = parse_ok(kRfcExample);
    EXPECT_EQ(set.short_form(), "rank[19-22]/core[0-47],gpu[0-7]");
    EXPECT_EQ(set.ranks().encode(), "19-22");
    EXPECT_EQ(set.nodelist().encode(), "node[186-189]");
    EXPECT_EQ(set.nnodes(), 4u);
    EXPECT_EQ(set.ncores(), 192u);
    EXPECT_EQ(set.ngpus(), 32u);
    EXPECT_EQ(set.nslots(), 32);
    EXPECT_EQ(set.starttime(), 1676560542.0);
    EXPECT_EQ(set.expiration(), 1676562342.0);
    EXPECT_EQ(set.find(20)->hostname, "node187");
    EXPECT_EQ(set.encode(),
              R"({"version":1,"execution":{"R_lite":[{"rank":"19-22","children":{"core":"0-47",)"
              R"("gpu":"0-7"}}],"nodelist":["node[186-189]"],"starttime":1676560542.0,)"
              R"("expiration":1676562342.0,"nslots":32}})");
}

struct EmitCase {
    std::string_view input;
    std::string_view short_form;
    std::string_view encoded;
};

const EmitCase kEmitCases[] = {
    // Ranks with identical children share one entry; groups by first rank.
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-3"}},
        {"rank":"4-7","children":{"core":"0"}}]}})",
     "rank[0-3]/core[0-3] rank[4-7]/core0",
     R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-3"}},)"
     R"({"rank":"4-7","children":{"core":"0"}}],"starttime":0.0,"expiration":0.0}})"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"0-7"}},
        {"rank":"0,2","children":{"core":"0-1"}}],"nodelist":["f[0-2]"]}})",
     "rank[0,2]/core[0-1] rank1/core[0-7]",
     R"({"version":1,"execution":{"R_lite":[{"rank":"0,2","children":{"core":"0-1"}},)"
     R"({"rank":"1","children":{"core":"0-7"}}],"nodelist":["f[0-2]"],"starttime":0.0,)"
     R"("expiration":0.0}})"},
    // Two entries for one rank are merged.
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}},
        {"rank":"0","children":{"core":"4-7","gpu":"1"}}]}})",
     "rank0/core[0-7],gpu1",
     R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-7","gpu":"1"}}],)"
     R"("starttime":0.0,"expiration":0.0}})"},
    // Several nodelist entries; properties as idsets, sorted by name.
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-1"}}],
        "nodelist":["a1","a[2-3]","b0"],"properties":{"x":"0,2","big@gpu":"3"}}})",
     "rank[0-3]/core[0-1]",
     R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-1"}}],)"
     R"("nodelist":["a[1-3],b0"],"properties":{"big@gpu":"3","x":"0,2"},"starttime":0.0,)"
     R"("expiration":0.0}})"},
    // An empty set, as flux-core writes it.
    {R"({"version":1,"execution":{"R_lite":[],"nodelist":[""]}})", "",
     R"({"version":1,"execution":{"R_lite":[],"nodelist":[""],"starttime":0.0,"expiration":0.0}})"},
    // A rank with no cores: kept in R_lite, left out of the short form.
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":""}},
        {"rank":"1","children":{"gpu":"0"}}],"nodelist":["n[0-1]"]}})",
     "rank1/gpu0",
     R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":""}},)"
     R"({"rank":"1","children":{"core":"","gpu":"0"}}],"nodelist":["n[0-1]"],)"
     R"("starttime":0.0,"expiration":0.0}})"},
    // scheduling (a JGF graph of the earlier text) and attributes ride along.
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],
        "starttime":10.5,"expiration":20},
        "scheduling":{"graph":{"nodes":[{"id":"0","metadata":{"type":"node"}}],"edges":[]}},
        "attributes":{"system":{"scheduler":{"queue":"batch"}}}})",
     "rank0/core0",
     R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],)"
     R"("starttime":10.5,"expiration":20.0},"scheduling":{"graph":{"edges":[],"nodes":[{"id":)"
     R"("0","metadata":{"type":"node"}}]}},"attributes":{"system":{"scheduler":{"queue":)"
     R"("batch"}}}})"},
    // The earlier text allows an R with `scheduling` and no `execution`.
    {R"({"version":1,"scheduling":{"graph":{"nodes":[],"edges":[]}}})", "",
     R"({"version":1,"execution":{"R_lite":[],"nodelist":[""],"starttime":0.0,)"
     R"("expiration":0.0},"scheduling":{"graph":{"edges":[],"nodes":[]}}})"},
};

TEST(ResourceSet, EmitsCompactR) {
    for (const auto& c : kEmitCases) {
        const ResourceSet set = parse_ok(c.input);
        EXPECT_EQ(set.short_form(), c.short_form) << c.input;
        EXPECT_EQ(set.encode(), c.encoded) << c.input;
        EXPECT_EQ(parse_ok(set.encode()), set) << c.input;
        EXPECT_EQ(parse_ok(to_compact(set.to_json())), set) << c.input;
    }
}

struct BadCase {
    std::string_view input;
    std::string_view message;
};

const BadCase kBadCases[] = {
    {"", "R: invalid JSON at offset 0 in \"\""},
    {"[]", "R: expected an R document (a JSON object), got array"},
    {"{}", "R: missing key \"version\""},
    {R"({"version":1})", "R: missing key \"execution\""},
    {R"({"version":"1","execution":{}})", "R: version: expected an integer, got string"},
    {R"({"version":2,"execution":{"R_lite":[]}})",
     "R: version: unsupported version 2 (expected 1)"},
    {R"({"version":1,"execution":[]})", "R: execution: expected an object, got array"},
    {R"({"version":1,"execution":{}})", "R: execution: missing key \"R_lite\""},
    {R"({"version":1,"execution":{"R_lite":{}}})",
     "R: execution.R_lite: expected an array, got object"},
    {R"({"version":1,"execution":{"R_lite":[3]}})",
     "R: execution.R_lite[0]: expected an object, got number"},
    {R"({"version":1,"execution":{"R_lite":[{"children":{"core":"0"}}]}})",
     "R: execution.R_lite[0]: missing key \"rank\""},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0"}]}})",
     "R: execution.R_lite[0]: missing key \"children\""},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"x","children":{"core":"0"}}]}})",
     "R: execution.R_lite[0].rank: expected an id, found 'x' at offset 0 in \"x\""},
    {R"({"version":1,"execution":{"R_lite":[{"rank":0,"children":{"core":"0"}}]}})",
     "R: execution.R_lite[0].rank: expected an idset string, got number"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}},
        {"rank":"1","children":{"core":"3,2"}}]}})",
     "R: execution.R_lite[1].children.core: ids out of order at offset 2 in \"3,2\""},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0","gpu":"1-"}}]}})",
     "R: execution.R_lite[0].children.gpu: expected an id at offset 2 in \"1-\""},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0","mem":"1"}}]}})",
     "R: execution.R_lite[0].children: unknown resource \"mem\" (expected core, gpu)"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}},
        {"rank":"1","children":{"core":"2-5"}}]}})",
     "R: execution.R_lite[1].children: rank 1 has core[2-3] in an earlier R_lite entry"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-2147483647","children":{"core":"0"}}]}})",
     "R: execution.R_lite[0].rank: more than 1048576 ranks in R"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}}],
        "nodelist":["a[0-2]"]}})",
     "R: execution.nodelist: 3 hosts for 2 ranks"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}}],
        "nodelist":"a[0-1]"}})",
     "R: execution.nodelist: expected an array of hostlists, got string"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}}],
        "properties":{"fo^o":"0"}}})",
     "R: execution.properties: invalid character '^' in property name \"fo^o\""},
    // RFC 20 forbids '!' although flux-core accepts it.
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}}],
        "properties":{"fo!o":"0"}}})",
     "R: execution.properties: invalid character '!' in property name \"fo!o\""},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}}],
        "properties":{"":"0"}}})",
     "R: execution.properties: empty property name"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}}],
        "properties":{"foo":"0-5"}}})",
     "R: execution.properties.foo: ranks 2-5 not in R"},
    {R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}}],
        "properties":{"foo":1}}})",
     "R: execution.properties.foo: expected an idset string, got number"},
    {R"({"version":1,"execution":{"R_lite":[],"properties":"foo"}})",
     "R: execution.properties: expected an object, got string"},
    {R"({"version":1,"execution":{"R_lite":[],"starttime":20,"expiration":10}})",
     "R: execution.expiration: 10.0 is not after starttime 20.0"},
    {R"({"version":1,"execution":{"R_lite":[],"starttime":20,"expiration":20}})",
     "R: execution.expiration: 20.0 is not after starttime 20.0"},
    {R"({"version":1,"execution":{"R_lite":[],"starttime":-1}})",
     "R: execution.starttime: must be a time in seconds since the epoch, got -1.0"},
    {R"({"version":1,"execution":{"R_lite":[],"expiration":"soon"}})",
     "R: execution.expiration: expected a number, got string"},
    {R"({"version":1,"execution":{"R_lite":[],"nslots":0}})",
     "R: execution.nslots: must be greater than 0, got 0"},
    {R"({"version":1,"execution":{"R_lite":[],"nslots":-4}})",
     "R: execution.nslots: must be greater than 0, got -4"},
    {R"({"version":1,"execution":{"R_lite":[],"nslots":1.5}})",
     "R: execution.nslots: expected an integer, got number"},
};

TEST(ResourceSet, RejectsBadDocumentsWithOneMessage) {
    for (const auto& c : kBadCases) {
        const auto set = ResourceSet::parse(c.input);
        ASSERT_FALSE(set.ok()) << c.input;
        EXPECT_EQ(set.error().str(), c.message) << c.input;
    }
}

TEST(ResourceSet, ExpirationOrStarttimeAloneIsFine) {
    EXPECT_EQ(parse_ok(R"({"version":1,"execution":{"R_lite":[],"expiration":5}})").expiration(),
              5.0);
    EXPECT_EQ(parse_ok(R"({"version":1,"execution":{"R_lite":[],"starttime":5}})").starttime(),
              5.0);
}

TEST(ResourceSet, ParsesConcatenatedDocuments) {
    const auto sets = ResourceSet::parse_all(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}]}}
           {"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"1"}}]}})"
        "\n");
    ASSERT_TRUE(sets.ok()) << sets.error().str();
    ASSERT_EQ(sets->size(), 2u);
    EXPECT_EQ((*sets)[1].short_form(), "rank1/core1");
    EXPECT_EQ(ResourceSet::parse_all(" \n")->size(), 0u);

    const auto bad = ResourceSet::parse_all(
        R"({"version":1,"execution":{"R_lite":[]}} {"version":1,"execution":{"R_lite":[{"rank":"2-1"}]}})");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().str(),
              "R: document 2: execution.R_lite[0].rank: range end is below its start at offset 1 "
              "in \"2-1\"");
    const auto broken = ResourceSet::parse_all(R"({"version":1} {"version":)");
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().str(), "R: missing key \"execution\"");
}

TEST(ResourceSet, BuildsRankByRank) {
    ResourceSet set;
    ASSERT_TRUE(set.insert(3, {"", {0, 1}, {}}).ok());
    ASSERT_TRUE(set.insert(1, {"", {0, 1}, {}}).ok());
    ASSERT_TRUE(set.insert(3, {"", {2}, {0}}).ok());
    EXPECT_EQ(set.insert(3, {"", {1, 2, 5}, {}}).error().str(), "R: rank 3 already has core[1-2]");
    EXPECT_EQ(set.insert(2147483648u, {}).error().str(),
              "R: rank 2147483648 is larger than 2147483647");
    EXPECT_EQ(set.short_form(), "rank1/core[0-1] rank3/core[0-2],gpu0");
    EXPECT_EQ(set.assign_hosts(Hostlist::parse("a[1-3]").value()).error().str(),
              "R: nodelist has 3 hosts for 2 ranks");
    ASSERT_TRUE(set.assign_hosts(Hostlist::parse("b,a").value()).ok());
    EXPECT_EQ(set.find(3)->hostname, "a");
    EXPECT_EQ(set.insert(3, {"c", {7}, {}}).error().str(), "R: rank 3 is host a, not c");
    EXPECT_EQ(set.nodelist().encode(), "b,a");
}

TEST(ResourceSet, Properties) {
    ResourceSet set = parse_ok(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0"}}],
            "nodelist":["n[0-3]"]}})");
    ASSERT_TRUE(set.set_property_spec("xx:1-2").ok());
    ASSERT_TRUE(set.set_property_spec("all").ok());
    ASSERT_TRUE(set.set_property("xx", IdSet{3}).ok());
    EXPECT_EQ(set.set_property_spec("yy:3-5").error().str(),
              "R: property \"yy\": ranks 4-5 not in R");
    EXPECT_EQ(set.set_property_spec("a|b").error().str(),
              "R: invalid character '|' in property name \"a|b\"");
    EXPECT_EQ(set.set_property_spec(":1").error().str(), "R: empty property name");
    EXPECT_EQ(set.set_property_spec("zz:1-").error().str(),
              "R: property \"zz\": expected an id at offset 2 in \"1-\"");
    EXPECT_EQ(set.ranks_with_property("xx").encode(), "1-3");
    EXPECT_EQ(set.ranks_with_property("all").encode(), "0-3");
    EXPECT_EQ(set.ranks_with_property("none").encode(), "");
    EXPECT_EQ(to_compact(set.to_json()["execution"]["properties"]), R"({"all":"0-3","xx":"1-3"})");
}

TEST(ResourceSet, TimeWindow) {
    ResourceSet set;
    ASSERT_TRUE(set.set_window(100, 200.5).ok());
    EXPECT_EQ(set.starttime(), 100.0);
    EXPECT_EQ(set.expiration(), 200.5);
    EXPECT_EQ(set.set_window(300, 200).error().str(),
              "R: expiration 200.0 is not after starttime 300.0");
    EXPECT_EQ(set.starttime(), 100.0);  // unchanged after an error
    ASSERT_TRUE(set.set_window(0, 50).ok());
}

TEST(ResourceSet, HostsToRanks) {
    const ResourceSet set = parse_ok(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-11","children":{"core":"0"}}],
            "nodelist":["foo10,foo[0-4],foo11,foo[5-9]"]}})");
    EXPECT_EQ(set.hosts_to_ranks("foo[1,9,4]")->encode(), "2,5,11");
    EXPECT_EQ(set.hosts_to_ranks("foo[9-13]").error().str(), "R: hosts not in R: foo[12-13]");
    const ResourceSet same = parse_ok(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0"}}],
            "nodelist":["foo,foo,foo,foo"]}})");
    EXPECT_EQ(same.hosts_to_ranks("foo")->encode(), "0-3");
}

// parse(encode(x)) == x over random sets, fixed seed.
TEST(ResourceSet, RoundTripsRandomSets) {
    std::mt19937 random(20);
    auto ids = [&](unsigned max) {
        IdSet set;
        const unsigned n = random() % 5;
        for (unsigned i = 0; i < n; ++i)
            set.insert(random() % max, random() % max);
        return set;
    };
    for (int round = 0; round < 300; ++round) {
        ResourceSet set;
        const bool hosts = random() % 2;
        const unsigned nranks = random() % 12;
        for (unsigned i = 0; i < nranks; ++i) {
            const auto rank = static_cast<ResourceSet::Rank>(random() % 40);
            Target target{hosts ? "h" + std::to_string(rank % 7) : "", ids(16), ids(4)};
            if (set.find(rank))
                continue;
            ASSERT_TRUE(set.insert(rank, target).ok());
        }
        if (!set.empty() && random() % 2) {
            const IdSet first{set.ranks().first().value()};
            ASSERT_TRUE(set.set_property("p" + std::to_string(random() % 3), first).ok());
        }
        if (random() % 3 == 0) {
            ASSERT_TRUE(set.set_window(random() % 1000, 1000 + random() % 1000).ok());
        }
        const auto again = ResourceSet::parse(set.encode());
        ASSERT_TRUE(again.ok()) << set.encode() << ": " << again.error().str();
        EXPECT_EQ(*again, set) << set.encode();
        EXPECT_EQ(again->encode(), set.encode());
    }
}

}  // namespace
}  // namespace gantry
