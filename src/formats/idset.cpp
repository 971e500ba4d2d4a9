#include "formats/idset.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "util/text.h"

namespace gantry {

namespace {

constexpr std::string_view kDomain = "idset";

// Wide arithmetic for neighbour tests, so that `hi + 1` never wraps.
constexpr std::uint64_t after(IdSet::Id id) {
    return std::uint64_t{id} + 1;
}

constexpr std::uint64_t width(const IdSet::Range& r) {
    return std::uint64_t{r.hi} - r.lo + 1;
}

std::string describe(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte > 0x20 && byte < 0x7f)
        return std::string("'") + c + "'";
    if (c == ' ')
        return "a space";
    return "byte " + quote(std::string_view(&c, 1));
}

// Reads the text of one RFC 22 field, `lo` or `lo-hi`, over a body that has
// no brackets. Offsets in errors are offsets into the whole input.
class FieldParser {
public:
    FieldParser(std::string_view input, std::size_t begin, std::size_t end)
        : input_(input), pos_(begin), end_(end) {}

    Result<IdSet::Range> parse() {
        auto lo = parse_id();
        if (!lo)
            return lo.error();
        IdSet::Range range{*lo, *lo};
        if (pos_ < end_ && input_[pos_] == '-') {
            const std::size_t dash = pos_++;
            auto hi = parse_id();
            if (!hi)
                return hi.error();
            if (*hi <= *lo)
                return error(
                    *hi == *lo ? "range must span two or more ids" : "range end is below its start",
                    dash);
            range.hi = *hi;
        }
        if (pos_ < end_)
            return error("unexpected " + describe(input_[pos_]), pos_);
        return range;
    }

private:
    Result<IdSet::Id> parse_id() {
        const std::size_t start = pos_;
        if (pos_ == end_)
            return error("expected an id", pos_);
        if (!is_digit(input_[pos_]))
            return error("expected an id, found " + describe(input_[pos_]), pos_);
        if (input_[pos_] == '0' && pos_ + 1 < end_ && is_digit(input_[pos_ + 1]))
            return error("id has a leading zero", start);
        std::uint64_t value = 0;
        for (; pos_ < end_ && is_digit(input_[pos_]); ++pos_) {
            value = value * 10 + static_cast<std::uint64_t>(input_[pos_] - '0');
            // Stop before the 64-bit accumulator could wrap on a long run of digits.
            if (value > IdSet::kMaxId)
                return error("id is larger than 2147483647", start);
        }
        return static_cast<IdSet::Id>(value);
    }

    Error error(std::string message, std::size_t offset) const {
        return Error::at(std::string(kDomain), std::move(message), input_, offset);
    }

    std::string_view input_;
    std::size_t pos_;
    std::size_t end_;
};

// RFC 22 allows one pair of brackets around the whole set and no others.
// Returns the [begin, end) of the text inside them.
Result<std::pair<std::size_t, std::size_t>> body_of(std::string_view text) {
    const bool opened = !text.empty() && text.front() == '[';
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '[' && i > 0)
            return Error::at(std::string(kDomain),
                             opened ? "nested '['" : "'[' may only open the whole idset", text, i);
        if (c == ']' && !opened)
            return Error::at(std::string(kDomain), "']' without '['", text, i);
        if (c == ']' && i + 1 != text.size())
            return Error::at(std::string(kDomain), "']' may only close the whole idset", text, i);
    }
    if (!opened)
        return std::pair{std::size_t{0}, text.size()};
    if (text.size() < 2 || text.back() != ']')
        return Error::at(std::string(kDomain), "'[' is never closed", text, 0);
    return std::pair{std::size_t{1}, text.size() - 1};
}

}  // namespace

IdSet::IdSet(std::initializer_list<Id> ids) {
    for (const Id id : ids)
        insert(id);
}

IdSet IdSet::range(Id lo, Id hi) {
    IdSet set;
    set.insert(lo, hi);
    return set;
}

Result<IdSet> IdSet::parse(std::string_view text) {
    const auto body = body_of(text);
    if (!body)
        return body.error();
    const auto [begin, end] = *body;

    IdSet set;
    std::size_t field = begin;
    while (field <= end) {
        std::size_t comma = text.find(',', field);
        if (comma == std::string_view::npos || comma > end)
            comma = end;
        // Empty fields (`1,,2`, `,1`) are accepted and mean nothing.
        if (comma > field) {
            const auto range = FieldParser(text, field, comma).parse();
            if (!range)
                return range.error();
            if (!set.ranges_.empty() && range->lo <= set.ranges_.back().hi)
                return Error::at(std::string(kDomain), "ids out of order", text, field);
            // Fields ascend, so the range goes at the end, or extends an adjacent last one.
            if (!set.ranges_.empty() && range->lo == after(set.ranges_.back().hi))
                set.ranges_.back().hi = range->hi;
            else
                set.ranges_.push_back(*range);
        }
        field = comma + 1;
    }
    set.recount_from(0);
    return set;
}

