// Fuzzes the hostlist parser and checks the invariants of what it accepts:
// the encoding parses back to the same hosts, index <-> name lookups agree,
// sort and uniq order the hosts, and the set operations agree with each
// other. The input is one hostlist, or two separated by a newline.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/hostlist.h"

namespace {

using gantry::Hostlist;

// Lists larger than this are checked without host-by-host walks.
constexpr std::size_t kWalkLimit = 4096;

void check(bool condition) {
    if (!condition)
        std::abort();
}

void check_round_trip(const Hostlist& list) {
    const auto reparsed = Hostlist::parse(list.encode());
    check(reparsed.ok());
    check(*reparsed == list);
    check(reparsed->encode() == list.encode());
    check(reparsed->count() == list.count());
}

void check_lookups(const Hostlist& list) {
    if (list.count() > kWalkLimit) {
        check(list.nth(list.count() - 1).has_value());
        check(!list.nth(list.count()).has_value());
        return;
    }
    const auto hosts = list.expand();
    check(hosts.size() == list.count());
    check(Hostlist::from_hosts(hosts) == list);
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        check(list.nth(i) == hosts[i]);
        const auto index = list.find(hosts[i]);
        check(index && *index <= i && hosts[*index] == hosts[i]);
    }
}

void check_order(const Hostlist& list) {
    Hostlist sorted = list;
    sorted.sort();
    Hostlist unique = list;
    unique.uniq();
    check(sorted.count() == list.count());
    check(Hostlist::set_union(list, list) == unique);
    check(Hostlist::set_intersection(list, list) == unique);
    check(Hostlist::set_difference(list, list).empty());
    if (sorted.count() > kWalkLimit)
        return;
    const auto hosts = sorted.expand();
    for (std::size_t i = 1; i < hosts.size(); ++i)
        check(Hostlist::compare(hosts[i - 1], hosts[i]) <= 0);
    const auto distinct = unique.expand();
    for (std::size_t i = 1; i < distinct.size(); ++i)
        check(Hostlist::compare(distinct[i - 1], distinct[i]) < 0);
}

void check_sets(const Hostlist& a, const Hostlist& b) {
    const Hostlist both = Hostlist::set_intersection(a, b);
    const Hostlist either = Hostlist::set_union(a, b);
    const Hostlist only_a = Hostlist::set_difference(a, b);
    const Hostlist only_b = Hostlist::set_difference(b, a);
    const Hostlist one = Hostlist::set_xor(a, b);
    check(either.count() == both.count() + only_a.count() + only_b.count());
    check(one == Hostlist::set_union(only_a, only_b));
    check(Hostlist::set_intersection(only_a, b).empty());
    check_round_trip(either);
    check_round_trip(one);
    Hostlist rest = a;
    const std::size_t removed = rest.remove_each(b);
    check(rest.count() + removed == a.count());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t newline = input.find('\n');
    const auto a = Hostlist::parse(input.substr(0, newline));
    if (newline == std::string_view::npos) {
        if (a.ok()) {
            check_round_trip(*a);
            check_lookups(*a);
            check_order(*a);
        }
        return 0;
    }
    const auto b = Hostlist::parse(input.substr(newline + 1));
    if (a.ok() && b.ok())
        check_sets(*a, *b);
    return 0;
}
