// Which GPUs each task sees when its app did not map by device: the node's
// GPUs shared among its tasks, nearest first and evenly (docs/mapping.md,
// "GPUs of tasks").
#include <algorithm>
#include <numeric>

#include "mapper/map.h"

namespace gantry {
namespace {

// The GPUs a node's tasks may use: its allocation's, else all of them.
std::vector<unsigned> usable_gpus(const Node& node) {
    if (node.allowed_gpus) {
        std::vector<unsigned> gpus;
        for (const IdSet::Id gpu : *node.allowed_gpus)
            if (gpu < node.topology.ngpus())
                gpus.push_back(gpu);
        return gpus;
    }
    std::vector<unsigned> gpus(node.topology.ngpus());
    std::iota(gpus.begin(), gpus.end(), 0u);
    return gpus;
}

bool near(const Node& node, const Task& task, unsigned gpu) {
    return task.cpus.intersects(node.topology.gpus()[gpu].pus);
}

// More tasks than GPUs: one GPU each, the nearest that is not yet shared by
// more than its even part, the least shared among equals.
void one_each(const Node& node, const std::vector<const Task*>& tasks,
              const std::vector<unsigned>& gpus, std::vector<std::vector<unsigned>>& visible) {
    const std::size_t cap = (tasks.size() + gpus.size() - 1) / gpus.size();
    std::vector<std::size_t> load(gpus.size(), 0);
    for (const Task* task : tasks) {
        std::size_t best = gpus.size();
        for (std::size_t g = 0; g < gpus.size(); ++g) {
            if (load[g] >= cap)
                continue;
            if (best == gpus.size())
                best = g;
            const bool closer = near(node, *task, gpus[g]) && !near(node, *task, gpus[best]);
            const bool as_close = near(node, *task, gpus[g]) == near(node, *task, gpus[best]);
            if (closer || (as_close && load[g] < load[best]))
                best = g;
        }
        ++load[best];
        visible[task->rank] = {gpus[best]};
    }
}

// As many GPUs as tasks or more: each task its share, nearest first.
void shares(const Node& node, const std::vector<const Task*>& tasks, std::vector<unsigned> free,
            std::vector<std::vector<unsigned>>& visible) {
    const std::size_t each = free.size() / tasks.size();
    const std::size_t extra = free.size() % tasks.size();
    for (std::size_t t = 0; t < tasks.size(); ++t) {
        const Task& task = *tasks[t];
        std::stable_partition(free.begin(), free.end(),
                              [&](unsigned gpu) { return near(node, task, gpu); });
        const std::size_t take = each + (t < extra ? 1 : 0);
        std::vector<unsigned>& own = visible[task.rank];
        own.assign(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(take));
        std::sort(own.begin(), own.end());
        free.erase(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(take));
        std::sort(free.begin(), free.end());
    }
}

}  // namespace

std::vector<std::vector<unsigned>> visible_gpus(const JobMap& map) {
    std::vector<std::vector<unsigned>> visible(map.tasks.size());
    std::vector<std::vector<const Task*>> sharing(map.nodes.size());
    for (const Task& task : map.tasks) {
        if (task.gpus.empty())
            sharing[task.node].push_back(&task);
        else
            visible[task.rank] = task.gpus;
    }
    for (std::size_t n = 0; n < map.nodes.size(); ++n) {
        const std::vector<unsigned> gpus = usable_gpus(map.nodes[n]);
        const std::vector<const Task*>& tasks = sharing[n];
        if (gpus.empty() || tasks.empty())
            continue;
        if (tasks.size() > gpus.size())
            one_each(map.nodes[n], tasks, gpus, visible);
        else
            shares(map.nodes[n], tasks, gpus, visible);
    }
    return visible;
}

}  // namespace gantry
