// The scheduler at the size of a large machine: 1,000 nodes of 64 cores
// (ranks 0-999, hosts node[0-999]) and 10,000 pending jobs of mixed shapes
// (-n anywhere, -N with tasks per node, -N whole nodes; time limits from a
// minute to a day, one job in ten without one).
//
//   BM_ScheduleEmptyMachine  schedule() once with 10,000 pending on an idle machine
//   BM_ScheduleFullMachine   schedule() once more with the machine full: the head's
//                            reservation and a backfill attempt per pending shape
//   BM_ReleaseSchedule/any   one step of a running instance: the next job to end is
//                            released and schedule() runs, 10,000 jobs kept pending
//   BM_ReleaseSchedule/constrained
//                            the same with one job in three asking for nodes with
//                            --requires (gpu is on a quarter of the nodes, bigmem
//                            on an eighth)
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "broker/scheduler.h"

namespace {

using gantry::IdSet;
using gantry::ResourceSet;
using gantry::broker::Allocation;
using gantry::broker::JobId;
using gantry::broker::PendingJob;
using gantry::broker::Request;
using gantry::broker::Scheduler;

constexpr int kNodes = 1000;
constexpr int kCores = 64;
constexpr int kPending = 10000;

ResourceSet machine() {
    ResourceSet set;
    for (int rank = 0; rank < kNodes; ++rank)
        set.insert(rank, {"node" + std::to_string(rank), IdSet::range(0, kCores - 1), {}}).value();
    set.set_property("gpu", IdSet::range(kNodes * 3 / 4, kNodes - 1)).value();
    set.set_property("bigmem", IdSet::range(0, kNodes / 8 - 1)).value();
    return set;
}

// What a third of the jobs ask for with --requires, when constrained.
const gantry::Json kConstraints[] = {
    gantry::Json::parse(R"({"properties":["gpu"]})"),
    gantry::Json::parse(R"({"properties":["^gpu"]})"),
    gantry::Json::parse(R"({"or":[{"properties":["bigmem"]},{"ranks":["500-599"]}]})"),
};

// Jobs drawn from one seed, so every run schedules the same workload.
class Workload {
public:
    explicit Workload(bool constrained = false) : constrained_(constrained) {}
    Request next() {
        Request request;
        if (constrained_ && pick(0, 2) == 0)
            request.constraint = kConstraints[pick(0, 2)];
        const int kind = pick(0, 9);
        if (kind < 6) {  // tasks anywhere
            request.ntasks = pick(1, 256);
            request.cores_per_task = pick(1, 4);
        } else if (kind < 9) {  // tasks spread over nodes
            request.nodes = pick(1, 16);
            request.ntasks = request.nodes * pick(1, 32);
            request.cores_per_task = pick(1, 2);
        } else {  // whole nodes
            request.nodes = pick(1, 32);
        }
        request.time_limit = pick(0, 9) == 0 ? 0 : pick(1, 1440) * 60;
        return request;
    }
    // How long a job really runs: up to its limit; a job without one, half a day.
    double runtime(const Request& request) {
        return request.time_limit > 0 ? pick(1, int(request.time_limit)) : 43200;
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool constrained_;
    std::mt19937 rng_{20240611};
};

struct Instance {
    explicit Instance(bool constrained = false) : workload(constrained) {}
    Scheduler scheduler{machine()};
    Workload workload;
    std::map<JobId, Request> requests;
    JobId next_id = 1;

    void submit(int count) {
        for (int i = 0; i < count; ++i) {
            const JobId id = next_id++;
            requests[id] = workload.next();
            scheduler.add(PendingJob{id, requests[id]}).value();
        }
    }
};

void BM_ScheduleEmptyMachine(benchmark::State& state) {
    Instance prepared;
    prepared.submit(kPending);
    std::size_t started = 0;
    std::optional<Scheduler> scheduler;  // copied and destroyed outside the timing
    for (auto _ : state) {
        state.PauseTiming();
        scheduler.reset();
        scheduler.emplace(prepared.scheduler);
        state.ResumeTiming();
        started = scheduler->schedule(0).size();
        benchmark::DoNotOptimize(started);
    }
    state.counters["started"] = double(started);
}
BENCHMARK(BM_ScheduleEmptyMachine)->Unit(benchmark::kMillisecond);

void BM_ScheduleFullMachine(benchmark::State& state) {
    Instance prepared;
    prepared.submit(kPending);
    (void)prepared.scheduler.schedule(0);
    // Nothing fits, so every pass finds the same state and starts nothing.
    std::size_t started = 0;
    for (auto _ : state) {
        started += prepared.scheduler.schedule(1).size();
        benchmark::DoNotOptimize(started);
    }
    state.counters["started"] = double(started);
    state.counters["pending"] = double(prepared.scheduler.pending().size());
    state.counters["free_cores"] = double(prepared.scheduler.free_resources().ncores());
}
BENCHMARK(BM_ScheduleFullMachine)->Unit(benchmark::kMillisecond);

void BM_ReleaseSchedule(benchmark::State& state, bool constrained) {
    Instance instance(constrained);
    instance.submit(kPending);
    std::multimap<double, JobId> ends;
    auto started = [&](const std::vector<Allocation>& allocations) {
        for (const Allocation& allocation : allocations)
            ends.emplace(
                allocation.start + instance.workload.runtime(instance.requests.at(allocation.id)),
                allocation.id);
    };
    started(instance.scheduler.schedule(0));
    instance.submit(int(ends.size()));
    std::uint64_t total_started = 0;
    for (auto _ : state) {
        const auto [now, id] = *ends.begin();
        ends.erase(ends.begin());
        instance.scheduler.release(id).value();
        const std::vector<Allocation> allocations = instance.scheduler.schedule(now);
        state.PauseTiming();
        started(allocations);
        total_started += allocations.size();
        instance.submit(int(allocations.size()));  // keep 10,000 pending
        state.ResumeTiming();
    }
    state.counters["started/step"] = double(total_started) / double(state.iterations());
    state.counters["running"] = double(instance.scheduler.running().size());
}
// A fixed number of steps, so that every run simulates the same stretch of time.
BENCHMARK_CAPTURE(BM_ReleaseSchedule, any, false)->Unit(benchmark::kMicrosecond)->Iterations(2000);
BENCHMARK_CAPTURE(BM_ReleaseSchedule, constrained, true)
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(2000);

}  // namespace

BENCHMARK_MAIN();
