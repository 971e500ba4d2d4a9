// Hostlist costs at the sizes a large machine gives: 100,000 names
// compressed and expanded, lookups in a list of 1,000,000 hosts, set
// operations on lists of a million hosts.
#include <algorithm>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "formats/hostlist.h"

namespace {

using gantry::Hostlist;

std::vector<std::string> node_names(int count) {
    std::vector<std::string> names;
    names.reserve(count);
    for (int i = 0; i < count; ++i)
        names.push_back("node" + std::to_string(i));
    return names;
}

Hostlist parsed(std::string_view text) {
    return Hostlist::parse(text).value();
}

// Compress: a list built from 100,000 names, then encoded.
void BM_CompressFromHosts(benchmark::State& state) {
    const auto names = node_names(100000);
    for (auto _ : state) {
        const std::string text = Hostlist::from_hosts(names).encode();
        benchmark::DoNotOptimize(text);
    }
}
BENCHMARK(BM_CompressFromHosts)->Unit(benchmark::kMillisecond);

// Expand: `node[0-99999]` parsed and expanded to 100,000 names.
void BM_ParseAndExpand(benchmark::State& state) {
    for (auto _ : state) {
        const auto hosts = parsed("node[0-99999]").expand();
        benchmark::DoNotOptimize(hosts);
    }
}
BENCHMARK(BM_ParseAndExpand)->Unit(benchmark::kMillisecond);

// 1,000 lookups by name and 1,000 by index in a list of 1,000,000 hosts.
const Hostlist& million() {
    static const Hostlist list = parsed("node[0-999999]");
    return list;
}

void BM_FindInMillion(benchmark::State& state) {
    const Hostlist& list = million();
    std::vector<std::string> names;
    for (int i = 0; i < 1000; ++i)
        names.push_back("node" + std::to_string(i * 997));
    for (auto _ : state)
        for (const auto& name : names)
            benchmark::DoNotOptimize(list.find(name));
}
BENCHMARK(BM_FindInMillion)->Unit(benchmark::kMillisecond);

void BM_NthInMillion(benchmark::State& state) {
    const Hostlist& list = million();
    for (auto _ : state)
        for (std::size_t i = 0; i < 1000; ++i)
            benchmark::DoNotOptimize(list.nth(i * 997));
}
BENCHMARK(BM_NthInMillion)->Unit(benchmark::kMillisecond);

// 100 lookups by name in a million hosts spread over 100,000 runs: a
// lookup walks the runs.
void BM_FindInMillionFragmented(benchmark::State& state) {
    Hostlist list;
    for (int i = 0; i < 100000; ++i)
        list.append(
            parsed("node[" + std::to_string(i * 20) + "-" + std::to_string(i * 20 + 9) + "]"));
    std::vector<std::string> names;
    for (int i = 0; i < 100; ++i)
        names.push_back("node" + std::to_string(i * 19997));
    for (auto _ : state)
        for (const auto& name : names)
            benchmark::DoNotOptimize(list.find(name));
}
BENCHMARK(BM_FindInMillionFragmented)->Unit(benchmark::kMillisecond);

void BM_DifferenceOfMillions(benchmark::State& state) {
    const Hostlist a = parsed("foo[1-1000000]");
    const Hostlist b = parsed("foo[5-10]");
    for (auto _ : state)
        benchmark::DoNotOptimize(Hostlist::set_difference(a, b));
}
BENCHMARK(BM_DifferenceOfMillions)->Unit(benchmark::kMillisecond);

// Both sides with many runs: every other block of 10 hosts, against blocks
// shifted by five.
void BM_DifferenceOfFragmented(benchmark::State& state) {
    Hostlist a;
    Hostlist b;
    for (int i = 0; i < 50000; ++i) {
        a.append(parsed("node[" + std::to_string(i * 20) + "-" + std::to_string(i * 20 + 9) + "]"));
        b.append(
            parsed("node[" + std::to_string(i * 20 + 5) + "-" + std::to_string(i * 20 + 14) + "]"));
    }
    for (auto _ : state)
        benchmark::DoNotOptimize(Hostlist::set_difference(a, b));
}
BENCHMARK(BM_DifferenceOfFragmented)->Unit(benchmark::kMillisecond);

// 100,000 names in reverse order, sorted.
void BM_SortReversed(benchmark::State& state) {
    auto names = node_names(100000);
    std::reverse(names.begin(), names.end());
    const Hostlist list = Hostlist::from_hosts(names);
    for (auto _ : state) {
        Hostlist sorted = list;
        sorted.sort();
        benchmark::DoNotOptimize(sorted);
    }
}
BENCHMARK(BM_SortReversed)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
