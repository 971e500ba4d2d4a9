// Ranking: the order in which one app's placed tasks take their ranks. The
// app's first rank is the first one after the previous app's; the policy
// only orders the app's own tasks (per-app design, section 8).
#include <algorithm>
#include <map>
#include <numeric>

#include "mapper/placement.h"

namespace gantry::placement {
namespace {

// Placement order, grouped by node in node order.
std::vector<std::size_t> by_slot(std::span<const Placed> placed) {
    std::vector<std::size_t> order(placed.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return placed[a].node < placed[b].node; });
    return order;
}

// Round robin: one task from each node in turn, skipping nodes that are done.
std::vector<std::size_t> round_robin(const std::vector<std::vector<std::size_t>>& groups) {
    std::vector<std::size_t> order;
    for (std::size_t round = 0;; ++round) {
        bool any = false;
        for (const auto& group : groups) {
            if (round < group.size()) {
                order.push_back(group[round]);
                any = true;
            }
        }
        if (!any)
            return order;
    }
}

// Tasks grouped by `key` in key order, placement order within a group.
template <class Key>
std::vector<std::vector<std::size_t>> group_by(std::span<const Placed> placed, Key key) {
    std::map<decltype(key(placed[0])), std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < placed.size(); ++i)
        groups[key(placed[i])].push_back(i);
    std::vector<std::vector<std::size_t>> out;
    for (auto& [k, group] : groups)
        out.push_back(std::move(group));
    return out;
}

}  // namespace

std::vector<std::size_t> ranking_order(std::span<const Placed> placed, RankBy by) {
    if (placed.empty())
        return {};
    const auto node_and_object = [](const Placed& p) { return std::pair(p.node, p.object); };
    switch (by) {
        case RankBy::kSlot:
            return by_slot(placed);
        case RankBy::kNode:
            return round_robin(group_by(placed, [](const Placed& p) { return p.node; }));
        case RankBy::kFill: {
            std::vector<std::size_t> order;
            for (const auto& group : group_by(placed, node_and_object))
                order.insert(order.end(), group.begin(), group.end());
            return order;
        }
        case RankBy::kSpan:
            return round_robin(group_by(placed, node_and_object));
    }
    return by_slot(placed);
}

}  // namespace gantry::placement
