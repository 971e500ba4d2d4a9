// Mapping a job: place every task of every app on a node (and an object of
// it), number the tasks in one pass app after app, and bind them. The result
// is a JobMap value, from which come the --display map text, the task map
// and the launch plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/idset.h"
#include "formats/taskmap.h"
#include "mapper/files.h"
#include "mapper/nodes.h"
#include "mapper/policy.h"
#include "util/error.h"

namespace gantry {

struct AppRequest {
    unsigned nprocs = 0;    // 0: as many as the policy derives (one per slot, ppr...)
    Directives directives;  // this app's own; app 0's are the job's (JobRequest)
    std::string command;    // for messages: "./a.out"
    // The only nodes this app may use (its own -H or --hostfile); empty: all.
    // PRRTE's relative hosts are resolved when the app is placed: `+n<i>`
    // is the job's node i, `+e` every node earlier apps left empty, `+e:N`
    // the first N of those.
    std::vector<std::string> hosts;
    // seq without FILE=: the lines of the app's hostfile or -H (PRRTE reads
    // them in their place); empty: FILE= is needed.
    std::vector<SeqLine> seq_lines;
};

struct JobRequest {
    Directives directives;  // the first segment's: the job's, and app 0's
    std::vector<AppRequest> apps;
};

struct Task {
    std::uint32_t rank = 0;
    std::uint32_t app = 0;
    std::uint32_t app_rank = 0;    // rank among its app's tasks
    std::uint32_t node = 0;        // index into JobMap::nodes
    std::uint32_t local_rank = 0;  // among the job's tasks on its node, by rank
    std::uint32_t node_rank = 0;   // among all tasks on its node (one job: = local_rank)
    IdSet cpus;                    // bound PUs, logical indices; empty: not bound
    IdSet cpus_os;                 // the same PUs, OS indices
    std::vector<unsigned> gpus;    // indices into the node topology's gpus()
    friend bool operator==(const Task&, const Task&) = default;
};

struct JobMap {
    std::vector<Node> nodes;
    JobPolicy policy;  // as applied: a binding dropped on oversubscription shows NONE
    std::vector<unsigned> app_sizes;
    std::vector<Task> tasks;  // indexed by rank

    unsigned total_slots() const;
};

// The job's RFC 34 task map: task (rank) -> index of its node in map.nodes.
TaskMap task_map(const JobMap& map);

// The GPUs each task sees, by rank: those its app mapped it to by device,
// else a share of its node's GPUs: the nearest to its cpus first, one each
// and evenly shared when there are more tasks than GPUs; none only where
// the node has none.
std::vector<std::vector<unsigned>> visible_gpus(const JobMap& map);

// Maps `request` onto `nodes`. The seq files and rankfiles its policies
// name (FILE=) are taken from `files`, by the path the policy gives. Errors
// say what does not fit and what to change.
Result<JobMap> map_job(const JobRequest& request, std::vector<Node> nodes,
                       const FileTexts& files = {});

}  // namespace gantry
