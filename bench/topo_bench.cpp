// Finding a node's topology, as each broker does when it starts and each
// `gantry run` on one machine, and reading one back from its XML, as rank 0
// does for every other node and each job shell for the nodes of its job.
#include <benchmark/benchmark.h>

#include "topo/topology.h"

namespace gantry {
namespace {

void BM_LocalTopology(benchmark::State& state) {
    for (auto _ : state) {
        auto topology = Topology::local();
        benchmark::DoNotOptimize(topology);
    }
}

void BM_TopologyFromXml(benchmark::State& state) {
    const std::string xml = Topology::local()->to_xml();
    for (auto _ : state) {
        auto topology = Topology::from_xml_text(xml);
        benchmark::DoNotOptimize(topology);
    }
}

BENCHMARK(BM_LocalTopology)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopologyFromXml)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
