// RFC 20 R operations as tables: union, difference, intersection, remap,
// rerank, selection, constraints and verify.
#include <gtest/gtest.h>

#include <random>

#include "formats/rset.h"

namespace gantry {
namespace {

// An R like flux-core's test helper builds: one R_lite entry and a nodelist.
ResourceSet make(std::string_view ranks, std::string_view cores, std::string_view gpus = "",
                 std::string_view hosts = "") {
    ResourceSet set;
    const IdSet rank_ids = IdSet::parse(ranks).value();
    for (const auto rank : rank_ids) {
        const Status status =
            set.insert(rank, {"", IdSet::parse(cores).value(), IdSet::parse(gpus).value()});
        EXPECT_TRUE(status.ok());
    }
    if (!hosts.empty()) {
        EXPECT_TRUE(set.assign_hosts(Hostlist::parse(hosts).value()).ok());
    }
    return set;
}

struct Spec {
    std::string_view ranks, cores, gpus, hosts;
    ResourceSet set() const { return make(ranks, cores, gpus, hosts); }
};

struct BinaryCase {
    Spec a, b;
    std::string_view result_short;
    std::string_view result_nodelist;
};

const BinaryCase kDiff[] = {
    {{"0", "0-3", "", "foo15"}, {"0", "0-3", "", "foo15"}, "", ""},
    {{"0", "0-3", "0-1", "foo15"}, {"0", "0-3", "0-1", "foo15"}, "", ""},
    {{"0", "0-3", "", "foo15"}, {"0", "0-1", "", "foo15"}, "rank0/core[2-3]", "foo15"},
    {{"0", "0-3", "0", "foo15"}, {"0", "0-3", "", "foo15"}, "rank0/gpu0", "foo15"},
    {{"0-3", "0-1", "", "n[0-3]"}, {"2-9", "0-1", "", ""}, "rank[0-1]/core[0-1]", "n[0-1]"},
};

const BinaryCase kUnion[] = {
    {{"0", "0-3", "", "foo15"}, {"0", "0-3", "", "foo15"}, "rank0/core[0-3]", "foo15"},
    {{"0", "0-3", "0-1", "foo15"},
     {"1", "0-3", "0-1", "foo16"},
     "rank[0-1]/core[0-3],gpu[0-1]",
     "foo[15-16]"},
    {{"0", "0-3", "", "foo15"}, {"0", "", "0", "foo15"}, "rank0/core[0-3],gpu0", "foo15"},
    {{"1", "0-3", "", "foo15"}, {"0", "0-3", "", "foo16"}, "rank[0-1]/core[0-3]", "foo[16,15]"},
    {{"0-1023", "0-3", "", "foo[0-1023]"},
     {"1000-1024", "4-7", "", "foo[1000-1024]"},
     "rank[0-999]/core[0-3] rank[1000-1023]/core[0-7] rank1024/core[4-7]",
     "foo[0-1024]"},
};

const BinaryCase kIntersect[] = {
    {{"0-10", "0-3", "", "foo[0-10]"},
     {"9-15", "1", "", "foo[9-15]"},
     "rank[9-10]/core1",
     "foo[9-10]"},
    {{"0", "0-3", "0-1", "foo15"}, {"1", "0-3", "0-1", "foo16"}, "", ""},
    {{"0-3", "0-1", "0", ""}, {"1-5", "0", "0-1", ""}, "rank[1-3]/core0,gpu0", ""},
};

TEST(ResourceSetOps, Diff) {
    for (const auto& c : kDiff) {
        const ResourceSet result = c.a.set().diff(c.b.set());
        EXPECT_EQ(result.short_form(), c.result_short) << c.a.ranks << " - " << c.b.ranks;
        EXPECT_EQ(result.nodelist().encode(), c.result_nodelist);
    }
}

TEST(ResourceSetOps, UnionAddAndAppend) {
    for (const auto& c : kUnion) {
        const auto added = c.a.set().add(c.b.set());
        ASSERT_TRUE(added.ok()) << added.error().str();
        EXPECT_EQ(added->short_form(), c.result_short);
        EXPECT_EQ(added->nodelist().encode(), c.result_nodelist);
    }
    // append refuses a core or GPU in both sets; add takes it.
    const auto appended = make("0-3", "0-3", "", "foo[0-3]").append(make("1", "0-3", "", "foo1"));
    ASSERT_FALSE(appended.ok());
    EXPECT_EQ(appended.error().str(), "R: append: rank 1 has core[0-3] in both sets");
    EXPECT_EQ(make("0", "0-3").append(make("0", "3-4", "0")).error().str(),
              "R: append: rank 0 has core3 in both sets");
    EXPECT_EQ(make("0", "0-3").append(make("0", "4-7")).value().short_form(), "rank0/core[0-7]");
    EXPECT_EQ(make("0,2-3", "0-3", "", "foo[0,2-3]").append(make("1", "0-3", "", "foo1"))->encode(),
              make("0-3", "0-3", "", "foo[0-3]").encode());
    EXPECT_EQ(make("0", "0", "", "a").add(make("0", "1", "", "b")).error().str(),
              "R: rank 0 is host a in one set and b in the other");
}

TEST(ResourceSetOps, Intersect) {
    for (const auto& c : kIntersect) {
        const ResourceSet result = c.a.set().intersect(c.b.set());
        EXPECT_EQ(result.short_form(), c.result_short);
        EXPECT_EQ(result.nodelist().encode(), c.result_nodelist);
    }
}

constexpr std::string_view kScheduled =
    R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-3"}}],
        "nodelist":["n[0-3]"],"properties":{"a":"0-1","b":"3"},"nslots":4,
        "starttime":100,"expiration":200},
        "scheduling":{"writer":"x"},"attributes":{"system":{"q":1}}})";

