// IdSet against the conformance vectors (idset.json, idset_ops.json): every
// valid and invalid record is a case. Records marked QUIRK hold flux-core
// behaviour that gantry does not copy; they are checked against gantry's rule.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/idset.h"
#include "support/vectors.h"

namespace gantry {
namespace {

bool is_quirk(const Json& record) {
    return record.contains("note") && record["note"].get<std::string>().starts_with("QUIRK");
}

// The flag names of idset.json's `encode` object.
std::optional<IdSet::EncodeOptions> options_named(const std::string& flags) {
    if (flags == "0")
        return IdSet::EncodeOptions{.ranges = false, .brackets = false};
    if (flags == "RANGE")
        return IdSet::EncodeOptions{.ranges = true, .brackets = false};
    if (flags == "RANGE|BRACKETS")
        return IdSet::EncodeOptions{.ranges = true, .brackets = true};
    if (flags == "BRACKETS")
        return IdSet::EncodeOptions{.ranges = false, .brackets = true};
    return std::nullopt;
}

void check_valid(const Json& record) {
    const auto input = record["input"].get<std::string>();
    const auto set = IdSet::parse(input);
    ASSERT_TRUE(set.ok()) << input << ": " << set.error().str();
    EXPECT_EQ(set->count(), record["count"].get<std::uint64_t>()) << input;
    if (record.contains("ids")) {
        EXPECT_EQ(std::vector<IdSet::Id>(set->begin(), set->end()),
                  record["ids"].get<std::vector<IdSet::Id>>())
            << input;
    } else {
        const auto first_last = record["ids_first_last"].get<std::vector<IdSet::Id>>();
        EXPECT_EQ(set->first(), first_last.at(0)) << input;
        EXPECT_EQ(set->last(), first_last.at(1)) << input;
    }
    for (const auto& [flags, expected] : record["encode"].items()) {
        if (expected.is_null())
            continue;  // the vectors omit long plain lists
        const auto options = options_named(flags);
        ASSERT_TRUE(options) << "unknown encode flags " << flags;
        EXPECT_EQ(set->encode(*options), expected.get<std::string>()) << input << " " << flags;
    }
}

// gantry's messages differ from flux-core's; the kind of problem must agree.
void check_invalid(const Json& record) {
    const auto input = record["input"].get<std::string>();
    const auto set = IdSet::parse(input);
    ASSERT_FALSE(set.ok()) << input << " parsed as " << set->encode();
    const Error& error = set.error();
    EXPECT_EQ(error.domain(), "idset") << input;
    EXPECT_EQ(error.input(), input);
    ASSERT_TRUE(error.offset().has_value()) << error.str();
    EXPECT_LE(*error.offset(), input.size()) << error.str();

    const auto flux_error = record.value("error", std::string());
    if (flux_error.find("out of order") != std::string::npos) {
        EXPECT_EQ(error.message(), "ids out of order") << input;
    }
    if (flux_error == "mismatched or nested brackets") {
        EXPECT_NE(error.message().find_first_of("[]"), std::string::npos) << error.str();
    }
    if (flux_error.find("universe size") != std::string::npos ||
        flux_error.find("Invalid argument") != std::string::npos || is_quirk(record)) {
        EXPECT_EQ(error.message(), "id is larger than 2147483647") << input;
    }
}

TEST(IdSetVectors, DecodeAndEncode) {
    GANTRY_REQUIRE_VECTORS();
    const Json records = test::load_vector_json("idset.json");
    ASSERT_EQ(records.size(), 97u);
    int valid = 0, invalid = 0, quirks = 0;
    for (const Json& record : records) {
        SCOPED_TRACE(record.dump());
        // A QUIRK record is a value flux-core wraps past 2^32; gantry rejects it.
        if (is_quirk(record)) {
            ++quirks;
            check_invalid(record);
        } else if (record["valid"].get<bool>()) {
            ++valid;
            check_valid(record);
        } else {
            ++invalid;
            check_invalid(record);
        }
    }
    EXPECT_EQ(valid + quirks, 52);
    EXPECT_EQ(invalid, 45);
    EXPECT_EQ(quirks, 2);
}

IdSet parsed(const Json& text) {
    return IdSet::parse(text.get<std::string>()).value();
}

// The C API's NULL arguments have no counterpart here: a null `b` that
// flux-core treats as the empty set is checked as the empty set, and the
// rows where a null is an error are skipped.
TEST(IdSetVectors, BinaryOperations) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("idset_ops.json");
    int checked = 0;
    for (const Json& row : ops["binary_ops"]) {
        SCOPED_TRACE(row.dump());
        if (row.contains("errno") || row["a"].is_null())
            continue;
        const std::string op = row["op"].get<std::string>();
        std::vector<IdSet> others;
        if (row["b"].is_array()) {
            for (const Json& b : row["b"])
                others.push_back(parsed(b));
        } else if (!row["b"].is_null()) {
            others.push_back(parsed(row["b"]));
        }
        IdSet result = parsed(row["a"]);
        for (const IdSet& b : others) {
            if (op.starts_with("union") || op.starts_with("add"))
                result |= b;
            else if (op.starts_with("difference") || op.starts_with("subtract"))
                result -= b;
            else if (op.starts_with("intersect"))
                result &= b;
            else
                FAIL() << "unknown op " << op;
        }
        EXPECT_EQ(result, parsed(row["result"])) << result.encode();
        ++checked;
    }
    EXPECT_EQ(checked, 32);  // 38 rows less the 6 whose null argument is an error
}

TEST(IdSetVectors, DecodeInfo) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("idset_ops.json");
    for (const Json& row : ops["decode_info"]) {
        SCOPED_TRACE(row.dump());
        const auto set = IdSet::parse(row["input"].get<std::string>());
        if (row.contains("error")) {
            EXPECT_FALSE(set.ok());
            continue;
        }
        ASSERT_TRUE(set.ok()) << set.error().str();
        EXPECT_EQ(set->count(), row["count"].get<std::uint64_t>());
        if (row["maxid"].is_null()) {
            EXPECT_EQ(set->last(), std::nullopt);
        } else {
            EXPECT_EQ(set->last(), row["maxid"].get<IdSet::Id>());
        }
    }
}

}  // namespace
}  // namespace gantry
