// Ranking: the order in which one app's placed tasks take their ranks. The
// app's first rank is the first one after the previous app's; the policy
// only orders the app's own tasks (per-app design, section 8).
#include <algorithm>
#include <numeric>

#include "mapper/placement.h"

namespace gantry::placement {
namespace {

// Indices of `placed` grouped by node in node order, placement order within
// a node: a counting sort, linear in the number of tasks.
std::vector<std::size_t> by_node(std::span<const Placed> placed) {
    unsigned nnodes = 0;
    for (const Placed& p : placed)
        nnodes = std::max(nnodes, p.node + 1);
    std::vector<std::size_t> start(nnodes + 1, 0);
    for (const Placed& p : placed)
        ++start[p.node + 1];
    for (unsigned n = 0; n < nnodes; ++n)
        start[n + 1] += start[n];
    std::vector<std::size_t> order(placed.size());
    for (std::size_t i = 0; i < placed.size(); ++i)
        order[start[placed[i].node]++] = i;
    return order;
}

// By node, then by object within each node (placement order within one).
std::vector<std::size_t> by_node_and_object(std::span<const Placed> placed) {
    std::vector<std::size_t> order = by_node(placed);
    for (std::size_t lo = 0; lo < order.size();) {
        std::size_t hi = lo;
        while (hi < order.size() && placed[order[hi]].node == placed[order[lo]].node)
            ++hi;
        std::stable_sort(order.begin() + lo, order.begin() + hi, [&](std::size_t a, std::size_t b) {
            return placed[a].object < placed[b].object;
        });
        lo = hi;
    }
    return order;
}

// Round robin over the groups of `sorted` (runs of equal key): the first
// task of each group, then the second of each, and so on.
template <class Key>
std::vector<std::size_t> round_robin(std::span<const Placed> placed,
                                     const std::vector<std::size_t>& sorted, Key key) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (i == 0 || key(placed[sorted[i]]) != key(placed[sorted[i - 1]]))
            starts.push_back(i);
    std::vector<std::size_t> order;
    order.reserve(sorted.size());
    std::vector<std::size_t> next = starts;
    std::vector<std::size_t> live(starts.size());
    std::iota(live.begin(), live.end(), 0);
    while (!live.empty()) {
        std::vector<std::size_t> still;
        for (const std::size_t g : live) {
            const std::size_t end = g + 1 < starts.size() ? starts[g + 1] : sorted.size();
            order.push_back(sorted[next[g]++]);
            if (next[g] < end)
                still.push_back(g);
        }
        live = std::move(still);
    }
    return order;
}

}  // namespace

std::vector<std::size_t> ranking_order(std::span<const Placed> placed, RankBy by) {
    const auto node = [](const Placed& p) { return p.node; };
    const auto node_and_object = [](const Placed& p) { return std::pair(p.node, p.object); };
    switch (by) {
        case RankBy::kSlot:
            return by_node(placed);
        case RankBy::kNode:
            return round_robin(placed, by_node(placed), node);
        case RankBy::kFill:
            return by_node_and_object(placed);
        case RankBy::kSpan:
            return round_robin(placed, by_node_and_object(placed), node_and_object);
    }
    return by_node(placed);
}

}  // namespace gantry::placement