TEST(ResourceSetOps, ChangedSetsDropSchedulingAndKeepProperties) {
    const ResourceSet set = ResourceSet::parse(kScheduled).value();
    const ResourceSet left = set.diff(make("1,3", "0-3"));
    EXPECT_EQ(left.encode(),
              R"({"version":1,"execution":{"R_lite":[{"rank":"0,2","children":{"core":"0-3"}}],)"
              R"("nodelist":["n[0,2]"],"properties":{"a":"0"},"starttime":100.0,)"
              R"("expiration":200.0},"attributes":{"system":{"q":1}}})");
    EXPECT_FALSE(set.intersect(set).scheduling());
    EXPECT_FALSE(set.copy_ranks(set.ranks()).nslots());
    const auto added = make("4", "0", "", "n4").add(set);
    ASSERT_TRUE(added.ok());
    EXPECT_EQ(to_compact(added->to_json()["execution"]["properties"]), R"({"a":"0-1","b":"3"})");
}

TEST(ResourceSetOps, Remap) {
    EXPECT_EQ(make("1,7,9,53", "0-3", "", "foo[1,7,9,53]").remap().short_form(),
              "rank[0-3]/core[0-3]");
    // Cores renumbered from 0 for the child instance; GPU ids name devices and stay.
    EXPECT_EQ(make("1,7,9,53", "1,5,7,9", "1,3").remap().short_form(),
              "rank[0-3]/core[0-3],gpu[1,3]");
    ResourceSet set = make("5,99,1000", "0", "", "h[1-3]");
    ASSERT_TRUE(set.set_property("p", IdSet{99, 1000}).ok());
    const ResourceSet remapped = set.remap();
    EXPECT_EQ(remapped.ranks().encode(), "0-2");
    EXPECT_EQ(remapped.nodelist().encode(), "h[1-3]");
    EXPECT_EQ(remapped.ranks_with_property("p").encode(), "1-2");
}

TEST(ResourceSetOps, Rerank) {
    ResourceSet set = make("0-15", "0-3", "", "foo[0-15]");
    ASSERT_TRUE(set.set_property("p", IdSet{0}).ok());
    const auto reranked = set.rerank("foo[1-15,0]");
    ASSERT_TRUE(reranked.ok());
    EXPECT_EQ(reranked->nodelist().encode(), "foo[1-15,0]");
    EXPECT_EQ(reranked->find(0)->hostname, "foo1");
    EXPECT_EQ(reranked->ranks_with_property("p").encode(), "15");
    struct Bad {
        std::string_view hosts, message;
    };
    const Bad bad[] = {
        {"foo[1-15]", "R: rerank: 15 hosts given for 16 ranks"},
        {"foo[0-16]", "R: rerank: 17 hosts given for 16 ranks"},
        {"foo[1-16]", "R: rerank: host foo16 not in R"},
        {"foo[0-14],foo0", "R: rerank: host foo0 given more often than R holds it"},
    };
    for (const auto& b : bad)
        EXPECT_EQ(set.rerank(b.hosts).error().str(), b.message) << b.hosts;
    EXPECT_FALSE(set.rerank("foo[0-").ok());
    // Hosts named by several ranks take them in rank order.
    EXPECT_EQ(make("0-3", "0", "", "a,b,a,b").rerank("b,a,a,b")->nodelist().encode(), "b,a,a,b");
}

