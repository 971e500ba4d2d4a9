// An RFC 22 idset: a set of non-negative integer ids, held as sorted,
// disjoint, non-adjacent inclusive ranges, so `0-2147483647` costs two numbers.
//
// Rules and encodings: docs/formats/idset.md.
#pragma once

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry {

class IdSet {
public:
    using Id = std::uint32_t;
    static constexpr Id kMaxId = 2147483647;  // 2^31 - 1, the largest id RFC 22 allows here

    struct Range {
        Id lo;
        Id hi;  // inclusive
        friend bool operator==(const Range&, const Range&) = default;
    };

    struct EncodeOptions {
        bool ranges = true;     // `2-5` rather than `2,3,4,5`
        bool brackets = false;  // `[2-5]`, only when the set has more than one id
    };

    IdSet() = default;
    IdSet(std::initializer_list<Id> ids);
    static IdSet range(Id lo, Id hi);  // [lo, hi]; empty when lo > hi
    // The union of `ranges`, given in any order, overlapping or not:
    // O(n log n), where a fold of |= over n sets would be quadratic.
    static IdSet from_ranges(std::vector<Range> ranges);

    // Parses `1-3,5`, `[1-3,5]`, `""`, `[]`; errors say where.
    static Result<IdSet> parse(std::string_view text);
    std::string encode() const;  // canonical: ranges, no brackets
    std::string encode(EncodeOptions options) const;
    std::string str() const { return encode(); }

    bool empty() const { return ranges_.empty(); }
    std::uint64_t count() const;              // O(1)
    bool contains(Id id) const;               // O(log ranges)
    bool contains(const IdSet& other) const;  // other is a subset of this

    std::optional<Id> first() const;
    std::optional<Id> last() const;
    std::optional<Id> next(Id after) const;              // smallest member > after
    std::optional<Id> nth(std::uint64_t n) const;        // 0-based, ascending; O(log ranges)
    std::optional<std::uint64_t> index_of(Id id) const;  // inverse of nth; O(log ranges)

    void insert(Id id);
    void insert(Id lo, Id hi);  // inclusive range
    void erase(Id id);
    void erase(Id lo, Id hi);

    IdSet& operator|=(const IdSet& other);  // union
    IdSet& operator-=(const IdSet& other);  // difference
    IdSet& operator&=(const IdSet& other);  // intersection
    friend IdSet operator|(IdSet a, const IdSet& b) { return a |= b; }
    friend IdSet operator-(IdSet a, const IdSet& b) { return a -= b; }
    friend IdSet operator&(IdSet a, const IdSet& b) { return a &= b; }
    bool intersects(const IdSet& other) const;

    std::span<const Range> ranges() const { return ranges_; }

    // Ascending iteration over ids, range by range; never expands the set.
    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Id;
        using difference_type = std::ptrdiff_t;
        using pointer = const Id*;
        using reference = Id;

        const_iterator() = default;
        Id operator*() const { return id_; }
        const_iterator& operator++();
        const_iterator operator++(int) {
            auto copy = *this;
            ++*this;
            return copy;
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) {
            return a.range_ == b.range_ && (a.range_ == a.end_ || a.id_ == b.id_);
        }

    private:
        friend class IdSet;
        const_iterator(const Range* range, const Range* end)
            : range_(range), end_(end), id_(range != end ? range->lo : 0) {}
        const Range* range_ = nullptr;
        const Range* end_ = nullptr;
        Id id_ = 0;
    };
    const_iterator begin() const { return {ranges_.data(), ranges_.data() + ranges_.size()}; }
    const_iterator end() const {
        return {ranges_.data() + ranges_.size(), ranges_.data() + ranges_.size()};
    }

    friend bool operator==(const IdSet&, const IdSet&) = default;

private:
    // Brings ids_before_ up to date for ranges_[first] onwards.
    void recount_from(std::size_t first);

    std::vector<Range> ranges_;  // sorted, disjoint, never adjacent
    // ids_before_[i]: how many ids ranges_[0..i) hold, so that count, nth and
    // index_of need no walk over the ranges.
    std::vector<std::uint64_t> ids_before_;
};

}  // namespace gantry
