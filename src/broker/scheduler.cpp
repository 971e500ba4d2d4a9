// The scheduler: requests as shapes, first fit on a pool of free resources,
// the head's reservation, and the queue. docs/scheduling.md says why.
#include "broker/scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

namespace gantry::broker {

using scheduler_detail::Domain;
using scheduler_detail::Node;
using scheduler_detail::Piece;
using scheduler_detail::Placement;
using scheduler_detail::Pool;
using scheduler_detail::Shape;

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

Error error(std::string message) {
    return Error("scheduler", std::move(message));
}

std::string job_str(JobId id) {
    return "job " + std::to_string(id);
}

// `1 core`, `4 cores`.
std::string counted(std::uint64_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// `8 cores` or `8 cores and 2 gpus`.
std::string cores_and_gpus(std::uint64_t cores, std::uint64_t gpus) {
    std::string text = counted(cores, "core");
    if (gpus > 0)
        text += " and " + counted(gpus, "gpu");
    return text;
}

std::string seconds_str(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return text;
}

Status check_time_limit(double seconds) {
    if (!(seconds >= 0) || std::isinf(seconds))
        return error("time limit " + seconds_str(seconds) + " is not a number of seconds >= 0");
    return {};
}

// How many slots of `shape` the free resources of `node` hold.
std::uint64_t slots_on(const Node& node, const Shape& shape) {
    std::uint64_t slots = node.cores.count() / shape.cores;
    if (shape.gpus > 0)
        slots = std::min(slots, node.gpus.count() / shape.gpus);
    return slots;
}

bool whole(const Node& node) {
    return node.cores.count() == node.ncores && node.gpus.count() == node.ngpus;
}

// The `count` lowest ids of `set`, which holds at least that many.
IdSet lowest(const IdSet& set, std::uint64_t count) {
    if (count == 0)
        return {};
    return set & IdSet::range(*set.first(), *set.nth(count - 1));
}

std::uint64_t slots_needed(const Shape& shape) {
    return shape.nodes > 0 ? std::uint64_t{shape.nodes} * shape.slots : shape.slots;
}

// What the pool's totals already rule out.
bool too_few(const Pool& pool, const Shape& shape) {
    return slots_needed(shape) * shape.cores > pool.free_cores ||
           slots_needed(shape) * shape.gpus > pool.free_gpus ||
           (shape.exclusive && shape.nodes > pool.whole_nodes);
}

// First fit of `shape` in `pool`, in rank order, on the nodes of `domain`
// (all when null): without a node count, as many slots on each node as it
// holds (packing); with one, the first `shape.nodes` nodes that hold
// `shape.slots` slots each (whole when exclusive).
std::optional<Placement> first_fit(const Pool& pool, const Shape& shape, const Domain* domain) {
    if (too_few(pool, shape))
        return std::nullopt;
    const auto outside = [domain](std::size_t i) { return domain && !(*domain)[i]; };
    Placement placement;
    if (shape.nodes == 0) {
        std::uint64_t remaining = shape.slots;
        for (std::size_t i = pool.first_with_cores; i < pool.nodes.size() && remaining > 0; ++i) {
            if (outside(i))
                continue;
            const Node& node = pool.nodes[i];
            const std::uint64_t slots = std::min(slots_on(node, shape), remaining);
            if (slots == 0)
                continue;
            placement.push_back({i, lowest(node.cores, slots * shape.cores),
                                 lowest(node.gpus, slots * shape.gpus)});
            remaining -= slots;
        }
        if (remaining > 0)
            return std::nullopt;
        return placement;
    }
    const std::uint64_t cores = std::uint64_t{shape.slots} * shape.cores;
    const std::uint64_t gpus = std::uint64_t{shape.slots} * shape.gpus;
    for (std::size_t i = pool.first_with_cores;
         i < pool.nodes.size() && placement.size() < shape.nodes; ++i) {
        if (outside(i))
            continue;
        const Node& node = pool.nodes[i];
        if (shape.exclusive) {
            if (whole(node) && node.ncores >= cores && node.ngpus >= gpus)
                placement.push_back({i, node.cores, node.gpus});
        } else if (slots_on(node, shape) >= shape.slots) {
            placement.push_back({i, lowest(node.cores, cores), lowest(node.gpus, gpus)});
        }
    }
    if (placement.size() < shape.nodes)
        return std::nullopt;
    return placement;
}

// Where the job of queue key `key` is, or would go, in `queue` (in key order).
template <class Queue, class Key>
auto position(Queue& queue, const Key& key) {
    return std::lower_bound(queue.begin(), queue.end(), key,
                            [](const auto& queued, const Key& k) { return queued.key < k; });
}

}  // namespace

namespace scheduler_detail {

void Pool::take(const Placement& placement) {
    for (const Piece& piece : placement) {
        Node& node = nodes[piece.node];
        const std::uint64_t cores = node.cores.count();
        const std::uint64_t gpus = node.gpus.count();
        whole_nodes -= whole(node);
        node.cores -= piece.cores;
        node.gpus -= piece.gpus;
        whole_nodes += whole(node);
        free_cores -= cores - node.cores.count();
        free_gpus -= gpus - node.gpus.count();
    }
    while (first_with_cores < nodes.size() && nodes[first_with_cores].cores.empty())
        ++first_with_cores;
}

void Pool::give(const Placement& placement) {
    for (const Piece& piece : placement) {
        Node& node = nodes[piece.node];
        const std::uint64_t cores = node.cores.count();
        const std::uint64_t gpus = node.gpus.count();
        whole_nodes -= whole(node);
        node.cores |= piece.cores;
        node.gpus |= piece.gpus;
        whole_nodes += whole(node);
        free_cores += node.cores.count() - cores;
        free_gpus += node.gpus.count() - gpus;
        if (!node.cores.empty())
            first_with_cores = std::min(first_with_cores, piece.node);
    }
}

template <class Value>
std::uint32_t Numbered<Value>::acquire(const Value& value) {
    auto [it, added] = ids_.emplace(value, std::uint32_t(values_.size()));
    if (added) {
        if (!unused_.empty()) {
            it->second = unused_.back();
            unused_.pop_back();
            values_[it->second] = value;
        } else {
            values_.push_back(value);
            jobs_.push_back(0);
        }
    }
    ++jobs_[it->second];
    return it->second;
}

template <class Value>
void Numbered<Value>::release(std::uint32_t id) {
    if (--jobs_[id] == 0) {
        ids_.erase(values_[id]);
        unused_.push_back(id);
    }
}

template class Numbered<Shape>;
template class Numbered<Domain>;

}  // namespace scheduler_detail

namespace {

// A request as a shape, or why it is not a request.
Result<Shape> to_shape(const Request& request) {
    if (request.cores_per_task == 0)
        return error("a task needs at least one core (-c 0)");
    if (auto status = check_time_limit(request.time_limit); !status)
        return status.error();
    Shape shape;
    shape.cores = request.cores_per_task;
    shape.gpus = request.gpus_per_task;
    if (request.nodes == 0) {
        if (request.exclusive)
            return error("--exclusive needs a node count (-N)");
        shape.slots = request.ntasks > 0 ? request.ntasks : 1;
        return shape;
    }
    const std::uint32_t ntasks = request.ntasks > 0 ? request.ntasks : request.nodes;
    if (request.nodes > ntasks)
        return error(counted(request.nodes, "node") + " requested for " + counted(ntasks, "task") +
                     ", a node needs at least one task");
    shape.nodes = request.nodes;
    shape.slots = (ntasks + request.nodes - 1) / request.nodes;
    shape.exclusive = request.exclusive || request.ntasks == 0;
    return shape;
}

}  // namespace

Scheduler::Scheduler(ResourceSet inventory) : inventory_(std::move(inventory)) {
    for (const auto& [rank, target] : inventory_.targets()) {
        empty_.nodes.push_back(
            {rank, target.cores.count(), target.gpus.count(), target.cores, target.gpus});
        empty_.free_cores += target.cores.count();
        empty_.free_gpus += target.gpus.count();
    }
    empty_.whole_nodes = empty_.nodes.size();
    while (empty_.first_with_cores < empty_.nodes.size() &&
           empty_.nodes[empty_.first_with_cores].cores.empty())
        ++empty_.first_with_cores;
    pool_ = empty_;
}

Result<std::optional<Domain>> Scheduler::domain_of(const Json& constraint) const {
    if (constraint.is_object() && constraint.empty())
        return std::optional<Domain>();
    auto ranks = inventory_.constraint_ranks(constraint, "constraint");
    if (!ranks)
        return error(ranks.error().message());
    Domain domain(empty_.nodes.size(), false);
    for (const IdSet::Id rank : *ranks)
        if (const auto node = node_index(rank))
            domain[*node] = true;
    return std::optional<Domain>(std::move(domain));
}

std::optional<Placement> Scheduler::fit(const Pool& pool, const Shape& shape) const {
    return first_fit(pool, shape,
                     shape.domain == Shape::kAnyNode ? nullptr : &domains_[shape.domain]);
}

Status Scheduler::feasible(const Request& request) const {
    auto shape = to_shape(request);
    if (!shape)
        return shape.error();
    auto domain = domain_of(request.constraint);
    if (!domain)
        return domain.error();
    return fits_when_idle(*shape, *domain ? &**domain : nullptr, request.constraint);
}

Status Scheduler::fits_when_idle(const Shape& shape, const Domain* domain,
                                 const Json& constraint) const {
    // With a constraint, every figure is of the nodes it allows.
    std::vector<Node> allowed;
    if (domain)
        for (std::size_t i = 0; i < empty_.nodes.size(); ++i)
            if ((*domain)[i])
                allowed.push_back(empty_.nodes[i]);
    const std::vector<Node>& nodes = domain ? allowed : empty_.nodes;
    // The messages say what a constraint allows where they would say what
    // the instance has.
    const bool constrained = domain != nullptr;
    if (constrained && nodes.empty())
        return error("no node satisfies the job's constraint " + constraint.dump());
    const std::string has = constrained ? "the job's constraint allows " : "the instance has ";
    const std::string node_of = constrained ? "node the job's constraint allows" : "node";
    if (shape.nodes > nodes.size())
        return error(counted(shape.nodes, "node") + " requested, " + has +
                     std::to_string(nodes.size()));
    std::uint64_t largest_cores = 0;
    std::uint64_t largest_gpus = 0;
    bool holds_a_task = false;
    for (const Node& node : nodes) {
        largest_cores = std::max(largest_cores, node.ncores);
        largest_gpus = std::max(largest_gpus, node.ngpus);
        holds_a_task = holds_a_task || slots_on(node, shape) > 0;
    }
    if (shape.cores > largest_cores)
        return error("a task needs " + counted(shape.cores, "core") + ", the largest " + node_of +
                     " has " + std::to_string(largest_cores));
    if (shape.gpus > largest_gpus)
        return error("a task needs " + counted(shape.gpus, "gpu") + ", the largest " + node_of +
                     " has " + std::to_string(largest_gpus));
    if (!holds_a_task)
        return error("a task needs " + cores_and_gpus(shape.cores, shape.gpus) + ", no " + node_of +
                     " has both");
    if (first_fit(empty_, shape, domain))
        return {};
    if (shape.nodes > 0) {
        const std::uint64_t cores = std::uint64_t{shape.slots} * shape.cores;
        const std::uint64_t gpus = std::uint64_t{shape.slots} * shape.gpus;
        const auto such = std::count_if(nodes.begin(), nodes.end(), [&](const Node& node) {
            return node.ncores >= cores && node.ngpus >= gpus;
        });
        return error(counted(shape.nodes, "node") + " of " + cores_and_gpus(cores, gpus) +
                     " requested (" + counted(shape.slots, "task") + " a node), " + has +
                     std::to_string(such) + " such " + (such == 1 ? "node" : "nodes"));
    }
    std::uint64_t capacity = 0;
    for (const Node& node : nodes)
        capacity += slots_on(node, shape);
    return error(
        counted(shape.slots, "task") + " of " + cores_and_gpus(shape.cores, shape.gpus) +
        " requested, " +
        (constrained ? "the nodes the job's constraint allows hold " : "the instance holds ") +
        std::to_string(capacity));
}

Status Scheduler::add(const PendingJob& job) {
    if (pending_.count(job.id))
        return error(job_str(job.id) + " is already pending");
    if (running_.count(job.id))
        return error(job_str(job.id) + " is already running");
    if (job.urgency < Jobspec::kUrgencyHold || job.urgency > Jobspec::kUrgencyExpedite)
        return error("urgency " + std::to_string(job.urgency) + " is not in 0-31");
    auto shape = to_shape(job.request);
    if (!shape)
        return shape.error();
    auto domain = domain_of(job.request.constraint);
    if (!domain)
        return domain.error();
    if (auto fits = fits_when_idle(*shape, *domain ? &**domain : nullptr, job.request.constraint);
        !fits)
        return fits.error();
    if (*domain)
        shape->domain = domains_.acquire(**domain);
    const QueueKey key{job.urgency, next_seq_++};
    enqueue(Queued{key, shapes_.acquire(*shape), job});
    pending_.emplace(job.id, key);
    return {};
}

void Scheduler::dequeued(const Queued& queued) {
    if (const std::uint32_t domain = shapes_[queued.shape].domain; domain != Shape::kAnyNode)
        domains_.release(domain);
    shapes_.release(queued.shape);
}

void Scheduler::enqueue(Queued queued) {
    queue_.insert(position(queue_, queued.key), std::move(queued));
}

Status Scheduler::remove(JobId id) {
    auto it = pending_.find(id);
    if (it == pending_.end())
        return error(job_str(id) + " is not pending");
    auto queued = position(queue_, it->second);
    dequeued(*queued);
    queue_.erase(queued);
    pending_.erase(it);
    return {};
}

Status Scheduler::set_urgency(JobId id, int urgency) {
    auto it = pending_.find(id);
    if (it == pending_.end())
        return error(job_str(id) + " is not pending");
    if (urgency < Jobspec::kUrgencyHold || urgency > Jobspec::kUrgencyExpedite)
        return error("urgency " + std::to_string(urgency) + " is not in 0-31");
    auto queued = position(queue_, it->second);
    Queued moved = std::move(*queued);
    queue_.erase(queued);
    moved.key.urgency = moved.job.urgency = urgency;
    it->second = moved.key;
    enqueue(std::move(moved));
    return {};
}

std::vector<JobId> Scheduler::pending() const {
    std::vector<JobId> ids;
    ids.reserve(queue_.size());
    for (const Queued& queued : queue_)
        ids.push_back(queued.job.id);
    return ids;
}

const PendingJob* Scheduler::find_pending(JobId id) const {
    auto it = pending_.find(id);
    if (it == pending_.end())
        return nullptr;
    return &position(queue_, it->second)->job;
}

std::optional<double> Scheduler::next_begin_time(double now) const {
    std::optional<double> next;
    for (const Queued& queued : queue_)
        if (queued.job.urgency != Jobspec::kUrgencyHold && queued.job.begin_time > now &&
            (!next || queued.job.begin_time < *next))
            next = queued.job.begin_time;
    return next;
}

std::vector<JobId> Scheduler::running() const {
    std::vector<JobId> ids;
    ids.reserve(running_.size());
    for (const auto& [id, job] : running_)
        ids.push_back(id);
    return ids;
}

const Allocation* Scheduler::find_running(JobId id) const {
    auto it = running_.find(id);
    return it == running_.end() ? nullptr : &it->second.allocation;
}

// The earliest time `head` fits, running jobs ending at their end times,
// and where it fits then; never, if only unlimited jobs stand in its way, and
// then its fit in the whole inventory.
//
// Whether it fits only grows as jobs end, so the end times are searched by
// galloping then halving: O(log n) fits rather than one per end time. The
// ended jobs are given to pool_ and taken back, which leaves it as it was.
Scheduler::Head Scheduler::reserve(const Queued& head, double now) {
    std::vector<const Running*> ending;
    for (const auto& [id, job] : running_)
        if (job.end != kNever)
            ending.push_back(&job);
    std::stable_sort(ending.begin(), ending.end(),
                     [](const Running* a, const Running* b) { return a->end < b->end; });
    // groups[k]: how many jobs have ended once the k+1-th distinct end time has passed.
    std::vector<std::size_t> groups;
    for (std::size_t i = 0; i < ending.size(); ++i)
        if (i + 1 == ending.size() || ending[i + 1]->end != ending[i]->end)
            groups.push_back(i + 1);
    const Shape& shape = shapes_[head.shape];
    std::size_t ended = 0;                      // jobs of `ending` given to pool_
    auto fits_after = [&](std::size_t count) {  // after `count` end times
        const std::size_t target = count == 0 ? 0 : groups[count - 1];
        for (; ended < target; ++ended)
            pool_.give(ending[ended]->placement);
        for (; ended > target; --ended)
            pool_.take(ending[ended - 1]->placement);
        return fit(pool_, shape);
    };
    // It does not fit now (count 0); find the least count that fits.
    std::size_t misses = 0;
    std::size_t fits = 1;
    while (fits <= groups.size() && !fits_after(fits)) {
        misses = fits;
        fits *= 2;
    }
    if (fits > groups.size())
        fits = misses < groups.size() && fits_after(groups.size()) ? groups.size() : 0;
    std::optional<Placement> placement;
    if (fits > 0) {
        while (fits - misses > 1) {
            const std::size_t middle = misses + (fits - misses) / 2;
            (fits_after(middle) ? fits : misses) = middle;
        }
        placement = fits_after(fits);
    }
    fits_after(0);
    if (placement)
        return {head.job.id, std::max(ending[groups[fits - 1] - 1]->end, now),
                std::move(*placement)};
    // Never, as things stand: the head keeps its fit in the machine without
    // the nodes that are down or drained. When it needs those, it holds
    // nothing, so that they do not idle the rest until they come back, if
    // ever; it is placed first once they do.
    Pool in_service = empty_;
    for (std::size_t node = 0; node < in_service.nodes.size(); ++node)
        if (!usable(in_service.nodes[node].rank))
            in_service.take({{node, in_service.nodes[node].cores, in_service.nodes[node].gpus}});
    placement = fit(in_service, shape);
    return {head.job.id, kNever, placement ? std::move(*placement) : Placement{}};
}

std::vector<Allocation> Scheduler::schedule(double now) {
    std::vector<Allocation> started;
    head_.reset();
    Pool outside;  // free now and not reserved for the head
    // Per shape: it did not fit in pool_ (kMissed) or in `outside` (kMissedOutside).
    // Both pools only shrink during a pass, so a shape that missed once misses again.
    constexpr std::uint8_t kMissed = 1;
    constexpr std::uint8_t kMissedOutside = 2;
    std::vector<std::uint8_t> missed(shapes_.size(), 0);
    std::vector<bool> gone(queue_.size(), false);  // started in this pass
    // Every slot has a core: with none free, only the head's reservation is left to find.
    for (std::size_t i = 0; i < queue_.size() && !(head_ && pool_.free_cores == 0); ++i) {
        const Queued& queued = queue_[i];
        std::uint8_t& shape_missed = missed[queued.shape];
        // A shape that missed pool_ did so at or after the head, so there is a head.
        if (queued.job.urgency == Jobspec::kUrgencyHold || queued.job.begin_time > now ||
            (shape_missed & kMissed))
            continue;
        const Shape& shape = shapes_[queued.shape];
        std::optional<Placement> placement;
        if (!head_) {
            placement = fit(pool_, shape);
            if (!placement) {
                shape_missed |= kMissed;
                head_ = reserve(queued, now);
                outside = pool_;
                outside.take(head_->placement);
                continue;
            }
        } else {
            // Backfill: ends by the reservation, or stays off the reserved resources.
            const double limit = queued.job.request.time_limit;
            if (std::isfinite(head_->time) && limit > 0 && now + limit <= head_->time) {
                placement = fit(pool_, shape);
                if (!placement)
                    shape_missed |= kMissed;
            }
            if (!placement && !(shape_missed & kMissedOutside)) {
                placement = fit(outside, shape);
                if (!placement)
                    shape_missed |= kMissedOutside;
            }
            if (!placement)
                continue;
            outside.take(*placement);
        }
        started.push_back(start(queued, std::move(*placement), now));
        gone[i] = true;
    }
    if (!started.empty()) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < queue_.size(); ++i) {
            if (!gone[i]) {
                if (kept != i)
                    queue_[kept] = std::move(queue_[i]);
                ++kept;
            } else {
                dequeued(queue_[i]);
                pending_.erase(queue_[i].job.id);
            }
        }
        queue_.erase(queue_.begin() + kept, queue_.end());
    }
    return started;
}

