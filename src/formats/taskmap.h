// An RFC 34 task map: which node each task of a job runs on, held as the
// RFC's map blocks [nodeid, nnodes, ppn, repeat], never as a per-task array,
// so that a million cyclic tasks cost one block.
//
// Forms, rules and errors: docs/formats/taskmap.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/idset.h"
#include "util/error.h"

namespace gantry {

class TaskMap {
public:
    using NodeId = std::uint32_t;
    using TaskId = std::uint32_t;

    // Node ids and task ids are RFC 22 ids: at most 2^31 - 1.
    static constexpr NodeId kMaxNodeId = IdSet::kMaxId;
    static constexpr std::uint64_t kMaxTasks = std::uint64_t{IdSet::kMaxId} + 1;

    // `nnodes` consecutive nodes from `nodeid`, `ppn` consecutive tasks on
    // each, the whole pattern laid down `repeat` times.
    struct Block {
        NodeId nodeid = 0;
        std::uint32_t nnodes = 1;
        std::uint32_t ppn = 1;
        std::uint32_t repeat = 1;
        std::uint64_t ntasks() const { return std::uint64_t{nnodes} * ppn * repeat; }
        friend bool operator==(const Block&, const Block&) = default;
    };

    TaskMap() = default;  // the unknown mapping: no blocks

    // Any form, told apart by its content: "" (unknown), a JSON array
    // `[[0,4,4,1]]`, a wrapped `{"version":1,"map":[...]}`, a PMI
    // `(vector,(0,4,4))`, or a raw `0-3;4-7`. Surrounding whitespace is ignored.
    static Result<TaskMap> parse(std::string_view text);
    static Result<TaskMap> parse_json(std::string_view text);  // array or wrapped
    static Result<TaskMap> parse_pmi(std::string_view text);
    static Result<TaskMap> parse_raw(std::string_view text);

    // The map of a per-task node sequence, compacted as appending one run of
    // same-node tasks at a time would. Node ids must be <= kMaxNodeId.
    static TaskMap from_nodes(std::span<const NodeId> node_of_task);
    // `nodes` nodes with `ppn` consecutive tasks each: [[0,nodes,ppn,1]].
    static Result<TaskMap> block(std::uint32_t nodes, std::uint32_t ppn);
    // `nodes` nodes of `ppn` tasks dealt `stride` at a time to each node in
    // turn (cyclic:1 is round robin, cyclic:N is Slurm's plane distribution).
    static Result<TaskMap> cyclic(std::uint32_t nodes, std::uint32_t ppn, std::uint32_t stride);
    // The same deal over the per-node task counts of `counts_from`.
    static Result<TaskMap> cyclic(const TaskMap& counts_from, std::uint32_t stride);

    // Appends `nnodes` nodes from `nodeid` with `ppn` tasks each as the next
    // tasks, merging into the last block when the RFC's forms allow it.
    Status append(NodeId nodeid, std::uint32_t nnodes, std::uint32_t ppn);

    std::span<const Block> blocks() const { return blocks_; }
    bool empty() const { return blocks_.empty(); }  // the mapping is unknown
    std::uint32_t nnodes() const;                   // 1 + the largest node id; 0 when unknown
    std::uint64_t ntasks() const { return ntasks_; }

    std::optional<NodeId> nodeid(std::uint64_t task) const;  // O(blocks)
    IdSet taskids(NodeId node) const;                        // empty when none
    std::uint64_t ntasks(NodeId node) const;                 // O(blocks)

    // Whether this map can stand for `reference`: the same number of nodes
    // and of tasks (tasks may move between nodes).
    Status check(const TaskMap& reference) const;

    std::string to_json() const;     // [[0,4,4,1]]
    std::string to_wrapped() const;  // {"version":1,"map":[[0,4,4,1]]}
    std::string to_pmi() const;      // (vector,(0,4,4)); "" when unknown
    // Node-ordered task idsets joined by ';', in RANGE form (`0-3;4-7`) or
    // with every id listed (`0,1,2,3;4,5,6,7`). "" when unknown.
    std::string to_raw() const;
    std::string to_raw_deranged() const;
    // One line per node, `<node>: <taskids>` (`<node>:` for a node without
    // tasks), each ending in '\n'. "" when unknown.
    std::string to_multiline() const;

    friend bool operator==(const TaskMap& a, const TaskMap& b) { return a.blocks_ == b.blocks_; }

private:
    // Blocks already checked, kept as written (a JSON map is already in the
    // RFC's form and is not re-compacted).
    TaskMap(std::vector<Block> blocks, std::uint64_t ntasks)
        : blocks_(std::move(blocks)), ntasks_(ntasks) {}
    void merge_tail_into_previous();
    // Calls on_range(lo, hi) for each run of tasks of each node, nodes in
    // order and runs ascending, and on_node_end(node) after each node.
    template <class OnRange, class OnNodeEnd>
    void for_each_node_range(OnRange&& on_range, OnNodeEnd&& on_node_end) const;
    std::string encode_per_node(bool ranges, bool multiline) const;

    std::vector<Block> blocks_;
    std::uint64_t ntasks_ = 0;
};

}  // namespace gantry
