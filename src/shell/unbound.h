// Where a job shell under an instance lets the tasks its map left unbound
// run. Such a task has no binding of its own, yet other jobs hold the rest
// of the machine: it stays inside its node's share of the job's R.
#pragma once

#include "mapper/nodes.h"
#include "shell/shell.h"

namespace gantry::shell {

// Gives each task of `job` without cpus the PUs (OS indices) of `node`'s
// allocated cores (the whole machine for a node without an allocation);
// bound tasks keep their own.
void confine_unbound_tasks_to_allocation(Job& job, const Node& node);

}  // namespace gantry::shell