std::optional<Reservation> Scheduler::reservation() const {
    if (!head_)
        return std::nullopt;
    return Reservation{head_->id, head_->time, to_R(head_->placement)};
}

Allocation Scheduler::start(const Queued& queued, Placement placement, double now) {
    const double limit = queued.job.request.time_limit;
    pool_.take(placement);
    const double end = limit > 0 ? now + limit : 0;
    Allocation allocation{queued.job.id,
                          to_R(placement, slots_needed(shapes_[queued.shape]), now, end), now, end};
    Running job{allocation, std::move(placement), limit > 0 ? allocation.end : kNever};
    running_.emplace(queued.job.id, std::move(job));
    return allocation;
}

Status Scheduler::release(JobId id) {
    auto it = running_.find(id);
    if (it == running_.end())
        return error(job_str(id) + " is not running");
    pool_.give(it->second.placement);
    withhold(it->second.placement);
    running_.erase(it);
    return {};
}

std::optional<std::size_t> Scheduler::node_index(ResourceSet::Rank rank) const {
    const auto found = std::lower_bound(
        empty_.nodes.begin(), empty_.nodes.end(), rank,
        [](const scheduler_detail::Node& node, ResourceSet::Rank r) { return node.rank < r; });
    if (found == empty_.nodes.end() || found->rank != rank)
        return std::nullopt;
    return static_cast<std::size_t>(found - empty_.nodes.begin());
}