std::string IdSet::encode() const {
    return encode(EncodeOptions{});
}

std::string IdSet::encode(EncodeOptions options) const {
    std::string out;
    const bool brackets = options.brackets && count() > 1;
    if (brackets)
        out += '[';
    bool first_field = true;
    auto separate = [&] {
        if (!first_field)
            out += ',';
        first_field = false;
    };
    for (const Range& r : ranges_) {
        if (options.ranges || r.lo == r.hi) {
            separate();
            append_number(out, r.lo);
            if (r.hi != r.lo) {
                out += '-';
                append_number(out, r.hi);
            }
            continue;
        }
        for (std::uint64_t id = r.lo; id <= r.hi; ++id) {
            separate();
            append_number(out, id);
        }
    }
    if (brackets)
        out += ']';
    return out;
}

std::uint64_t IdSet::count() const {
    return ranges_.empty() ? 0 : ids_before_.back() + width(ranges_.back());
}

void IdSet::recount_from(std::size_t first) {
    ids_before_.resize(ranges_.size());
    for (std::size_t i = first; i < ranges_.size(); ++i)
        ids_before_[i] = i == 0 ? 0 : ids_before_[i - 1] + width(ranges_[i - 1]);
}

bool IdSet::contains(Id id) const {
    // The last range starting at or before id is the only one that can hold it.
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), id,
                               [](Id value, const Range& r) { return value < r.lo; });
    return it != ranges_.begin() && std::prev(it)->hi >= id;
}

bool IdSet::contains(const IdSet& other) const {
    for (const Range& r : other.ranges_) {
        auto it = std::upper_bound(ranges_.begin(), ranges_.end(), r.lo,
                                   [](Id value, const Range& x) { return value < x.lo; });
        if (it == ranges_.begin() || std::prev(it)->hi < r.hi)
            return false;
    }
    return true;
}

std::optional<IdSet::Id> IdSet::first() const {
    if (ranges_.empty())
        return std::nullopt;
    return ranges_.front().lo;
}

std::optional<IdSet::Id> IdSet::last() const {
    if (ranges_.empty())
        return std::nullopt;
    return ranges_.back().hi;
}

std::optional<IdSet::Id> IdSet::next(Id after_id) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), after_id,
                               [](Id value, const Range& r) { return value < r.hi; });
    if (it == ranges_.end())
        return std::nullopt;
    return it->lo > after_id ? it->lo : after_id + 1;
}

std::optional<IdSet::Id> IdSet::nth(std::uint64_t n) const {
    if (n >= count())
        return std::nullopt;
    // The range holding position n is the last one with no more than n ids before it.
    const auto after_n = std::upper_bound(ids_before_.begin(), ids_before_.end(), n);
    const auto i = static_cast<std::size_t>(after_n - ids_before_.begin()) - 1;
    return static_cast<Id>(ranges_[i].lo + (n - ids_before_[i]));
}

std::optional<std::uint64_t> IdSet::index_of(Id id) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), id,
                               [](Id value, const Range& r) { return value < r.lo; });
    if (it == ranges_.begin() || std::prev(it)->hi < id)
        return std::nullopt;
    const auto i = static_cast<std::size_t>(it - ranges_.begin()) - 1;
    return ids_before_[i] + (id - ranges_[i].lo);
}

void IdSet::insert(Id id) {
    insert(id, id);
}

void IdSet::insert(Id lo, Id hi) {
    hi = std::min(hi, kMaxId);  // ids above kMaxId are never members
    if (lo > hi)
        return;
    // Ranges that overlap or touch [lo, hi] merge with it: they run from the
    // first range ending at lo - 1 or later to the last one starting at hi + 1
    // or earlier.
    auto first_touching =
        std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                         [](const Range& r, Id value) { return after(r.hi) < value; });
    auto past_touching =
        std::upper_bound(first_touching, ranges_.end(), hi,
                         [](Id value, const Range& r) { return after(value) < r.lo; });
    const auto changed = static_cast<std::size_t>(first_touching - ranges_.begin());
    if (first_touching == past_touching) {
        ranges_.insert(first_touching, Range{lo, hi});
    } else {
        first_touching->lo = std::min(first_touching->lo, lo);
        first_touching->hi = std::max(std::prev(past_touching)->hi, hi);
        ranges_.erase(std::next(first_touching), past_touching);
    }
    recount_from(changed);
}

void IdSet::erase(Id id) {
    erase(id, id);
}

