// `gantry idset`: normalize, count, expand, index and combine RFC 22 idsets,
// in the manner of `flux hostlist`. Reference: docs/commands/idset.md.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "formats/idset.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kDomain = "idset";
// With --quiet, as with `flux hostlist -q`: the result was empty.
constexpr int kExitEmpty = 1;

constexpr std::string_view kExamples = R"(Examples:
  $ gantry idset 5-7 0-3 4
  0-7
  $ gantry idset --count 0-3,8
  5
  $ gantry idset --expand 0-3,8
  0 1 2 3 8
  $ gantry idset --expand --delimiter=, 0-3
  0,1,2,3
  $ gantry idset --brackets 0-3,8
  [0-3,8]
  $ gantry idset --intersect 0-10 5-15
  5-10
  $ gantry idset --minus 0-10 2-3 8
  0-1,4-7,9-10
  $ gantry idset --xor 0-5 3-8
  0-2,6-8
  $ gantry idset --nth=0,2 3-9,20
  3,5
  $ gantry idset --nth=-1 3-9,20
  20
  $ echo "3 1 2" | gantry idset
  1-3
  $ gantry idset --quiet --intersect 0-3 4-7 || echo disjoint
  disjoint

Exit status: 0 on success (with --quiet: 0 when the result has ids, 1 when it
is empty); 2 on a bad idset or bad options.)";

// How the command combines its arguments into one set.
enum class Combine { kUnion, kIntersect, kMinus, kXor };

struct Options {
    std::vector<std::string> idsets;
    bool union_all = false;
    bool intersect = false;
    bool minus = false;
    bool exclusive_or = false;
    bool count = false;
    bool expand = false;
    std::string delimiter = " ";
    bool brackets = false;
    std::optional<std::string> nth;
    bool first = false;
    bool last = false;
    bool quiet = false;

    Combine combine() const {
        if (intersect)
            return Combine::kIntersect;
        if (minus)
            return Combine::kMinus;
        if (exclusive_or)
            return Combine::kXor;
        return Combine::kUnion;
    }
};

void define_options(CLI::App& app, Options& options) {
    app.footer(std::string(kExamples));
    app.add_option("IDSET", options.idsets,
                   "Idsets to combine; with none, whitespace-separated idsets are read from stdin");

    auto* union_all = app.add_flag("-u,--union", options.union_all,
                                   "Print the ids in any argument (the default)");
    auto* intersect =
        app.add_flag("-i,--intersect", options.intersect, "Print the ids in every argument");
    auto* minus = app.add_flag("-m,--minus", options.minus,
                               "Print the ids of the first argument that are in no other");
    auto* exclusive_or = app.add_flag("-X,--xor", options.exclusive_or,
                                      "Print the ids in an odd number of arguments");
    union_all->excludes(intersect, minus, exclusive_or);
    intersect->excludes(minus, exclusive_or);
    minus->excludes(exclusive_or);

    auto* nth = app.add_option("-n,--nth", options.nth,
                               "Keep the ids at these 0-based positions (an idset); a leading "
                               "'-' counts from the end, -1 being the last id");
    auto* first = app.add_flag("--first", options.first, "Keep the smallest id");
    auto* last = app.add_flag("--last", options.last, "Keep the largest id");
    nth->excludes(first, last);
    first->excludes(last);

    auto* count = app.add_flag("-c,--count", options.count, "Print the number of ids");
    auto* expand = app.add_flag("-e,--expand", options.expand,
                                "Print every id, without ranges, separated by the delimiter");
    auto* delimiter = app.add_option("-d,--delimiter", options.delimiter,
                                     "With --expand, separate ids with this string "
                                     "(default: a space; \\n and \\t are understood)")
                          ->needs(expand);
    auto* brackets = app.add_flag("-b,--brackets", options.brackets,
                                  "Enclose the output in [ ] when it has more than one id");
    auto* quiet = app.add_flag("-q,--quiet", options.quiet,
                               "Print nothing; exit 0 when the result has ids, 1 when empty");
    count->excludes(expand, brackets);
    quiet->excludes(count, expand, delimiter, brackets);
}

Result<std::vector<IdSet>> parse_all(const std::vector<std::string>& words) {
    std::vector<IdSet> sets;
    sets.reserve(words.size());
    for (const std::string& word : words) {
        auto set = IdSet::parse(word);
        if (!set)
            return set.error();
        sets.push_back(std::move(*set));
    }
    return sets;
}

// The union of sets[first..]: one sort of every range, where folding |=
// over many small sets would be quadratic.
IdSet union_from(const std::vector<IdSet>& sets, std::size_t first) {
    std::vector<IdSet::Range> ranges;
    for (std::size_t i = first; i < sets.size(); ++i)
        ranges.insert(ranges.end(), sets[i].ranges().begin(), sets[i].ranges().end());
    return IdSet::from_ranges(std::move(ranges));
}

