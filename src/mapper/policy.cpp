#include "mapper/policy.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "util/text.h"

namespace gantry {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos)
            return parts;
        start = end + 1;
    }
}

struct Word {
    std::string_view name;
    int tag;
    bool takes_value = false;
};

std::string list_of(std::span<const Word> words) {
    std::string out;
    for (const Word& word : words) {
        if (!out.empty())
            out += ", ";
        out += word.name;
    }
    return out;
}

// Matches `token` (its part before any '=') against `words`: an exact name,
// or a prefix of exactly one name. Returns the word and the value after '='.
struct Match {
    const Word* word;
    std::optional<std::string_view> value;
};

Result<Match> match_word(std::string_view domain, std::string_view what, std::string_view token,
                         std::span<const Word> words, std::string_view input) {
    const std::size_t equals = token.find('=');
    const std::string key = lower_case(token.substr(0, equals));
    std::optional<std::string_view> value;
    if (equals != std::string_view::npos)
        value = token.substr(equals + 1);
    const Word* found = nullptr;
    int candidates = 0;
    for (const Word& word : words) {
        if (word.name == key) {
            found = &word;
            candidates = 1;
            break;
        }
        if (!key.empty() && word.name.substr(0, key.size()) == key) {
            // Aliases share a tag: "so" (socket) is not ambiguous with package.
            if (found == nullptr || found->tag != word.tag)
                ++candidates;
            found = &word;
        }
    }
    const std::string quoted = quote(token);
    if (candidates == 0)
        return Error::in(std::string(domain),
                         "unknown " + std::string(what) + " " + quoted + " (Valid " +
                             std::string(what) + "s: " + list_of(words) + ")",
                         input);
    if (candidates > 1)
        return Error::in(std::string(domain),
                         "ambiguous " + std::string(what) + " " + quoted + " (Valid " +
                             std::string(what) + "s: " + list_of(words) + ")",
                         input);
    if (found->takes_value && (!value || value->empty()))
        return Error::in(std::string(domain),
                         std::string(what) + " " + std::string(found->name) +
                             " needs a value after '=' (missing value in " + quoted + ")",
                         input);
    if (!found->takes_value && value)
        return Error::in(
            std::string(domain),
            std::string(what) + " " + std::string(found->name) + " takes no value (" + quoted + ")",
            input);
    return Match{found, value};
}

Result<unsigned> positive(std::string_view domain, std::string_view name, std::string_view value,
                          std::string_view input) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n == 0)
        return Error::in(std::string(domain),
                         std::string(name) + " needs a positive number, not " + quote(value),
                         input);
    return n;
}

// ---- --map-by ----------------------------------------------------------------

constexpr Word kMapDirectives[] = {
    {"slot", int(MapBy::kSlot)},
    {"hwthread", int(MapBy::kHwthread)},
    {"core", int(MapBy::kCore)},
    {"l1cache", int(MapBy::kL1Cache)},
    {"l2cache", int(MapBy::kL2Cache)},
    {"l3cache", int(MapBy::kL3Cache)},
    {"numa", int(MapBy::kNuma)},
    {"package", int(MapBy::kPackage)},
    {"socket", int(MapBy::kPackage)},
    {"node", int(MapBy::kNode)},
    {"seq", int(MapBy::kSeq)},
    {"ppr", int(MapBy::kPpr)},
    {"rankfile", int(MapBy::kRankfile)},
    {"pe-list", int(MapBy::kPeList), true},
    {"device", int(MapBy::kDevice), true},
};

enum Qualifier {
    kPe,
    kSpan,
    kOversubscribe,
    kNoOversubscribe,
    kNoLocal,
    kHwtCpus,
    kCoreCpus,
    kFile,
    kOrdered,
    kInherit,
    kNoInherit,
    kShared,
    kNdev,
    kInterleave,
    kDisplay,
};

constexpr Word kMapQualifiers[] = {
    {"pe", kPe, true},
    {"span", kSpan},
    {"oversubscribe", kOversubscribe},
    {"nooversubscribe", kNoOversubscribe},
    {"nolocal", kNoLocal},
    {"hwtcpus", kHwtCpus},
    {"corecpus", kCoreCpus},
    {"file", kFile, true},
    {"ordered", kOrdered},
    {"inherit", kInherit},
    {"noinherit", kNoInherit},
    {"shared", kShared},
    {"ndev", kNdev, true},
    {"interleave", kInterleave},
    {"display", kDisplay},
};

