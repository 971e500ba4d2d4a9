#include "shell/unbound.h"

namespace gantry::shell {

void confine_unbound_tasks_to_allocation(Job& job, const Node& node) {
    const IdSet allowed = node.topology.os_pus(node.usable_pus());
    for (Task& task : job.tasks)
        if (task.cpus_os.empty())
            task.cpus_os = allowed;
}

}  // namespace gantry::shell
