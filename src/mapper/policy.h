// Mapping, ranking and binding policies: the values of --map-by, --rank-by
// and --bind-to in PRRTE's syntax, and how a job's and its apps' directives
// resolve into one policy per app (docs/mapping.md).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/idset.h"
#include "topo/topology.h"
#include "util/error.h"

namespace gantry {

// What --map-by places tasks on. The object levels run finest first, so that
// `is_finer()` can compare them.
enum class MapBy {
    kHwthread,
    kCore,
    kL1Cache,
    kL2Cache,
    kL3Cache,
    kNuma,
    kPackage,
    kSlot,
    kNode,
    kSeq,
    kPpr,
    kRankfile,
    kPeList,
    kDevice,
};
enum class RankBy { kSlot, kNode, kFill, kSpan };
// Levels a task is bound to, finest first; kNone binds nothing.
enum class BindTo { kHwthread, kCore, kL1Cache, kL2Cache, kL3Cache, kNuma, kPackage, kNone };
// What one "CPU" is: a core, or a hardware thread (HWTCPUS).
enum class CpuUnit { kCore, kHwthread };

struct MapPolicy {
    MapBy by = MapBy::kSlot;
    bool has_directive = true;  // false for ":QUALIFIERS" alone
    // ppr:N:LEVEL: N tasks per LEVEL (an object level, kNode or kDevice).
    unsigned ppr_count = 0;
    MapBy ppr_level = MapBy::kNode;
    std::string device;  // device=CLASS or ppr:N:device=CLASS
    unsigned pes = 0;    // PE=n, 0 when not given
    bool span = false;
    std::optional<bool> oversubscribe;  // job-wide
    std::optional<bool> inherit;        // job-wide
    bool display = false;               // historical DISPLAY qualifier, job-wide
    bool nolocal = false;
    std::optional<CpuUnit> cpus;  // HWTCPUS / CORECPUS
    std::string file;             // FILE=path (seq, rankfile)
    bool ordered = false;         // pe-list only
    IdSet pe_list;                // pe-list=LIST, logical CPUs
    bool shared = false;          // device= only
    unsigned ndev = 1;            // device= only
    bool interleave = false;      // device= only

    friend bool operator==(const MapPolicy&, const MapPolicy&) = default;
};

struct RankPolicy {
    RankBy by = RankBy::kSlot;
    friend bool operator==(const RankPolicy&, const RankPolicy&) = default;
};

struct BindPolicy {
    BindTo to = BindTo::kNone;
    bool if_supported = false;
    std::optional<bool> overload;  // overload-allowed / no-overload
    unsigned limit = 0;            // LIMIT=n, 0 when not given
    bool report = false;           // job-wide
    friend bool operator==(const BindPolicy&, const BindPolicy&) = default;
};

// Case-insensitive, any unambiguous prefix, PRRTE's colon syntax (Open MPI
// 4.1's comma-separated qualifiers are accepted too); `socket` is `package`.
Result<MapPolicy> parse_map_by(std::string_view text);
Result<RankPolicy> parse_rank_by(std::string_view text);
Result<BindPolicy> parse_bind_to(std::string_view text);

// The object level a mapping places on, if it places on objects.
std::optional<ObjectType> mapped_object(const MapPolicy& map);
// The object level a binding binds to, if any. Inline: placement asks for
// every task.
inline std::optional<ObjectType> bound_object(BindTo to) {
    switch (to) {
        case BindTo::kHwthread:
            return ObjectType::kPu;
        case BindTo::kCore:
            return ObjectType::kCore;
        case BindTo::kL1Cache:
            return ObjectType::kL1Cache;
        case BindTo::kL2Cache:
            return ObjectType::kL2Cache;
        case BindTo::kL3Cache:
            return ObjectType::kL3Cache;
        case BindTo::kNuma:
            return ObjectType::kNuma;
        case BindTo::kPackage:
            return ObjectType::kPackage;
        case BindTo::kNone:
            return std::nullopt;
    }
    return std::nullopt;
}
bool maps_on_objects(const MapPolicy& map);

// PRRTE's names in the map header: BYCORE, BYPACKAGE (also for ppr:N:package),
// PE-LIST, BYDEVICE; SLOT, FILL...; CORE, NUMA, NONE...
std::string mapping_name(const MapPolicy& map);
std::string ranking_name(RankBy by);
std::string binding_name(BindTo to);

// The directives one command-line segment gave; any may be absent.
struct Directives {
    std::optional<MapPolicy> map;
    std::optional<RankPolicy> rank;
    std::optional<BindPolicy> bind;
    bool any() const { return map || rank || bind; }
};

// One app's policy after resolution, with what the user gave and what was derived.
struct AppPolicy {
    MapPolicy map;
    RankPolicy rank;
    BindPolicy bind;
    CpuUnit cpus = CpuUnit::kCore;
    bool bind_given = false;
};

struct JobPolicy {
    bool oversubscribe = false;
    std::optional<bool> inherit;
    bool display_map = false;
    bool report_bindings = false;
    // Some app after the first carries its own directives: the map shows one
    // policy line per app.
    bool per_app = false;
    std::vector<AppPolicy> apps;
};

// `job` holds the first segment's directives (the job's, and app 0's);
// `apps[k]` what segment k gave of its own (apps[0] is normally empty).
// `nprocs` is the job's task count, which picks some default bindings.
// Errors name the app and the directive.
Result<JobPolicy> resolve_policies(const Directives& job, std::span<const Directives> apps,
                                   unsigned nprocs);

}  // namespace gantry
