// The scheduler: slots chosen for each request form, first fit and packing,
// queue order and urgency, begin times, feasibility messages, EASY backfill
// allowed and refused, release and restore.
#include "broker/scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "formats/jobspec.h"

namespace gantry::broker {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// `nodes` ranks from 0, each with `cores` cores and `gpus` GPUs, hosts
// node0.., and the property `big` on the last two ranks.
ResourceSet machine(int nodes = 4, int cores = 4, int gpus = 1) {
    ResourceSet set;
    for (int rank = 0; rank < nodes; ++rank)
        set.insert(rank, {"node" + std::to_string(rank), IdSet::range(0, cores - 1),
                          gpus > 0 ? IdSet::range(0, gpus - 1) : IdSet{}})
            .value();
    set.set_property("big", IdSet::range(nodes - 2, nodes - 1)).value();
    return set;
}

PendingJob job(JobId id, Request request, int urgency = Jobspec::kUrgencyDefault,
               double begin = 0) {
    return {id, request, urgency, begin};
}

// The jobs started at `now` as `id R-short-form`, joined by "; ".
std::string run(Scheduler& scheduler, double now) {
    std::string text;
    for (const Allocation& allocation : scheduler.schedule(now))
        text += (text.empty() ? "" : "; ") + std::to_string(allocation.id) + " " +
                allocation.R.short_form();
    return text;
}

std::string ids(const std::vector<JobId>& list) {
    std::string text;
    for (JobId id : list)
        text += (text.empty() ? "" : ",") + std::to_string(id);
    return text;
}

std::string reservation_str(const Scheduler& scheduler) {
    const auto& reservation = scheduler.reservation();
    if (!reservation)
        return "none";
    const std::string time =
        std::isinf(reservation->time) ? "never" : std::to_string(int(reservation->time));
    return std::to_string(reservation->id) + " at " + time + " on " + reservation->R.short_form();
}

struct SlotCase {
    std::string_view options;  // how the command line spells it
    Request request;
    std::string_view R;  // short form of the allocation in the empty 4x4x1 machine
};

const SlotCase kSlotCases[] = {
    {"(none)", {}, "rank0/core0"},
    {"-n3", {.ntasks = 3}, "rank0/core[0-2]"},
    {"-n6", {.ntasks = 6}, "rank0/core[0-3] rank1/core[0-1]"},
    {"-n16", {.ntasks = 16}, "rank[0-3]/core[0-3]"},
    {"-n2 -c3", {.ntasks = 2, .cores_per_task = 3}, "rank[0-1]/core[0-2]"},
    {"-n3 -c2", {.ntasks = 3, .cores_per_task = 2}, "rank0/core[0-3] rank1/core[0-1]"},
    {"-n2 -g1", {.ntasks = 2, .gpus_per_task = 1}, "rank[0-1]/core0,gpu0"},
    {"-c2 -g1", {.cores_per_task = 2, .gpus_per_task = 1}, "rank0/core[0-1],gpu0"},
    {"-N1", {.nodes = 1}, "rank0/core[0-3],gpu0"},
    {"-N2", {.nodes = 2}, "rank[0-1]/core[0-3],gpu0"},
    {"-N2 -n2", {.nodes = 2, .ntasks = 2}, "rank[0-1]/core0"},
    {"-N2 -n3", {.nodes = 2, .ntasks = 3}, "rank[0-1]/core[0-1]"},
    {"-N2 -n3 -c2", {.nodes = 2, .ntasks = 3, .cores_per_task = 2}, "rank[0-1]/core[0-3]"},
    {"-N3 -n3 --exclusive",
     {.nodes = 3, .ntasks = 3, .exclusive = true},
     "rank[0-2]/core[0-3],gpu0"},
    {"-N4 -n4 -g1", {.nodes = 4, .ntasks = 4, .gpus_per_task = 1}, "rank[0-3]/core0,gpu0"},
};

TEST(Scheduler, SlotsOfEachRequestForm) {
    for (const SlotCase& c : kSlotCases) {
        Scheduler scheduler(machine());
        ASSERT_TRUE(scheduler.add(job(1, c.request)).ok()) << c.options;
        EXPECT_EQ(run(scheduler, 0), "1 " + std::string(c.R)) << c.options;
    }
}

TEST(Scheduler, AllocationIsEncodedRWithHostsPropertiesWindowAndSlots) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 12})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 3, .cores_per_task = 2, .time_limit = 60})).ok());
    const auto started = scheduler.schedule(1000);
    ASSERT_EQ(started.size(), 1u);
    EXPECT_EQ(started[0].R.encode(),
              R"({"version":1,"execution":{"R_lite":[{"rank":"0-2","children":{"core":"0-3"}}],)"
              R"("nodelist":["node[0-2]"],"properties":{"big":"2"},"starttime":1000.0,)"
              R"("expiration":0.0,"nslots":12}})");
    ASSERT_TRUE(scheduler.release(1).ok());
    const auto second = scheduler.schedule(1010);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].id, 2u);
    EXPECT_EQ(second[0].start, 1010);
    EXPECT_EQ(second[0].end, 1070);
    EXPECT_EQ(second[0].R.encode(),
              R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}},)"
              R"({"rank":"1","children":{"core":"0-1"}}],"nodelist":["node[0-1]"],)"
              R"("starttime":1010.0,"expiration":1070.0,"nslots":3}})");
}

