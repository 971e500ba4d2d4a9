// How the job's directives and each app's own combine (the per-app design,
// section 6.4): an app's own directive wins; an app with its own --map-by
// but no --rank-by/--bind-to gets those derived from its own mapping, never
// the job's; otherwise the job's value, then the default derived from the
// app's mapping.
#include <string>

#include "mapper/policy.h"

namespace gantry {
namespace {

std::string app_prefix(std::size_t app, std::size_t napps) {
    return napps > 1 ? "app " + std::to_string(app) + ": " : "";
}

// PRRTE decides its default mapping before it counts the job's tasks, so its
// "np <= 2 maps by core" test always holds: the default is core (hwthread
// when hwthreads are the CPUs), unless PE=n or a binding says otherwise. The
// offline goldens (perapp.*.rank.node-slot, 8 tasks: BYCORE) fix this.
MapBy default_mapping(const MapPolicy& qualifiers, const std::optional<BindPolicy>& bind,
                      CpuUnit cpus) {
    if (qualifiers.pes > 1)
        return MapBy::kSlot;
    if (bind) {
        switch (bind->to) {
            case BindTo::kNone:
                return MapBy::kSlot;
            case BindTo::kHwthread:
                return MapBy::kHwthread;
            case BindTo::kCore:
                return MapBy::kCore;
            case BindTo::kL1Cache:
                return MapBy::kL1Cache;
            case BindTo::kL2Cache:
                return MapBy::kL2Cache;
            case BindTo::kL3Cache:
                return MapBy::kL3Cache;
            case BindTo::kNuma:
                return MapBy::kNuma;
            case BindTo::kPackage:
                return MapBy::kPackage;
        }
    }
    return cpus == CpuUnit::kHwthread ? MapBy::kHwthread : MapBy::kCore;
}

RankPolicy derive_ranking(const MapPolicy& map) {
    if (map.by == MapBy::kNode)
        return {RankBy::kNode};
    if (map.by == MapBy::kSlot)
        return {RankBy::kSlot};
    if (map.span)
        return {RankBy::kSpan};
    if (map.by != MapBy::kPpr && maps_on_objects(map))
        return {RankBy::kFill};
    return {RankBy::kSlot};
}

BindTo cpu_binding(CpuUnit cpus) {
    return cpus == CpuUnit::kHwthread ? BindTo::kHwthread : BindTo::kCore;
}

BindTo bind_of(ObjectType type) {
    switch (type) {
        case ObjectType::kPackage:
            return BindTo::kPackage;
        case ObjectType::kNuma:
            return BindTo::kNuma;
        case ObjectType::kL3Cache:
            return BindTo::kL3Cache;
        case ObjectType::kL2Cache:
            return BindTo::kL2Cache;
        case ObjectType::kL1Cache:
            return BindTo::kL1Cache;
        case ObjectType::kCore:
            return BindTo::kCore;
        case ObjectType::kPu:
            return BindTo::kHwthread;
    }
    return BindTo::kNone;
}

// A defaulted binding is "if supported": the node may turn out oversubscribed,
// and then it is dropped rather than refused.
BindPolicy derive_binding(const MapPolicy& map, CpuUnit cpus, unsigned nprocs) {
    BindPolicy bind;
    bind.if_supported = true;
    if (map.pes > 1 || map.by == MapBy::kPeList || map.by == MapBy::kDevice ||
        (map.by == MapBy::kPpr && map.ppr_level == MapBy::kDevice))
        bind.to = cpu_binding(cpus);
    else if (const auto object = mapped_object(map))
        bind.to = bind_of(*object);
    else
        bind.to = nprocs <= 2 ? cpu_binding(cpus) : BindTo::kNuma;
    return bind;
}

CpuUnit cpu_unit(const MapPolicy& map, const std::optional<MapPolicy>& job_map) {
    if (map.cpus)
        return *map.cpus;
    if (map.by == MapBy::kHwthread)
        return CpuUnit::kHwthread;
    if (job_map && job_map->cpus)
        return *job_map->cpus;
    return CpuUnit::kCore;
}

Status check_app(const AppPolicy& app, const std::string& prefix) {
    if ((app.rank.by == RankBy::kFill || app.rank.by == RankBy::kSpan) && !maps_on_objects(app.map))
        return Error("rank-by", prefix + "ranking by " +
                                    std::string(app.rank.by == RankBy::kFill ? "FILL" : "SPAN") +
                                    " needs a mapping by objects, and " + mapping_name(app.map) +
                                    " places tasks on nodes (must-map-by-obj); map by core, numa, "
                                    "package... or rank by slot or node");
    const auto mapped = mapped_object(app.map);
    const auto bound = bound_object(app.bind.to);
    // The ladder is fixed (package > numa > l3 > l2 > l1 > core > hwthread),
    // whatever the sizes of the objects on this machine.
    if (mapped && bound && *bound < *mapped)
        return Error("bind-to", prefix + "the binding " + binding_name(app.bind.to) +
                                    " lies above the mapping object " + mapping_name(app.map) +
                                    " (bind-upwards); bind to " + std::string(to_string(*mapped)) +
                                    " or a finer level, or map by a coarser object");
    if (app.map.pes > 1 && app.bind_given && app.bind.to != BindTo::kNone &&
        app.bind.to != BindTo::kCore && app.bind.to != BindTo::kHwthread)
        return Error("bind-to", prefix + "PE=" + std::to_string(app.map.pes) +
                                    " binds each task to its own CPUs; only core or hwthread "
                                    "binding can go with it (unsupported-combination)");
    return {};
}

AppPolicy resolve_app(const Directives& job, const Directives& own, unsigned nprocs) {
    AppPolicy app;
    const bool own_map = own.map && own.map->has_directive;
    if (own_map) {
        app.map = *own.map;
    } else if (job.map && job.map->has_directive) {
        app.map = *job.map;
    } else {
        app.map = own.map ? *own.map : job.map ? *job.map : MapPolicy{};
        const auto bind = own.bind ? own.bind : job.bind;
        const CpuUnit cpus = cpu_unit(app.map, job.map);
        app.map.by = default_mapping(app.map, bind, cpus);
        app.map.has_directive = true;
    }
    app.cpus = cpu_unit(app.map, job.map);

    if (own.rank)
        app.rank = *own.rank;
    else if (own_map || !job.rank)
        app.rank = derive_ranking(app.map);
    else
        app.rank = *job.rank;

    if (own.bind) {
        app.bind = *own.bind;
        app.bind_given = true;
    } else if (own_map || !job.bind) {
        app.bind = derive_binding(app.map, app.cpus, nprocs);
    } else {
        app.bind = *job.bind;
        app.bind_given = true;
    }
    return app;
}

// OVERSUBSCRIBE/NOOVERSUBSCRIBE and INHERIT/NOINHERIT decide for the whole
// job; an app cannot have its own (per-app design 13.1 and 13.3).
Status check_job_wide(const Directives& job, const Directives& own, std::size_t k,
                      std::size_t napps) {
    if (!own.map)
        return {};
    const std::string prefix = app_prefix(k, napps);
    const auto refuse = [&](std::string_view name, std::optional<bool> job_value, bool app_value,
                            std::string_view yes, std::string_view no) {
        std::string message = prefix + std::string(app_value ? yes : no) + " in its --map-by is " +
                              std::string(name) + " for the whole job and cannot be given per app";
        if (job_value && *job_value != app_value)
            message += "; it contradicts the job's " + std::string(*job_value ? yes : no) +
                       " (conflicting values)";
        return Error("map-by", message + "; give it once, in the first segment");
    };
    if (own.map->oversubscribe)
        return refuse("oversubscription", job.map ? job.map->oversubscribe : std::nullopt,
                      *own.map->oversubscribe, "OVERSUBSCRIBE", "NOOVERSUBSCRIBE");
    if (own.map->inherit)
        return refuse("inheritance", job.map ? job.map->inherit : std::nullopt, *own.map->inherit,
                      "INHERIT", "NOINHERIT");
    return {};
}

}  // namespace

Result<JobPolicy> resolve_policies(const Directives& job, std::span<const Directives> apps,
                                   unsigned nprocs) {
    JobPolicy policy;
    if (job.map) {
        policy.oversubscribe = job.map->oversubscribe.value_or(false);
        policy.inherit = job.map->inherit;
        policy.display_map = job.map->display;
    }
    policy.report_bindings = job.bind && job.bind->report;
    for (std::size_t k = 0; k < apps.size(); ++k) {
        if (auto status = check_job_wide(job, apps[k], k, apps.size()); !status)
            return status.error();
        // Display and report directives are the job's: promoted, not refused.
        policy.display_map = policy.display_map || (apps[k].map && apps[k].map->display);
        policy.report_bindings = policy.report_bindings || (apps[k].bind && apps[k].bind->report);
        policy.per_app = policy.per_app || (k > 0 && apps[k].any());
    }
    for (std::size_t k = 0; k < apps.size(); ++k) {
        AppPolicy app = resolve_app(job, apps[k], nprocs);
        if (auto status = check_app(app, app_prefix(k, apps.size())); !status)
            return status.error();
        policy.apps.push_back(std::move(app));
    }
    return policy;
}

}  // namespace gantry