TEST(ResourceSetOps, CopyAndRemove) {
    const ResourceSet set = make("0-5", "0-3", "0", "foo[0-5]");
    struct Case {
        std::string_view ranks, copied, removed;
    };
    const Case cases[] = {
        {"1,3,5", "rank[1,3,5]/core[0-3],gpu0", "rank[0,2,4]/core[0-3],gpu0"},
        {"5-9", "rank5/core[0-3],gpu0", "rank[0-4]/core[0-3],gpu0"},
        {"9,20", "", "rank[0-5]/core[0-3],gpu0"},
    };
    for (const auto& c : cases) {
        const IdSet ranks = IdSet::parse(c.ranks).value();
        EXPECT_EQ(set.copy_ranks(ranks).short_form(), c.copied) << c.ranks;
        EXPECT_EQ(set.remove_ranks(ranks).short_form(), c.removed) << c.ranks;
    }
    EXPECT_EQ(set.copy_hosts("foo[1,4]")->short_form(), "rank[1,4]/core[0-3],gpu0");
    EXPECT_EQ(set.copy_hosts("bar").error().str(), "R: hosts not in R: bar");
}

TEST(ResourceSetOps, PropertiesAndConstraints) {
    ResourceSet set = make("1-10", "0-1", "", "foo[1-10]");
    ASSERT_TRUE(set.set_property("foo", IdSet::range(1, 3)).ok());
    ASSERT_TRUE(set.set_property("bar", IdSet{7}).ok());
    struct Case {
        std::string_view constraint, result;
    };
    const Case cases[] = {
        {R"({"properties":["na"]})", ""},
        {R"({"properties":["foo"]})", "rank[1-3]/core[0-1]"},
        {R"({"properties":["bar"]})", "rank7/core[0-1]"},
        {R"({"properties":["^bar"]})", "rank[1-6,8-10]/core[0-1]"},
        {R"({"properties":["foo5"]})", "rank5/core[0-1]"},
        {R"({"properties":["^foo5"]})", "rank[1-4,6-10]/core[0-1]"},
        {R"({"properties":["foo","^foo2"]})", "rank[1,3]/core[0-1]"},
        {R"({"hostlist":["foo[2,3,7]"]})", "rank[2-3,7]/core[0-1]"},
        // Eight million hosts named: looked up, never expanded.
        {R"({"hostlist":["a[0-1048575],b[0-1048575],c[0-1048575],d[0-1048575],)"
         R"(e[0-1048575],f[0-1048575],g[0-1048575],h[0-1048575]","foo[2,3,7]"]})",
         "rank[2-3,7]/core[0-1]"},
        {R"({"not":[{"hostlist":["foo[2,3,7]"]}]})", "rank[1,4-6,8-10]/core[0-1]"},
        {R"({"not":[{"ranks":["0-4"]}]})", "rank[5-10]/core[0-1]"},
        {R"({"or":[{"properties":["bar"]},{"ranks":["1"]}]})", "rank[1,7]/core[0-1]"},
        {R"({"and":[{"properties":["foo"]},{"ranks":["2-9"]}]})", "rank[2-3]/core[0-1]"},
        {R"({})", "rank[1-10]/core[0-1]"},
    };
    for (const auto& c : cases) {
        const auto copy = set.copy_constraint(Json::parse(c.constraint));
        ASSERT_TRUE(copy.ok()) << c.constraint << ": " << copy.error().str();
        EXPECT_EQ(copy->short_form(), c.result) << c.constraint;
    }
    const Case bad[] = {
        {R"({"color":["red"]})", "R: constraint: unknown constraint operator \"color\""},
        {R"({"properties":"foo"})", "R: constraint.properties: expected an array, got string"},
        {R"({"properties":["a|b"]})",
         "R: constraint.properties: invalid character '|' in property name \"a|b\""},
        {R"({"ranks":["x"]})",
         "R: constraint.ranks[0]: expected an id, found 'x' at offset 0 in \"x\""},
        {R"({"not":[3]})", "R: constraint.not[0]: expected an object, got number"},
        {R"([])", "R: constraint: expected an object, got array"},
    };
    for (const auto& c : bad)
        EXPECT_EQ(set.copy_constraint(Json::parse(c.constraint)).error().str(), c.result);
    const std::vector<std::string> names{"foo", "^foo1"};
    EXPECT_EQ(set.copy_properties(names)->short_form(), "rank[2-3]/core[0-1]");
    const std::vector<std::string> empty{"^"};
    EXPECT_EQ(set.copy_properties(empty).error().str(), "R: empty property name");
}

struct VerifyCase {
    Spec expected, actual;
    std::string_view config;
    Verification::Outcome outcome;
    std::string_view message;
};

