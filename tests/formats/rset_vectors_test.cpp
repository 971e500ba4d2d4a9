// RFC 20 R against the conformance vectors: R/index.json and rlist_ops.json.
#include <gtest/gtest.h>

#include "formats/rset.h"
#include "support/vectors.h"

namespace gantry {
namespace {

ResourceSet parse_json_ok(const Json& document) {
    auto set = ResourceSet::from_json(document);
    EXPECT_TRUE(set.ok()) << document << ": " << (set.ok() ? "" : set.error().str());
    return set.ok() ? *set : ResourceSet{};
}

// flux-core leaves `core` out of a rank that has only GPUs; RFC 20 requires
// it, and gantry writes `"core": ""`. Expected documents are compared in
// gantry's form.
Json with_core_keys(Json document) {
    if (document.contains("execution") && document["execution"].contains("R_lite"))
        for (auto& entry : document["execution"]["R_lite"])
            if (!entry["children"].contains("core"))
                entry["children"]["core"] = "";
    return document;
}

void expect_result(const ResourceSet& result, const Json& record, const std::string& what) {
    EXPECT_EQ(result.short_form(), record["result_short"].get<std::string>()) << what;
    if (record.contains("result_nodelist")) {
        EXPECT_EQ(result.nodelist().encode(), record["result_nodelist"].get<std::string>()) << what;
    }
    if (record.contains("result_ncores")) {
        EXPECT_EQ(result.ncores(), record["result_ncores"].get<std::uint64_t>()) << what;
    }
    if (record.contains("result_nnodes")) {
        EXPECT_EQ(result.nnodes(), record["result_nnodes"].get<std::size_t>()) << what;
    }
    if (record.contains("result_R")) {
        EXPECT_EQ(result.to_json(), with_core_keys(record["result_R"])) << what;
    }
}

TEST(ResourceSetVectors, Documents) {
    GANTRY_REQUIRE_VECTORS();
    const Json index = test::load_vector_json("R/index.json");
    ASSERT_EQ(index["documents"].size(), 25u);
    for (const auto& doc : index["documents"]) {
        const std::string file = doc["file"];
        const std::string text = test::read_file(*test::vectors_dir() / "R" / file);
        auto set = ResourceSet::parse(text);
        if (file == "flux-R-empty-R_lite-object.json") {
            // flux-core takes an object for R_lite (a quirk); RFC 20 says array.
            ASSERT_FALSE(set.ok());
            EXPECT_EQ(set.error().str(), "R: execution.R_lite: expected an array, got object");
            continue;
        }
        ASSERT_TRUE(set.ok()) << file << ": " << set.error().str();
        EXPECT_EQ(set->short_form(), doc["short"].get<std::string>()) << file;
        EXPECT_EQ(set->ranks().encode(), doc["ranks"].get<std::string>()) << file;
        EXPECT_EQ(set->nodelist().encode(), doc["nodelist"].get<std::string>()) << file;
        EXPECT_EQ(set->nnodes(), doc["nnodes"].get<std::size_t>()) << file;
        EXPECT_EQ(set->ncores(), doc["ncores"].get<std::uint64_t>()) << file;
        EXPECT_EQ(set->ngpus(), doc["ngpus"].get<std::uint64_t>()) << file;
        EXPECT_EQ(set->to_json(), with_core_keys(doc["reencoded_by_librlist"])) << file;
        EXPECT_EQ(ResourceSet::parse(set->encode()).value(), *set) << file;
    }
}

TEST(ResourceSetVectors, InvalidDocuments) {
    GANTRY_REQUIRE_VECTORS();
    const Json index = test::load_vector_json("R/index.json");
    ASSERT_EQ(index["invalid"].size(), 10u);
    // Every one fails, including the `fo!o` property that flux-core accepts
    // and RFC 20 forbids.
    for (const auto& record : index["invalid"]) {
        const auto set = ResourceSet::from_json(record["doc"]);
        EXPECT_FALSE(set.ok()) << record["doc"];
    }
}

TEST(ResourceSetVectors, BinaryOperations) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    for (const std::string op : {"diff", "union", "intersect", "append", "add"}) {
        ASSERT_FALSE(ops[op].empty()) << op;
        for (const auto& record : ops[op]) {
            const ResourceSet a = parse_json_ok(record["a"]);
            const ResourceSet b = parse_json_ok(record["b"]);
            const std::string what =
                op + " " + to_compact(record["a"]) + " " + to_compact(record["b"]);
            if (op == "diff") {
                expect_result(a.diff(b), record, what);
            } else if (op == "intersect") {
                expect_result(a.intersect(b), record, what);
            } else {
                const auto result = op == "append" ? a.append(b) : a.add(b);
                ASSERT_TRUE(result.ok()) << what << ": " << result.error().str();
                expect_result(*result, record, what);
            }
        }
    }
}

TEST(ResourceSetVectors, RemapAssignRerank) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    int checked = 0;
    for (const auto& record : ops["remap"]) {
        if (!record.contains("input"))
            continue;  // a `flux R` command line: tests/cli/rset_cmd_test.cpp
        EXPECT_EQ(parse_json_ok(record["input"]).remap().short_form(),
                  record["result_short"].get<std::string>());
        ++checked;
    }
    for (const auto& record : ops["assign_hosts"]) {
        ResourceSet set = parse_json_ok(record["input"]);
        ASSERT_TRUE(
            set.assign_hosts(Hostlist::parse(record["hosts"].get<std::string>()).value()).ok());
        EXPECT_EQ(set.nodelist().encode(), record["nodelist_after"].get<std::string>());
        ++checked;
    }
    for (const auto& record : ops["rerank"]) {
        if (!record.contains("input"))
            continue;
        const auto result =
            parse_json_ok(record["input"]).rerank(record["hosts"].get<std::string>());
        if (record.contains("error")) {
            EXPECT_FALSE(result.ok()) << record["hosts"];
        } else {
            ASSERT_TRUE(result.ok()) << result.error().str();
            EXPECT_EQ(result->nodelist().encode(), record["nodelist_after"].get<std::string>());
            EXPECT_EQ(result->find(0)->hostname, "foo1");
            EXPECT_EQ(result->find(15)->hostname, "foo0");
        }
        ++checked;
    }
    EXPECT_EQ(checked, 8);
}