TEST(Scheduler, AllocationNamesNoHostsWhenTheInventoryHasUnlistableNames) {
    ResourceSet set;
    set.insert(0, {"n1", IdSet{0}, {}}).value();
    set.insert(1, {"n,2", IdSet{0}, {}}).value();
    Scheduler scheduler(set);
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 2})).ok());
    const auto started = scheduler.schedule(0);
    ASSERT_EQ(started.size(), 1u);
    EXPECT_EQ(started[0].R.short_form(), "rank[0-1]/core0");
    EXPECT_FALSE(started[0].R.has_hostnames());
}

TEST(Scheduler, FirstFitInRankOrderPacksNodes) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 3})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 3})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 1, .cores_per_task = 3})).ok());
    ASSERT_TRUE(scheduler.add(job(4, {.nodes = 1, .ntasks = 2})).ok());
    ASSERT_TRUE(scheduler.add(job(5, {.ntasks = 1, .gpus_per_task = 1})).ok());
    ASSERT_TRUE(scheduler.add(job(6, {.ntasks = 3})).ok());
    // 4: rank1 has two cores left, but two tasks of -N1 need one node: rank1.
    // 5: the first node with a free core and a free GPU. 6: what is left, in rank order.
    EXPECT_EQ(run(scheduler, 0),
              "1 rank0/core[0-2]; 2 rank0/core3 rank1/core[0-1]; 3 rank2/core[0-2]; "
              "4 rank1/core[2-3]; 5 rank2/core3,gpu0; 6 rank3/core[0-2]");
    EXPECT_EQ(scheduler.free_resources().short_form(), "rank[0-1]/gpu0 rank3/core3,gpu0");
}

TEST(Scheduler, ExclusiveTakesOnlyIdleNodes) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 1})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.nodes = 2, .ntasks = 2, .exclusive = true})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.nodes = 1, .ntasks = 1})).ok());
    EXPECT_EQ(run(scheduler, 0), "1 rank0/core0; 2 rank[1-2]/core[0-3],gpu0; 3 rank0/core1");
}

TEST(Scheduler, LaterSmallJobDoesNotPassBlockedHead) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 12, .time_limit = 100})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 16})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 1})).ok());
    // Job 3 fits now, but it has no time limit and every core is promised to job 2.
    EXPECT_EQ(run(scheduler, 0), "1 rank[0-2]/core[0-3]");
    EXPECT_EQ(reservation_str(scheduler), "2 at 100 on rank[0-3]/core[0-3]");
    EXPECT_EQ(ids(scheduler.pending()), "2,3");
}