constexpr Word kPprLevels[] = {
    {"node", int(MapBy::kNode)},           {"hwthread", int(MapBy::kHwthread)},
    {"thread", int(MapBy::kHwthread)},     {"core", int(MapBy::kCore)},
    {"l1cache", int(MapBy::kL1Cache)},     {"l2cache", int(MapBy::kL2Cache)},
    {"l3cache", int(MapBy::kL3Cache)},     {"numa", int(MapBy::kNuma)},
    {"package", int(MapBy::kPackage)},     {"socket", int(MapBy::kPackage)},
    {"device", int(MapBy::kDevice), true},
};

bool is_object_level(MapBy by) {
    return by <= MapBy::kPackage;
}

Status conflict(std::string_view a, std::string_view b, std::string_view input) {
    return Error::in("map-by",
                     "conflicting qualifiers " + std::string(a) + " and " + std::string(b), input);
}

// Sets a yes/no qualifier, refusing its opposite in the same spec.
Status set_flag(std::optional<bool>& flag, bool value, std::string_view yes, std::string_view no,
                std::string_view input) {
    if (flag && *flag != value)
        return conflict(yes, no, input);
    flag = value;
    return {};
}

Status apply_qualifier(MapPolicy& map, const Match& match, std::string_view input) {
    const std::string_view value = match.value.value_or("");
    switch (match.word->tag) {
        case kPe: {
            auto n = positive("map-by", "PE", value, input);
            if (!n)
                return n.error();
            map.pes = *n;
            return {};
        }
        case kSpan:
            map.span = true;
            return {};
        case kOversubscribe:
            return set_flag(map.oversubscribe, true, "OVERSUBSCRIBE", "NOOVERSUBSCRIBE", input);
        case kNoOversubscribe:
            return set_flag(map.oversubscribe, false, "OVERSUBSCRIBE", "NOOVERSUBSCRIBE", input);
        case kNoLocal:
            map.nolocal = true;
            return {};
        case kHwtCpus:
            if (map.cpus == CpuUnit::kCore)
                return conflict("HWTCPUS", "CORECPUS", input);
            map.cpus = CpuUnit::kHwthread;
            return {};
        case kCoreCpus:
            if (map.cpus == CpuUnit::kHwthread)
                return conflict("HWTCPUS", "CORECPUS", input);
            map.cpus = CpuUnit::kCore;
            return {};
        case kFile:
            map.file = std::string(value);
            return {};
        case kOrdered:
            map.ordered = true;
            return {};
        case kInherit:
            return set_flag(map.inherit, true, "INHERIT", "NOINHERIT", input);
        case kNoInherit:
            return set_flag(map.inherit, false, "INHERIT", "NOINHERIT", input);
        case kShared:
            map.shared = true;
            return {};
        case kNdev: {
            auto n = positive("map-by", "NDEV", value, input);
            if (!n)
                return n.error();
            map.ndev = *n;
            return {};
        }
        case kInterleave:
            map.interleave = true;
            return {};
        case kDisplay:
            map.display = true;
            return {};
    }
    return {};
}

Status parse_ppr(MapPolicy& map, std::span<const std::string_view> fields, std::string_view input) {
    if (fields.size() < 3)
        return Error::in("map-by", "ppr needs a pattern ppr:N:OBJECT, e.g. ppr:2:package", input);
    auto count = positive("map-by", "ppr", fields[1], input);
    if (!count)
        return count.error();
    auto level = match_word("map-by", "ppr object", fields[2], kPprLevels, input);
    if (!level)
        return level.error();
    map.ppr_count = *count;
    map.ppr_level = static_cast<MapBy>(level->word->tag);
    if (map.ppr_level == MapBy::kDevice)
        map.device = lower_case(*level->value);
    return {};
}

Status parse_directive(MapPolicy& map, std::string_view token, std::string_view input) {
    auto directive = match_word("map-by", "directive", token, kMapDirectives, input);
    if (!directive)
        return directive.error();
    map.by = static_cast<MapBy>(directive->word->tag);
    if (map.by == MapBy::kPeList) {
        auto list = IdSet::parse(*directive->value);
        if (!list)
            return Error::in(
                "map-by",
                "pe-list needs a list of CPUs such as 0-3,8, not " + quote(*directive->value),
                input);
        map.pe_list = *list;
    } else if (map.by == MapBy::kDevice) {
        map.device = lower_case(*directive->value);
    }
    return {};
}

