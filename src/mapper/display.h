// The --display map text in PRRTE's layout (the offline goldens' format), so
// that users of PRRTE and Open MPI 5 read it at a glance. docs/mapping.md
// describes every line.
#pragma once

#include <string>
#include <string_view>

#include "mapper/map.h"

namespace gantry {

struct DisplayOptions {
    std::string job_id = "gantry@0";  // the name on the "Data for JOB" line
    // Nothing is launched: say so, as PRRTE's donotlaunch warning does,
    // before the closing rule.
    bool dry_run = false;
};

std::string display_map(const JobMap& map, const DisplayOptions& options = {});

// One task's cpuset as PRRTE prints it: `package[0][core:L0-3]`, one
// `package[p][...]` per package it touches, `hwt:L...` with hwthread CPUs;
// `N/A` when unbound.
std::string bound_text(const Topology& topology, const IdSet& cpus, CpuUnit unit);

}  // namespace gantry
