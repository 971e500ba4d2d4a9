// The scheduler of an instance: holds the inventory R and the queue of
// pending jobs, and allocates parts of R to them, first fit in queue order
// with EASY backfill behind the first job that does not fit.
//
// Pure logic: no I/O and no clock; times are seconds since the epoch, passed
// in. Requests, slot choice, order, urgency, the backfill rule and the
// messages: docs/scheduling.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "broker/job_id.h"
#include "formats/idset.h"
#include "formats/jobspec.h"
#include "formats/rset.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

// What a job asks for, as `gantry submit` / `run` options spell it, with
// flux's meaning: a task slot is `cores_per_task` cores and `gpus_per_task`
// GPUs on one node.
struct Request {
    std::uint32_t nodes = 0;           // -N; 0: as many nodes as the slots take
    std::uint32_t ntasks = 0;          // -n; 0: one task, or one per node with -N
    std::uint32_t cores_per_task = 1;  // -c
    std::uint32_t gpus_per_task = 0;   // -g
    bool exclusive = false;            // --exclusive: whole nodes; needs -N, implied by -N alone
    double time_limit = 0;             // seconds; 0: none (runs forever as far as planning knows)
    // --requires: an RFC 31 constraint on the nodes, evaluated on the
    // inventory (its properties and host names); {}: any node.
    Json constraint = Json::object();

    friend bool operator==(const Request&, const Request&) = default;
};

// A job waiting in the queue.
struct PendingJob {
    JobId id = 0;
    Request request;
    // Jobspec::kUrgencyHold (never started until raised) to kUrgencyExpedite
    // (ahead of every other urgency).
    int urgency = Jobspec::kUrgencyDefault;
    double begin_time = 0;  // not started before this time; 0: any time
};

// Resources given to a job.
struct Allocation {
    JobId id = 0;
    // Inventory ranks with the allocated cores and GPUs, their hosts and
    // properties; window [start, end] and nslots set (restored R: as given).
    ResourceSet R;
    double start = 0;
    double end = 0;  // start + time limit; 0: no limit
};

// Where and when the first job that does not fit is promised to start.
struct Reservation {
    JobId id = 0;
    double time = 0;  // +infinity when only jobs without a time limit could free enough
    ResourceSet R;    // what it is promised at `time` (the whole inventory's fit when infinite)
};

// The scheduler's working state, for its implementation.
namespace scheduler_detail {

// A request in the scheduler's terms: `slots` slots per node on exactly
// `nodes` nodes, or `slots` slots anywhere when `nodes` is 0.
struct Shape {
    static constexpr std::uint32_t kAnyNode = UINT32_MAX;
    std::uint32_t nodes = 0;
    std::uint32_t slots = 0;
    std::uint32_t cores = 0;  // per slot
    std::uint32_t gpus = 0;   // per slot
    bool exclusive = false;
    std::uint32_t domain = kAnyNode;  // the nodes it may have: a Domain's number, or any
    friend auto operator<=>(const Shape&, const Shape&) = default;
};
// The nodes a constraint allows, by index into the inventory's ranks.
using Domain = std::vector<bool>;
// One node's share of an allocation (node: index into the inventory's ranks).
struct Piece {
    std::size_t node = 0;
    IdSet cores;
    IdSet gpus;
};
using Placement = std::vector<Piece>;
// One node's resources: its totals, and what is free.
struct Node {
    ResourceSet::Rank rank = 0;
    std::uint64_t ncores = 0;
    std::uint64_t ngpus = 0;
    IdSet cores;
    IdSet gpus;
};
struct Pool {
    std::vector<Node> nodes;  // in rank order
    std::uint64_t free_cores = 0;
    std::uint64_t free_gpus = 0;
    std::size_t whole_nodes = 0;       // nodes with all their cores and GPUs free
    std::size_t first_with_cores = 0;  // no node before it has a free core
    void take(const Placement& placement);
    void give(const Placement& placement);
};

// The distinct values (shapes, domains) of the pending jobs, numbered from
// 0 and numbers reused, so that a pass can note per shape that it did not
// fit, and jobs of one constraint share its domain.
template <class Value>
class Numbered {
public:
    std::uint32_t acquire(const Value& value);  // one more job of this value
    void release(std::uint32_t id);             // one job fewer
    const Value& operator[](std::uint32_t id) const { return values_[id]; }
    std::size_t size() const { return values_.size(); }  // every number in use is below

private:
    std::map<Value, std::uint32_t> ids_;
    std::vector<Value> values_;
    std::vector<std::uint32_t> jobs_;  // jobs of each value; 0: number free
    std::vector<std::uint32_t> unused_;
};
using ShapeTable = Numbered<Shape>;
using DomainTable = Numbered<Domain>;

}  // namespace scheduler_detail

class Scheduler {
public:
    // `inventory` is this instance's R: every rank with its cores and GPUs.
    explicit Scheduler(ResourceSet inventory);

    const ResourceSet& inventory() const { return inventory_; }

