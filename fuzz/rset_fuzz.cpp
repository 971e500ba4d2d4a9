// Fuzzes ResourceSet::parse_all over one or more JSON documents, checking that
// every set parses back from its emission to the same value, that its short
// form and counts agree with its ranks, and that set identities hold between
// the documents of one input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rset.h"

namespace {

using gantry::IdSet;
using gantry::Json;
using gantry::ResourceSet;

// Documents naming more ranks than this are parsed only when the library
// must refuse them (more than kMaxRanks): per-rank work between the two would
// make each run slow without finding anything new.
constexpr std::uint64_t kMaxFuzzRanks = 4096;

void require(bool condition) {
    if (!condition)
        std::abort();
}

// The ranks a document's R_lite names, counted from the idsets alone.
std::uint64_t ranks_named(const Json& document) {
    if (!document.is_object() || !document.contains("execution") ||
        !document["execution"].is_object() || !document["execution"].contains("R_lite") ||
        !document["execution"]["R_lite"].is_array())
        return 0;
    std::uint64_t total = 0;
    for (const auto& entry : document["execution"]["R_lite"]) {
        if (!entry.is_object() || !entry.contains("rank") || !entry["rank"].is_string())
            continue;
        const auto ranks = IdSet::parse(entry["rank"].get<std::string>());
        if (ranks.ok())
            total += ranks->count();
    }
    return total;
}

bool too_slow(std::string_view text) {
    auto documents = Json::parse(text.begin(), text.end(), nullptr, false);
    if (documents.is_discarded())
        return false;
    const std::uint64_t ranks = ranks_named(documents);
    return ranks > kMaxFuzzRanks && ranks <= ResourceSet::kMaxRanks;
}

void check_one(const ResourceSet& set) {
    const std::string encoded = set.encode();
    const auto again = ResourceSet::parse(encoded);
    require(again.ok());
    require(*again == set);
    require(again->encode() == encoded);
    require(ResourceSet::from_json(set.to_json()).value() == set);
    require(set.ranks().count() == set.nnodes());
    require(set.nodelist().count() <= set.nnodes());
    (void)set.short_form();
    require(set.diff(set).empty());
    require(set.remap().nnodes() == set.nnodes());
    require(set.copy_ranks(set.ranks()).nnodes() == set.nnodes());
    require(set.remove_ranks(set.ranks()).empty());
    if (set.has_hostnames() && !set.empty()) {
        const auto reranked = set.rerank(set.nodelist().encode());
        require(reranked.ok());
        require(reranked->nodelist().encode() == set.nodelist().encode());
    }
}

void check_pair(const ResourceSet& a, const ResourceSet& b) {
    require(a.diff(b).intersect(b).empty());
    const auto both = a.add(b);
    if (!both.ok())
        return;  // a rank with a different host in each
    require(both->diff(a).diff(b).empty());
    const auto appended = a.append(b);
    if (appended.ok())
        require(appended->encode() == both->encode());
    (void)a.verify(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (too_slow(text))
        return 0;
    const auto sets = ResourceSet::parse_all(text);
    if (!sets.ok()) {
        require(!sets.error().str().empty());
        return 0;
    }
    for (const auto& set : *sets)
        check_one(set);
    for (std::size_t i = 1; i < sets->size(); ++i)
        check_pair((*sets)[i - 1], (*sets)[i]);
    return 0;
}