TEST(Scheduler, BackfillsJobThatEndsBeforeTheReservation) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 12, .time_limit = 100})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 16})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 2, .time_limit = 90})).ok());   // ends at 100
    ASSERT_TRUE(scheduler.add(job(4, {.ntasks = 1, .time_limit = 101})).ok());  // ends at 111
    ASSERT_TRUE(scheduler.add(job(5, {.ntasks = 1, .time_limit = 30})).ok());   // ends at 40
    // Job 1 ends at 110, where job 2 is promised every core; jobs 3 and 5
    // end before, job 4 would still run at 110 and delay job 2.
    EXPECT_EQ(run(scheduler, 10), "1 rank[0-2]/core[0-3]; 3 rank3/core[0-1]; 5 rank3/core2");
    EXPECT_EQ(reservation_str(scheduler), "2 at 110 on rank[0-3]/core[0-3]");
    EXPECT_EQ(ids(scheduler.pending()), "2,4");
    EXPECT_EQ(run(scheduler, 30), "");
    ASSERT_TRUE(scheduler.release(5).ok());
    EXPECT_EQ(run(scheduler, 40), "");
}

TEST(Scheduler, BackfillRefusedWhenItWouldDelayTheHead) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.nodes = 1, .time_limit = 100})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.nodes = 2})).ok());  // never ends
    ASSERT_TRUE(scheduler.add(job(3, {.nodes = 2})).ok());
    ASSERT_TRUE(scheduler.add(job(4, {.ntasks = 1, .time_limit = 200})).ok());
    ASSERT_TRUE(scheduler.add(job(5, {.ntasks = 1, .time_limit = 50})).ok());
    // Job 3 gets ranks 0 and 3 at 100; job 4 on rank 3 would hold it until
    // 200, so only job 5, which ends at 50, may use it now.
    EXPECT_EQ(run(scheduler, 0),
              "1 rank0/core[0-3],gpu0; 2 rank[1-2]/core[0-3],gpu0; 5 rank3/core0");
    EXPECT_EQ(reservation_str(scheduler), "3 at 100 on rank[0,3]/core[0-3],gpu0");
    EXPECT_EQ(ids(scheduler.pending()), "3,4");
}

TEST(Scheduler, BackfillOutsideTheReservedResources) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 12, .time_limit = 100})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.nodes = 2})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 4})).ok());
    // Job 2 waits for ranks 0-1 at 100; job 3 has no limit but leaves them alone.
    EXPECT_EQ(run(scheduler, 0), "1 rank[0-2]/core[0-3]; 3 rank3/core[0-3]");
    EXPECT_EQ(reservation_str(scheduler), "2 at 100 on rank[0-1]/core[0-3],gpu0");
}

TEST(Scheduler, UnlimitedJobsMakeTheReservationInfinite) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 2})).ok());  // no limit
    ASSERT_TRUE(scheduler.add(job(2, {.nodes = 4, .ntasks = 4, .cores_per_task = 3})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 1, .time_limit = 10})).ok());
    ASSERT_TRUE(scheduler.add(job(4, {.ntasks = 1})).ok());
    ASSERT_TRUE(scheduler.add(job(5, {.ntasks = 4, .time_limit = 10})).ok());
    // Job 2 starts only after job 1 ends, so it keeps its fit in the empty
    // machine (cores 0-2 of every rank); jobs 3 and 4 take the cores it
    // cannot use, whatever their limits; job 5 finds too few of them.
    EXPECT_EQ(run(scheduler, 0), "1 rank0/core[0-1]; 3 rank0/core3; 4 rank1/core3");
    EXPECT_EQ(scheduler.reservation()->time, kNever);
    EXPECT_EQ(reservation_str(scheduler), "2 at never on rank[0-3]/core[0-2]");
    EXPECT_EQ(ids(scheduler.pending()), "2,5");
}