// What `placement` gave back on unusable nodes is taken out of the pool again.
void Scheduler::withhold(const Placement& placement) {
    Placement taken;
    for (const scheduler_detail::Piece& piece : placement)
        if (!usable(empty_.nodes[piece.node].rank))
            taken.push_back(piece);
    if (taken.empty())
        return;
    pool_.take(taken);
    for (const scheduler_detail::Piece& piece : taken)
        withheld_[piece.node].push_back(piece);
}

// `ranks` join `state` (down_ or drained_): what is free on those that
// were usable is withheld.
void Scheduler::take_out(const IdSet& ranks, IdSet& state) {
    for (const IdSet::Id rank : ranks) {
        const auto node = node_index(rank);
        if (!node || state.contains(rank))
            continue;
        const bool was_usable = usable(rank);
        state.insert(rank);
        if (!was_usable)
            continue;
        const scheduler_detail::Node& free = pool_.nodes[*node];
        withhold({{*node, free.cores, free.gpus}});
    }
}

// `ranks` leave `state`: those usable again get back what was withheld.
void Scheduler::put_back(const IdSet& ranks, IdSet& state) {
    for (const IdSet::Id rank : ranks) {
        const auto node = node_index(rank);
        if (!node || !state.contains(rank))
            continue;
        state -= IdSet{rank};
        if (!usable(rank))
            continue;
        if (const auto held = withheld_.find(*node); held != withheld_.end()) {
            pool_.give(held->second);
            withheld_.erase(held);
        }
    }
}

