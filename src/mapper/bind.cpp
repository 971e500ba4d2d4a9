// Binding: which CPUs a placed task is restricted to, and which CPUs it
// claims from its node. As in PRRTE, each bound task claims one CPU (PE=n:
// n CPUs), the first free one of its binding object; its cpuset is that
// whole object as it was free when its app started, so a later app's package
// or NUMA binding leaves out the cores earlier apps took.
#include <algorithm>

#include "mapper/placement.h"

namespace gantry::placement {
namespace {

// The free CPUs inside `object`, first to last, at most `wanted` of them.
std::vector<IdSet> free_cpus(const Topology& topology, const IdSet& free_pus, const IdSet& object,
                             CpuUnit unit, unsigned wanted) {
    std::vector<IdSet> cpus;
    const IdSet candidates = free_pus & object;
    for (auto pu = candidates.first(); pu && cpus.size() < wanted;) {
        IdSet cpu = cpu_of(topology, *pu, unit);
        const unsigned last = std::max(*pu, *cpu.last());
        // A core counts as free only when all its PUs are.
        if (free_pus.contains(cpu))
            cpus.push_back(std::move(cpu));
        pu = candidates.next(last);
    }
    return cpus;
}

// The smallest id >= `from` in `set`.
std::optional<IdSet::Id> at_or_after(const IdSet& set, IdSet::Id from) {
    return set.contains(from) ? std::optional(from) : set.next(from);
}

// The first PU >= `from` that is both free and in `region`, found by
// leapfrogging the two sets instead of building their intersection.
std::optional<IdSet::Id> next_free_in(const IdSet& free_pus, const IdSet& region, IdSet::Id from) {
    auto pu = at_or_after(free_pus, from);
    while (pu) {
        const auto in_region = at_or_after(region, *pu);
        if (!in_region)
            return std::nullopt;
        if (*in_region == *pu)
            return pu;
        pu = at_or_after(free_pus, *in_region);
    }
    return std::nullopt;
}

// The PUs of the CPU holding `pu`, as a range: hwloc numbers a core's PUs
// consecutively.
IdSet::Range cpu_range(const Topology& topology, IdSet::Id pu, CpuUnit unit) {
    if (unit == CpuUnit::kCore)
        if (const auto core = topology.object_of(ObjectType::kCore, pu)) {
            const IdSet& pus = topology.object(ObjectType::kCore, *core).pus;
            return {*pus.first(), *pus.last()};
        }
    return {pu, pu};
}

bool all_free(const IdSet& free_pus, IdSet::Range cpu) {
    for (IdSet::Id id = cpu.lo; id <= cpu.hi; ++id)
        if (!free_pus.contains(id))
            return false;
    return true;
}

// Objects of `type` a task placed in `region` may be bound to: those inside
// the region, or, when the level is coarser than the region, the one
// holding it.
std::vector<unsigned> binding_candidates(const Topology& topology, ObjectType type,
                                         const IdSet& region) {
    std::vector<unsigned> inside = topology.objects_within(type, region);
    if (inside.empty() && region.first())
        if (const auto holder = topology.object_of(type, *region.first()))
            inside.push_back(*holder);
    return inside;
}

// PE=n: n CPUs together, from one package, never split across two.
std::optional<Binding> bind_several(const Topology& topology, const IdSet& free_pus,
                                    const IdSet& region, unsigned pes, CpuUnit unit,
                                    Cpusets& cpusets) {
    for (const TopoObject& package : topology.objects(ObjectType::kPackage)) {
        const auto cpus = free_cpus(topology, free_pus, package.pus & region, unit, pes);
        if (cpus.size() < pes)
            continue;
        IdSet taken;
        for (const IdSet& cpu : cpus)
            taken |= cpu;
        Binding binding;
        binding.cpus = keep(cpusets, taken);
        binding.claims_cpus = true;
        return binding;
    }
    return std::nullopt;
}

}  // namespace

IdSet cpu_of(const Topology& topology, unsigned pu, CpuUnit unit) {
    if (unit == CpuUnit::kCore)
        if (const auto core = topology.object_of(ObjectType::kCore, pu))
            return topology.object(ObjectType::kCore, *core).pus;
    return IdSet{pu};
}

std::optional<Binding> bind_in(const Topology& topology, const IdSet& free_pus, const IdSet& region,
                               const BindRequest& request, Cpusets& cpusets) {
    const auto level = bound_object(request.to);
    if (!level)
        return Binding{};
    // Binding to a hwthread while cores are the CPUs still claims the core.
    const CpuUnit unit = request.unit;
    const unsigned pes = std::max(request.pes, 1u);
    if (pes > 1)
        return bind_several(topology, free_pus, region, pes, unit, cpusets);
    // Objects of one level follow PU order, so the first free CPU of the
    // region lies in the first object of the level that has one: inside the
    // region, or holding it when the level is coarser (a GPU's locality).
    const auto start = region.first();
    for (auto pu = start ? next_free_in(free_pus, region, *start) : std::nullopt; pu;) {
        const IdSet::Range cpu = cpu_range(topology, *pu, unit);
        const IdSet::Id last = std::max(*pu, cpu.hi);
        const auto index = topology.object_of(*level, *pu);
        const bool at_limit = index && request.limit > 0 && request.bound &&
                              *index < request.bound->size() &&
                              (*request.bound)[*index] >= request.limit;
        if (index && at_limit) {
            const IdSet::Id end = std::max(last, *topology.object(*level, *index).pus.last());
            pu = next_free_in(free_pus, region, end + 1);
            continue;
        }
        if (index && all_free(free_pus, cpu)) {
            const IdSet& object = topology.object(*level, *index).pus;
            if (region.contains(object) || object.contains(region)) {
                Binding binding{&object, cpu, false, static_cast<int>(*index)};
                if (request.to == BindTo::kHwthread) {
                    binding.cpus = &topology.object(ObjectType::kPu, *pu).pus;
                } else if (request.snapshot && !request.snapshot->contains(object)) {
                    if (const IdSet left = object & *request.snapshot; !left.empty())
                        binding.cpus = keep(cpusets, left);
                }
                return binding;
            }
        }
        pu = next_free_in(free_pus, region, last + 1);
    }
    if (!request.overload)
        return std::nullopt;
    // Overload allowed: share the first object without claiming anything.
    const auto first = binding_candidates(topology, *level, region);
    if (first.empty())
        return std::nullopt;
    return Binding{&topology.object(*level, first.front()).pus};
}

}  // namespace gantry::placement