void IdSet::erase(Id lo, Id hi) {
    if (lo > hi)
        return;
    auto first_overlap = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                                          [](const Range& r, Id value) { return r.hi < value; });
    auto past_overlap = std::upper_bound(first_overlap, ranges_.end(), hi,
                                         [](Id value, const Range& r) { return value < r.lo; });
    if (first_overlap == past_overlap)
        return;
    const auto changed = static_cast<std::size_t>(first_overlap - ranges_.begin());
    // What survives is a head of the first overlapping range and a tail of the last.
    std::optional<Range> head;
    std::optional<Range> tail;
    if (first_overlap->lo < lo)
        head = Range{first_overlap->lo, lo - 1};
    const Range last_overlap = *std::prev(past_overlap);
    if (last_overlap.hi > hi)
        tail = Range{hi + 1, last_overlap.hi};
    auto at = ranges_.erase(first_overlap, past_overlap);
    if (tail)
        at = ranges_.insert(at, *tail);
    if (head)
        ranges_.insert(at, *head);
    recount_from(changed);
}

IdSet IdSet::from_ranges(std::vector<Range> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.lo < b.lo; });
    IdSet set;
    for (Range r : ranges) {
        r.hi = std::min(r.hi, kMaxId);
        if (r.lo > r.hi)
            continue;
        if (!set.ranges_.empty() && r.lo <= after(set.ranges_.back().hi))
            set.ranges_.back().hi = std::max(set.ranges_.back().hi, r.hi);
        else
            set.ranges_.push_back(r);
    }
    set.recount_from(0);
    return set;
}

IdSet& IdSet::operator|=(const IdSet& other) {
    if (other.ranges_.empty())
        return *this;
    // A few ranges go in place: adding at the end, the common case when a
    // set is built in order, then costs a search, not a copy of the set.
    constexpr std::size_t kInsertInPlace = 4;
    if (other.ranges_.size() <= kInsertInPlace) {
        for (const Range& r : other.ranges_)
            insert(r.lo, r.hi);
        return *this;
    }
    std::vector<Range> merged;
    merged.reserve(ranges_.size() + other.ranges_.size());
    auto a = ranges_.begin();
    auto b = other.ranges_.begin();
    while (a != ranges_.end() || b != other.ranges_.end()) {
        const bool take_a = b == other.ranges_.end() || (a != ranges_.end() && a->lo <= b->lo);
        const Range next_range = take_a ? *a++ : *b++;
        if (!merged.empty() && next_range.lo <= after(merged.back().hi))
            merged.back().hi = std::max(merged.back().hi, next_range.hi);
        else
            merged.push_back(next_range);
    }
    ranges_ = std::move(merged);
    recount_from(0);
    return *this;
}

IdSet& IdSet::operator-=(const IdSet& other) {
    if (other.ranges_.empty() || ranges_.empty())
        return *this;
    std::vector<Range> kept;
    kept.reserve(ranges_.size() + other.ranges_.size());
    auto b = other.ranges_.begin();
    for (Range r : ranges_) {
        // Skip removals that end before this range starts.
        while (b != other.ranges_.end() && b->hi < r.lo)
            ++b;
        bool consumed = false;
        for (auto cut = b; cut != other.ranges_.end() && cut->lo <= r.hi; ++cut) {
            if (cut->lo > r.lo)
                kept.push_back(Range{r.lo, cut->lo - 1});
            if (cut->hi >= r.hi) {
                consumed = true;
                break;
            }
            r.lo = cut->hi + 1;
        }
        if (!consumed)
            kept.push_back(r);
    }
    ranges_ = std::move(kept);
    recount_from(0);
    return *this;
}

IdSet& IdSet::operator&=(const IdSet& other) {
    std::vector<Range> common;
    auto a = ranges_.begin();
    auto b = other.ranges_.begin();
    while (a != ranges_.end() && b != other.ranges_.end()) {
        const Id lo = std::max(a->lo, b->lo);
        const Id hi = std::min(a->hi, b->hi);
        if (lo <= hi)
            common.push_back(Range{lo, hi});
        // The range that ends first cannot meet anything further in the other set.
        if (a->hi < b->hi)
            ++a;
        else
            ++b;
    }
    ranges_ = std::move(common);
    recount_from(0);
    return *this;
}

bool IdSet::intersects(const IdSet& other) const {
    auto a = ranges_.begin();
    auto b = other.ranges_.begin();
    while (a != ranges_.end() && b != other.ranges_.end()) {
        if (std::max(a->lo, b->lo) <= std::min(a->hi, b->hi))
            return true;
        if (a->hi < b->hi)
            ++a;
        else
            ++b;
    }
    return false;
}

IdSet::const_iterator& IdSet::const_iterator::operator++() {
    if (id_ < range_->hi) {
        ++id_;
        return *this;
    }
    ++range_;
    id_ = range_ != end_ ? range_->lo : 0;
    return *this;
}

}  // namespace gantry
