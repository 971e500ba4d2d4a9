// An RFC 29 hostlist: an ordered list of host names (repeats allowed), held
// as ranges `prefix[lo-hi]suffix` so a million hosts in a few ranges take a
// few ranges of memory; index <-> name lookups work on the ranges.
//
// Rules and the canonical encoding: docs/formats/hostlist.md.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry {

class Hostlist {
public:
    Hostlist() = default;

    // Parses `foo[1-3,5]-eth0,bar`, `""`; errors say where.
    static Result<Hostlist> parse(std::string_view text);
    // Builds a list from host names in order (each taken as one literal host).
    static Hostlist from_hosts(const std::vector<std::string>& hosts);

    std::string encode() const;  // canonical compressed form, order kept
    std::vector<std::string> expand() const;

    bool empty() const { return count() == 0; }
    std::size_t count() const;
    std::optional<std::string> nth(std::size_t index) const;  // 0-based
    std::optional<std::size_t> find(std::string_view host) const;  // first index

    void append(const Hostlist& other);
    void append(std::string_view host);  // one literal host name
    std::size_t remove(std::string_view host);  // every occurrence; returns how many

    void sort();  // by prefix, then number, then suffix (natural order)
    void uniq();  // drop repeats (keeps the first occurrence of each name)

    // Set operations, as `flux hostlist` does them: results sorted and unique.
    static Hostlist set_union(const Hostlist& a, const Hostlist& b);
    static Hostlist set_intersection(const Hostlist& a, const Hostlist& b);
    static Hostlist set_difference(const Hostlist& a, const Hostlist& b);
    static Hostlist set_xor(const Hostlist& a, const Hostlist& b);

    friend bool operator==(const Hostlist& a, const Hostlist& b) {
        return a.expand() == b.expand();
    }

private:
    // One expression: prefix + zero-padded numbers lo..hi + suffix, or a
    // literal name when `numbered` is false.
    struct Run {
        std::string prefix;
        std::string suffix;
        bool numbered = false;
        std::size_t width = 0;  // digits, zero-padded; 0 means no padding
        std::uint64_t lo = 0;
        std::uint64_t hi = 0;  // inclusive
        std::size_t size() const { return numbered ? static_cast<std::size_t>(hi - lo + 1) : 1; }
    };
    std::vector<Run> runs_;
};

}  // namespace gantry
