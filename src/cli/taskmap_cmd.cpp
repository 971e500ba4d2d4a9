// `gantry taskmap`: convert and query RFC 34 task maps, in the manner of
// `flux job taskmap`, and build the common distributions.
// Reference: docs/commands/taskmap.md.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "formats/taskmap.h"
#include "util/text.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kDomain = "taskmap";
// Expanding forms of a huge map (a raw form of 2^31 nodes) are refused
// rather than attempted: nothing is printed half-written.
constexpr std::uint64_t kMaxOutputBytes = std::uint64_t{1} << 30;

constexpr std::string_view kExamples =
    R"(Forms (MAP is read in any of them, or from stdin when absent):
  json       [[0,4,4,1]]                  blocks [nodeid,nnodes,ppn,repeat] (the default)
  wrapped    {"version":1,"map":[[0,4,4,1]]}
  raw        0-3;4-7;8-11;12-15           the task idset of each node, ';' between nodes
  pmi        (vector,(0,4,4))             PMI-1 PMI_process_mapping
  multiline  0: 0-3                       one line per node: `NODE: TASKIDS`

Examples:
  $ gantry taskmap '0,4,8,12;1,5,9,13;2,6,10,14;3,7,11,15'
  [[0,4,1,4]]
  $ gantry taskmap --to=raw '[[0,4,2,2]]'
  0-1,8-9;2-3,10-11;4-5,12-13;6-7,14-15
  $ gantry taskmap --to=pmi '[[0,2,1,2]]'
  (vector,(0,2,1),(0,2,1))
  $ gantry taskmap --to=multiline '(vector,(0,2,3))'
  0: 0-2
  1: 3-5
  $ gantry taskmap --nodeid=13 '[[0,4,1,4]]'
  1
  $ gantry taskmap --taskids=1 '[[0,4,1,4]]'
  1,5,9,13
  $ gantry taskmap --cyclic=2 --nodes=4 --ppn=4
  [[0,4,2,2]]
  $ echo '{"version":1,"map":[[0,4096,256,1]]}' | gantry taskmap --ntasks=7
  256

Exit status: 0 on success; 2 on a bad task map, a task or node not in the
map, or bad options.)";

struct Options {
    std::optional<std::string> map;
    std::string to = "json";
    std::optional<std::uint64_t> nodeid_of;
    std::optional<std::uint32_t> taskids_of;
    std::optional<std::uint32_t> ntasks_of;
    bool nnodes = false;
    bool total_tasks = false;
    bool block = false;
    std::uint32_t cyclic = 0;  // tasks per node per round; 0: not asked for
    std::optional<std::uint32_t> nodes;
    std::optional<std::uint32_t> ppn;

    bool distribution() const { return block || cyclic > 0; }
};

void define_options(CLI::App& app, Options& options) {
    app.footer(std::string(kExamples));
    auto* map =
        app.add_option("MAP", options.map, "A task map in any form; read from stdin when absent");
    auto* to = app.add_option("--to", options.to,
                              "Print the map in this form: json (default), wrapped, raw, pmi or "
                              "multiline")
                   ->type_name("FORM")
                   ->check(needs_one_of({"json", "wrapped", "raw", "pmi", "multiline"}));
    auto* nodeid = app.add_option("--nodeid", options.nodeid_of, "Print the node id of task TASK")
                       ->type_name("TASK");
    auto* taskids =
        app.add_option("--taskids", options.taskids_of, "Print the idset of the tasks on node NODE")
            ->type_name("NODE");
    auto* ntasks =
        app.add_option("--ntasks", options.ntasks_of, "Print the number of tasks on node NODE")
            ->type_name("NODE");
    auto* nnodes = app.add_flag("--nnodes", options.nnodes, "Print the number of nodes");
    auto* total = app.add_flag("--total-tasks", options.total_tasks, "Print the number of tasks");
    to->excludes(nodeid, taskids, ntasks, nnodes, total);
    nodeid->excludes(taskids, ntasks, nnodes, total);
    taskids->excludes(ntasks, nnodes, total);
    ntasks->excludes(nnodes, total);
    nnodes->excludes(total);

    auto* block = app.add_flag("--block", options.block,
                               "Build the block map of --nodes nodes with --ppn tasks each");
    auto* cyclic = app.add_option("--cyclic", options.cyclic,
                                  "Build the map dealing N tasks at a time to each node in turn "
                                  "(N defaults to 1; N > 1 is Slurm's plane distribution)")
                       ->expected(0, 1)
                       ->default_str("1")
                       ->type_name("[=N]")
                       ->check(needs_positive_number());
    auto* nodes = app.add_option("--nodes", options.nodes, "With --block or --cyclic: nodes")
                      ->check(needs_positive_number());
    auto* ppn = app.add_option("--ppn", options.ppn, "With --block or --cyclic: tasks per node")
                    ->check(needs_positive_number());
    block->excludes(cyclic, map);
    cyclic->excludes(map);
    nodes->needs(ppn);
    ppn->needs(nodes);
}

