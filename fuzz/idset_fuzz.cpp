// Fuzzes IdSet::parse and checks what must hold for any set it accepts:
// well-formed ranges, encode -> parse round trips in every encoding, and the
// algebra of union, difference and intersection. The input is also split at
// its first byte 0xff (or in half) into two idsets for the binary operations.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/idset.h"

namespace {

using gantry::IdSet;

void require(bool condition) {
    if (!condition)
        std::abort();
}

void check_well_formed(const IdSet& set) {
    const auto ranges = set.ranges();
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        require(ranges[i].lo <= ranges[i].hi && ranges[i].hi <= IdSet::kMaxId);
        if (i > 0)
            require(ranges[i].lo > std::uint64_t{ranges[i - 1].hi} + 1);
        count += std::uint64_t{ranges[i].hi} - ranges[i].lo + 1;
    }
    require(count == set.count());
    require(set.empty() == ranges.empty());
}

void check_round_trips(const IdSet& set) {
    for (const bool brackets : {false, true}) {
        const auto again = IdSet::parse(set.encode({.ranges = true, .brackets = brackets}));
        require(again.ok() && *again == set);
    }
    // A plain list of a huge set is gigabytes; the range encodings cover it.
    if (set.count() <= 100000) {
        const auto again = IdSet::parse(set.encode({.ranges = false, .brackets = true}));
        require(again.ok() && *again == set);
    }
}

void check_lookups(const IdSet& set) {
    if (set.empty()) {
        require(!set.first() && !set.last() && !set.nth(0));
        return;
    }
    const IdSet::Id first = *set.first();
    const IdSet::Id last = *set.last();
    require(set.contains(first) && set.contains(last));
    require(set.nth(0) == first && set.nth(set.count() - 1) == last && !set.nth(set.count()));
    require(set.index_of(last) == set.count() - 1);
    require(!set.next(last));
    for (const IdSet::Range& r : set.ranges()) {
        require(set.contains(r.lo) && set.contains(r.hi));
        if (r.lo > 0)
            require(!set.contains(r.lo - 1));
        require(!set.contains(r.hi + 1) || r.hi == IdSet::kMaxId);
        require(set.nth(*set.index_of(r.hi)) == r.hi);
    }
}

void check_algebra(const IdSet& a, const IdSet& b) {
    const IdSet both = a | b;
    const IdSet only_a = a - b;
    const IdSet common = a & b;
    check_well_formed(both);
    check_well_formed(only_a);
    check_well_formed(common);
    require(both == (b | a) && common == (b & a));
    require(both.contains(a) && both.contains(b));
    require(a.contains(common) && b.contains(common));
    require(!only_a.intersects(b) && (only_a | common) == a);
    require(both.count() == a.count() + b.count() - common.count());
    require(a.intersects(b) == !common.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(bytes), size);
    const auto whole = IdSet::parse(text);
    if (whole) {
        check_well_formed(*whole);
        check_round_trips(*whole);
        check_lookups(*whole);
    } else {
        require(whole.error().domain() == "idset");
        require(whole.error().offset().value_or(0) <= size);
    }

    std::size_t split = text.find('\xff');
    const std::size_t rest = split == std::string_view::npos ? size / 2 : split + 1;
    if (split == std::string_view::npos)
        split = size / 2;
    const auto a = IdSet::parse(text.substr(0, split));
    const auto b = IdSet::parse(text.substr(rest));
    if (a && b)
        check_algebra(*a, *b);
    return 0;
}
