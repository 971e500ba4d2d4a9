// The job's R: per node, the cores its tasks are bound to and the cores of
// the slots its unbound tasks took (docs/mapping.md).
#include "mapper/resources.h"

#include <algorithm>
#include <vector>

#include "mapper/placement.h"

namespace gantry {
namespace {

// What the tasks of one node use, gathered in one pass over the job.
struct NodeShare {
    std::vector<IdSet::Range> bound_pus;  // ranges of bound tasks' cpusets, unsorted
    std::vector<unsigned> unbound_tasks;  // per app: its tasks on the node without a cpuset
    IdSet gpus;
    bool used = false;
};

// The cores that hold any of `pus`; on a machine without cores the PUs are
// the cores, as the mapper treats them.
IdSet cores_holding(const Topology& topology, const IdSet& pus) {
    if (topology.ncores() == 0)
        return pus;
    IdSet cores;
    for (const TopoObject& core : topology.objects(ObjectType::kCore))
        if (core.pus.intersects(pus))
            cores.insert(core.logical);
    return cores;
}

// The PUs `count` unbound tasks take: one CPU each, lowest first, of those
// whose PUs are all free, while there are any. A core with one bound
// hyperthread is not free: its other PU is not a slot of its own.
IdSet pus_of_unbound_tasks(const Topology& topology, const IdSet& free_pus, CpuUnit unit,
                           unsigned count) {
    IdSet taken;
    for (auto pu = free_pus.first(); pu && count > 0;) {
        const IdSet cpu = placement::cpu_of(topology, *pu, unit);
        if (free_pus.contains(cpu)) {
            taken |= cpu;
            --count;
        }
        pu = free_pus.next(std::max(*pu, *cpu.last()));
    }
    return taken;
}

std::vector<NodeShare> shares_of_nodes(const JobMap& map) {
    std::vector<NodeShare> shares(map.nodes.size());
    for (NodeShare& share : shares)
        share.unbound_tasks.assign(map.app_sizes.size(), 0);
    for (const Task& task : map.tasks) {
        NodeShare& share = shares[task.node];
        share.used = true;
        if (task.cpus.empty())
            ++share.unbound_tasks[task.app];
        else
            share.bound_pus.insert(share.bound_pus.end(), task.cpus.ranges().begin(),
                                   task.cpus.ranges().end());
        for (const unsigned gpu : task.gpus)
            share.gpus.insert(gpu);
    }
    return shares;
}

}  // namespace

ResourceSet job_resources(const JobMap& map) {
    ResourceSet resources;
    const std::vector<NodeShare> shares = shares_of_nodes(map);
    for (std::size_t n = 0; n < map.nodes.size(); ++n) {
        const NodeShare& share = shares[n];
        if (!share.used)
            continue;
        const Node& node = map.nodes[n];
        IdSet pus = IdSet::from_ranges(share.bound_pus);
        // Apps in order, each with its own CPU unit, as they were placed.
        IdSet free_pus = node.usable_pus() - pus;
        for (std::size_t app = 0; app < share.unbound_tasks.size(); ++app) {
            const IdSet taken = pus_of_unbound_tasks(
                node.topology, free_pus, map.policy.apps[app].cpus, share.unbound_tasks[app]);
            free_pus -= taken;
            pus |= taken;
        }
        // One insert per rank into an empty set cannot collide.
        (void)resources.insert(static_cast<ResourceSet::Rank>(n),
                               Target{node.name, cores_holding(node.topology, pus), share.gpus});
    }
    return resources;
}

}  // namespace gantry
