#include "formats/hostlist.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "util/text.h"

namespace gantry {

namespace {

constexpr std::string_view kDomain = "hostlist";
constexpr std::uint64_t kMaxNumber = 999'999'999'999'999'999;  // kMaxIdDigits nines

std::size_t digit_count(std::uint64_t n) {
    std::size_t count = 1;
    while (n >= 10) {
        n /= 10;
        ++count;
    }
    return count;
}

// Padding that changes no number of a run starting at `lo` is dropped, so
// that two runs naming the same hosts have the same width.
std::size_t canonical_width(std::size_t width, std::uint64_t lo) {
    return width > digit_count(lo) ? width : 0;
}

void append_padded(std::string& out, std::uint64_t n, std::size_t width) {
    const std::string digits = std::to_string(n);
    if (digits.size() < width)
        out.append(width - digits.size(), '0');
    out += digits;
}

// The width a written id asks for: its length when it has leading zeros.
std::size_t written_width(std::string_view digits) {
    return digits.size() > 1 && digits[0] == '0' ? digits.size() : 0;
}

// The value of a digit string of at most kMaxIdDigits digits.
std::uint64_t value_of(std::string_view digits) {
    std::uint64_t n = 0;
    for (const char c : digits)
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
    return n;
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), is_digit);
}

}  // namespace

// ---------------------------------------------------------------- runs

std::string Hostlist::Run::name(std::uint64_t n) const {
    if (!numbered)
        return prefix;
    std::string out = prefix;
    append_padded(out, n, width);
    out += suffix;
    return out;
}

std::optional<std::uint64_t> Hostlist::Run::number_of(std::string_view host) const {
    if (!numbered)
        return host == prefix ? std::optional<std::uint64_t>(0) : std::nullopt;
    if (host.size() <= prefix.size() + suffix.size() || !host.starts_with(prefix) ||
        !host.ends_with(suffix))
        return std::nullopt;
    const std::string_view digits =
        host.substr(prefix.size(), host.size() - prefix.size() - suffix.size());
    if (digits.size() > kMaxIdDigits || !all_digits(digits))
        return std::nullopt;
    const std::uint64_t n = value_of(digits);
    if (n < lo || n > hi || digits.size() != std::max(width, digit_count(n)))
        return std::nullopt;
    return n;
}