    // Could `request` ever fit in the empty inventory? Otherwise says why,
    // with the numbers: `scheduler: 5 nodes requested, the instance has 4`.
    Status feasible(const Request& request) const;

    // --- Queue ---------------------------------------------------------------
    // Queues a job after those already submitted; fails on a known id, an
    // urgency outside 0..31 or a request that can never fit.
    Status add(const PendingJob& job);
    Status remove(JobId id);                    // cancels a pending job
    Status set_urgency(JobId id, int urgency);  // keeps its submit order
    std::vector<JobId> pending() const;         // in queue order
    // Null when not pending; valid until the queue next changes.
    const PendingJob* find_pending(JobId id) const;

    // --- Allocation ----------------------------------------------------------
    // The jobs to start at `now`, in the order they were chosen; they become
    // running. Held jobs and jobs before their begin time are skipped.
    std::vector<Allocation> schedule(double now);
    // The job's R returns to the free pool.
    Status release(JobId id);
    // Re-registers a job that was running before a broker restart; its R must
    // be part of the inventory and free.
    Status restore(JobId id, const ResourceSet& R, double start, double time_limit);
    std::vector<JobId> running() const;  // ascending ids
    // Null when not running; valid until the job is released.
    const Allocation* find_running(JobId id) const;

    // The earliest begin time after `now` of a pending job that is not held:
    // when schedule() should run again though nothing else happens.
    std::optional<double> next_begin_time(double now) const;

    // --- Nodes down or drained ----------------------------------------------
    // The nodes of `ranks` (of the inventory) are down (their brokers were
    // lost) or drained (the owner took them out of service): nothing is
    // placed on them, and what running jobs held there is not free again
    // when they end, until they are up and undrained again. Unknown ranks
    // are ignored.
    void set_down(const IdSet& ranks);
    void set_up(const IdSet& ranks);
    void set_drained(const IdSet& ranks);
    void set_undrained(const IdSet& ranks);
    const IdSet& down() const { return down_; }
    const IdSet& drained() const { return drained_; }
    // The whole of the down nodes, as R.
    ResourceSet down_resources() const;
    // What drained nodes that are up hold back (what no job holds there), as R.
    ResourceSet drained_resources() const;

    // The resources no running job holds, as R (down nodes' are not free).
    ResourceSet free_resources() const;
    // The reservation the last schedule() made, if a job did not fit.
    std::optional<Reservation> reservation() const;

private:
    using Shape = scheduler_detail::Shape;
    using Placement = scheduler_detail::Placement;
    using Pool = scheduler_detail::Pool;

    struct QueueKey {
        int urgency;
        std::uint64_t seq;  // submit order
        bool operator<(const QueueKey& other) const {
            return urgency != other.urgency ? urgency > other.urgency : seq < other.seq;
        }
    };
    struct Queued {
        QueueKey key;
        std::uint32_t shape;  // in shapes_
        PendingJob job;
    };
    struct Running {
        Allocation allocation;
        Placement placement;
        double end;  // +infinity without a time limit
    };
    struct Head {
        JobId id;
        double time;
        Placement placement;
    };

    Head reserve(const Queued& head, double now);
    // The nodes `constraint` allows, or why it is not a constraint of this
    // inventory; none for {}.
    Result<std::optional<scheduler_detail::Domain>> domain_of(const Json& constraint) const;
    // feasible() once the request is a shape and its constraint a domain
    // (null: any node); `constraint` is for the messages.
    Status fits_when_idle(const Shape& shape, const scheduler_detail::Domain* domain,
                          const Json& constraint) const;
    std::optional<Placement> fit(const Pool& pool, const Shape& shape) const;
    void dequeued(const Queued& queued);  // its shape and domain have one job fewer
    void enqueue(Queued queued);
    Allocation start(const Queued& queued, Placement placement, double now);
    ResourceSet to_R(const Placement& placement, std::uint64_t nslots = 0, double start = 0,
                     double end = 0) const;

    ResourceSet inventory_;
    Pool empty_;  // the inventory with nothing running
    Pool pool_;   // what is free now
    // Pending jobs in queue order: a pass walks them all, so they lie in one block.
    std::vector<Queued> queue_;
    std::map<JobId, QueueKey> pending_;
    scheduler_detail::ShapeTable shapes_;
    scheduler_detail::DomainTable domains_;
    std::map<JobId, Running> running_;
    std::uint64_t next_seq_ = 0;
    std::optional<Head> head_;  // the last pass's reservation
    IdSet down_;
    IdSet drained_;
    std::map<std::size_t, Placement> withheld_;  // by node: what unusable nodes had free
    std::optional<std::size_t> node_index(ResourceSet::Rank rank) const;
    bool usable(ResourceSet::Rank rank) const {
        return !down_.contains(rank) && !drained_.contains(rank);
    }
    void withhold(const Placement& placement);
    void take_out(const IdSet& ranks, IdSet& state);
    void put_back(const IdSet& ranks, IdSet& state);
};

}  // namespace gantry::broker
