// R costs at the size of a large machine: 10,000 nodes (ranks 0-9999, cores
// 0-63, GPUs 0-3, hosts node[0-9999], two properties) parsed, emitted,
// combined and compared. Each should stay under 50 ms.
#include <string>

#include <benchmark/benchmark.h>

#include "formats/rset.h"

namespace {

using gantry::IdSet;
using gantry::ResourceSet;

constexpr int kNodes = 10000;

// The whole machine as one document, as an instance's inventory would be.
std::string machine_R(int first, int last) {
    const std::string ranks = std::to_string(first) + "-" + std::to_string(last);
    return R"({"version":1,"execution":{"R_lite":[{"rank":")" + ranks +
           R"(","children":{"core":"0-63","gpu":"0-3"}}],"nodelist":["node[)" + ranks +
           R"(]"],"properties":{"login":")" + std::to_string(first) + R"(","gpu":")" + ranks +
           R"("},"starttime":0.0,"expiration":0.0}})";
}

ResourceSet parsed(const std::string& text) {
    return ResourceSet::parse(text).value();
}

void BM_Parse(benchmark::State& state) {
    const std::string text = machine_R(0, kNodes - 1);
    for (auto _ : state) {
        auto set = ResourceSet::parse(text);
        benchmark::DoNotOptimize(set);
    }
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

void BM_Emit(benchmark::State& state) {
    const ResourceSet set = parsed(machine_R(0, kNodes - 1));
    for (auto _ : state) {
        const std::string text = set.encode();
        benchmark::DoNotOptimize(text);
    }
}
BENCHMARK(BM_Emit)->Unit(benchmark::kMillisecond);

// Emission where every other rank differs: 10,000 ranks in two R_lite groups.
void BM_EmitAlternating(benchmark::State& state) {
    ResourceSet set;
    for (int rank = 0; rank < kNodes; ++rank)
        (void)set.insert(rank, {"node" + std::to_string(rank), IdSet::range(0, rank % 2 ? 31 : 63),
                                IdSet::range(0, 3)});
    for (auto _ : state) {
        const std::string text = set.encode();
        benchmark::DoNotOptimize(text);
    }
}
BENCHMARK(BM_EmitAlternating)->Unit(benchmark::kMillisecond);

void BM_Union(benchmark::State& state) {
    const ResourceSet a = parsed(machine_R(0, kNodes / 2 - 1));
    const ResourceSet b = parsed(machine_R(kNodes / 2, kNodes - 1));
    for (auto _ : state) {
        auto both = a.add(b);
        benchmark::DoNotOptimize(both);
    }
}
BENCHMARK(BM_Union)->Unit(benchmark::kMillisecond);

void BM_Diff(benchmark::State& state) {
    const ResourceSet all = parsed(machine_R(0, kNodes - 1));
    // An allocation: half the nodes, half of each node's cores.
    ResourceSet allocation;
    for (int rank = 0; rank < kNodes; rank += 2)
        (void)allocation.insert(rank, {"", IdSet::range(0, 31), IdSet::range(0, 1)});
    for (auto _ : state) {
        const ResourceSet left = all.diff(allocation);
        benchmark::DoNotOptimize(left);
    }
}
BENCHMARK(BM_Diff)->Unit(benchmark::kMillisecond);

void BM_ShortForm(benchmark::State& state) {
    const ResourceSet set = parsed(machine_R(0, kNodes - 1));
    for (auto _ : state) {
        const std::string text = set.short_form();
        benchmark::DoNotOptimize(text);
    }
}
BENCHMARK(BM_ShortForm)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
