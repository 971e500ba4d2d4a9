// IdSet speed on the shapes that matter: one huge range (a whole machine's
// ranks), 100,000 scattered ids (the worst case for ranges: one per id), set
// operations on two scattered sets, and lookups.
#include <cstdint>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "formats/idset.h"

namespace {

using gantry::IdSet;

constexpr std::uint32_t kScattered = 100000;

// 0, 3, 6, ...: 100,000 ids, none adjacent, so 100,000 ranges.
IdSet every_third(IdSet::Id offset) {
    IdSet set;
    for (std::uint32_t i = 0; i < kScattered; ++i)
        set.insert(offset + 3 * i);
    return set;
}

// 100,000 distinct ids drawn from [0, 1,000,000) with a fixed seed.
IdSet random_ids(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<IdSet::Id> id(0, 999999);
    IdSet set;
    while (set.count() < kScattered)
        set.insert(id(rng));
    return set;
}

void BM_ParseFullRange(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(IdSet::parse("0-2147483646"));
}
BENCHMARK(BM_ParseFullRange);

void BM_EncodeFullRange(benchmark::State& state) {
    const IdSet set = IdSet::parse("0-2147483646").value();
    for (auto _ : state)
        benchmark::DoNotOptimize(set.encode());
}
BENCHMARK(BM_EncodeFullRange);

void BM_ParseEveryThird(benchmark::State& state) {
    const std::string text = every_third(0).encode();
    for (auto _ : state)
        benchmark::DoNotOptimize(IdSet::parse(text));
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ParseEveryThird)->Unit(benchmark::kMillisecond);

void BM_EncodeEveryThird(benchmark::State& state) {
    const IdSet set = every_third(0);
    for (auto _ : state)
        benchmark::DoNotOptimize(set.encode());
}
BENCHMARK(BM_EncodeEveryThird)->Unit(benchmark::kMillisecond);

void BM_ParseRandom(benchmark::State& state) {
    const std::string text = random_ids(1).encode();
    for (auto _ : state)
        benchmark::DoNotOptimize(IdSet::parse(text));
}
BENCHMARK(BM_ParseRandom)->Unit(benchmark::kMillisecond);

void BM_EncodeRandom(benchmark::State& state) {
    const IdSet set = random_ids(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(set.encode());
}
BENCHMARK(BM_EncodeRandom)->Unit(benchmark::kMillisecond);

void BM_UnionEveryThird(benchmark::State& state) {
    const IdSet a = every_third(0);
    const IdSet b = every_third(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(a | b);
}
BENCHMARK(BM_UnionEveryThird)->Unit(benchmark::kMillisecond);

void BM_DifferenceEveryThird(benchmark::State& state) {
    const IdSet a = every_third(0) | every_third(1);
    const IdSet b = every_third(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(a - b);
}
BENCHMARK(BM_DifferenceEveryThird)->Unit(benchmark::kMillisecond);

void BM_UnionRandom(benchmark::State& state) {
    const IdSet a = random_ids(1);
    const IdSet b = random_ids(2);
    for (auto _ : state)
        benchmark::DoNotOptimize(a | b);
}
BENCHMARK(BM_UnionRandom)->Unit(benchmark::kMillisecond);

void BM_DifferenceRandom(benchmark::State& state) {
    const IdSet a = random_ids(1);
    const IdSet b = random_ids(2);
    for (auto _ : state)
        benchmark::DoNotOptimize(a - b);
}
BENCHMARK(BM_DifferenceRandom)->Unit(benchmark::kMillisecond);

void BM_IntersectionRandom(benchmark::State& state) {
    const IdSet a = random_ids(1);
    const IdSet b = random_ids(2);
    for (auto _ : state)
        benchmark::DoNotOptimize(a & b);
}
BENCHMARK(BM_IntersectionRandom)->Unit(benchmark::kMillisecond);

// 1,000 lookups spread over the set, per iteration.
void BM_NthEveryThird(benchmark::State& state) {
    const IdSet set = every_third(0);
    for (auto _ : state)
        for (std::uint64_t n = 0; n < kScattered; n += kScattered / 1000)
            benchmark::DoNotOptimize(set.nth(n));
    state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_NthEveryThird)->Unit(benchmark::kMillisecond);

void BM_ContainsEveryThird(benchmark::State& state) {
    const IdSet set = every_third(0);
    for (auto _ : state)
        for (IdSet::Id id = 0; id < 3 * kScattered; id += 3 * kScattered / 1000)
            benchmark::DoNotOptimize(set.contains(id + 1));
    state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_ContainsEveryThird)->Unit(benchmark::kMicrosecond);

void BM_NthFullRange(benchmark::State& state) {
    const IdSet set = IdSet::parse("0-2147483646").value();
    std::uint64_t n = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(set.nth(n));
        n = (n + 7919) % set.count();
    }
}
BENCHMARK(BM_NthFullRange);

}  // namespace

BENCHMARK_MAIN();
