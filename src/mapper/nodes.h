// The node pool a job is mapped onto: from `-H host[:slots],...`, a PRRTE
// hostfile, or this machine alone; every node carries its topology (its own,
// or a simulated one given with --topology).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mapper/policy.h"
#include "topo/rank_topologies.h"
#include "topo/topology.h"
#include "util/error.h"

namespace gantry {

struct Node {
    std::string name;
    unsigned slots = 1;      // tasks it may take without oversubscribing
    unsigned max_slots = 0;  // hard cap even when oversubscribing; 0: none
    bool slots_given = false;
    bool local = false;  // the node the launcher runs on (NOLOCAL avoids it)
    Topology topology;
    // What of the topology the job may use (an allocation's cores and GPUs);
    // empty / nullopt: all of it.
    IdSet allowed_pus;
    std::optional<IdSet> allowed_gpus;

    IdSet usable_pus() const { return allowed_pus.empty() ? topology.all_pus() : allowed_pus; }
    bool gpu_usable(unsigned gpu) const { return !allowed_gpus || allowed_gpus->contains(gpu); }
};

// One host as a user named it, before topologies are known.
struct HostSpec {
    std::string name;
    std::optional<unsigned> slots;  // nullopt: the default (1, or the CPU count for "*")
    unsigned max_slots = 0;
    bool all_cpus = false;  // host:* / host:auto: one slot per CPU
    friend bool operator==(const HostSpec&, const HostSpec&) = default;
};

// `-H a,b:4,a,c:*`: a repeated name adds its slots (a bare name counts 1).
// PRRTE's relative hosts `+n<i>`, `+e` and `+e:N` are kept whole as names
// (see relative_host) for the mapper to resolve.
Result<std::vector<HostSpec>> parse_hosts(std::string_view text);

// A relative host (`+n2`, `+e`, `+e:3`), which names no node by itself.
inline bool relative_host(std::string_view name) {
    return name.starts_with('+');
}

// The hosts with each of `names` (this machine's: localhost, its addresses)
// named `here` instead, a host named twice merged as parse_hosts merges it,
// so that `-H localhost:2` is this machine's node.
std::vector<HostSpec> with_names_as(std::vector<HostSpec> hosts,
                                    const std::vector<std::string>& names, std::string_view here);

// PRRTE's hostfile: one host per line, `host slots=N max_slots=M`, `user@host`,
// `#` and `//` comments, `^host` to exclude a host named elsewhere.
// `path` only names the file in error messages.
Result<std::vector<HostSpec>> parse_hostfile(std::string_view text, std::string_view path);

// Gives every host `topology`; hosts named `local_name` are local. A host
// with default slots and all_cpus gets one slot per CPU (core, or PU with
// hwthread CPUs).
std::vector<Node> make_nodes(std::span<const HostSpec> hosts, const Topology& topology,
                             CpuUnit cpus = CpuUnit::kCore, std::string_view local_name = "");

// The hosts, in their order, each as the node of `allocated` of its name
// (its topology, cores and GPUs), with the slots the host gives (as
// make_nodes). Error: a host that names none of them.
Result<std::vector<Node>> nodes_of_hosts(std::span<const HostSpec> hosts,
                                         std::span<const Node> allocated,
                                         CpuUnit cpus = CpuUnit::kCore);

class ResourceSet;

// One node per rank of an RFC 20 resource set, in rank order, named by its
// host (or "rank<N>"), with the topology of its rank in `topologies`,
// limited to the rank's cores and GPUs, one slot per core (per PU with
// hwthread CPUs). Errors: a rank without a topology, cores or GPUs beyond
// its topology's.
Result<std::vector<Node>> nodes_from_resources(const ResourceSet& resources,
                                               const RankTopologies& topologies,
                                               CpuUnit cpus = CpuUnit::kCore,
                                               std::string_view local_name = "");
// ... every node with `topology`.
Result<std::vector<Node>> nodes_from_resources(const ResourceSet& resources,
                                               const Topology& topology,
                                               CpuUnit cpus = CpuUnit::kCore,
                                               std::string_view local_name = "");

// This machine alone, one slot per CPU: what a job gets with no hosts at all.
Node local_node(const Topology& topology, std::string_view name, CpuUnit cpus = CpuUnit::kCore);

}  // namespace gantry