TEST(ResourceSetVectors, CopyAndRemoveRanks) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    for (const auto& record : ops["copy_ranks"]) {
        const ResourceSet set = parse_json_ok(record["input"]);
        const ResourceSet copy =
            set.copy_ranks(IdSet::parse(record["ranks"].get<std::string>()).value());
        EXPECT_EQ(copy.short_form(), record["result_short"].get<std::string>());
        EXPECT_EQ(copy.nnodes(), record["nnodes"].get<std::size_t>());
        if (record.contains("ncores")) {
            EXPECT_EQ(copy.ncores(), record["ncores"].get<std::uint64_t>());
        }
    }
    for (const auto& record : ops["remove_ranks"]) {
        const ResourceSet set = parse_json_ok(record["input"]);
        if (record.contains("ops")) {
            // remove_ranks(0-1); mark_down(0-2): a down rank leaves the short
            // form, and a missing one is ignored, as removing it is.
            const ResourceSet left =
                set.remove_ranks(IdSet::range(0, 1)).remove_ranks(IdSet::range(0, 2));
            EXPECT_EQ(left.short_form(), record["result_short"].get<std::string>());
            continue;
        }
        const ResourceSet left =
            set.remove_ranks(IdSet::parse(record["ranks"].get<std::string>()).value());
        EXPECT_EQ(left.short_form(), record["result_short"].get<std::string>());
        EXPECT_EQ(set.nnodes() - left.nnodes(), record["removed"].get<std::size_t>());
    }
}

ResourceSet with_cores_on(const std::string& ranks, const std::string& hosts) {
    const Json document = {
        {"version", 1},
        {"execution",
         {{"R_lite", {{{"rank", ranks}, {"children", {{"core", "0"}}}}}}, {"nodelist", {hosts}}}}};
    return parse_json_ok(document);
}

