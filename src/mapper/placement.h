// Internal to the mapper: what placement, binding and ranking share while one
// job is being mapped. Not for other layers; they read the JobMap.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/idset.h"
#include "mapper/cpuset_cache.h"
#include "mapper/files.h"
#include "mapper/map.h"

namespace gantry::placement {

// One node while the job is placed: what earlier tasks (of any app) used.
struct NodeUsage {
    unsigned tasks = 0;  // slots used
    IdSet free_pus;      // PUs no bound task has claimed
};

// The cpusets tasks are bound to that no topology object holds (PE=n, a
// package less what earlier apps took, a pe-list), each kept once for the
// whole job, so that a placed task points at its cpuset rather than owning
// a copy: a million copies are a million allocations, freed in another
// order than they were made.
using Cpusets = CpusetCache<IdSet>;

// `cpus` as kept in `cpusets`: equal sets, one pointer.
inline const IdSet* keep(Cpusets& cpusets, const IdSet& cpus) {
    return &cpusets.get(nullptr, 0, cpus, [&] { return cpus; });
}

// One task as placed, before it has a rank.
struct Placed {
    unsigned node = 0;
    int object = -1;  // the mapped object (ppr object, GPU group); -1 on node-level maps
    // Bound PUs: those of an object of the node's topology, or a set kept
    // in the job's Cpusets; nullptr when not bound.
    const IdSet* cpus = nullptr;
    std::vector<unsigned> gpus;
};

// What binding one task claims and gets.
struct Binding {
    const IdSet* cpus = nullptr;  // the task's cpuset (as in Placed); nullptr: not bound
    // The CPUs it takes from the node's free ones: one CPU, a range of PUs
    // (hwloc numbers a core's PUs consecutively), or, with PE=n, all of
    // `cpus`; nothing when overloaded. A range rather than a set: a million
    // tasks each claim one CPU, and a set costs two allocations.
    IdSet::Range claimed{1, 0};  // empty: lo > hi
    bool claims_cpus = false;    // PE=n: `cpus` are claimed
    int object = -1;             // the object of the binding level it is bound to
};

struct BindRequest {
    BindTo to = BindTo::kNone;
    CpuUnit unit = CpuUnit::kCore;
    unsigned pes = 1;                 // CPUs per task
    bool overload = false;            // bind even where no CPU is free
    const IdSet* snapshot = nullptr;  // the node's free PUs when this app started
    // LIMIT=n: objects already bound to `limit` of the app's tasks are full.
    unsigned limit = 0;
    const std::vector<unsigned>* bound = nullptr;  // tasks per object of the level
};

// Binds one task inside `region` (its mapped object, or the whole node):
// the first object of the binding level in the region with a free CPU, or
// the one enclosing the region. Nothing when no CPU is free and overload is
// not allowed. A cpuset no object holds is kept in `cpusets`.
std::optional<Binding> bind_in(const Topology& topology, const IdSet& free_pus, const IdSet& region,
                               const BindRequest& request, Cpusets& cpusets);

// The PUs of the CPU (core or PU) that holds `pu`.
IdSet cpu_of(const Topology& topology, unsigned pu, CpuUnit unit);

// Places one app's tasks on `nodes`, after what earlier apps used (`usage`,
// updated; cpusets no object holds go to `cpusets`). `nprocs` 0 lets the
// policy decide how many. A defaulted binding is dropped (shown NONE) when
// the app has to oversubscribe, as in PRRTE. `label` names the app in
// errors: "app 1 (-n 6 ./b)". `hosts`, when not empty, are the only nodes
// the app may use (its own -H).
Result<std::vector<Placed>> place_app(std::span<const Node> nodes, std::vector<NodeUsage>& usage,
                                      Cpusets& cpusets, AppPolicy& policy, unsigned nprocs,
                                      bool oversubscribe, const std::string& label,
                                      std::span<const std::string> hosts = {});

// seq: one task per line, in line order, on the line's host and CPUs.
Result<std::vector<Placed>> place_sequential(std::span<const Node> nodes,
                                             std::vector<NodeUsage>& usage, Cpusets& cpusets,
                                             AppPolicy& policy, unsigned nprocs,
                                             std::span<const SeqLine> lines,
                                             const std::string& label,
                                             std::span<const std::string> hosts = {});

// rankfile: ranks first_rank... of the job on the host and CPUs the file gives.
Result<std::vector<Placed>> place_by_rankfile(
    std::span<const Node> nodes, std::vector<NodeUsage>& usage, Cpusets& cpusets, AppPolicy& policy,
    unsigned nprocs, unsigned first_rank, std::span<const RankfileLine> lines,
    const std::string& label, std::span<const std::string> hosts = {});

// The order in which one app's placed tasks take their ranks: indices into
// `placed`.
std::vector<std::size_t> ranking_order(std::span<const Placed> placed, RankBy by);

}  // namespace gantry::placement
