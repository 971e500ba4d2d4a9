// The policy parser and the job/app resolver: the per-app design's section
// 15.4 (test_policy_parse, test_resolve_options), bullet by bullet.
#include "mapper/policy.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace gantry {
namespace {

using test::directives;

MapPolicy map_ok(std::string_view text) {
    auto map = parse_map_by(text);
    EXPECT_TRUE(map.ok()) << text << ": " << (map ? "" : map.error().str());
    return map ? *map : MapPolicy{};
}

std::string map_error(std::string_view text) {
    auto map = parse_map_by(text);
    EXPECT_FALSE(map.ok()) << text;
    return map ? "" : map.error().str();
}

// Valid single-word policies store the right directive.
TEST(MapBy, EveryDirective) {
    struct Case {
        std::string_view text;
        MapBy by;
    };
    constexpr Case kCases[] = {
        {"slot", MapBy::kSlot},
        {"hwthread", MapBy::kHwthread},
        {"core", MapBy::kCore},
        {"l1cache", MapBy::kL1Cache},
        {"l2cache", MapBy::kL2Cache},
        {"l3cache", MapBy::kL3Cache},
        {"numa", MapBy::kNuma},
        {"package", MapBy::kPackage},
        {"socket", MapBy::kPackage},
        {"node", MapBy::kNode},
        {"seq", MapBy::kSeq},
        {"ppr:2:core", MapBy::kPpr},
        {"CORE", MapBy::kCore},
        {"l1", MapBy::kL1Cache},
        {"so", MapBy::kPackage},
        {"No", MapBy::kNode},
        {"pe-list=0-3", MapBy::kPeList},
        {"device=gpu", MapBy::kDevice},
        {"rankfile:FILE=rf", MapBy::kRankfile},
    };
    for (const auto& c : kCases)
        EXPECT_EQ(map_ok(c.text).by, c.by) << c.text;
}

TEST(MapBy, PprPatterns) {
    const MapPolicy ppr = map_ok("ppr:2:package:pe=2");
    EXPECT_EQ(ppr.ppr_count, 2u);
    EXPECT_EQ(ppr.ppr_level, MapBy::kPackage);
    EXPECT_EQ(ppr.pes, 2u);
    const MapPolicy gpu = map_ok("ppr:2:device=gpu");
    EXPECT_EQ(gpu.ppr_level, MapBy::kDevice);
    EXPECT_EQ(gpu.device, "gpu");
    EXPECT_EQ(mapping_name(ppr), "BYPACKAGE");
    EXPECT_EQ(mapping_name(gpu), "BYDEVICE");
}

// All valid qualifiers parse and are stored.
TEST(MapBy, EveryQualifier) {
    const MapPolicy map = map_ok("package:PE=2:span:nolocal:hwtcpus:oversubscribe:inherit");
    EXPECT_EQ(map.pes, 2u);
    EXPECT_TRUE(map.span);
    EXPECT_TRUE(map.nolocal);
    EXPECT_EQ(map.cpus, CpuUnit::kHwthread);
    EXPECT_EQ(map.oversubscribe, true);
    EXPECT_EQ(map.inherit, true);
    EXPECT_EQ(map_ok("core:corecpus").cpus, CpuUnit::kCore);
    EXPECT_EQ(map_ok("seq:file=/tmp/x").file, "/tmp/x");
    EXPECT_TRUE(map_ok("pe-list=0,2:ordered").ordered);
    EXPECT_EQ(map_ok("pe-list=0,2-3").pe_list.str(), "0,2-3");
    EXPECT_EQ(map_ok("slot:P=3").pes, 3u);  // any unambiguous prefix
    EXPECT_EQ(map_ok("node:NOOVERSUBSCRIBE").oversubscribe, false);
    EXPECT_EQ(map_ok("node:noinherit").inherit, false);
    const MapPolicy gpu = map_ok("device=gpu:shared:ndev=2:interleave");
    EXPECT_TRUE(gpu.shared);
    EXPECT_EQ(gpu.ndev, 2u);
    EXPECT_TRUE(gpu.interleave);
    const MapPolicy qualifiers_only = map_ok(":oversubscribe");
    EXPECT_FALSE(qualifiers_only.has_directive);
    EXPECT_EQ(qualifiers_only.oversubscribe, true);
    // Open MPI 4.1's comma list of modifiers.
    const MapPolicy ompi = map_ok("socket:PE=2,SPAN");
    EXPECT_EQ(ompi.pes, 2u);
    EXPECT_TRUE(ompi.span);
}

// Malformed strings: missing value, unknown keyword, conflicting pairs.
TEST(MapBy, MalformedSpecsAreOneLineErrors) {
    struct Case {
        std::string_view text;
        std::string_view error;
    };
    constexpr Case kCases[] = {
        {"bogus",
         "map-by: unknown directive \"bogus\" (Valid directives: slot, hwthread, core, l1cache, "
         "l2cache, l3cache, numa, package, socket, node, seq, ppr, rankfile, pe-list, device) in "
         "\"bogus\""},
        {"n", "map-by: ambiguous directive \"n\""},
        {"core:PE=", "map-by: qualifier pe needs a value after '=' (missing value in \"PE=\")"},
        {"core:span=2", "map-by: qualifier span takes no value"},
        {"core:bogus", "map-by: unknown qualifier \"bogus\" (Valid qualifiers: pe, span"},
        {"core:oversubscribe:nooversubscribe",
         "map-by: conflicting qualifiers OVERSUBSCRIBE and NOOVERSUBSCRIBE"},
        {"core:inherit:noinherit", "map-by: conflicting qualifiers INHERIT and NOINHERIT"},
        {"core:hwtcpus:corecpus", "map-by: conflicting qualifiers HWTCPUS and CORECPUS"},
        {"core:PE=2", "map-by: PE=2 needs a mapping object with several CPUs (mapping-too-low)"},
        {"hwthread:PE=2", "map-by: PE=2 needs a mapping object"},
        {"slot:PE=0", "map-by: PE needs a positive number, not \"0\""},
        {"slot:PE=x", "map-by: PE needs a positive number, not \"x\""},
        {"rankfile", "map-by: rankfile needs its file"},
        {"pe-list=0-1:PE=2", "map-by: PE= cannot be combined with rankfile or pe-list"},
        {"pe-list=", "map-by: directive pe-list needs a value after '='"},
        {"pe-list=a", "map-by: pe-list needs a list of CPUs such as 0-3,8, not \"a\""},
        {"core:shared", "map-by: SHARED, NDEV and INTERLEAVE apply only to device= mappings"},
        {"core:ordered", "map-by: ORDERED applies only to pe-list="},
        {"node:span", "map-by: SPAN applies only to object mappings"},
        {"ppr:2", "map-by: ppr needs a pattern ppr:N:OBJECT"},
        {"ppr:x:core", "map-by: ppr needs a positive number"},
        {"ppr:2:bogus", "map-by: unknown ppr object \"bogus\""},
        {"", "map-by: empty policy"},
        {"core::span", "map-by: empty qualifier"},
    };
    for (const auto& c : kCases) {
        const std::string error = map_error(c.text);
        EXPECT_EQ(error.substr(0, c.error.size()), c.error) << c.text;
        EXPECT_EQ(error.find('\n'), std::string::npos);
    }
}

TEST(RankBy, EveryDirectiveAndErrors) {
    EXPECT_EQ(parse_rank_by("slot")->by, RankBy::kSlot);
    EXPECT_EQ(parse_rank_by("NODE")->by, RankBy::kNode);
    EXPECT_EQ(parse_rank_by("fi")->by, RankBy::kFill);
    EXPECT_EQ(parse_rank_by("span")->by, RankBy::kSpan);
    for (std::string_view bad : {"bogus", "core", "s", ""}) {
        auto rank = parse_rank_by(bad);
        ASSERT_FALSE(rank.ok()) << bad;
        EXPECT_NE(rank.error().str().find("Valid directives: slot, node, fill, span"),
                  std::string::npos)
            << rank.error().str();
    }
    EXPECT_EQ(parse_rank_by("slot:span").error().str(),
              "rank-by: takes no qualifiers (Valid directives: slot, node, fill, span) in "
              "\"slot:span\"");
}

TEST(BindTo, EveryDirectiveAndQualifier) {
    struct Case {
        std::string_view text;
        BindTo to;
    };
    constexpr Case kCases[] = {
        {"none", BindTo::kNone},       {"hwthread", BindTo::kHwthread},
        {"core", BindTo::kCore},       {"l1cache", BindTo::kL1Cache},
        {"l2cache", BindTo::kL2Cache}, {"l3cache", BindTo::kL3Cache},
        {"numa", BindTo::kNuma},       {"package", BindTo::kPackage},
        {"socket", BindTo::kPackage},
    };
    for (const auto& c : kCases)
        EXPECT_EQ(parse_bind_to(c.text)->to, c.to) << c.text;
    const auto bind = parse_bind_to("core:overload-allowed:if-supported:LIMIT=2:report");
    ASSERT_TRUE(bind.ok()) << bind.error().str();
    EXPECT_EQ(bind->overload, true);
    EXPECT_TRUE(bind->if_supported);
    EXPECT_EQ(bind->limit, 2u);
    EXPECT_TRUE(bind->report);
    EXPECT_EQ(parse_bind_to("core:no-overload")->overload, false);
    EXPECT_EQ(parse_bind_to("core:limit=x").error().str(),
              "bind-to: LIMIT needs a positive number, not \"x\" in \"core:limit=x\"");
    EXPECT_EQ(parse_bind_to("core:overload-allowed:no-overload").error().str(),
              "bind-to: conflicting qualifiers overload-allowed and no-overload in "
              "\"core:overload-allowed:no-overload\"");
    EXPECT_NE(parse_bind_to("bogus").error().str().find("Valid directives: none, hwthread"),
              std::string::npos);
    EXPECT_NE(parse_bind_to("core:bogus").error().str().find("unknown qualifier"),
              std::string::npos);
}

// ---- resolution -------------------------------------------------------------

JobPolicy resolve_ok(const Directives& job, std::vector<Directives> apps, unsigned nprocs = 8) {
    auto policy = resolve_policies(job, apps, nprocs);
    EXPECT_TRUE(policy.ok()) << policy.error().str();
    return policy ? *policy : JobPolicy{};
}

// An app with no directives of its own gets the job's, unchanged.
TEST(Resolve, AppWithoutDirectivesInheritsTheJob) {
    const JobPolicy policy =
        resolve_ok(directives("numa", "span", "core"), {Directives{}, Directives{}});
    EXPECT_FALSE(policy.per_app);
    for (const AppPolicy& app : policy.apps) {
        EXPECT_EQ(app.map.by, MapBy::kNuma);
        EXPECT_EQ(app.rank.by, RankBy::kSpan);
        EXPECT_EQ(app.bind.to, BindTo::kCore);
        EXPECT_TRUE(app.bind_given);
    }
}

// Section 6.4: an app's own --map-by derives its ranking and binding from
// its own mapping, not from the job's.
TEST(Resolve, OwnMappingDerivesRankingAndBinding) {
    const JobPolicy policy =
        resolve_ok(directives("node", "node", "none"), {Directives{}, directives("package")});
    EXPECT_TRUE(policy.per_app);
    EXPECT_EQ(policy.apps[0].map.by, MapBy::kNode);
    EXPECT_EQ(policy.apps[0].rank.by, RankBy::kNode);
    EXPECT_EQ(policy.apps[0].bind.to, BindTo::kNone);
    EXPECT_EQ(policy.apps[1].map.by, MapBy::kPackage);
    EXPECT_EQ(policy.apps[1].rank.by, RankBy::kFill);
    EXPECT_EQ(policy.apps[1].bind.to, BindTo::kPackage);
    EXPECT_TRUE(policy.apps[1].bind.if_supported);
    EXPECT_FALSE(policy.apps[1].bind_given);
}

TEST(Resolve, DefaultsFollowTheMapping) {
    const JobPolicy policy = resolve_ok(Directives{}, {Directives{}}, 8);
    EXPECT_EQ(policy.apps[0].map.by, MapBy::kCore);  // PRRTE: decided before counting tasks
    EXPECT_EQ(policy.apps[0].rank.by, RankBy::kFill);
    EXPECT_EQ(policy.apps[0].bind.to, BindTo::kCore);
    EXPECT_EQ(resolve_ok(directives("", "", "numa"), {Directives{}}).apps[0].map.by, MapBy::kNuma);
    EXPECT_EQ(resolve_ok(directives("", "", "none"), {Directives{}}).apps[0].map.by, MapBy::kSlot);
    EXPECT_EQ(resolve_ok(directives(":PE=2"), {Directives{}}).apps[0].map.by, MapBy::kSlot);
    EXPECT_EQ(resolve_ok(directives("slot"), {Directives{}}, 3).apps[0].bind.to, BindTo::kNuma);
    EXPECT_EQ(resolve_ok(directives("node"), {Directives{}}, 2).apps[0].bind.to, BindTo::kCore);
    EXPECT_EQ(resolve_ok(directives("core:span"), {Directives{}}).apps[0].rank.by, RankBy::kSpan);
    EXPECT_EQ(resolve_ok(directives("ppr:2:numa"), {Directives{}}).apps[0].bind.to, BindTo::kNuma);
    EXPECT_EQ(resolve_ok(directives("hwthread"), {Directives{}}).apps[0].cpus, CpuUnit::kHwthread);
    EXPECT_EQ(resolve_ok(directives("pe-list=0-1"), {Directives{}}).apps[0].bind.to, BindTo::kCore);
}

// NOLOCAL stays with the app that gave it.
TEST(Resolve, NolocalIsPerApp) {
    const JobPolicy policy =
        resolve_ok(directives("core:nolocal"), {Directives{}, directives("core")});
    EXPECT_TRUE(policy.apps[0].map.nolocal);
    EXPECT_FALSE(policy.apps[1].map.nolocal);
}

// Per-app PE, HWTCPUS and pe-list override the job's.
TEST(Resolve, PerAppQualifiersOverride) {
    const JobPolicy policy =
        resolve_ok(directives("core"),
                   {Directives{}, directives("package:PE=2:hwtcpus"), directives("pe-list=4-5")});
    EXPECT_EQ(policy.apps[1].map.pes, 2u);
    EXPECT_EQ(policy.apps[1].cpus, CpuUnit::kHwthread);
    EXPECT_EQ(policy.apps[2].map.pe_list.str(), "4-5");
}

// Job-wide qualifiers: the first segment's apply to every app.
TEST(Resolve, JobWideQualifiersComeFromTheFirstSegment) {
    const JobPolicy policy =
        resolve_ok(directives("slot:oversubscribe"), {Directives{}, directives("node")});
    EXPECT_TRUE(policy.oversubscribe);
    EXPECT_EQ(policy.apps[1].map.by, MapBy::kNode);
    EXPECT_EQ(policy.apps[1].rank.by, RankBy::kNode);
}

// OVERSUBSCRIBE/NOOVERSUBSCRIBE/INHERIT/NOINHERIT in a later app's --map-by
// are errors that name the app and the qualifier.
TEST(Resolve, JobWideQualifiersPerAppAreRefused) {
    struct Case {
        std::string_view job;
        std::string_view app;
        std::string_view error;
    };
    constexpr Case kCases[] = {
        {"core:oversubscribe", "node:nooversubscribe",
         "map-by: app 1: NOOVERSUBSCRIBE in its --map-by is oversubscription for the whole job and "
         "cannot be given per app; it contradicts the job's OVERSUBSCRIBE (conflicting values); "
         "give it once, in the first segment"},
        {"core", "node:oversubscribe",
         "map-by: app 1: OVERSUBSCRIBE in its --map-by is oversubscription for the whole job and "
         "cannot be given per app; give it once, in the first segment"},
        {"core:inherit", "node:noinherit",
         "map-by: app 1: NOINHERIT in its --map-by is inheritance for the whole job and cannot be "
         "given per app; it contradicts the job's INHERIT (conflicting values); give it once, in "
         "the first segment"},
        {"core", "node:inherit",
         "map-by: app 1: INHERIT in its --map-by is inheritance for the whole job and cannot be "
         "given per app; give it once, in the first segment"},
    };
    for (const auto& c : kCases) {
        const std::vector<Directives> apps = {Directives{}, directives(c.app)};
        auto policy = resolve_policies(directives(c.job), apps, 4);
        ASSERT_FALSE(policy.ok()) << c.app;
        EXPECT_EQ(policy.error().str(), c.error);
    }
}

// Display directives given on an app are the job's.
TEST(Resolve, DisplayIsPromotedToTheJob) {
    const JobPolicy policy =
        resolve_ok(directives("core"), {Directives{}, directives("node:display")});
    EXPECT_TRUE(policy.display_map);
    Directives report;
    report.bind = *parse_bind_to("core:report");
    EXPECT_TRUE(resolve_ok(Directives{}, {Directives{}, report}).report_bindings);
}

TEST(Resolve, RankingAndBindingRulesOfPrrte) {
    const auto refuse = [](std::string_view map, std::string_view rank, std::string_view bind,
                           std::string_view text) {
        const std::vector<Directives> apps = {Directives{}};
        auto policy = resolve_policies(directives(map, rank, bind), apps, 7);
        ASSERT_FALSE(policy.ok()) << map << " " << rank << " " << bind;
        EXPECT_NE(policy.error().str().find(text), std::string::npos) << policy.error().str();
    };
    refuse("slot", "fill", "none", "must-map-by-obj");
    refuse("node", "span", "core", "must-map-by-obj");
    refuse("core", "slot", "package", "lies above the mapping object");
    refuse("hwthread", "slot", "core", "lies above the mapping object");
    refuse("numa", "slot", "package", "lies above the mapping object");
    refuse("package:PE=2", "slot", "numa", "unsupported-combination");
    EXPECT_EQ(resolve_ok(directives("slot", "slot", "package"), {Directives{}}).apps[0].bind.to,
              BindTo::kPackage);
    EXPECT_EQ(resolve_ok(directives("core", "fill", "none"), {Directives{}}).apps[0].bind.to,
              BindTo::kNone);
    EXPECT_EQ(resolve_ok(directives("package", "slot", "core"), {Directives{}}).apps[0].bind.to,
              BindTo::kCore);
}

}  // namespace
}  // namespace gantry
