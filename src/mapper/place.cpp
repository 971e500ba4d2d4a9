// Placement: which node, and which object of it, each task of one app goes
// to, in creation order. PRRTE's placers (docs/mapping.md):
//   slot    fill each node's free slots in node order;
//   node    balanced blocks: each pass gives every node max(1, left/nodes);
//   object  per node, sweep its objects one task each, until its free slots
//           are used (SPAN: one task per node per pass over all nodes);
//   ppr     N tasks on every object of every node;
//   pe-list tasks bound to the listed CPUs of each node;
//   device  one task per GPU (or NDEV GPUs), near its GPU.
// When the job does not fit in the free slots and may oversubscribe, the
// rest is spread evenly over the nodes.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_set>

#include "mapper/placement.h"
#include "util/text.h"

namespace gantry::placement {
namespace {

struct Target {
    int object;
    IdSet region;
    std::vector<unsigned> gpus;
};

std::string names_of(std::span<const Node> nodes, std::span<const unsigned> which) {
    std::string out;
    for (const unsigned n : which)
        out += (out.empty() ? "" : ", ") + nodes[n].name;
    return out;
}

std::string device_spec(const MapPolicy& map) {
    return "device=" + map.device;
}

class AppPlacer {
public:
    AppPlacer(std::span<const Node> nodes, std::vector<NodeUsage>& usage, Cpusets& cpusets,
              AppPolicy& policy, bool oversubscribe, const std::string& label,
              std::span<const std::string> hosts)
        : nodes_(nodes),
          usage_(usage),
          cpusets_(cpusets),
          policy_(policy),
          oversubscribe_(oversubscribe),
          label_(label) {
        // A set: an app's -H may name thousands of the job's nodes.
        const std::unordered_set<std::string_view> named_hosts(hosts.begin(), hosts.end());
        for (unsigned n = 0; n < nodes.size(); ++n) {
            snapshot_.push_back(usage[n].free_pus);
            const bool named = hosts.empty() || named_hosts.contains(nodes[n].name);
            if (named && !(policy.map.nolocal && nodes[n].local))
                eligible_.push_back(n);
        }
        cursor_.assign(nodes.size(), 0);
        bound_.resize(nodes.size());
    }

    Result<std::vector<Placed>> place(unsigned nprocs);
    Result<std::vector<Placed>> place_sequential(unsigned nprocs, std::span<const SeqLine> lines);
    Result<std::vector<Placed>> place_ranked(unsigned nprocs, unsigned first_rank,
                                             std::span<const RankfileLine> lines);

private:
    unsigned free_slots(unsigned n) const {
        return nodes_[n].slots > usage_[n].tasks ? nodes_[n].slots - usage_[n].tasks : 0;
    }
    // Room under max_slots, the cap even oversubscription respects.
    unsigned room(unsigned n) const {
        if (nodes_[n].max_slots == 0)
            return std::numeric_limits<unsigned>::max();
        return nodes_[n].max_slots > usage_[n].tasks ? nodes_[n].max_slots - usage_[n].tasks : 0;
    }
    unsigned total_free() const {
        unsigned total = 0;
        for (const unsigned n : eligible_)
            total += free_slots(n);
        return total;
    }

    bool try_place(unsigned n, const Target& target, bool need_cpu = false);
    unsigned fill_node(unsigned n, unsigned budget);
    unsigned sweep_objects(unsigned n, unsigned budget);
    const std::vector<Target>& object_targets(unsigned n);

    Status place_by_slot();
    Status place_by_node(unsigned nprocs);
    Status place_by_object();
    Status place_by_ppr();
    Status place_on_pe_list();
    Status place_on_devices();
    Status spread_rest(const std::function<unsigned(unsigned, unsigned)>& place_on);
    Status check_slots(unsigned nprocs);
    Status out_of_room() const;
    std::optional<unsigned> node_named(std::string_view name) const;
    Result<IdSet> cpu_region(unsigned n, const CpuList& list, const std::string& where) const;
    void place_exactly(unsigned n, const IdSet& cpus);

