// An RFC 29 hostlist: an ordered list of host names (repeats allowed), held
// as runs `prefix[lo-hi]suffix` so a million hosts in a few ranges take a
// few runs of memory; index <-> name lookups, sorting and the set operations
// work on the runs without expanding them.
//
// Rules, the canonical encoding and the sort order: docs/formats/hostlist.md.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry {

class Hostlist {
public:
    // Most hosts one range element of a parsed hostlist may hold (`foo[0-1048575]`).
    static constexpr std::uint64_t kMaxRangeHosts = std::uint64_t{1} << 20;
    // Ids in brackets have at most this many digits (zero padding included).
    static constexpr std::size_t kMaxIdDigits = 18;

    // The unit of the representation (public for the format's own helpers;
    // callers use the functions below). One expression: prefix + zero-padded numbers lo..hi +
    // suffix, or a literal name (in `prefix`, lo = hi = 0) when `numbered` is false.
    struct Run {
        std::string prefix;
        std::string suffix;
        bool numbered = false;
        std::size_t width = 0;  // digits, zero-padded; 0 when padding changes no number
        std::uint64_t lo = 0;
        std::uint64_t hi = 0;  // inclusive
        std::size_t size() const { return static_cast<std::size_t>(hi - lo + 1); }
        std::string name(std::uint64_t n) const;
        // The number of `host` in this run, if the run holds it.
        std::optional<std::uint64_t> number_of(std::string_view host) const;
    };

    Hostlist() = default;

    // Parses `foo[1-3,5]-eth0,bar`, `""`; errors say where.
    static Result<Hostlist> parse(std::string_view text);
    // Builds a list from host names in order (each taken as one literal host;
    // names are expected to be RFC 29 host names, or encode() will not parse).
    static Hostlist from_hosts(const std::vector<std::string>& hosts);

    std::string encode() const;  // canonical compressed form, order kept
    std::vector<std::string> expand() const;

    bool empty() const { return runs_.empty(); }
    std::size_t count() const;                                     // O(runs)
    std::optional<std::string> nth(std::size_t index) const;       // 0-based, O(runs)
    std::optional<std::size_t> find(std::string_view host) const;  // first index, O(runs)
    Hostlist slice(std::size_t first, std::size_t last) const;     // hosts at [first, last)

    void append(const Hostlist& other);
    void append(std::string_view host);         // one literal host name
    std::size_t remove(std::string_view host);  // every occurrence; returns how many
    // For each host of `hosts` in order, removes its first remaining
    // occurrence (flux's hostlist_delete); returns how many were removed.
    std::size_t remove_each(const Hostlist& hosts);

    void sort();  // natural order (Hostlist::compare); repeats kept
    void uniq();  // sort, then drop repeats (as flux's hostlist_uniq)

    // Set operations, as `flux hostlist` does them: results sorted and unique.
    static Hostlist set_union(const Hostlist& a, const Hostlist& b);
    static Hostlist set_intersection(const Hostlist& a, const Hostlist& b);
    static Hostlist set_difference(const Hostlist& a, const Hostlist& b);
    static Hostlist set_xor(const Hostlist& a, const Hostlist& b);

    // The natural order of host names used by sort(): names are compared as
    // sequences of chunks (maximal runs of digits or of other bytes); digit
    // chunks by length, then byte by byte (so 9 < 10 < 010), other chunks
    // byte by byte, a digit chunk before another chunk, a shorter sequence
    // first. For `prefix<number>suffix` names: prefix, then number, then suffix.
    static std::strong_ordering compare(std::string_view a, std::string_view b);

    // Same hosts in the same order; compares run by run, never expands.
    friend bool operator==(const Hostlist& a, const Hostlist& b);

private:
    void append_run(Run run);  // merges into the last run when it continues it
    static std::vector<Run> sorted(const std::vector<Run>& runs, bool unique);
    enum class Keep { kAOnly = 1, kBOnly = 2, kBoth = 4 };
    static Hostlist combine(const Hostlist& a, const Hostlist& b, int keep);

    std::vector<Run> runs_;
};

}  // namespace gantry
