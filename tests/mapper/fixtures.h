// What the mapper's tests share: the small synthetic machine most of them map
// onto, nodes of it, and policies from their command-line spelling.
#pragma once

#include <string_view>
#include <vector>

#include "mapper/map.h"
#include "mapper/nodes.h"
#include "mapper/policy.h"
#include "topo/topology.h"

namespace gantry::test {

// "package:2 core:4 pu:2": PUs 0-15, core c = PUs 2c and 2c+1, package 1 =
// cores 4-7 = PUs 8-15.
inline const Topology& small_machine() {
    static const Topology topology = *Topology::from_synthetic("package:2 core:4 pu:2");
    return topology;
}

// Nodes from a -H value, each a small_machine().
inline std::vector<Node> small_nodes(std::string_view hosts, std::string_view local = "") {
    return make_nodes(*parse_hosts(hosts), small_machine(), CpuUnit::kCore, local);
}

// Directives as --map-by, --rank-by and --bind-to spell them; "" leaves one unset.
inline Directives directives(std::string_view map, std::string_view rank = "",
                             std::string_view bind = "") {
    Directives d;
    if (!map.empty())
        d.map = *parse_map_by(map);
    if (!rank.empty())
        d.rank = *parse_rank_by(rank);
    if (!bind.empty())
        d.bind = *parse_bind_to(bind);
    return d;
}

}  // namespace gantry::test