    std::span<const Node> nodes_;
    std::vector<NodeUsage>& usage_;
    Cpusets& cpusets_;
    AppPolicy& policy_;
    bool oversubscribe_;
    const std::string& label_;
    std::vector<unsigned> eligible_;
    std::vector<IdSet> snapshot_;
    std::vector<std::size_t> cursor_;                     // per node: the next object of its sweep
    std::map<const void*, std::vector<Target>> targets_;  // by topology
    std::vector<std::vector<unsigned>> bound_;  // per node: the app's tasks per binding object
    std::vector<Placed> placed_;
    unsigned remaining_ = 0;
};

// With `need_cpu`, a target without a free CPU is refused even when the
// binding was only defaulted, so that object sweeps pass over full objects.
bool AppPlacer::try_place(unsigned n, const Target& target, bool need_cpu) {
    const Node& node = nodes_[n];
    auto& bound = bound_[n];
    if (bound.empty())
        if (const auto level = bound_object(policy_.bind.to))
            bound.assign(node.topology.count(*level), 0);
    const BindRequest request{policy_.bind.to,
                              policy_.cpus,
                              std::max(policy_.map.pes, 1u),
                              policy_.bind.overload.value_or(false),
                              &snapshot_[n],
                              policy_.bind.limit,
                              &bound};
    auto binding = bind_in(node.topology, usage_[n].free_pus, target.region, request, cpusets_);
    if (binding && binding->object >= 0 && static_cast<std::size_t>(binding->object) < bound.size())
        ++bound[binding->object];
    if (!binding) {
        // A binding nobody asked for never stops a task: it runs unbound.
        if (policy_.bind_given || need_cpu)
            return false;
        binding = Binding{};
    }
    // Erased in place: a difference of sets would build a new one per task.
    IdSet& free_pus = usage_[n].free_pus;
    if (binding->claims_cpus)
        for (const IdSet::Range& r : binding->cpus->ranges())
            free_pus.erase(r.lo, r.hi);
    else
        free_pus.erase(binding->claimed.lo, binding->claimed.hi);
    ++usage_[n].tasks;
    placed_.push_back(Placed{n, target.object, binding->cpus, target.gpus});
    --remaining_;
    return true;
}

// Node-level placement: up to `budget` tasks on node `n`.
unsigned AppPlacer::fill_node(unsigned n, unsigned budget) {
    const Target whole{-1, nodes_[n].usable_pus(), {}};
    unsigned placed = 0;
    while (placed < budget && remaining_ > 0 && try_place(n, whole))
        ++placed;
    return placed;
}

// The node's objects of the mapping level, built once per topology: nodes
// given the same topology share it.
const std::vector<Target>& AppPlacer::object_targets(unsigned n) {
    const Topology& topology = nodes_[n].topology;
    // Nodes limited to part of their topology get their own list.
    const void* key = nodes_[n].allowed_pus.empty()
                          ? static_cast<const void*>(topology.objects(ObjectType::kPu).data())
                          : static_cast<const void*>(&nodes_[n]);
    auto [cached, added] = targets_.try_emplace(key);
    std::vector<Target>& targets = cached->second;
    if (!added)
        return targets;
    const auto type = mapped_object(policy_.map);
    if (!type) {
        targets.push_back(Target{0, nodes_[n].usable_pus(), {}});
        return targets;
    }
    const IdSet usable = nodes_[n].usable_pus();
    for (const TopoObject& object : topology.objects(*type))
        if (!object.pus.empty() && object.pus.intersects(usable))
            targets.push_back(Target{static_cast<int>(object.logical), object.pus & usable, {}});
    return targets;
}

// One task per object in turn, from where the node's last sweep stopped;
// objects without a free CPU are passed over. When none has one left and the
// binding was only defaulted, the tasks go on unbound.
unsigned AppPlacer::sweep_objects(unsigned n, unsigned budget) {
    const auto& targets = object_targets(n);
    unsigned placed = 0;
    std::size_t misses = 0;
    bool need_cpu = true;
    while (placed < budget && remaining_ > 0) {
        if (misses == targets.size()) {
            if (policy_.bind_given || !need_cpu)
                break;
            need_cpu = false;
            misses = 0;
        }
        const Target& target = targets[cursor_[n] % targets.size()];
        ++cursor_[n];
        if (try_place(n, target, need_cpu)) {
            ++placed;
            misses = 0;
        } else {
            ++misses;
        }
    }
    return placed;
}

Status AppPlacer::out_of_room() const {
    if (policy_.bind_given && policy_.bind.to != BindTo::kNone)
        return Error("map", label_ + ": " + counted(remaining_, "task") +
                                " found no free CPU to bind to on " + names_of(nodes_, eligible_) +
                                " (no-available-cpus); add :overload-allowed to --bind-to, "
                                "bind to a coarser level, or give fewer tasks");
    return Error("map", label_ + ": " + counted(remaining_, "task") + " could not be placed on " +
                            names_of(nodes_, eligible_));
}

// The rest, evenly over the nodes: the first `left % nodes` get one more.
// Only an oversubscribing job gets here with tasks left; otherwise they are
// the ones the nodes' CPUs could not take.
Status AppPlacer::spread_rest(const std::function<unsigned(unsigned, unsigned)>& place_on) {
    if (remaining_ > 0 && !oversubscribe_)
        return out_of_room();
    while (remaining_ > 0) {
        std::vector<unsigned> open;
        for (const unsigned n : eligible_)
            if (room(n) > 0)
                open.push_back(n);
        if (open.empty())
            break;
        const unsigned base = remaining_ / open.size();
        const unsigned extra = remaining_ % open.size();
        unsigned progress = 0;
        for (std::size_t i = 0; i < open.size() && remaining_ > 0; ++i)
            progress += place_on(open[i], std::min<unsigned>(base + (i < extra), room(open[i])));
        if (progress == 0)
            break;
    }
    return remaining_ == 0 ? Status{} : out_of_room();
}

Status AppPlacer::check_slots(unsigned nprocs) {
    const unsigned free = total_free();
    if (nprocs <= free)
        return {};
    if (!oversubscribe_)
        return Error("map",
                     label_ + ": there are not enough slots available: " + counted(nprocs, "task") +
                         (nprocs == 1 ? " does" : " do") + " not fit in the " +
                         counted(free, "free slot") + " of " + names_of(nodes_, eligible_) +
                         "; add :OVERSUBSCRIBE to the job's --map-by or give fewer tasks");
    // PRRTE leaves an oversubscribed app unbound unless a binding was asked for.
    if (!policy_.bind_given)
        policy_.bind.to = BindTo::kNone;
    return {};
}

Status AppPlacer::place_by_slot() {
    for (const unsigned n : eligible_)
        fill_node(n, free_slots(n));
    return spread_rest([this](unsigned n, unsigned budget) { return fill_node(n, budget); });
}

Status AppPlacer::place_by_node(unsigned nprocs) {
    if (nprocs <= total_free()) {
        while (remaining_ > 0) {
            std::vector<unsigned> open;
            for (const unsigned n : eligible_)
                if (free_slots(n) > 0)
                    open.push_back(n);
            if (open.empty())
                break;
            const unsigned share = std::max(1u, remaining_ / static_cast<unsigned>(open.size()));
            unsigned progress = 0;
            for (const unsigned n : open)
                progress += fill_node(n, std::min(share, free_slots(n)));
            if (progress == 0)
                break;
        }
    }
    return spread_rest([this](unsigned n, unsigned budget) { return fill_node(n, budget); });
}

Status AppPlacer::place_by_object() {
    if (policy_.map.span) {
        // The allocation as one node: one task per node per pass.
        std::vector<unsigned> quota(nodes_.size());
        for (const unsigned n : eligible_)
            quota[n] = free_slots(n);
        for (bool progress = true; progress && remaining_ > 0;) {
            progress = false;
            for (const unsigned n : eligible_) {
                if (quota[n] > 0 && remaining_ > 0 && sweep_objects(n, 1) == 1) {
                    --quota[n];
                    progress = true;
                }
            }
        }
    } else {
        for (const unsigned n : eligible_)
            sweep_objects(n, free_slots(n));
    }
    return spread_rest([this](unsigned n, unsigned budget) { return sweep_objects(n, budget); });
}

Status AppPlacer::place_by_ppr() {
    for (const unsigned n : eligible_) {
        unsigned budget = oversubscribe_ ? room(n) : free_slots(n);
        for (const Target& target : object_targets(n)) {
            for (unsigned k = 0; k < policy_.map.ppr_count && budget > 0 && remaining_ > 0; ++k) {
                if (!try_place(n, target))
                    break;
                --budget;
            }
        }
    }
    if (remaining_ == 0)
        return {};
    const auto object = mapped_object(policy_.map);
    return Error("map", label_ + ": ppr:" + std::to_string(policy_.map.ppr_count) + ":" +
                            std::string(object ? to_string(*object) : "node") + " places " +
                            counted(placed_.size(), "task") + " on " + names_of(nodes_, eligible_) +
                            ", " + std::to_string(remaining_) +
                            " short; give fewer tasks or more nodes");
}

Status AppPlacer::place_on_pe_list() {
    for (const unsigned n : eligible_) {
        const Topology& topology = nodes_[n].topology;
        const ObjectType unit =
            policy_.cpus == CpuUnit::kHwthread ? ObjectType::kPu : ObjectType::kCore;
        std::vector<IdSet> cpus;
        IdSet all;
        const IdSet* kept_all = nullptr;
        for (const IdSet::Id cpu : policy_.map.pe_list) {
            if (cpu >= topology.count(unit))
                return Error("map-by", label_ + ": pe-list CPU " + std::to_string(cpu) +
                                           " does not exist on " + nodes_[n].name + ", which has " +
                                           std::to_string(topology.count(unit)) + " " +
                                           std::string(to_string(unit)) + "s");
            cpus.push_back(topology.object(unit, cpu).pus);
            all |= cpus.back();
        }
        unsigned budget = free_slots(n);
        for (std::size_t k = 0; budget > 0 && remaining_ > 0; ++k) {
            if (policy_.map.ordered && k >= cpus.size())
                break;
            const IdSet& region = policy_.map.ordered ? cpus[k] : all;
            if (!try_place(n, Target{-1, region, {}}))
                break;
            // Unordered, every task may run on the whole list.
            if (placed_.back().cpus != nullptr && !policy_.map.ordered) {
                if (kept_all == nullptr)
                    kept_all = keep(cpusets_, all);
                placed_.back().cpus = kept_all;
            }
            --budget;
        }
    }
    return spread_rest([this](unsigned n, unsigned budget) { return fill_node(n, budget); });
}

// The node's GPUs in the order tasks take them: PCI order, or, with
// INTERLEAVE, one from each package in turn.
std::vector<unsigned> gpu_order(const Node& node, const MapPolicy& map) {
    const Topology& topology = node.topology;
    std::vector<unsigned> order;
    const auto gpus = topology.gpus();
    for (unsigned g = 0; g < gpus.size(); ++g)
        if (node.gpu_usable(g) &&
            (map.device == "gpu" || gpus[g].name == map.device || gpus[g].uuid == map.device))
            order.push_back(g);
    if (!map.interleave)
        return order;
    std::vector<std::vector<unsigned>> by_package(std::max(topology.npackages(), 1u));
    for (const unsigned g : order) {
        const auto first = gpus[g].pus.first();
        const auto package = first ? topology.object_of(ObjectType::kPackage, *first) : 0;
        by_package[package.value_or(0)].push_back(g);
    }
    std::vector<unsigned> interleaved;
    for (std::size_t round = 0; interleaved.size() < order.size(); ++round)
        for (const auto& package : by_package)
            if (round < package.size())
                interleaved.push_back(package[round]);
    return interleaved;
}

Status AppPlacer::place_on_devices() {
    const MapPolicy& map = policy_.map;
    const bool ppr = map.by == MapBy::kPpr;
    const unsigned per_group = ppr ? map.ppr_count : 1;
    unsigned placeable = 0;
    std::vector<unsigned> without_gpus;
    for (const unsigned n : eligible_) {
        const Topology& topology = nodes_[n].topology;
        const auto order = gpu_order(nodes_[n], map);
        const unsigned ngroups = static_cast<unsigned>(order.size()) / map.ndev;
        if (ngroups == 0) {
            without_gpus.push_back(n);
            continue;
        }
        for (const unsigned g : order)
            if (topology.gpus()[g].uuid.empty())
                return Error("map-by", label_ + ": the GPUs of " + nodes_[n].name +
                                           " carry no vendor UUID (no CUDA, NVML or ROCm data in "
                                           "its topology), so a task could not be told which GPU "
                                           "is its own; map by another directive");
        std::vector<Target> targets;
        for (unsigned group = 0; group < ngroups; ++group) {
            Target target{static_cast<int>(group), IdSet{}, {}};
            for (unsigned d = 0; d < map.ndev; ++d) {
                const unsigned g = order[group * map.ndev + d];
                target.gpus.push_back(g);
                target.region |= topology.gpus()[g].pus;
            }
            for (unsigned k = 0; k < per_group; ++k)
                targets.push_back(target);
        }
        const unsigned budget =
            map.shared ? free_slots(n) : std::min<unsigned>(free_slots(n), targets.size());
        placeable += budget;
        for (unsigned k = 0; k < budget && remaining_ > 0; ++k)
            if (!try_place(n, targets[k % targets.size()]))
                break;
    }
    if (remaining_ == 0)
        return {};
    if (without_gpus.size() == eligible_.size())
        return Error("map-by", label_ + ": " + device_spec(map) + " found no such device on " +
                                   names_of(nodes_, eligible_) + " (mapping-target-not-found)");
    return Error("map-by", label_ + ": " + device_spec(map) + " gives each task its own " +
                               (map.ndev > 1 ? std::to_string(map.ndev) + " GPUs" : "GPU") +
                               " and " + counted(placed_.size() + remaining_, "task") +
                               (placed_.size() + remaining_ == 1 ? " was" : " were") +
                               " asked for (Processes placeable: " + std::to_string(placeable) +
                               " on " + names_of(nodes_, eligible_) +
                               "); add :SHARED to share GPUs, or give fewer tasks");
}

std::optional<unsigned> AppPlacer::node_named(std::string_view name) const {
    for (const unsigned n : eligible_)
        if (nodes_[n].name == name)
            return n;
    return std::nullopt;
}

// A file's CPU list as PUs of node `n`: logical cores (PUs with hwthread
// CPUs), numbered within one package when the list names it.
Result<IdSet> AppPlacer::cpu_region(unsigned n, const CpuList& list,
                                    const std::string& where) const {
    const Topology& topology = nodes_[n].topology;
    const ObjectType unit =
        policy_.cpus == CpuUnit::kHwthread ? ObjectType::kPu : ObjectType::kCore;
    std::vector<unsigned> cpus;
    if (list.package) {
        if (*list.package >= topology.npackages())
            return Error("map", label_ + ": " + where + ": " + nodes_[n].name + " has no package " +
                                    std::to_string(*list.package));
        cpus =
            topology.objects_within(unit, topology.object(ObjectType::kPackage, *list.package).pus);
    } else {
        for (unsigned i = 0; i < topology.count(unit); ++i)
            cpus.push_back(i);
    }
    IdSet region;
    for (const IdSet::Id cpu : list.cpus) {
        if (cpu >= cpus.size())
            return Error("map", label_ + ": " + where + ": " + nodes_[n].name + " has no " +
                                    std::string(to_string(unit)) + " " + std::to_string(cpu));
        region |= topology.object(unit, cpus[cpu]).pus;
    }
    return region;
}

// A task the file pins: bound to exactly its CPUs, whatever the slots say.
void AppPlacer::place_exactly(unsigned n, const IdSet& cpus) {
    usage_[n].free_pus -= cpus;
    ++usage_[n].tasks;
    placed_.push_back(Placed{n, -1, cpus.empty() ? nullptr : keep(cpusets_, cpus), {}});
}

}  // namespace

Result<std::vector<Placed>> AppPlacer::place_sequential(unsigned nprocs,
                                                        std::span<const SeqLine> lines) {
    std::vector<const SeqLine*> usable;
    for (const SeqLine& line : lines)
        if (!(policy_.map.nolocal && std::any_of(nodes_.begin(), nodes_.end(), [&](const Node& n) {
                  return n.local && n.name == line.host;
              })))
            usable.push_back(&line);
    if (nprocs == 0)
        nprocs = static_cast<unsigned>(usable.size());
    if (nprocs > usable.size())
        return Error("map", label_ + ": the seq file lists " + counted(usable.size(), "task") +
                                " and " + std::to_string(nprocs) +
                                " were asked for; give fewer tasks or add lines");
    remaining_ = nprocs;
    for (unsigned i = 0; i < nprocs; ++i) {
        const SeqLine& line = *usable[i];
        const auto n = node_named(line.host);
        if (!n)
            return Error("map", label_ + ": host " + quote(line.host) +
                                    " of the seq file is not one of the job's nodes");
        if (line.cpus) {
            auto region = cpu_region(*n, *line.cpus, "seq line " + std::to_string(i + 1));
            if (!region)
                return region.error();
            place_exactly(*n, *region);
            --remaining_;
        } else if (!try_place(*n, Target{-1, nodes_[*n].usable_pus(), {}})) {
            return out_of_room().error();
        }
    }
    return std::move(placed_);
}

Result<std::vector<Placed>> AppPlacer::place_ranked(unsigned nprocs, unsigned first_rank,
                                                    std::span<const RankfileLine> lines) {
    if (nprocs == 0)
        for (const RankfileLine& line : lines)
            nprocs += line.rank >= first_rank;
    for (unsigned rank = first_rank; rank < first_rank + nprocs; ++rank) {
        const auto line = std::find_if(lines.begin(), lines.end(),
                                       [&](const RankfileLine& l) { return l.rank == rank; });
        if (line == lines.end())
            return Error("map", label_ + ": rank " + std::to_string(rank) +
                                    " is missing from the rankfile (missing-rank)");
        std::optional<unsigned> n;
        if (line->node_index)
            n = *line->node_index < eligible_.size() ? std::optional(eligible_[*line->node_index])
                                                     : std::nullopt;
        else
            n = node_named(line->host);
        if (!n)
            return Error("map", label_ + ": the host of rank " + std::to_string(rank) +
                                    " in the rankfile is not one of the job's nodes");
        auto region = cpu_region(*n, line->cpus, "rank " + std::to_string(rank));
        if (!region)
            return region.error();
        place_exactly(*n, *region);
    }
    return std::move(placed_);
}

Result<std::vector<Placed>> AppPlacer::place(unsigned nprocs) {
    const MapPolicy& map = policy_.map;
    if (eligible_.empty())
        return Error("map", label_ +
                                ": NOLOCAL leaves no node to place on; add nodes other "
                                "than the one gantry runs on");
    if (const auto type = mapped_object(map); type && map.ppr_level != MapBy::kDevice) {
        for (const unsigned n : eligible_)
            if (nodes_[n].topology.count(*type) == 0)
                return Error("map-by", label_ + ": " + nodes_[n].name + " has no " +
                                           std::string(to_string(*type)) +
                                           " to map by (mapping-target-not-found)");
    }
    const bool on_devices =
        map.by == MapBy::kDevice || (map.by == MapBy::kPpr && map.ppr_level == MapBy::kDevice);
    if (nprocs == 0) {
        nprocs = total_free();
        if (map.by == MapBy::kPpr && !on_devices) {
            nprocs = 0;
            for (const unsigned n : eligible_)
                nprocs += map.ppr_count * static_cast<unsigned>(object_targets(n).size());
        } else if (on_devices) {
            // One task per GPU (or NDEV GPUs; ppr: N per GPU), within the slots.
            nprocs = 0;
            for (const unsigned n : eligible_) {
                const auto ngpus = gpu_order(nodes_[n], map).size();
                const unsigned per = map.by == MapBy::kPpr ? map.ppr_count : 1;
                nprocs += std::min<unsigned>(free_slots(n),
                                             static_cast<unsigned>(ngpus / map.ndev) * per);
            }
            if (nprocs == 0)
                nprocs = 1;  // so that the placer says what is missing
        }
    }
    remaining_ = nprocs;
    placed_.reserve(nprocs);
    if (auto status = check_slots(nprocs); !status)
        return status.error();
    Status status;
    if (on_devices)
        status = place_on_devices();
    else if (map.by == MapBy::kSlot)
        status = place_by_slot();
    else if (map.by == MapBy::kNode)
        status = place_by_node(nprocs);
    else if (map.by == MapBy::kPpr)
        status = place_by_ppr();
    else if (map.by == MapBy::kPeList)
        status = place_on_pe_list();
    else
        status = place_by_object();
    if (!status)
        return status.error();
    return std::move(placed_);
}

Result<std::vector<Placed>> place_sequential(std::span<const Node> nodes,
                                             std::vector<NodeUsage>& usage, Cpusets& cpusets,
                                             AppPolicy& policy, unsigned nprocs,
                                             std::span<const SeqLine> lines,
                                             const std::string& label,
                                             std::span<const std::string> hosts) {
    AppPlacer placer(nodes, usage, cpusets, policy, true, label, hosts);
    return placer.place_sequential(nprocs, lines);
}

Result<std::vector<Placed>> place_by_rankfile(
    std::span<const Node> nodes, std::vector<NodeUsage>& usage, Cpusets& cpusets, AppPolicy& policy,
    unsigned nprocs, unsigned first_rank, std::span<const RankfileLine> lines,
    const std::string& label, std::span<const std::string> hosts) {
    AppPlacer placer(nodes, usage, cpusets, policy, true, label, hosts);
    return placer.place_ranked(nprocs, first_rank, lines);
}

Result<std::vector<Placed>> place_app(std::span<const Node> nodes, std::vector<NodeUsage>& usage,
                                      Cpusets& cpusets, AppPolicy& policy, unsigned nprocs,
                                      bool oversubscribe, const std::string& label,
                                      std::span<const std::string> hosts) {
    AppPlacer placer(nodes, usage, cpusets, policy, oversubscribe, label, hosts);
    return placer.place(nprocs);
}

}  // namespace gantry::placement