namespace {

using Run = Hostlist::Run;

// `host` read as prefix + number + suffix, when it has that shape.
std::optional<Run> split_as(std::string_view host, std::string_view prefix,
                            std::string_view suffix) {
    if (host.size() <= prefix.size() + suffix.size() || !host.starts_with(prefix) ||
        !host.ends_with(suffix))
        return std::nullopt;
    const std::string_view digits =
        host.substr(prefix.size(), host.size() - prefix.size() - suffix.size());
    if (digits.size() > Hostlist::kMaxIdDigits || !all_digits(digits))
        return std::nullopt;
    const std::uint64_t n = value_of(digits);
    return Run{std::string(prefix),
               std::string(suffix),
               true,
               canonical_width(written_width(digits), n),
               n,
               n};
}

// One host name as a run: its trailing digits are its number (as flux reads
// names); a name without them, or with too many, is a literal.
Run host_run(std::string_view host) {
    std::size_t start = host.size();
    while (start > 0 && is_digit(host[start - 1]))
        --start;
    if (start < host.size())
        if (auto run = split_as(host, host.substr(0, start), ""))
            return *run;
    return Run{std::string(host), "", false, 0, 0, 0};
}

bool same_shape(const Run& a, const Run& b) {
    return a.numbered && b.numbered && a.width == b.width && a.prefix == b.prefix &&
           a.suffix == b.suffix;
}

// Whether `b` continues `a`: same prefix and suffix, the next number, and
// written with the same padding.
bool continues(const Run& a, const Run& b) {
    if (!a.numbered || !b.numbered || a.prefix != b.prefix || a.suffix != b.suffix ||
        a.hi >= kMaxNumber || b.lo != a.hi + 1)
        return false;
    return b.width == a.width || (b.width == 0 && digit_count(b.lo) >= a.width);
}

// Whether the last host of `a` and the first of `b` differ only in digits,
// which any other reading that joins them needs; cheap, so tried first.
bool differ_in_digits_only(const Run& a, const Run& b) {
    const std::string x = a.name(a.hi);
    const std::string y = b.name(b.lo);
    std::size_t front = 0;
    while (front < x.size() && front < y.size() && x[front] == y[front])
        ++front;
    std::size_t back = 0;
    while (back < x.size() - front && back < y.size() - front &&
           x[x.size() - 1 - back] == y[y.size() - 1 - back])
        ++back;
    const auto digits_between = [](const std::string& text, std::size_t from, std::size_t to) {
        return std::all_of(text.begin() + from, text.begin() + to, is_digit);
    };
    return digits_between(x, front, x.size() - back) && digits_between(y, front, y.size() - back);
}

std::optional<Run> joined(const Run& a, const Run& b) {
    const auto join = [](Run first, const Run& second) -> std::optional<Run> {
        if (!continues(first, second))
            return std::nullopt;
        first.hi = second.hi;
        return first;
    };
    if (auto run = join(a, b))
        return run;
    if ((a.size() != 1 && b.size() != 1) || !differ_in_digits_only(a, b))
        return std::nullopt;
    // A single host may be read with another number than its trailing one
    // (`foo0-eth2` as foo[0]-eth2), so try the readings that make it continue.
    if (a.size() == 1 && b.numbered)
        if (auto a2 = split_as(a.name(a.lo), b.prefix, b.suffix))
            if (auto run = join(*a2, b))
                return run;
    if (b.size() == 1 && a.numbered)
        if (auto b2 = split_as(b.name(b.lo), a.prefix, a.suffix))
            if (auto run = join(a, *b2))
                return run;
    if (a.size() == 1 && b.size() == 1) {
        const std::string a_name = a.name(a.lo);
        const std::string b_name = b.name(b.lo);
        for (std::size_t end = a_name.size(); end > 0; --end) {
            if (!is_digit(a_name[end - 1]) || (end < a_name.size() && is_digit(a_name[end])))
                continue;
            std::size_t start = end;
            while (start > 0 && is_digit(a_name[start - 1]))
                --start;
            const std::string_view prefix = std::string_view(a_name).substr(0, start);
            const std::string_view suffix = std::string_view(a_name).substr(end);
            const auto a2 = split_as(a_name, prefix, suffix);
            const auto b2 = split_as(b_name, prefix, suffix);
            if (a2 && b2)
                if (auto run = join(*a2, *b2))
                    return run;
        }
    }
    return std::nullopt;
}

// ---------------------------------------------------------------- parser

class Parser {
public:
    explicit Parser(std::string_view text) : text_(text) {}

    Result<std::vector<Run>> parse() {
        std::vector<Run> runs;
        while (pos_ < text_.size()) {
            if (text_[pos_] == ',') {  // empty fields are ignored, as in flux
                ++pos_;
                continue;
            }
            if (auto status = parse_expression(runs); !status)
                return status.error();
            if (pos_ < text_.size())
                ++pos_;  // the ',' that ended the expression
        }
        return runs;
    }

private:
    Error error(std::string message, std::size_t offset) const {
        return Error::at(std::string(kDomain), std::move(message), text_, offset);
    }

    // Checks the byte at pos_ may be part of a prefix or suffix.
    Status check_name_byte() const {
        const char c = text_[pos_];
        if (c == ']')
            return error("unexpected ']'", pos_);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
            return error("whitespace in a hostlist", pos_);
        if (c < 0x21 || c > 0x7e)
            return error("invalid character in a host name", pos_);
        return {};
    }