TEST(Scheduler, ReleaseThenScheduleStartsTheHead) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 16, .time_limit = 100})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.nodes = 4})).ok());
    EXPECT_EQ(run(scheduler, 0), "1 rank[0-3]/core[0-3]");
    EXPECT_EQ(run(scheduler, 10), "");
    EXPECT_EQ(reservation_str(scheduler), "2 at 100 on rank[0-3]/core[0-3],gpu0");
    ASSERT_TRUE(scheduler.release(1).ok());
    EXPECT_EQ(run(scheduler, 20), "2 rank[0-3]/core[0-3],gpu0");
    EXPECT_EQ(reservation_str(scheduler), "none");
    EXPECT_EQ(ids(scheduler.running()), "2");
    EXPECT_EQ(scheduler.free_resources().short_form(), "");
    EXPECT_EQ(scheduler.release(1).error().str(), "scheduler: job 1 is not running");
}

// A drained node takes no new job; what a job held there stays out of the
// pool when it ends, until the node is undrained. Down and drained at once,
// a node comes back only when it is both up and undrained.
TEST(Scheduler, DrainedNodesTakeNoNewJobs) {
    Scheduler scheduler(machine(2, 2, 0));
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 1})).ok());
    EXPECT_EQ(run(scheduler, 0), "1 rank0/core0");
    scheduler.set_drained(IdSet{0});
    EXPECT_EQ(scheduler.drained().encode(), "0");
    EXPECT_EQ(scheduler.drained_resources().short_form(), "rank0/core1");
    EXPECT_EQ(scheduler.free_resources().short_form(), "rank1/core[0-1]");
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 3})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 1})).ok());
    // Job 2 needs the drained node: it waits, holding nothing, and job 3 runs.
    EXPECT_EQ(run(scheduler, 1), "3 rank1/core0");
    ASSERT_TRUE(scheduler.release(1).ok());
    EXPECT_EQ(scheduler.drained_resources().short_form(), "rank0/core[0-1]");
    EXPECT_EQ(run(scheduler, 2), "");
    scheduler.set_down(IdSet{0});
    EXPECT_EQ(scheduler.drained_resources().short_form(), "");
    EXPECT_EQ(scheduler.down_resources().short_form(), "rank0/core[0-1]");
    scheduler.set_undrained(IdSet{0});
    EXPECT_EQ(run(scheduler, 3), "");
    scheduler.set_up(IdSet{0});
    EXPECT_EQ(run(scheduler, 4), "2 rank0/core[0-1] rank1/core1");
    // A head that needs a drained node holds nothing meanwhile: the node
    // may never come back, and the others run.
    scheduler.set_drained(IdSet{1});
    ASSERT_TRUE(scheduler.add(job(4, {.nodes = 2})).ok());
    ASSERT_TRUE(scheduler.release(2).ok());
    ASSERT_TRUE(scheduler.release(3).ok());
    ASSERT_TRUE(scheduler.add(job(5, {.nodes = 1})).ok());
    EXPECT_EQ(run(scheduler, 6), "5 rank0/core[0-1]");
    EXPECT_EQ(reservation_str(scheduler), "4 at never on ");
    ASSERT_TRUE(scheduler.release(5).ok());
    scheduler.set_undrained(IdSet{1});
    EXPECT_EQ(run(scheduler, 7), "4 rank[0-1]/core[0-1]");
    // Unknown ranks and a second drain change nothing.
    scheduler.set_drained(IdSet{7});
    scheduler.set_undrained(IdSet{1});
    EXPECT_EQ(scheduler.drained().encode(), "");
}

