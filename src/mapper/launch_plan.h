// A launch plan: what the shell of one node needs to start that node's tasks
// of a job, taken from the JobMap. Plain values; the shell applies them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/idset.h"
#include "mapper/map.h"

namespace gantry {

// One task to spawn.
struct LaunchTask {
    std::uint32_t rank = 0;  // in the job (PMI_RANK)
    std::uint32_t app = 0;
    std::uint32_t app_rank = 0;
    std::uint32_t local_rank = 0;
    std::uint32_t node_rank = 0;
    std::vector<std::string> argv;  // its app's command and arguments
    IdSet cpus_os;                  // sched_setaffinity's CPUs (OS indices); empty: leave unbound
    std::vector<unsigned>
        gpus;  // visible_gpus(): indices into the node's GPUs in PCI order, as in R
    friend bool operator==(const LaunchTask&, const LaunchTask&) = default;
};

struct NodePlan {
    std::uint32_t node = 0;  // index into JobMap::nodes: the node's rank in the job's R
    std::string hostname;
    std::uint32_t job_size = 0;     // tasks in the whole job (PMI_SIZE)
    std::vector<LaunchTask> tasks;  // in local-rank order
    friend bool operator==(const NodePlan&, const NodePlan&) = default;
};

// The plan of each node that has tasks, in node order. `argv_of_app[k]` is
// app k's command line; a missing entry leaves that app's argv empty.
std::vector<NodePlan> launch_plans(const JobMap& map,
                                   std::span<const std::vector<std::string>> argv_of_app);

// The plans as text, one compact JSON object per node and line (keys
// sorted): {"hostname":..,"job_size":..,"node":..,"tasks":[{"app":..,
// "app_rank":..,"argv":[..],"cpus_os":"0,8","gpus":[],"local_rank":..,
// "node_rank":..,"rank":..}]}; docs/mapping.md.
std::string launch_plans_text(std::span<const NodePlan> plans);

}  // namespace gantry