Result<TaskMap> distribution(const Options& options) {
    if (!options.nodes)
        return Error(std::string(kDomain), "--block and --cyclic need --nodes and --ppn");
    if (options.block)
        return TaskMap::block(*options.nodes, *options.ppn);
    return TaskMap::cyclic(*options.nodes, *options.ppn, options.cyclic);
}

Result<TaskMap> input_map(const Options& options) {
    if (options.distribution())
        return distribution(options);
    if (options.nodes)
        return Error(std::string(kDomain), "--nodes and --ppn need --block or --cyclic");
    return TaskMap::parse(options.map ? *options.map : read_stdin());
}

// An upper bound of the size of `form` for `map`, computed from its blocks.
std::uint64_t output_bound(const TaskMap& map, std::string_view form) {
    constexpr std::uint64_t kNumber = 11;  // up to 10 digits and a separator
    std::uint64_t runs = 0;                // task runs over all nodes
    std::uint64_t pmi_blocks = 0;
    for (const auto& b : map.blocks()) {
        runs += std::uint64_t{b.nnodes} * b.repeat;
        pmi_blocks += b.repeat;
    }
    const std::uint64_t per_node =
        std::uint64_t{map.nnodes()} * (form == "multiline" ? 2 * kNumber : 1);
    if (form == "raw" || form == "multiline")
        return per_node + runs * 2 * kNumber;
    if (form == "pmi")
        return 16 + pmi_blocks * 3 * kNumber;
    return 64 + map.blocks().size() * 4 * kNumber;
}

std::string encoded(const TaskMap& map, std::string_view form) {
    if (form == "wrapped")
        return map.to_wrapped() + '\n';
    if (form == "raw")
        return map.to_raw() + '\n';
    if (form == "pmi")
        return map.to_pmi() + '\n';
    if (form == "multiline")
        return map.to_multiline();
    return map.to_json() + '\n';
}

Result<std::string> query(const TaskMap& map, const Options& options) {
    const bool asks = options.nodeid_of || options.taskids_of || options.ntasks_of;
    if (asks && map.empty())
        return Error(std::string(kDomain), "the task map is unknown ([])");
    const auto node_in_map = [&](std::uint32_t node) -> Status {
        if (node >= map.nnodes())
            return Error(std::string(kDomain), "node " + std::to_string(node) +
                                                   " is not in the map (" +
                                                   counted(map.nnodes(), "node") + ")");
        return {};
    };
    if (options.nodeid_of) {
        const auto node = map.nodeid(*options.nodeid_of);
        if (!node)
            return Error(std::string(kDomain), "task " + std::to_string(*options.nodeid_of) +
                                                   " is not in the map (" +
                                                   counted(map.ntasks(), "task") + ")");
        return std::to_string(*node) + '\n';
    }
    if (options.taskids_of) {
        if (auto ok = node_in_map(*options.taskids_of); !ok)
            return ok.error();
        return map.taskids(*options.taskids_of).encode() + '\n';
    }
    if (options.ntasks_of) {
        if (auto ok = node_in_map(*options.ntasks_of); !ok)
            return ok.error();
        return std::to_string(map.ntasks(*options.ntasks_of)) + '\n';
    }
    if (options.nnodes)
        return std::to_string(map.nnodes()) + '\n';
    if (options.total_tasks)
        return std::to_string(map.ntasks()) + '\n';
    if (output_bound(map, options.to) > kMaxOutputBytes)
        return Error(std::string(kDomain),
                     "the " + options.to + " form of this map could exceed 1 GiB; not printed");
    return encoded(map, options.to);
}

}  // namespace

int taskmap_main(int argc, char** argv) {
    CLI::App app("Convert and query RFC 34 task maps: which node each task of a job runs on.",
                 "taskmap");
    Options options;
    define_options(app, options);
    if (auto code = parse_options(app, argc, argv))
        return *code;

    const auto map = input_map(options);
    if (!map)
        return fail(map.error());
    const auto out = query(*map, options);
    if (!out)
        return fail(out.error());
    std::fwrite(out->data(), 1, out->size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitRuntime;
}

}  // namespace gantry::cli
