// Fuzzes Jobspec::parse, checking that a jobspec it accepts is written and
// read back to the same value and the same text, and that a refused one
// gets a one-line message.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "formats/jobspec.h"

namespace {

using gantry::IdSet;
using gantry::Jobspec;
using gantry::Json;
using gantry::ResourceSet;

// An embedded R naming more ranks than this is parsed only when the library
// must refuse it (more than kMaxRanks): expanding it rank by rank would make
// each run slow without finding anything new.
constexpr std::uint64_t kMaxFuzzRanks = 4096;

void require(bool condition) {
    if (!condition)
        std::abort();
}

// The ranks the R_lite of the embedded R names, counted from the idsets alone.
std::uint64_t ranks_named(const Json& document) {
    if (!document.is_object() || !document.contains("resources"))
        return 0;
    const Json& resources = document["resources"];
    if (!resources.is_object() || !resources.contains("R"))
        return 0;
    const Json& R = resources["R"];
    if (!R.is_object() || !R.contains("execution") || !R["execution"].is_object() ||
        !R["execution"].contains("R_lite") || !R["execution"]["R_lite"].is_array())
        return 0;
    std::uint64_t total = 0;
    for (const auto& entry : R["execution"]["R_lite"]) {
        if (!entry.is_object() || !entry.contains("rank") || !entry["rank"].is_string())
            continue;
        const auto ranks = IdSet::parse(entry["rank"].get<std::string>());
        if (ranks.ok())
            total += ranks->count();
    }
    return total;
}

bool too_slow(std::string_view text) {
    const auto document = Json::parse(text.begin(), text.end(), nullptr, false);
    if (document.is_discarded())
        return false;
    const std::uint64_t ranks = ranks_named(document);
    return ranks > kMaxFuzzRanks && ranks <= ResourceSet::kMaxRanks;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (too_slow(text))
        return 0;
    const auto spec = Jobspec::parse(text);
    if (!spec.ok()) {
        const std::string message = spec.error().str();
        require(message.starts_with("jobspec: "));
        require(message.find('\n') == std::string::npos);
        return 0;
    }
    const std::string encoded = spec->encode();
    const auto again = Jobspec::parse(encoded);
    require(again.ok());
    require(*again == *spec);
    require(again->encode() == encoded);
    require(Jobspec::from_json(spec->to_json()).value() == *spec);
    return 0;
}