TEST(ResourceSetVectors, HostsToRanks) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    ASSERT_EQ(ops["hosts_to_ranks"].size(), 5u);
    for (const auto& record : ops["hosts_to_ranks"]) {
        const ResourceSet set = with_cores_on(record["ranks"], record["nodelist"]);
        const auto ranks = set.hosts_to_ranks(record["hosts"].get<std::string>());
        if (record["result"].is_null()) {
            EXPECT_FALSE(ranks.ok()) << record["hosts"];
        } else {
            ASSERT_TRUE(ranks.ok()) << ranks.error().str();
            EXPECT_EQ(ranks->encode(), record["result"].get<std::string>());
        }
    }
}

TEST(ResourceSetVectors, Dumps) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    for (const auto& record : ops["dumps"]) {
        ResourceSet set;
        for (const auto& append : record["appends"])
            ASSERT_TRUE(
                set.insert(append[1].get<ResourceSet::Rank>(),
                           {append[0], IdSet::parse(append[2].get<std::string>()).value(), {}})
                    .ok());
        EXPECT_EQ(set.short_form(), record["dumps"].get<std::string>());
    }
}

ResourceSet from_verify_spec(const Json& spec) {
    ResourceSet set;
    const IdSet cores = IdSet::parse(spec["cores"].get<std::string>()).value();
    const IdSet gpus = IdSet::parse(spec["gpus"].get<std::string>()).value();
    const IdSet ranks = IdSet::parse(spec["ranks"].get<std::string>()).value();
    for (const auto rank : ranks) {
        EXPECT_TRUE(set.insert(rank, {"", cores, gpus}).ok());
    }
    if (!spec["hosts"].is_null()) {
        EXPECT_TRUE(
            set.assign_hosts(Hostlist::parse(spec["hosts"].get<std::string>()).value()).ok());
    }
    return set;
}

TEST(ResourceSetVectors, Verify) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    ASSERT_EQ(ops["verify"]["cases"].size(), 25u);
    for (const auto& record : ops["verify"]["cases"]) {
        const ResourceSet expected = from_verify_spec(record["expected"]);
        const ResourceSet actual = from_verify_spec(record["actual"]);
        const auto policy = VerifyPolicy::from_json(record["config"]);
        ASSERT_TRUE(policy.ok()) << policy.error().str();
        const Verification verdict = expected.verify(actual, *policy);
        const int rc = record["rc"];
        const auto outcome = rc == 0   ? Verification::Outcome::kMatch
                             : rc == 1 ? Verification::Outcome::kExtra
                                       : Verification::Outcome::kMissing;
        EXPECT_EQ(verdict.outcome, outcome) << record;
        EXPECT_EQ(verdict.message, record["message"].get<std::string>()) << record;
    }
}

TEST(ResourceSetVectors, PropertiesAndConstraints) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    const Json& section = ops["properties_and_constraints"];
    const ResourceSet base = parse_json_ok(section["base"]);
    int checked = 0;
    for (const auto& record : section["cases"]) {
        if (record.contains("properties")) {
            Json document = section["base"];
            const Json& properties = record["properties"];
            document["execution"]["properties"] =
                properties.is_string() ? Json::parse(properties.get<std::string>()) : properties;
            EXPECT_FALSE(ResourceSet::from_json(document).ok()) << record;
        } else {
            const auto copy = base.copy_constraint(record["constraint"]);
            ASSERT_TRUE(copy.ok()) << copy.error().str();
            EXPECT_EQ(copy->short_form(), record["result_short"].get<std::string>()) << record;
        }
        ++checked;
    }
    EXPECT_EQ(checked, 14);
    EXPECT_EQ(section["properties_encode_empty"], "{}");
    EXPECT_TRUE(parse_json_ok(section["base"]).copy_ranks(IdSet{8}).properties().empty());
}

}  // namespace
}  // namespace gantry
