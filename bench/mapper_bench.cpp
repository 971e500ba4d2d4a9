// The mapper at scale: 256 tasks per node (2 packages x 128 cores) on up to
// 4,096 simulated nodes, i.e. 1,048,576 tasks, with and without rendering
// the map as JSON or in PRRTE's layout (as --display map:json or --display
// map to /dev/null would).
#include <benchmark/benchmark.h>

#include "mapper/display.h"
#include "mapper/map.h"

namespace gantry {
namespace {

const Topology& node_topology() {
    static const Topology topology = *Topology::from_synthetic("package:2 core:128 pu:1");
    return topology;
}

std::vector<Node> cluster(unsigned nnodes) {
    std::vector<HostSpec> hosts;
    for (unsigned i = 0; i < nnodes; ++i)
        hosts.push_back(HostSpec{"node" + std::to_string(i), 256, 0, false});
    return make_nodes(hosts, node_topology());
}

Directives map_by(std::string_view spec) {
    Directives d;
    d.map = *parse_map_by(spec);
    return d;
}

JobRequest job(std::string_view spec, unsigned nnodes) {
    return JobRequest{map_by(spec), {AppRequest{256 * nnodes, {}, "a.out", {}, {}}}};
}

// Three apps: by core, by node, by package, a third of the tasks each.
JobRequest mpmd(unsigned nnodes) {
    const unsigned third = 256 * nnodes / 3;
    return JobRequest{
        map_by("core"),
        {AppRequest{third, {}, "a", {}, {}}, AppRequest{third, map_by("node"), "b", {}, {}},
         AppRequest{256 * nnodes - 2 * third, map_by("package"), "c", {}, {}}}};
}

// What is made of the map besides the JobMap.
enum class Render { kNothing, kJson, kMap };

void run(benchmark::State& state, const JobRequest& request, Render render = Render::kNothing) {
    const auto nodes = cluster(static_cast<unsigned>(state.range(0)));
    std::size_t ntasks = 0;
    for (auto _ : state) {
        auto map = map_job(request, nodes);
        if (!map) {
            state.SkipWithError(map.error().str().c_str());
            return;
        }
        if (render == Render::kJson)
            benchmark::DoNotOptimize(map_json_text(*map).size());
        else if (render == Render::kMap)
            benchmark::DoNotOptimize(display_map(*map).size());
        benchmark::DoNotOptimize(map->tasks.data());
        ntasks = map->tasks.size();
    }
    state.counters["tasks"] = static_cast<double>(ntasks);
}

void BM_MapByCore(benchmark::State& state) {
    run(state, job("core", static_cast<unsigned>(state.range(0))));
}
void BM_MapByNode(benchmark::State& state) {
    run(state, job("node", static_cast<unsigned>(state.range(0))));
}
void BM_MapByPprPe4(benchmark::State& state) {
    const auto nnodes = static_cast<unsigned>(state.range(0));
    // ppr:2:package places 4 tasks per node, whatever -n asks beyond that.
    JobRequest request{map_by("ppr:2:package:PE=4"), {AppRequest{4 * nnodes, {}, "a.out", {}, {}}}};
    run(state, request);
}
void BM_MapMpmd(benchmark::State& state) {
    run(state, mpmd(static_cast<unsigned>(state.range(0))));
}
void BM_MapByCoreJson(benchmark::State& state) {
    run(state, job("core", static_cast<unsigned>(state.range(0))), Render::kJson);
}
void BM_MapByNodeJson(benchmark::State& state) {
    run(state, job("node", static_cast<unsigned>(state.range(0))), Render::kJson);
}
void BM_MapByCoreDisplayMap(benchmark::State& state) {
    run(state, job("core", static_cast<unsigned>(state.range(0))), Render::kMap);
}

constexpr auto kUnit = benchmark::kMillisecond;
BENCHMARK(BM_MapByCore)->Arg(256)->Arg(4096)->Unit(kUnit);
BENCHMARK(BM_MapByNode)->Arg(256)->Arg(4096)->Unit(kUnit);
BENCHMARK(BM_MapByPprPe4)->Arg(256)->Arg(4096)->Unit(kUnit);
BENCHMARK(BM_MapMpmd)->Arg(256)->Arg(4096)->Unit(kUnit);
BENCHMARK(BM_MapByCoreJson)->Arg(256)->Arg(4096)->Unit(kUnit);
BENCHMARK(BM_MapByNodeJson)->Arg(256)->Arg(4096)->Unit(kUnit);
BENCHMARK(BM_MapByCoreDisplayMap)->Arg(256)->Arg(4096)->Unit(kUnit);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