void Scheduler::set_down(const IdSet& ranks) {
    take_out(ranks, down_);
}

void Scheduler::set_up(const IdSet& ranks) {
    put_back(ranks, down_);
}

void Scheduler::set_drained(const IdSet& ranks) {
    take_out(ranks, drained_);
}

void Scheduler::set_undrained(const IdSet& ranks) {
    put_back(ranks, drained_);
}

ResourceSet Scheduler::down_resources() const {
    ResourceSet down;
    for (const IdSet::Id rank : down_)
        if (const Target* target = inventory_.find(rank))
            (void)down.insert(rank, *target);
    return down;
}

ResourceSet Scheduler::drained_resources() const {
    // One piece per node: what several jobs gave back there, together.
    Placement held;
    for (const IdSet::Id rank : drained_ - down_) {
        const auto node = node_index(rank);
        const auto found = node ? withheld_.find(*node) : withheld_.end();
        if (found == withheld_.end())
            continue;
        scheduler_detail::Piece whole{*node, {}, {}};
        for (const scheduler_detail::Piece& piece : found->second) {
            whole.cores |= piece.cores;
            whole.gpus |= piece.gpus;
        }
        held.push_back(std::move(whole));
    }
    return to_R(held);
}

Status Scheduler::restore(JobId id, const ResourceSet& R, double start, double time_limit) {
    if (pending_.count(id))
        return error("restore: " + job_str(id) + " is already pending");
    if (running_.count(id))
        return error("restore: " + job_str(id) + " is already running");
    if (auto status = check_time_limit(time_limit); !status)
        return error("restore: " + job_str(id) + ": " + status.error().message());
    Placement placement;
    for (const auto& [rank, target] : R.targets()) {
        auto node = std::lower_bound(empty_.nodes.begin(), empty_.nodes.end(), rank,
                                     [](const Node& n, ResourceSet::Rank r) { return n.rank < r; });
        const std::string where = "restore: " + job_str(id) + ": rank " + std::to_string(rank);
        if (node == empty_.nodes.end() || node->rank != rank)
            return error(where + " is not in the inventory");
        const std::size_t index = node - empty_.nodes.begin();
        const std::string& host = inventory_.find(rank)->hostname;
        if (!target.hostname.empty() && !host.empty() && target.hostname != host)
            return error(where + " is host " + target.hostname + ", the inventory's is " + host);
        const Target absent{"", target.cores - node->cores, target.gpus - node->gpus};
        if (!absent.empty())
            return error(where + " has no " + absent.children_str() + " in the inventory");
        const Node& free = pool_.nodes[index];
        const Target busy{"", target.cores - free.cores, target.gpus - free.gpus};
        if (!busy.empty())
            return error(where + ": " + busy.children_str() + " already allocated");
        if (!target.empty())
            placement.push_back({index, target.cores, target.gpus});
    }
    pool_.take(placement);
    const double end = time_limit > 0 ? start + time_limit : 0;
    running_.emplace(id, Running{Allocation{id, R, start, end}, std::move(placement),
                                 time_limit > 0 ? end : kNever});
    return {};
}