    Status parse_expression(std::vector<Run>& runs) {
        const std::size_t start = pos_;
        for (; pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '['; ++pos_)
            if (auto status = check_name_byte(); !status)
                return status;
        const std::string_view prefix = text_.substr(start, pos_ - start);
        if (pos_ == text_.size() || text_[pos_] == ',') {
            runs.push_back(host_run(prefix));
            return {};
        }
        const std::size_t open = pos_++;
        auto ids = parse_idlist(open);
        if (!ids)
            return ids.error();
        const std::size_t suffix_start = pos_;
        for (; pos_ < text_.size() && text_[pos_] != ','; ++pos_) {
            if (text_[pos_] == '[')
                return error("a second bracket group is not allowed", pos_);
            if (auto status = check_name_byte(); !status)
                return status;
        }
        const std::string_view suffix = text_.substr(suffix_start, pos_ - suffix_start);
        for (const auto& [lo, hi, width] : *ids)
            runs.push_back(Run{std::string(prefix), std::string(suffix), true,
                               canonical_width(width, lo), lo, hi});
        return {};
    }

    struct Range {
        std::uint64_t lo;
        std::uint64_t hi;
        std::size_t width;
    };

    // `[` has been read; reads ids up to and including `]`. The width of the
    // first id applies to the whole list (RFC 29).
    Result<std::vector<Range>> parse_idlist(std::size_t open) {
        std::vector<Range> ranges;
        std::size_t width = 0;
        while (true) {
            const std::size_t element = pos_;
            auto lo = parse_id(open);
            if (!lo)
                return lo.error();
            if (ranges.empty())
                width = written_width(text_.substr(element, pos_ - element));
            std::uint64_t hi = *lo;
            if (pos_ < text_.size() && text_[pos_] == '-') {
                ++pos_;
                auto upper = parse_id(open);
                if (!upper)
                    return upper.error();
                hi = *upper;
                if (hi < *lo)
                    return error("range goes down", element);
                if (hi - *lo >= Hostlist::kMaxRangeHosts)
                    return error("range of " + std::to_string(hi - *lo + 1) +
                                     " hosts is larger than 1048576",
                                 element);
            }
            ranges.push_back({*lo, hi, width});
            if (pos_ == text_.size())
                return error("'[' without ']'", open);
            if (text_[pos_] == ']') {
                ++pos_;
                return ranges;
            }
            if (text_[pos_] != ',')
                return error("unexpected " + quote(text_.substr(pos_, 1)) + " in brackets", pos_);
            ++pos_;
        }
    }