TEST(Scheduler, UrgencyOrdersTheQueueAndZeroHolds) {
    Scheduler scheduler(machine());
    const Request whole{.ntasks = 16};
    ASSERT_TRUE(scheduler.add(job(1, whole)).ok());
    ASSERT_TRUE(scheduler.add(job(2, whole, Jobspec::kUrgencyHold)).ok());
    ASSERT_TRUE(scheduler.add(job(3, whole)).ok());
    ASSERT_TRUE(scheduler.add(job(4, whole, Jobspec::kUrgencyExpedite)).ok());
    ASSERT_TRUE(scheduler.add(job(5, whole, 20)).ok());
    EXPECT_EQ(ids(scheduler.pending()), "4,5,1,3,2");
    EXPECT_EQ(run(scheduler, 0), "4 rank[0-3]/core[0-3]");
    ASSERT_TRUE(scheduler.set_urgency(3, 31).ok());
    EXPECT_EQ(ids(scheduler.pending()), "3,5,1,2");
    ASSERT_TRUE(scheduler.release(4).ok());
    EXPECT_EQ(run(scheduler, 1), "3 rank[0-3]/core[0-3]");
    ASSERT_TRUE(scheduler.release(3).ok());
    EXPECT_EQ(run(scheduler, 2), "5 rank[0-3]/core[0-3]");
    ASSERT_TRUE(scheduler.release(5).ok());
    EXPECT_EQ(run(scheduler, 3), "1 rank[0-3]/core[0-3]");
    ASSERT_TRUE(scheduler.release(1).ok());
    // Held: never started, even on an idle machine, and never a head.
    EXPECT_EQ(run(scheduler, 4), "");
    EXPECT_EQ(reservation_str(scheduler), "none");
    ASSERT_TRUE(scheduler.set_urgency(2, Jobspec::kUrgencyDefault).ok());
    EXPECT_EQ(run(scheduler, 5), "2 rank[0-3]/core[0-3]");
    // Equal urgency after a change keeps submit order.
    ASSERT_TRUE(scheduler.add(job(6, whole, 10)).ok());
    ASSERT_TRUE(scheduler.add(job(7, whole)).ok());
    ASSERT_TRUE(scheduler.set_urgency(6, Jobspec::kUrgencyDefault).ok());
    EXPECT_EQ(ids(scheduler.pending()), "6,7");
    EXPECT_EQ(scheduler.set_urgency(6, 32).error().str(), "scheduler: urgency 32 is not in 0-31");
    EXPECT_EQ(scheduler.set_urgency(9, 1).error().str(), "scheduler: job 9 is not pending");
}

TEST(Scheduler, BeginTimeDefersAJobWithoutBlockingOthers) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 16}, Jobspec::kUrgencyDefault, 500)).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 4, .time_limit = 1000})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {}, Jobspec::kUrgencyHold, 300)).ok());
    EXPECT_EQ(scheduler.next_begin_time(100), 500);
    EXPECT_EQ(run(scheduler, 100), "2 rank0/core[0-3]");
    EXPECT_EQ(reservation_str(scheduler), "none");
    EXPECT_EQ(run(scheduler, 499), "");
    EXPECT_EQ(reservation_str(scheduler), "none");
    EXPECT_EQ(run(scheduler, 500), "");
    EXPECT_EQ(scheduler.next_begin_time(500), std::nullopt);
    EXPECT_EQ(reservation_str(scheduler), "1 at 1100 on rank[0-3]/core[0-3]");
    ASSERT_TRUE(scheduler.release(2).ok());
    EXPECT_EQ(run(scheduler, 600), "1 rank[0-3]/core[0-3]");
}

TEST(Scheduler, RemoveCancelsAPendingJob) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(scheduler.add(job(1, {.ntasks = 16, .time_limit = 10})).ok());
    ASSERT_TRUE(scheduler.add(job(2, {.ntasks = 16})).ok());
    ASSERT_TRUE(scheduler.add(job(3, {.ntasks = 1})).ok());
    EXPECT_EQ(run(scheduler, 0), "1 rank[0-3]/core[0-3]");
    ASSERT_TRUE(scheduler.remove(2).ok());
    EXPECT_EQ(scheduler.find_pending(2), nullptr);
    EXPECT_EQ(scheduler.find_pending(3)->request.ntasks, 1u);
    ASSERT_TRUE(scheduler.release(1).ok());
    EXPECT_EQ(run(scheduler, 5), "3 rank0/core0");
    EXPECT_EQ(scheduler.remove(2).error().str(), "scheduler: job 2 is not pending");
    EXPECT_EQ(scheduler.remove(3).error().str(), "scheduler: job 3 is not pending");
}