using Outcome = Verification::Outcome;
const VerifyCase kVerify[] = {
    {{"0-5", "0-3", "0", "foo[0-5]"}, {"1", "0-3", "0", "foo1"}, "null", Outcome::kMatch, ""},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"1", "0-3", "", "foo1"},
     "null",
     Outcome::kMissing,
     "rank 1 (foo1) missing resources: gpu0"},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"5", "0-1", "0", "foo5"},
     "null",
     Outcome::kMissing,
     "rank 5 (foo5) missing resources: core[2-3]"},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"5", "0-3", "0", "foo7"},
     "null",
     Outcome::kMissing,
     "rank 5 got hostname 'foo7', expected 'foo5'"},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"0", "0-7", "0-1", "foo0"},
     "null",
     Outcome::kExtra,
     "rank 0 (foo0) has extra resources: core[4-7],gpu1"},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"7", "0-3", "0", "foo7"},
     "null",
     Outcome::kMissing,
     "rank 7 not found in expected ranks"},
    {{"0-5", "0-3", "0", ""}, {"0", "0-3", "0", "foo0"}, "null", Outcome::kMatch, ""},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"1", "0-3", "", "foo1"},
     R"({"gpu":"ignore"})",
     Outcome::kMatch,
     ""},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"5", "0-1", "0", "foo5"},
     R"({"core":"allow-extra"})",
     Outcome::kMissing,
     "rank 5 (foo5) missing resources: core[2-3]"},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"5", "0-3", "0", "foo7"},
     R"({"hostname":"ignore"})",
     Outcome::kMatch,
     ""},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"0", "0-7", "0-1", "foo0"},
     R"({"core":"allow-extra"})",
     Outcome::kExtra,
     "rank 0 (foo0) has extra resources: gpu1"},
    {{"0-5", "0-3", "0", "foo[0-5]"},
     {"5", "0-1", "", "foo7"},
     R"({"default":"ignore"})",
     Outcome::kMatch,
     ""},
    {{"0-5", "0-7", "0", "foo[0-5]"},
     {"0", "0-3", "0-1", "foo0"},
     R"({"core":"allow-missing","gpu":"allow-extra"})",
     Outcome::kMatch,
     ""},
    // Several ranks: each is checked, the worst outcome wins.
    {{"0-5", "0-3", "", "foo[0-5]"},
     {"0-2", "0-2", "", "foo[0-2]"},
     "null",
     Outcome::kMissing,
     "rank 0 (foo0) missing resources: core3; rank 1 (foo1) missing resources: core3; rank 2 "
     "(foo2) missing resources: core3"},
};

TEST(ResourceSetOps, Verify) {
    for (const auto& c : kVerify) {
        const auto policy = VerifyPolicy::from_json(Json::parse(c.config));
        ASSERT_TRUE(policy.ok()) << policy.error().str();
        const Verification verdict = c.expected.set().verify(c.actual.set(), *policy);
        EXPECT_EQ(verdict.outcome, c.outcome) << c.message;
        EXPECT_EQ(verdict.message, c.message);
    }
    EXPECT_EQ(
        VerifyPolicy::from_json(Json::parse(R"({"mem":"ignore"})")).error().str(),
        "R: verify config: unknown resource \"mem\" (expected default, core, gpu or hostname)");
    EXPECT_EQ(VerifyPolicy::from_json(Json::parse(R"({"core":"lax"})")).error().str(),
              "R: verify config.core: unknown mode \"lax\" (expected strict, allow-extra, "
              "allow-missing or ignore)");
}

// Set identities over random sets, fixed seed: (a - b) + (a & b) == a,
// (a - b) & b is empty, and a + b holds both.
TEST(ResourceSetOps, RandomSetIdentities) {
    std::mt19937 random(31);
    auto random_set = [&] {
        ResourceSet set;
        for (unsigned i = random() % 8; i > 0; --i) {
            const auto rank = static_cast<ResourceSet::Rank>(random() % 10);
            if (set.find(rank))
                continue;
            IdSet cores = IdSet::range(random() % 8, random() % 8);
            IdSet gpus = random() % 2 ? IdSet{static_cast<IdSet::Id>(random() % 4)} : IdSet{};
            EXPECT_TRUE(set.insert(rank, {"", cores, gpus}).ok());
        }
        return set;
    };
    auto without_empty = [](const ResourceSet& set) {
        ResourceSet kept;
        for (const auto& [rank, target] : set.targets())
            if (!target.empty()) {
                EXPECT_TRUE(kept.insert(rank, target).ok());
            }
        return kept;
    };
    for (int round = 0; round < 300; ++round) {
        const ResourceSet a = without_empty(random_set());
        const ResourceSet b = without_empty(random_set());
        const auto rebuilt = a.diff(b).append(a.intersect(b));
        ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().str();
        EXPECT_EQ(rebuilt->encode(), a.encode());
        EXPECT_TRUE(a.diff(b).intersect(b).empty());
        const ResourceSet both = a.add(b).value();
        EXPECT_TRUE(both.diff(a).diff(b).empty());
        EXPECT_EQ(both.intersect(a).encode(), a.encode());
    }
}

}  // namespace
}  // namespace gantry
