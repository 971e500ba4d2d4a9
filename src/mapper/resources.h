// The job's R (RFC 20) from its JobMap: what the job holds on each node it
// uses, for the job record, the exec service and child instances.
#pragma once

#include "formats/rset.h"
#include "mapper/map.h"

namespace gantry {

// One rank per node that has tasks; rank N is map.nodes[N] (the numbering of
// task_map(map)), named by its host. Its cores (logical indices; PUs on a
// machine without cores) are those holding a PU some task is bound to, plus,
// for each unbound task, the core of one CPU (a core, or a PU with hwthread
// CPUs) that no task is bound to and no other unbound task took, lowest
// first, apps in order; when none is left, unbound tasks share what the
// node already holds. Its GPUs are those assigned to its tasks.
ResourceSet job_resources(const JobMap& map);

}  // namespace gantry