struct FeasibleCase {
    std::string_view options;
    Request request;
    std::string_view message;  // empty: feasible
};

const FeasibleCase kFeasibleCases[] = {
    {"-N4", {.nodes = 4}, ""},
    {"-n16", {.ntasks = 16}, ""},
    {"-N2 -n3 -c2", {.nodes = 2, .ntasks = 3, .cores_per_task = 2}, ""},
    {"-N5", {.nodes = 5}, "scheduler: 5 nodes requested, the instance has 4"},
    {"-c8", {.cores_per_task = 8}, "scheduler: a task needs 8 cores, the largest node has 4"},
    {"-g2", {.gpus_per_task = 2}, "scheduler: a task needs 2 gpus, the largest node has 1"},
    {"-n17", {.ntasks = 17}, "scheduler: 17 tasks of 1 core requested, the instance holds 16"},
    {"-n5 -c2 -g1",
     {.ntasks = 5, .cores_per_task = 2, .gpus_per_task = 1},
     "scheduler: 5 tasks of 2 cores and 1 gpu requested, the instance holds 4"},
    {"-N2 -n6 -c2",
     {.nodes = 2, .ntasks = 6, .cores_per_task = 2},
     "scheduler: 2 nodes of 6 cores requested (3 tasks a node), the instance has 0 such nodes"},
    {"-N2 -n4 -g1",
     {.nodes = 2, .ntasks = 4, .gpus_per_task = 1},
     "scheduler: 2 nodes of 2 cores and 2 gpus requested (2 tasks a node), the instance has 0 "
     "such nodes"},
    {"-c0", {.cores_per_task = 0}, "scheduler: a task needs at least one core (-c 0)"},
    {"-n2 --exclusive",
     {.ntasks = 2, .exclusive = true},
     "scheduler: --exclusive needs a node count (-N)"},
    {"-N3 -n2",
     {.nodes = 3, .ntasks = 2},
     "scheduler: 3 nodes requested for 2 tasks, a node needs at least one task"},
    {"-t -5", {.time_limit = -5}, "scheduler: time limit -5 is not a number of seconds >= 0"},
    {"-t nan",
     {.time_limit = std::numeric_limits<double>::quiet_NaN()},
     "scheduler: time limit nan is not a number of seconds >= 0"},
};

TEST(Scheduler, FeasibleMessages) {
    const Scheduler scheduler(machine());
    for (const FeasibleCase& c : kFeasibleCases) {
        const Status status = scheduler.feasible(c.request);
        EXPECT_EQ(status ? "" : status.error().str(), c.message) << c.options;
    }
}

TEST(Scheduler, FeasibleOnUnlikeNodes) {
    ResourceSet set;
    set.insert(0, {"cpu0", IdSet::range(0, 7), {}}).value();
    set.insert(1, {"gpu0", IdSet::range(0, 1), IdSet::range(0, 3)}).value();
    const Scheduler scheduler(set);
    EXPECT_EQ(scheduler.feasible({.cores_per_task = 4, .gpus_per_task = 1}).error().str(),
              "scheduler: a task needs 4 cores and 1 gpu, no node has both");
    EXPECT_EQ(scheduler.feasible({.nodes = 2, .ntasks = 2, .cores_per_task = 4}).error().str(),
              "scheduler: 2 nodes of 4 cores requested (1 task a node), the instance has 1 such "
              "node");
    EXPECT_TRUE(scheduler.feasible({.ntasks = 5, .cores_per_task = 2}).ok());
    EXPECT_EQ(Scheduler(ResourceSet{}).feasible({}).error().str(),
              "scheduler: a task needs 1 core, the largest node has 0");
}

// --requires: the nodes a job may have are those its constraint allows
// (properties, host names, ranks), in first fit as elsewhere.
Request constrained(Request request, std::string_view constraint) {
    request.constraint = Json::parse(constraint);
    return request;
}

