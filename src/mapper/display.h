// The --display map text in PRRTE's layout (the offline goldens' format), so
// that users of PRRTE and Open MPI 5 read it at a glance. docs/mapping.md
// describes every line.
#pragma once

#include <string>
#include <string_view>

#include "mapper/map.h"
#include "util/json.h"

namespace gantry {

struct DisplayOptions {
    std::string job_id = "gantry@0";  // the name on the "Data for JOB" line
    // Nothing is launched: say so, as PRRTE's donotlaunch warning does,
    // before the closing rule.
    bool dry_run = false;
};

std::string display_map(const JobMap& map, const DisplayOptions& options = {});

// --display map:json: the same map as data (docs/mapping.md): nodes, each
// app's policy, and per task its rank, app, app rank, node, local and node
// rank, bound PUs as logical and OS idsets, and GPU names.
Json map_json(const JobMap& map);
// The same document as compact text (to_compact(map_json(map))), written
// directly: a million tasks are too many to build as a Json tree first.
std::string map_json_text(const JobMap& map);

// --display bindings: one line per task, in rank order, as PRRTE prints
// them without launching: `Proc <job>[0] Node node0 bound to package[0][core:L0]`
// or `... is UNBOUND`.
std::string display_bindings(const JobMap& map, const DisplayOptions& options = {});

// --display map:svg=FILE: one box per node that has tasks, its packages and
// cores inside; each core is coloured and labelled by the rank bound to it
// ("3+" when several share it; unbound tasks colour nothing).
std::string map_svg(const JobMap& map);

// One task's cpuset as PRRTE prints it: `package[0][core:L0-3]`, one
// `package[p][...]` per package it touches, `hwt:L...` with hwthread CPUs;
// `N/A` when unbound.
std::string bound_text(const Topology& topology, const IdSet& cpus, CpuUnit unit);

}  // namespace gantry