// Rules between the parts of one spec; PRRTE's help-topic names are kept
// in the messages so users can search for them.
Status check_map(const MapPolicy& map, std::string_view input) {
    const bool device =
        map.by == MapBy::kDevice || (map.by == MapBy::kPpr && map.ppr_level == MapBy::kDevice);
    if ((map.shared || map.ndev != 1 || map.interleave) && !device)
        return Error::in("map-by",
                         "SHARED, NDEV and INTERLEAVE apply only to device= mappings "
                         "(shared-needs-device)",
                         input);
    if (map.ordered && map.by != MapBy::kPeList)
        return Error::in("map-by", "ORDERED applies only to pe-list=", input);
    if (map.span && map.has_directive && !is_object_level(map.by))
        return Error::in("map-by", "SPAN applies only to object mappings (hwthread ... package)",
                         input);
    if (map.by == MapBy::kRankfile && map.file.empty())
        return Error::in(
            "map-by", "rankfile needs its file: rankfile:FILE=path (rankfile-no-filename)", input);
    if (map.pes > 0 && (map.by == MapBy::kRankfile || map.by == MapBy::kPeList))
        return Error::in("map-by", "PE= cannot be combined with rankfile or pe-list", input);
    const bool hwt = map.cpus == CpuUnit::kHwthread;
    if (map.pes > 1 && (map.by == MapBy::kHwthread || (map.by == MapBy::kCore && !hwt)))
        return Error::in("map-by",
                         "PE=" + std::to_string(map.pes) +
                             " needs a mapping object with several CPUs (mapping-too-low); map "
                             "by slot, l1cache or above, or add HWTCPUS",
                         input);
    return {};
}

// ---- --rank-by and --bind-to ----------------------------------------------------

constexpr Word kRankDirectives[] = {
    {"slot", int(RankBy::kSlot)},
    {"node", int(RankBy::kNode)},
    {"fill", int(RankBy::kFill)},
    {"span", int(RankBy::kSpan)},
};

constexpr Word kBindDirectives[] = {
    {"none", int(BindTo::kNone)},       {"hwthread", int(BindTo::kHwthread)},
    {"core", int(BindTo::kCore)},       {"l1cache", int(BindTo::kL1Cache)},
    {"l2cache", int(BindTo::kL2Cache)}, {"l3cache", int(BindTo::kL3Cache)},
    {"numa", int(BindTo::kNuma)},       {"package", int(BindTo::kPackage)},
    {"socket", int(BindTo::kPackage)},
};

enum BindQualifier { kOverloadAllowed, kNoOverload, kIfSupported, kLimit, kReport };
constexpr Word kBindQualifiers[] = {
    {"overload-allowed", kOverloadAllowed},
    {"overload", kOverloadAllowed},
    {"no-overload", kNoOverload},
    {"if-supported", kIfSupported},
    {"limit", kLimit, true},
    {"report", kReport},
};

// Qualifier tokens after the directive; Open MPI 4.1 separated them by
// commas, which PRRTE users still type.
std::vector<std::string_view> qualifier_tokens(std::span<const std::string_view> fields) {
    std::vector<std::string_view> tokens;
    for (const std::string_view field : fields) {
        if (lower_case(field.substr(0, 5)) == "file=") {
            tokens.push_back(field);
            continue;
        }
        for (const std::string_view token : split(field, ','))
            tokens.push_back(token);
    }
    return tokens;
}

Status check_no_empty(std::span<const std::string_view> tokens, std::string_view domain,
                      std::string_view input) {
    for (const std::string_view token : tokens)
        if (token.empty())
            return Error::in(std::string(domain), "empty qualifier", input);
    return {};
}

}  // namespace

Result<MapPolicy> parse_map_by(std::string_view text) {
    MapPolicy map;
    if (text.empty())
        return Error::in("map-by",
                         "empty policy (Valid directives: " + list_of(kMapDirectives) + ")", text);
    auto fields = split(text, ':');
    std::size_t first_qualifier = 1;
    if (fields[0].empty()) {
        map.has_directive = false;  // ":OVERSUBSCRIBE" changes qualifiers only
    } else if (auto status = parse_directive(map, fields[0], text); !status) {
        return status.error();
    } else if (map.by == MapBy::kPpr) {
        if (auto ppr = parse_ppr(map, fields, text); !ppr)
            return ppr.error();
        first_qualifier = 3;
    }
    const auto tokens =
        qualifier_tokens(std::span(fields).subspan(std::min(first_qualifier, fields.size())));
    if (auto status = check_no_empty(tokens, "map-by", text); !status)
        return status.error();
    for (const std::string_view token : tokens) {
        auto qualifier = match_word("map-by", "qualifier", token, kMapQualifiers, text);
        if (!qualifier)
            return qualifier.error();
        if (auto status = apply_qualifier(map, *qualifier, text); !status)
            return status.error();
    }
    if (auto status = check_map(map, text); !status)
        return status.error();
    return map;
}