TEST(Scheduler, ConstraintLimitsTheNodes) {
    Scheduler scheduler(machine());
    ASSERT_TRUE(
        scheduler.add(job(1, constrained({.ntasks = 2}, R"({"properties":["big"]})"))).ok());
    ASSERT_TRUE(
        scheduler.add(job(2, constrained({.nodes = 1}, R"({"properties":["^big"]})"))).ok());
    ASSERT_TRUE(
        scheduler.add(job(3, constrained({.ntasks = 1}, R"({"hostlist":["node1"]})"))).ok());
    ASSERT_TRUE(
        scheduler
            .add(job(4, constrained({.ntasks = 7},
                                    R"({"or":[{"ranks":["3"]},{"properties":["node0"]}]})")))
            .ok());
    ASSERT_TRUE(scheduler.add(job(5, {.ntasks = 1})).ok());
    // 4 may have ranks 0 and 3 only: job 2 holds rank 0, so it waits, and
    // is promised the fit of ranks 0 and 3; 5, on any node, goes beside.
    EXPECT_EQ(run(scheduler, 0),
              "1 rank2/core[0-1]; 2 rank0/core[0-3],gpu0; 3 rank1/core0; 5 rank1/core1");
    EXPECT_EQ(reservation_str(scheduler), "4 at never on rank0/core[0-3] rank3/core[0-2]");
    EXPECT_EQ(ids(scheduler.pending()), "4");
    ASSERT_TRUE(scheduler.release(2).ok());
    EXPECT_EQ(run(scheduler, 0), "4 rank0/core[0-3] rank3/core[0-2]");
}

TEST(Scheduler, JobsOfOneConstraintShareItsDomain) {
    Scheduler scheduler(machine());
    for (JobId id = 1; id <= 3; ++id)
        ASSERT_TRUE(
            scheduler.add(job(id, constrained({.nodes = 1}, R"({"properties":["big"]})"))).ok());
    ASSERT_TRUE(scheduler.remove(3).ok());
    EXPECT_EQ(run(scheduler, 0), "1 rank2/core[0-3],gpu0; 2 rank3/core[0-3],gpu0");
    ASSERT_TRUE(scheduler.add(job(4, constrained({.nodes = 1}, R"({"properties":["big"]})"))).ok());
    ASSERT_TRUE(
        scheduler.add(job(5, constrained({.nodes = 1}, R"({"properties":["^big"]})"))).ok());
    EXPECT_EQ(run(scheduler, 0), "5 rank0/core[0-3],gpu0");
    ASSERT_TRUE(scheduler.release(1).ok());
    EXPECT_EQ(run(scheduler, 0), "4 rank2/core[0-3],gpu0");
}