ResourceSet Scheduler::free_resources() const {
    Placement free;
    for (std::size_t i = 0; i < pool_.nodes.size(); ++i)
        if (!pool_.nodes[i].cores.empty() || !pool_.nodes[i].gpus.empty())
            free.push_back({i, pool_.nodes[i].cores, pool_.nodes[i].gpus});
    return to_R(free);
}

// The inventory's ranks of `placement` with its cores and GPUs, hosts and
// properties; an allocation's also with its slots and time window. Written as
// an RFC 20 document and read back, since R has no other way to take nslots.
ResourceSet Scheduler::to_R(const Placement& placement, std::uint64_t nslots, double start,
                            double end) const {
    // Ranks with the same cores and GPUs share an R_lite entry (looked for
    // among the last few entries: placements run in rank order).
    struct Entry {
        IdSet ranks;
        const Piece* children;
    };
    std::vector<Entry> entries;
    std::vector<std::string> hosts;
    IdSet ranks;
    for (const Piece& piece : placement) {
        const ResourceSet::Rank rank = empty_.nodes[piece.node].rank;
        const auto last = entries.rbegin() + std::min<std::size_t>(entries.size(), 4);
        auto same = std::find_if(entries.rbegin(), last, [&](const Entry& entry) {
            return entry.children->cores == piece.cores && entry.children->gpus == piece.gpus;
        });
        if (same != last)
            same->ranks.insert(rank);
        else
            entries.push_back({IdSet{rank}, &piece});
        hosts.push_back(inventory_.find(rank)->hostname);
        ranks.insert(rank);
    }
    Json R_lite = Json::array();
    for (const Entry& entry : entries) {
        Json children = {{"core", entry.children->cores.encode()}};
        if (!entry.children->gpus.empty())
            children["gpu"] = entry.children->gpus.encode();
        R_lite.push_back({{"rank", entry.ranks.encode()}, {"children", std::move(children)}});
    }
    Json execution = {{"R_lite", std::move(R_lite)}};
    Json properties = Json::object();
    for (const auto& [name, members] : inventory_.properties())
        if (IdSet kept = members & ranks; !kept.empty())
            properties[name] = kept.encode();
    if (!properties.empty())
        execution["properties"] = std::move(properties);
    if (nslots > 0) {
        execution["nslots"] = nslots;
        execution["starttime"] = start;
        execution["expiration"] = end;
    }
    // The hosts as one hostlist when every rank has one and the names are
    // RFC 29 host names; otherwise R names no hosts.
    const bool named = !hosts.empty() && std::none_of(hosts.begin(), hosts.end(),
                                                      [](const auto& h) { return h.empty(); });
    if (named)
        execution["nodelist"] = {Hostlist::from_hosts(hosts).encode()};
    auto R = ResourceSet::from_json({{"version", 1}, {"execution", execution}});
    if (!R && named) {
        execution.erase("nodelist");
        R = ResourceSet::from_json({{"version", 1}, {"execution", std::move(execution)}});
    }
    return std::move(R).value();
}

}  // namespace gantry::broker
