// Ranking: the order in which one app's placed tasks take their ranks. The
// app's first rank is the first one after the previous app's; the policy
// only orders the app's own tasks (per-app design, section 8).
#include <algorithm>
#include <numeric>

#include "mapper/placement.h"

namespace gantry::placement {
namespace {

// Indices of `placed`, stably sorted by `key`: the groups come out in key
// order, each in placement order. Sorting (rather than a map of groups)
// keeps a million one-task groups cheap.
template <class Key>
std::vector<std::size_t> sorted_by(std::span<const Placed> placed, Key key) {
    std::vector<std::size_t> order(placed.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(placed[a]) < key(placed[b]); });
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
            return sorted_by(placed, node);
        case RankBy::kNode:
            return round_robin(placed, sorted_by(placed, node), node);
        case RankBy::kFill:
            return sorted_by(placed, node_and_object);
        case RankBy::kSpan:
            return round_robin(placed, sorted_by(placed, node_and_object), node_and_object);
    }
    return sorted_by(placed, node);
}

}  // namespace gantry::placement
