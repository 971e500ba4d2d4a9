// Fuzzes TaskMap::parse over every form, and TaskMap::from_nodes over the
// input's bytes as a node sequence, checking that every encoding parses back
// to the same map and that lookups agree with one another.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "formats/taskmap.h"

namespace {

using gantry::TaskMap;

// Expanding encoders and per-node walks run only on maps of this size.
constexpr std::uint64_t kMaxExpanded = 20000;

void require(bool condition) {
    if (!condition)
        std::abort();
}

bool small_enough(const TaskMap& map) {
    std::uint64_t pmi_blocks = 0;
    for (const auto& b : map.blocks())
        pmi_blocks += b.repeat;
    return map.ntasks() <= kMaxExpanded && map.nnodes() <= kMaxExpanded &&
           pmi_blocks <= kMaxExpanded;
}

TaskMap reparsed(const std::string& text) {
    auto map = TaskMap::parse(text);
    require(map.ok());
    return *map;
}

void check_lookups(const TaskMap& map) {
    std::uint64_t total = 0;
    for (TaskMap::NodeId node = 0; node < map.nnodes(); ++node) {
        const gantry::IdSet tasks = map.taskids(node);
        require(tasks.count() == map.ntasks(node));
        for (const auto task : tasks)
            require(map.nodeid(task) == node);
        total += tasks.count();
    }
    require(total == map.ntasks());
    require(!map.nodeid(map.ntasks()).has_value());
}

void check_forms(const TaskMap& map) {
    require(reparsed(map.to_json()) == map);
    require(reparsed(map.to_wrapped()) == map);
    require(map.empty() == (map.ntasks() == 0));
    if (!small_enough(map))
        return;
    const std::string raw = map.to_raw();
    require(reparsed(raw).to_raw() == raw);
    require(reparsed(map.to_raw_deranged()).to_raw() == raw);
    if (!map.empty())
        require(reparsed(map.to_pmi()).to_raw() == raw);
    std::size_t lines = 0;
    for (const char c : map.to_multiline())
        lines += c == '\n';
    require(lines == map.nnodes());
    check_lookups(map);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto map = TaskMap::parse(text);
    if (map) {
        check_forms(*map);
    } else {
        const std::string message = map.error().str();
        require(!message.empty() && message.find('\n') == std::string::npos);
    }

    // The bytes as a per-task node sequence over up to 8 nodes.
    std::vector<TaskMap::NodeId> node_of_task;
    for (std::size_t i = 0; i < size && i < 4096; ++i)
        node_of_task.push_back(data[i] % 8);
    const TaskMap built = TaskMap::from_nodes(node_of_task);
    require(built.ntasks() == node_of_task.size());
    for (std::size_t task = 0; task < node_of_task.size(); ++task)
        require(built.nodeid(task) == node_of_task[task]);
    check_forms(built);
    return 0;
}