TEST(Scheduler, ConstraintMessagesSayWhatItAllows) {
    const Scheduler scheduler(machine(4, 4, 0));
    const auto message = [&](Request request, std::string_view constraint) {
        const Status status = scheduler.feasible(constrained(request, constraint));
        return status ? std::string() : status.error().str();
    };
    EXPECT_EQ(message({}, R"({"properties":["gpu"]})"),
              R"(scheduler: no node satisfies the job's constraint {"properties":["gpu"]})");
    EXPECT_EQ(message({.nodes = 3}, R"({"properties":["big"]})"),
              "scheduler: 3 nodes requested, the job's constraint allows 2");
    EXPECT_EQ(message({.ntasks = 9}, R"({"properties":["big"]})"),
              "scheduler: 9 tasks of 1 core requested, the nodes the job's constraint allows "
              "hold 8");
    EXPECT_EQ(message({.cores_per_task = 5}, R"({"ranks":["0-1"]})"),
              "scheduler: a task needs 5 cores, the largest node the job's constraint allows "
              "has 4");
    EXPECT_EQ(message({}, R"({"colour":["red"]})"),
              R"(scheduler: constraint: unknown constraint operator "colour")");
    EXPECT_EQ(message({}, R"({"hostlist":["node[0-"]})"),
              "scheduler: constraint.hostlist[0]: '[' without ']'");
    EXPECT_EQ(message({.ntasks = 8}, R"({"properties":["big"]})"), "");
    EXPECT_EQ(message({}, "{}"), "");
}

TEST(Scheduler, AddRefusesWhatCanNeverRunAndKnownIds) {
    Scheduler scheduler(machine());
    EXPECT_EQ(scheduler.add(job(1, {.nodes = 5})).error().str(),
              "scheduler: 5 nodes requested, the instance has 4");
    EXPECT_EQ(scheduler.add(job(1, {}, 32)).error().str(), "scheduler: urgency 32 is not in 0-31");
    EXPECT_EQ(scheduler.add(job(1, {}, -1)).error().str(), "scheduler: urgency -1 is not in 0-31");
    ASSERT_TRUE(scheduler.add(job(1, {})).ok());
    EXPECT_EQ(scheduler.add(job(1, {})).error().str(), "scheduler: job 1 is already pending");
    EXPECT_EQ(run(scheduler, 0), "1 rank0/core0");
    EXPECT_EQ(scheduler.add(job(1, {})).error().str(), "scheduler: job 1 is already running");
    EXPECT_TRUE(scheduler.pending().empty());
}

TEST(Scheduler, RestoreReRegistersARunningJob) {
    Scheduler scheduler(machine());
    ResourceSet R;
    R.insert(0, {"node0", IdSet::range(0, 3), {}}).value();
    R.insert(1, {"node1", IdSet::range(0, 3), {}}).value();
    ASSERT_TRUE(scheduler.restore(7, R, 50, 100).ok());
    EXPECT_EQ(ids(scheduler.running()), "7");
    EXPECT_EQ(scheduler.find_running(7)->end, 150);
    EXPECT_EQ(scheduler.free_resources().short_form(), "rank[0-1]/gpu0 rank[2-3]/core[0-3],gpu0");
    // The restored job's end time places the head's reservation.
    ASSERT_TRUE(scheduler.add(job(8, {.ntasks = 16})).ok());
    ASSERT_TRUE(scheduler.add(job(9, {.ntasks = 1})).ok());
    EXPECT_EQ(run(scheduler, 60), "");
    EXPECT_EQ(reservation_str(scheduler), "8 at 150 on rank[0-3]/core[0-3]");
    // Restoring what is taken, or not in the inventory, is refused.
    EXPECT_EQ(scheduler.restore(10, machine().copy_ranks(IdSet{1}), 0, 0).error().str(),
              "scheduler: restore: job 10: rank 1: core[0-3] already allocated");
    EXPECT_EQ(scheduler.restore(10, machine(6).copy_ranks(IdSet{5}), 0, 0).error().str(),
              "scheduler: restore: job 10: rank 5 is not in the inventory");
    EXPECT_EQ(scheduler.restore(10, machine(4, 8).copy_ranks(IdSet{3}), 0, 0).error().str(),
              "scheduler: restore: job 10: rank 3 has no core[4-7] in the inventory");
    ResourceSet elsewhere;
    elsewhere.insert(2, {"login0", IdSet{0}, {}}).value();
    EXPECT_EQ(scheduler.restore(10, elsewhere, 0, 0).error().str(),
              "scheduler: restore: job 10: rank 2 is host login0, the inventory's is node2");
    EXPECT_EQ(scheduler.restore(7, ResourceSet{}, 0, 0).error().str(),
              "scheduler: restore: job 7 is already running");
    EXPECT_EQ(scheduler.restore(8, ResourceSet{}, 0, 0).error().str(),
              "scheduler: restore: job 8 is already pending");
    EXPECT_EQ(scheduler.free_resources().short_form(), "rank[0-1]/gpu0 rank[2-3]/core[0-3],gpu0");
    ASSERT_TRUE(scheduler.release(7).ok());
    EXPECT_EQ(run(scheduler, 70), "8 rank[0-3]/core[0-3]");
    EXPECT_EQ(ids(scheduler.pending()), "9");
}

}  // namespace
}  // namespace gantry::broker
