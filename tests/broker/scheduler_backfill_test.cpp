// The scheduler over whole random workloads: jobs run until they end (at
// most their time limit) and are released, and after every step the running
// allocations are disjoint, they and the free pool make up the inventory, and
// no job starts later than the first reservation it was given.
#include "broker/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

namespace gantry::broker {
namespace {

// 8 nodes of 8 cores and 2 GPUs.
ResourceSet inventory() {
    ResourceSet set;
    for (int rank = 0; rank < 8; ++rank)
        set.insert(rank, {"n" + std::to_string(rank), IdSet::range(0, 7), IdSet::range(0, 1)})
            .value();
    return set;
}

Request random_request(std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Request request;
    request.cores_per_task = pick(1, 3);
    request.gpus_per_task = pick(0, 3) == 0 ? 1 : 0;
    if (pick(0, 2) == 0) {
        request.nodes = pick(1, 4);
        request.ntasks = pick(0, 1) ? 0 : request.nodes * pick(1, 2);
        request.exclusive = request.ntasks > 0 && pick(0, 3) == 0;
    } else {
        request.ntasks = pick(1, 20);
    }
    request.time_limit = pick(1, 20) * 10;
    return request;
}

struct Outcome {
    double makespan = 0;
    int backfilled = 0;  // jobs started while an earlier job waited
};

Outcome simulate(unsigned seed) {
    std::mt19937 rng(seed);
    const ResourceSet machine = inventory();
    Scheduler scheduler(machine);
    std::map<JobId, double> runtime;  // how long each job really runs
    for (JobId id = 1; id <= 100; ++id) {
        Request request = random_request(rng);
        if (!scheduler.feasible(request))
            continue;
        // Most jobs run to their limit; some end sooner.
        runtime[id] = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? request.time_limit / 2
                                                                         : request.time_limit;
        EXPECT_TRUE(scheduler.add({id, request}).ok());
    }
    std::map<JobId, double> promised;  // first reservation of each job
    std::map<JobId, double> ends;      // running job -> when it ends
    Outcome outcome;
    double now = 0;
    while (true) {
        const std::vector<JobId> before = scheduler.pending();
        const std::vector<Allocation> started = scheduler.schedule(now);
        // The first job still waiting: those started after it in queue order were backfilled.
        const auto head = std::find_if(before.begin(), before.end(),
                                       [&](JobId id) { return scheduler.find_pending(id); });
        for (const Allocation& allocation : started) {
            ends[allocation.id] = now + runtime.at(allocation.id);
            if (auto promise = promised.find(allocation.id); promise != promised.end()) {
                EXPECT_LE(now, promise->second) << "job " << allocation.id << " seed " << seed;
            }
            outcome.backfilled += std::find(before.begin(), head, allocation.id) == head;
        }
        if (const auto& reservation = scheduler.reservation()) {
            promised.emplace(reservation->id, reservation->time);
            EXPECT_LE(reservation->time, promised.at(reservation->id))
                << "job " << reservation->id << " seed " << seed;
        }
        // Running allocations are disjoint and, with the free pool, the inventory.
        auto whole = ResourceSet{}.append(scheduler.free_resources());
        for (JobId id : scheduler.running())
            whole = whole->append(scheduler.find_running(id)->R);
        EXPECT_TRUE(whole.ok()) << (whole ? "" : whole.error().str()) << " seed " << seed;
        if (whole) {
            EXPECT_EQ(whole->short_form(), machine.short_form()) << "seed " << seed;
        }
        if (ends.empty())
            break;
        now = std::min_element(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
              })->second;
        for (auto it = ends.begin(); it != ends.end();) {
            if (it->second == now) {
                EXPECT_TRUE(scheduler.release(it->first).ok());
                it = ends.erase(it);
            } else {
                ++it;
            }
        }
    }
    EXPECT_TRUE(scheduler.pending().empty()) << "seed " << seed;
    outcome.makespan = now;
    return outcome;
}

TEST(SchedulerBackfill, RandomWorkloadsKeepEveryPromise) {
    int backfilled = 0;
    for (unsigned seed = 1; seed <= 12; ++seed)
        backfilled += simulate(seed).backfilled;
    // A test of backfill that never backfills would prove nothing.
    EXPECT_GT(backfilled, 200);
}

}  // namespace
}  // namespace gantry::broker