    Result<std::uint64_t> parse_id(std::size_t open) {
        const std::size_t start = pos_;
        while (pos_ < text_.size() && is_digit(text_[pos_]))
            ++pos_;
        if (pos_ == start) {
            if (pos_ == text_.size())
                return error("'[' without ']'", open);
            if (text_[pos_] == ',' || text_[pos_] == ']')
                return error("empty id in brackets", start);
            return error("expected an id, found " + quote(text_.substr(pos_, 1)), start);
        }
        if (pos_ - start > Hostlist::kMaxIdDigits)
            return error("id has more than 18 digits", start);
        return value_of(text_.substr(start, pos_ - start));
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

}  // namespace

// ---------------------------------------------------------------- building

Result<Hostlist> Hostlist::parse(std::string_view text) {
    auto runs = Parser(text).parse();
    if (!runs)
        return runs.error();
    Hostlist list;
    for (auto& run : *runs)
        list.append_run(std::move(run));
    return list;
}

Hostlist Hostlist::from_hosts(const std::vector<std::string>& hosts) {
    Hostlist list;
    for (const auto& host : hosts)
        list.append(host);
    return list;
}

void Hostlist::append_run(Run run) {
    if (!runs_.empty())
        if (auto merged = joined(runs_.back(), run)) {
            runs_.back() = std::move(*merged);
            return;
        }
    runs_.push_back(std::move(run));
}

void Hostlist::append(const Hostlist& other) {
    for (const auto& run : other.runs_)
        append_run(run);
}

void Hostlist::append(std::string_view host) {
    append_run(host_run(host));
}

// ---------------------------------------------------------------- encoding

namespace {

// Whether `run` may share the bracket group that `first` opens: a parser
// applies the first id's width to every id of the group.
bool fits_group(const Run& first, const Run& run) {
    return first.numbered && run.numbered && run.prefix == first.prefix &&
           run.suffix == first.suffix &&
           (run.width == first.width || (run.width == 0 && digit_count(run.lo) >= first.width));
}

// Writes lo..hi as range elements of at most kMaxRangeHosts hosts each, so
// that the encoding parses back.
void append_elements(std::string& out, const Run& run, std::size_t width, bool& first) {
    for (std::uint64_t lo = run.lo;;) {
        const std::uint64_t hi = std::min(run.hi, lo + (Hostlist::kMaxRangeHosts - 1));
        if (!first)
            out += ',';
        first = false;
        append_padded(out, lo, width);
        if (hi > lo) {
            out += '-';
            append_padded(out, hi, width);
        }
        if (hi == run.hi)
            return;
        lo = hi + 1;
    }
}

// `run` as a member of the group `first` opens. A single host is read by
// its name alone, with the group's prefix and suffix, so that the encoding
// does not depend on how the host was first read.
std::optional<Run> group_member(const Run& first, const Run& run) {
    if (run.size() > 1)
        return fits_group(first, run) ? std::optional<Run>(run) : std::nullopt;
    if (!first.numbered)
        return std::nullopt;
    auto reread = split_as(run.name(run.lo), first.prefix, first.suffix);
    return reread && fits_group(first, *reread) ? reread : std::nullopt;
}

// How a single host `name` opens a group: the reading that lets `next`
// join it, else its own (it is then written as it is).
Run opening_reading(const std::string& name, const Run* next) {
    if (next && next->numbered && next->size() > 1)
        if (auto reread = split_as(name, next->prefix, next->suffix))
            if (fits_group(*reread, *next))
                return *reread;
    if (next && next->size() == 1) {
        const std::string next_name = next->name(next->lo);
        for (std::size_t end = name.size(); end > 0; --end) {
            if (!is_digit(name[end - 1]) || (end < name.size() && is_digit(name[end])))
                continue;
            std::size_t start = end;
            while (start > 0 && is_digit(name[start - 1]))
                --start;
            const std::string_view prefix = std::string_view(name).substr(0, start);
            const std::string_view suffix = std::string_view(name).substr(end);
            const auto reread = split_as(name, prefix, suffix);
            const auto next_reread = split_as(next_name, prefix, suffix);
            if (reread && next_reread && fits_group(*reread, *next_reread))
                return *reread;
        }
    }
    return host_run(name);
}

}  // namespace

std::string Hostlist::encode() const {
    std::string out;
    std::vector<Run> group;
    for (std::size_t i = 0; i < runs_.size();) {
        const Run* next = i + 1 < runs_.size() ? &runs_[i + 1] : nullptr;
        const Run first =
            runs_[i].size() == 1 ? opening_reading(runs_[i].name(runs_[i].lo), next) : runs_[i];
        group.assign(1, first);
        std::size_t end = i + 1;
        for (; end < runs_.size(); ++end) {
            auto member = group_member(first, runs_[end]);
            if (!member)
                break;
            group.push_back(std::move(*member));
        }
        if (!out.empty())
            out += ',';
        if (group.size() == 1 && first.size() == 1) {
            out += first.name(first.lo);
        } else {
            out += first.prefix;
            out += '[';
            bool first_element = true;
            for (const Run& member : group)
                append_elements(out, member, first.width, first_element);
            out += ']';
            out += first.suffix;
        }
        i = end;
    }
    return out;
}

std::vector<std::string> Hostlist::expand() const {
    std::vector<std::string> hosts;
    hosts.reserve(count());
    for (const auto& run : runs_)
        for (std::uint64_t n = run.lo;; ++n) {
            hosts.push_back(run.name(n));
            if (n == run.hi)
                break;
        }
    return hosts;
}

// ---------------------------------------------------------------- queries

std::size_t Hostlist::count() const {
    std::size_t total = 0;
    for (const auto& run : runs_)
        total += run.size();
    return total;
}

std::optional<std::string> Hostlist::nth(std::size_t index) const {
    for (const auto& run : runs_) {
        if (index < run.size())
            return run.name(run.lo + index);
        index -= run.size();
    }
    return std::nullopt;
}

std::optional<std::size_t> Hostlist::find(std::string_view host) const {
    std::size_t offset = 0;
    for (const auto& run : runs_) {
        if (const auto n = run.number_of(host))
            return offset + static_cast<std::size_t>(*n - run.lo);
        offset += run.size();
    }
    return std::nullopt;
}

Hostlist Hostlist::slice(std::size_t first, std::size_t last) const {
    Hostlist out;
    std::size_t offset = 0;
    for (const auto& run : runs_) {
        const std::size_t begin = std::max(first, offset);
        const std::size_t end = std::min(last, offset + run.size());
        if (begin < end) {
            Run part = run;
            part.lo = run.lo + (begin - offset);
            part.hi = run.lo + (end - offset) - 1;
            part.width = canonical_width(run.width, part.lo);
            out.append_run(std::move(part));
        }
        offset += run.size();
        if (offset >= last)
            break;
    }
    return out;
}

// ---------------------------------------------------------------- removal

namespace {

// Numbers of a run as sorted, disjoint inclusive ranges.
using Spans = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

void erase_span(Spans& spans, std::uint64_t lo, std::uint64_t hi) {
    Spans kept;
    for (const auto& [a, b] : spans) {
        if (b < lo || a > hi) {
            kept.emplace_back(a, b);
            continue;
        }
        if (a < lo)
            kept.emplace_back(a, lo - 1);
        if (b > hi)
            kept.emplace_back(hi + 1, b);
    }
    spans = std::move(kept);
}

bool spans_contain(const Spans& spans, std::uint64_t n) {
    return std::any_of(spans.begin(), spans.end(),
                       [n](const auto& span) { return span.first <= n && n <= span.second; });
}

std::uint64_t spans_count(const Spans& spans) {
    std::uint64_t total = 0;
    for (const auto& [a, b] : spans)
        total += b - a + 1;
    return total;
}

// The parts of `run` left after removing the numbers in `removed`.
std::vector<Run> run_without(const Run& run, const Spans& removed) {
    Spans kept{{run.lo, run.hi}};
    for (const auto& [a, b] : removed)
        erase_span(kept, a, b);
    std::vector<Run> parts;
    for (const auto& [a, b] : kept) {
        Run part = run;
        part.lo = a;
        part.hi = b;
        part.width = canonical_width(run.width, a);
        parts.push_back(std::move(part));
    }
    return parts;
}

// Numbers of `target` (in `removed_target`) naming hosts of `source` whose
// numbers are in `pending`; those are taken out of `pending`. Runs of other
// shapes are compared host by host over the smaller side.
void match_hosts(const Run& target, const Run& source, Spans& pending, Spans& removed_target) {
    if (same_shape(target, source)) {
        for (const auto& [a, b] : Spans(pending)) {
            const std::uint64_t lo = std::max(a, target.lo);
            const std::uint64_t hi = std::min(b, target.hi);
            if (lo <= hi) {
                removed_target.emplace_back(lo, hi);
                erase_span(pending, lo, hi);
            }
        }
        return;
    }
    if (target.size() <= spans_count(pending)) {
        for (std::uint64_t n = target.lo;; ++n) {
            const auto m = source.number_of(target.name(n));
            if (m && spans_contain(pending, *m)) {
                removed_target.emplace_back(n, n);
                erase_span(pending, *m, *m);
            }
            if (n == target.hi)
                break;
        }
        return;
    }
    for (const auto& [a, b] : Spans(pending))
        for (std::uint64_t m = a;; ++m) {
            if (const auto n = target.number_of(source.name(m))) {
                removed_target.emplace_back(*n, *n);
                erase_span(pending, m, m);
            }
            if (m == b)
                break;
        }
}

}  // namespace

std::size_t Hostlist::remove(std::string_view host) {
    std::size_t removed = 0;
    std::vector<Run> runs = std::move(runs_);
    runs_.clear();
    for (const auto& run : runs) {
        const auto n = run.number_of(host);
        if (!n) {
            append_run(run);
            continue;
        }
        ++removed;
        for (auto& part : run_without(run, {{*n, *n}}))
            append_run(std::move(part));
    }
    return removed;
}

std::size_t Hostlist::remove_each(const Hostlist& hosts) {
    std::size_t removed = 0;
    for (const auto& source : hosts.runs_) {
        Spans pending{{source.lo, source.hi}};
        std::vector<Run> runs = std::move(runs_);
        runs_.clear();
        for (const auto& run : runs) {
            Spans removed_here;
            if (!pending.empty())
                match_hosts(run, source, pending, removed_here);
            removed += static_cast<std::size_t>(spans_count(removed_here));
            if (removed_here.empty()) {
                append_run(run);
                continue;
            }
            std::sort(removed_here.begin(), removed_here.end());
            for (auto& part : run_without(run, removed_here))
                append_run(std::move(part));
        }
    }
    return removed;
}

// ---------------------------------------------------------------- order

// Decided where the names first differ: only a digit chunk around that
// point needs reading, so comparing costs one memcmp for most names.
std::strong_ordering Hostlist::compare(std::string_view a, std::string_view b) {
    const std::size_t common = std::min(a.size(), b.size());
    std::size_t i = 0;
    while (i < common && a[i] == b[i])
        ++i;
    const bool a_digit = i < a.size() && is_digit(a[i]);
    const bool b_digit = i < b.size() && is_digit(b[i]);
    const bool in_digits = i > 0 && is_digit(a[i - 1]);
    if (!a_digit && !b_digit) {
        // Both chunks at i are other bytes, or a name ended: plain bytes
        // decide, a name that ended first being smaller.
        if (i == a.size() || i == b.size())
            return a.size() <=> b.size();
        return static_cast<unsigned char>(a[i]) <=> static_cast<unsigned char>(b[i]);
    }
    if (!in_digits && a_digit != b_digit) {
        // A new chunk starts at i: an ended name first, then digits.
        if (i == a.size() || i == b.size())
            return a.size() <=> b.size();
        return a_digit ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    // A digit chunk differs at i: the longer chunk is larger, then bytes.
    std::size_t a_end = i;
    while (a_end < a.size() && is_digit(a[a_end]))
        ++a_end;
    std::size_t b_end = i;
    while (b_end < b.size() && is_digit(b[b_end]))
        ++b_end;
    if (a_end - i != b_end - i)
        return (a_end - i) <=> (b_end - i);
    return static_cast<unsigned char>(a[i]) <=> static_cast<unsigned char>(b[i]);
}

namespace {

bool less(std::string_view a, std::string_view b) {
    return Hostlist::compare(a, b) < 0;
}

// The largest number of `run` whose host is before `key` (or equal to it
// when `inclusive`). A run's hosts ascend in the natural order, so this is
// a binary search; run.name(run.lo) is known to qualify.
std::uint64_t last_before(const Run& run, std::string_view key, bool inclusive) {
    std::uint64_t lo = run.lo;
    std::uint64_t hi = run.hi;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        const auto c = Hostlist::compare(run.name(mid), key);
        if (c < 0 || (inclusive && c == 0))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// Whether each run starts after the previous one ends (strictly when
// `unique`), so that the list is already sorted: one pass instead of a merge.
bool in_order(const std::vector<Run>& runs, bool unique) {
    for (std::size_t i = 1; i < runs.size(); ++i) {
        const Run& previous = runs[i - 1];
        const Run& next = runs[i];
        if (same_shape(previous, next)) {
            if (next.lo < previous.hi + (unique ? 1 : 0))
                return false;
            continue;
        }
        const auto order = Hostlist::compare(previous.name(previous.hi), next.name(next.lo));
        if (order > 0 || (unique && order == 0))
            return false;
    }
    return true;
}

std::vector<Run> by_first_host(const std::vector<Run>& runs) {
    std::vector<std::string> firsts;
    firsts.reserve(runs.size());
    for (const auto& run : runs)
        firsts.push_back(run.name(run.lo));
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        return Hostlist::compare(firsts[x], firsts[y]) < 0;
    });
    std::vector<Run> sorted;
    sorted.reserve(runs.size());
    for (const std::size_t i : order)
        sorted.push_back(runs[i]);
    return sorted;
}

}  // namespace

// Merges the runs, each already ascending, by repeatedly taking the run
// with the smallest first host and emitting its part up to the next run's
// first host; runs of one shape are merged by their numbers alone.
std::vector<Hostlist::Run> Hostlist::sorted(const std::vector<Run>& runs, bool unique) {
    if (in_order(runs, unique))
        return runs;
    // Lists of hosts given in any order are mostly runs that do not overlap:
    // ordering the runs by their first host is then the whole sort.
    std::vector<Run> by_first = by_first_host(runs);
    if (in_order(by_first, unique)) {
        Hostlist out;
        for (auto& run : by_first)
            out.append_run(std::move(run));
        return std::move(out.runs_);
    }
    struct Head {
        std::string name;
        std::size_t index;
    };
    const auto after = [](const Head& a, const Head& b) { return less(b.name, a.name); };
    std::vector<Run> pool = runs;
    std::priority_queue<Head, std::vector<Head>, decltype(after)> heads(after);
    for (std::size_t i = 0; i < pool.size(); ++i)
        heads.push({pool[i].name(pool[i].lo), i});

    Hostlist out;
    std::string last_name;
    const auto emit = [&](Run part) {
        if (unique && !out.runs_.empty() && part.name(part.lo) == last_name) {
            if (part.lo == part.hi)
                return;
            ++part.lo;
        }
        part.width = canonical_width(part.width, part.lo);
        if (unique)
            last_name = part.name(part.hi);
        out.append_run(std::move(part));
    };
    while (!heads.empty()) {
        Head head = heads.top();
        heads.pop();
        Run& run = pool[head.index];
        if (heads.empty()) {
            emit(run);
            break;
        }
        const Head& next_head = heads.top();
        const Run& next = pool[next_head.index];
        std::uint64_t end;
        if (same_shape(run, next)) {
            if (unique && next.lo <= run.hi + 1) {
                run.hi = std::max(run.hi, next.hi);
                heads.pop();
                heads.push(std::move(head));
                continue;
            }
            end = std::min(run.hi, next.lo);
        } else {
            end = last_before(run, next_head.name, true);
        }
        Run part = run;
        part.hi = end;
        emit(std::move(part));
        if (end < run.hi) {
            run.lo = end + 1;
            run.width = canonical_width(run.width, run.lo);
            heads.push({run.name(run.lo), head.index});
        }
    }
    return std::move(out.runs_);
}

void Hostlist::sort() {
    runs_ = sorted(runs_, false);
}

void Hostlist::uniq() {
    runs_ = sorted(runs_, true);
}

// ---------------------------------------------------------------- sets

// Walks the two sorted, unique lists side by side and keeps the hosts of
// the kinds `keep` asks for (only in a, only in b, in both).
Hostlist Hostlist::combine(const Hostlist& a, const Hostlist& b, int keep) {
    const std::vector<Run> left = sorted(a.runs_, true);
    const std::vector<Run> right = sorted(b.runs_, true);
    Hostlist out;
    const auto emit = [&](Keep kind, const Run& run, std::uint64_t lo, std::uint64_t hi) {
        if ((keep & static_cast<int>(kind)) == 0)
            return;
        Run part = run;
        part.lo = lo;
        part.hi = hi;
        part.width = canonical_width(run.width, lo);
        out.append_run(std::move(part));
    };
    std::size_t i = 0;
    std::size_t j = 0;
    Run x = left.empty() ? Run{} : left[0];
    Run y = right.empty() ? Run{} : right[0];
    // Moves a cursor past `end`, to the next run when its run is done.
    const auto advance = [](Run& cursor, std::size_t& index, const std::vector<Run>& runs,
                            std::uint64_t end) {
        if (end < cursor.hi) {
            cursor.lo = end + 1;
            cursor.width = canonical_width(cursor.width, cursor.lo);
        } else if (++index < runs.size()) {
            cursor = runs[index];
        }
    };
    while (i < left.size() && j < right.size()) {
        const std::string x_name = x.name(x.lo);
        const std::string y_name = y.name(y.lo);
        const auto order = compare(x_name, y_name);
        const bool shape = same_shape(x, y);
        if (order < 0) {
            const std::uint64_t end =
                shape ? std::min(x.hi, y.lo - 1) : last_before(x, y_name, false);
            emit(Keep::kAOnly, x, x.lo, end);
            advance(x, i, left, end);
        } else if (order > 0) {
            const std::uint64_t end =
                shape ? std::min(y.hi, x.lo - 1) : last_before(y, x_name, false);
            emit(Keep::kBOnly, y, y.lo, end);
            advance(y, j, right, end);
        } else {
            const std::uint64_t x_end = shape ? std::min(x.hi, y.hi) : x.lo;
            const std::uint64_t y_end = shape ? x_end : y.lo;
            emit(Keep::kBoth, x, x.lo, x_end);
            advance(x, i, left, x_end);
            advance(y, j, right, y_end);
        }
    }
    for (; i < left.size(); advance(x, i, left, x.hi))
        emit(Keep::kAOnly, x, x.lo, x.hi);
    for (; j < right.size(); advance(y, j, right, y.hi))
        emit(Keep::kBOnly, y, y.lo, y.hi);
    return out;
}

Hostlist Hostlist::set_union(const Hostlist& a, const Hostlist& b) {
    return combine(a, b,
                   static_cast<int>(Keep::kAOnly) | static_cast<int>(Keep::kBOnly) |
                       static_cast<int>(Keep::kBoth));
}

Hostlist Hostlist::set_intersection(const Hostlist& a, const Hostlist& b) {
    return combine(a, b, static_cast<int>(Keep::kBoth));
}

Hostlist Hostlist::set_difference(const Hostlist& a, const Hostlist& b) {
    return combine(a, b, static_cast<int>(Keep::kAOnly));
}

Hostlist Hostlist::set_xor(const Hostlist& a, const Hostlist& b) {
    return combine(a, b, static_cast<int>(Keep::kAOnly) | static_cast<int>(Keep::kBOnly));
}

bool operator==(const Hostlist& a, const Hostlist& b) {
    if (a.count() != b.count())
        return false;
    std::size_t i = 0;
    std::size_t j = 0;
    std::uint64_t x = a.runs_.empty() ? 0 : a.runs_[0].lo;  // next number in a.runs_[i]
    std::uint64_t y = b.runs_.empty() ? 0 : b.runs_[0].lo;
    while (i < a.runs_.size() && j < b.runs_.size()) {
        const Hostlist::Run& r = a.runs_[i];
        const Hostlist::Run& s = b.runs_[j];
        std::uint64_t steps = 1;
        if (r.numbered && s.numbered && r.prefix == s.prefix && r.suffix == s.suffix && x == y &&
            (r.width == s.width || std::max(r.width, s.width) <= digit_count(x))) {
            steps = std::min(r.hi - x, s.hi - y) + 1;
        } else if (r.name(x) != s.name(y)) {
            return false;
        }
        x += steps - 1;
        y += steps - 1;
        if (x == r.hi && ++i < a.runs_.size())
            x = a.runs_[i].lo;
        else if (x != r.hi)
            ++x;
        if (y == s.hi && ++j < b.runs_.size())
            y = b.runs_[j].lo;
        else if (y != s.hi)
            ++y;
    }
    return true;
}

}  // namespace gantry
