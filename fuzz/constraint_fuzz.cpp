// Fuzzes parse_constraint_query: any constraint it compiles is an object
// that ResourceSet::constraint_ranks evaluates without error on an R with
// hosts and properties, and compiles alike twice; any error is one of its
// own, on one line, at a place within the input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "formats/constraint.h"
#include "formats/rset.h"

namespace {

using namespace gantry;

void require(bool condition) {
    if (!condition)
        std::abort();
}

const ResourceSet& machine() {
    static const ResourceSet set = [] {
        ResourceSet r;
        for (ResourceSet::Rank rank = 0; rank < 4; ++rank)
            (void)r.insert(rank, {"n" + std::to_string(rank), IdSet::range(0, 1), {}});
        (void)r.set_property("gpu", IdSet::range(2, 3));
        (void)r.set_property("a", IdSet{0});
        return r;
    }();
    return set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(bytes), size);
    const auto compiled = parse_constraint_query(text);
    if (!compiled) {
        require(compiled.error().domain() == "constraint");
        require(compiled.error().offset().value_or(0) <= size);
        require(compiled.error().str().find('\n') == std::string::npos);
        return 0;
    }
    require(compiled->is_object() && compiled->size() == 1);
    const auto ranks = machine().constraint_ranks(*compiled, "constraint");
    require(ranks.ok() && machine().ranks().contains(*ranks));
    const auto again = parse_constraint_query(text);
    require(again.ok() && *again == *compiled);
    return 0;
}
