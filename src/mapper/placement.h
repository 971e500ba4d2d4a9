// Internal to the mapper: what placement, binding and ranking share while one
// job is being mapped. Not for other layers; they read the JobMap.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/idset.h"
#include "mapper/files.h"
#include "mapper/map.h"

namespace gantry::placement {

// One node while the job is placed: what earlier tasks (of any app) used.
struct NodeUsage {
    unsigned tasks = 0;  // slots used
    IdSet free_pus;      // PUs no bound task has claimed
};

// One task as placed, before it has a rank.
struct Placed {
    unsigned node = 0;
    int object = -1;  // the mapped object (ppr object, GPU group); -1 on node-level maps
    IdSet cpus;       // bound PUs; empty when not bound
    std::vector<unsigned> gpus;
};

// What binding one task claims and gets.
struct Binding {
    IdSet cpus;       // the task's cpuset
    IdSet claimed;    // the CPUs it takes from the node's free ones
    int object = -1;  // the object of the binding level it is bound to
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
// not allowed.
std::optional<Binding> bind_in(const Topology& topology, const IdSet& free_pus, const IdSet& region,
                               const BindRequest& request);

// The PUs of the CPU (core or PU) that holds `pu`.
IdSet cpu_of(const Topology& topology, unsigned pu, CpuUnit unit);

// Places one app's tasks on `nodes`, after what earlier apps used (`usage`,
// updated). `nprocs` 0 lets the policy decide how many. A defaulted binding
// is dropped (shown NONE) when the app has to oversubscribe, as in PRRTE.
// `label` names the app in errors: "app 1 (-n 6 ./b)". `hosts`, when not
// empty, are the only nodes the app may use (its own -H).
Result<std::vector<Placed>> place_app(std::span<const Node> nodes, std::vector<NodeUsage>& usage,
                                      AppPolicy& policy, unsigned nprocs, bool oversubscribe,
                                      const std::string& label,
                                      std::span<const std::string> hosts = {});

// seq: one task per line, in line order, on the line's host and CPUs.
Result<std::vector<Placed>> place_sequential(std::span<const Node> nodes,
                                             std::vector<NodeUsage>& usage, AppPolicy& policy,
                                             unsigned nprocs, std::span<const SeqLine> lines,
                                             const std::string& label,
                                             std::span<const std::string> hosts = {});

// rankfile: ranks first_rank... of the job on the host and CPUs the file gives.
Result<std::vector<Placed>> place_by_rankfile(std::span<const Node> nodes,
                                              std::vector<NodeUsage>& usage, AppPolicy& policy,
                                              unsigned nprocs, unsigned first_rank,
                                              std::span<const RankfileLine> lines,
                                              const std::string& label,
                                              std::span<const std::string> hosts = {});

// The order in which one app's placed tasks take their ranks: indices into
// `placed`.
std::vector<std::size_t> ranking_order(std::span<const Placed> placed, RankBy by);

}  // namespace gantry::placement
