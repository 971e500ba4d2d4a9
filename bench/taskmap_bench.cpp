// Task maps of 4096 nodes x 256 tasks (1M tasks) in block, cyclic and
// cyclic:2 distributions: built from a per-task node array, parsed, encoded
// raw, and looked up task by task.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "formats/taskmap.h"

namespace {

using gantry::TaskMap;

constexpr std::uint32_t kNodes = 4096;
constexpr std::uint32_t kPpn = 256;

// stride 0: block; else tasks dealt `stride` at a time to each node in turn.
std::vector<TaskMap::NodeId> node_of_task(std::uint32_t stride) {
    std::vector<TaskMap::NodeId> nodes;
    nodes.reserve(std::size_t{kNodes} * kPpn);
    if (stride == 0) {
        for (std::uint32_t n = 0; n < kNodes; ++n)
            nodes.insert(nodes.end(), kPpn, n);
        return nodes;
    }
    for (std::uint32_t round = 0; round < kPpn / stride; ++round)
        for (std::uint32_t n = 0; n < kNodes; ++n)
            nodes.insert(nodes.end(), stride, n);
    return nodes;
}

void BM_FromNodes(benchmark::State& state) {
    const auto nodes = node_of_task(static_cast<std::uint32_t>(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(TaskMap::from_nodes(nodes));
    state.SetItemsProcessed(state.iterations() * nodes.size());
}

void BM_ParseJson(benchmark::State& state) {
    const auto json = TaskMap::from_nodes(node_of_task(state.range(0))).to_json();
    for (auto _ : state)
        benchmark::DoNotOptimize(TaskMap::parse(json));
}

void BM_ParseRaw(benchmark::State& state) {
    const auto raw = TaskMap::from_nodes(node_of_task(state.range(0))).to_raw();
    for (auto _ : state)
        benchmark::DoNotOptimize(TaskMap::parse(raw));
    state.SetBytesProcessed(state.iterations() * raw.size());
}

void BM_ToRaw(benchmark::State& state) {
    const auto map = TaskMap::from_nodes(node_of_task(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(map.to_raw());
    state.SetBytesProcessed(state.iterations() * map.to_raw().size());
}

void BM_ToPmi(benchmark::State& state) {
    const auto map = TaskMap::from_nodes(node_of_task(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(map.to_pmi());
}

// 1,000,000 nodeid() lookups on the cyclic map, every task once.
void BM_NodeidCyclic(benchmark::State& state) {
    const auto map = *TaskMap::cyclic(kNodes, kPpn, 1);
    for (auto _ : state) {
        std::uint64_t sum = 0;
        for (std::uint64_t task = 0; task < 1000000; ++task)
            sum += *map.nodeid(task);
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * 1000000);
}

void BM_TaskidsCyclic(benchmark::State& state) {
    const auto map = *TaskMap::cyclic(kNodes, kPpn, 1);
    for (auto _ : state)
        for (TaskMap::NodeId node = 0; node < kNodes; ++node)
            benchmark::DoNotOptimize(map.taskids(node));
}

// Argument: 0 block, 1 cyclic, 2 cyclic:2.
#define DISTRIBUTIONS ->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_FromNodes) DISTRIBUTIONS;
BENCHMARK(BM_ParseJson) DISTRIBUTIONS;
BENCHMARK(BM_ParseRaw) DISTRIBUTIONS;
BENCHMARK(BM_ToRaw) DISTRIBUTIONS;
BENCHMARK(BM_ToPmi) DISTRIBUTIONS;
BENCHMARK(BM_NodeidCyclic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TaskidsCyclic)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