Result<RankPolicy> parse_rank_by(std::string_view text) {
    if (text.find(':') != std::string_view::npos)
        return Error::in("rank-by",
                         "takes no qualifiers (Valid directives: " + list_of(kRankDirectives) + ")",
                         text);
    auto directive = match_word("rank-by", "directive", text, kRankDirectives, text);
    if (!directive)
        return directive.error();
    return RankPolicy{static_cast<RankBy>(directive->word->tag)};
}

Result<BindPolicy> parse_bind_to(std::string_view text) {
    BindPolicy bind;
    const auto fields = split(text, ':');
    auto directive = match_word("bind-to", "directive", fields[0], kBindDirectives, text);
    if (!directive)
        return directive.error();
    bind.to = static_cast<BindTo>(directive->word->tag);
    const auto tokens = qualifier_tokens(std::span(fields).subspan(1));
    if (auto status = check_no_empty(tokens, "bind-to", text); !status)
        return status.error();
    for (const std::string_view token : tokens) {
        auto qualifier = match_word("bind-to", "qualifier", token, kBindQualifiers, text);
        if (!qualifier)
            return qualifier.error();
        switch (qualifier->word->tag) {
            case kOverloadAllowed:
            case kNoOverload: {
                const bool allowed = qualifier->word->tag == kOverloadAllowed;
                if (bind.overload && *bind.overload != allowed)
                    return Error::in(
                        "bind-to", "conflicting qualifiers overload-allowed and no-overload", text);
                bind.overload = allowed;
                break;
            }
            case kIfSupported:
                bind.if_supported = true;
                break;
            case kLimit: {
                auto n = positive("bind-to", "LIMIT", *qualifier->value, text);
                if (!n)
                    return n.error();
                bind.limit = *n;
                break;
            }
            case kReport:
                bind.report = true;
                break;
        }
    }
    return bind;
}

std::optional<ObjectType> mapped_object(const MapPolicy& map) {
    const MapBy by = map.by == MapBy::kPpr ? map.ppr_level : map.by;
    switch (by) {
        case MapBy::kHwthread:
            return ObjectType::kPu;
        case MapBy::kCore:
            return ObjectType::kCore;
        case MapBy::kL1Cache:
            return ObjectType::kL1Cache;
        case MapBy::kL2Cache:
            return ObjectType::kL2Cache;
        case MapBy::kL3Cache:
            return ObjectType::kL3Cache;
        case MapBy::kNuma:
            return ObjectType::kNuma;
        case MapBy::kPackage:
            return ObjectType::kPackage;
        default:
            return std::nullopt;
    }
}

bool maps_on_objects(const MapPolicy& map) {
    return mapped_object(map).has_value();
}

std::string mapping_name(const MapPolicy& map) {
    if (map.by == MapBy::kPeList)
        return "PE-LIST";
    const MapBy by = map.by == MapBy::kPpr ? map.ppr_level : map.by;
    if (by == MapBy::kDevice)
        return "BYDEVICE";
    if (const auto object = mapped_object(map))
        return "BY" + upper_case(to_string(*object));
    switch (by) {
        case MapBy::kNode:
            return "BYNODE";
        case MapBy::kSeq:
            return "BYSEQ";
        case MapBy::kRankfile:
            return "BYUSER";
        default:
            return "BYSLOT";
    }
}

std::string ranking_name(RankBy by) {
    switch (by) {
        case RankBy::kSlot:
            return "SLOT";
        case RankBy::kNode:
            return "NODE";
        case RankBy::kFill:
            return "FILL";
        case RankBy::kSpan:
            return "SPAN";
    }
    return "SLOT";
}

std::string binding_name(BindTo to) {
    if (const auto object = bound_object(to))
        return upper_case(to_string(*object));
    return "NONE";
}

}  // namespace gantry