// The ids in an odd number of sets, by one sweep over every range boundary.
IdSet odd_members(const std::vector<IdSet>& sets) {
    std::vector<std::uint64_t> boundaries;  // each flips membership parity
    for (const IdSet& set : sets)
        for (const IdSet::Range& r : set.ranges()) {
            boundaries.push_back(r.lo);
            boundaries.push_back(std::uint64_t{r.hi} + 1);
        }
    std::sort(boundaries.begin(), boundaries.end());
    std::vector<IdSet::Range> ranges;
    bool odd = false;
    for (std::size_t i = 0; i + 1 < boundaries.size(); ++i) {
        odd = !odd;
        if (odd && boundaries[i] < boundaries[i + 1])
            ranges.push_back({static_cast<IdSet::Id>(boundaries[i]),
                              static_cast<IdSet::Id>(boundaries[i + 1] - 1)});
    }
    return IdSet::from_ranges(std::move(ranges));
}

IdSet combined(const std::vector<IdSet>& sets, Combine how) {
    if (sets.empty())
        return {};
    switch (how) {
        case Combine::kUnion:
            return union_from(sets, 0);
        case Combine::kMinus:
            return sets.front() - union_from(sets, 1);
        case Combine::kXor:
            return odd_members(sets);
        case Combine::kIntersect:
            break;
    }
    IdSet result = sets.front();
    for (std::size_t i = 1; i < sets.size() && !result.empty(); ++i)
        result &= sets[i];
    return result;
}

// The ids of `set` at 0-based `positions`, all of which are below its count.
// Walks both range lists once, so a large set is never expanded.
IdSet ids_at(const IdSet& set, const IdSet& positions) {
    IdSet ids;
    const auto ranges = set.ranges();
    std::size_t r = 0;
    std::uint64_t base = 0;  // position of ranges[r].lo
    auto width = [&](std::size_t i) { return std::uint64_t{ranges[i].hi} - ranges[i].lo + 1; };
    for (const IdSet::Range& wanted : positions.ranges()) {
        std::uint64_t from = wanted.lo;
        while (from <= wanted.hi) {
            while (base + width(r) <= from)
                base += width(r++);
            const std::uint64_t to = std::min<std::uint64_t>(wanted.hi, base + width(r) - 1);
            ids.insert(static_cast<IdSet::Id>(ranges[r].lo + (from - base)),
                       static_cast<IdSet::Id>(ranges[r].lo + (to - base)));
            from = to + 1;
        }
    }
    return ids;
}

Result<IdSet> selected(const IdSet& set, const Options& options) {
    if (options.first)
        return set.empty() ? IdSet{} : IdSet{*set.first()};
    if (options.last)
        return set.empty() ? IdSet{} : IdSet{*set.last()};
    if (!options.nth)
        return set;
    const auto positions = nth_positions(kDomain, "id", *options.nth, set.count());
    if (!positions)
        return positions.error();
    return ids_at(set, *positions);
}

// Writes every id without building the whole text: `0-2147483647` expands
// to gigabytes.
void write_expanded(std::ostream& out, const IdSet& set, std::string_view delimiter,
                    bool brackets) {
    constexpr std::size_t kFlushAt = 1 << 16;
    const bool enclose = brackets && set.count() > 1;
    std::string buffer = enclose ? "[" : "";
    bool first = true;
    for (const IdSet::Id id : set) {
        if (!first)
            buffer += delimiter;
        first = false;
        buffer += std::to_string(id);
        if (buffer.size() >= kFlushAt) {
            out << buffer;
            buffer.clear();
        }
    }
    if (enclose)
        buffer += ']';
    out << buffer << '\n';
}

int print(const IdSet& result, const Options& options) {
    if (options.quiet)
        return result.empty() ? kExitEmpty : kExitOk;
    if (options.count)
        std::cout << result.count() << '\n';
    else if (options.expand)
        write_expanded(std::cout, result, unescape_delimiter(options.delimiter), options.brackets);
    else
        std::cout << result.encode({.ranges = true, .brackets = options.brackets}) << '\n';
    std::cout.flush();
    return kExitOk;
}

}  // namespace

int idset_main(int argc, char** argv) {
    CLI::App app("Normalize, count, expand, index and combine RFC 22 idsets.", "idset");
    Options options;
    define_options(app, options);
    if (const auto exit_code = parse_options(app, argc, argv))
        return *exit_code;

    const auto sets = parse_all(arguments_or_stdin(options.idsets));
    if (!sets)
        return fail(sets.error());
    const auto result = selected(combined(*sets, options.combine()), options);
    if (!result)
        return fail(result.error());
    return print(*result, options);
}

}  // namespace gantry::cli
