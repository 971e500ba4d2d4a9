#include "overlay/tree.h"

#include <algorithm>
#include <cstdint>

namespace gantry::overlay {

std::optional<Rank> Tree::parent(Rank rank) const {
    if (rank == 0 || rank >= size)
        return std::nullopt;
    return static_cast<Rank>((rank - 1) / fanout);
}

std::vector<Rank> Tree::children(Rank rank) const {
    std::vector<Rank> ranks;
    // 64 bits: k*r+k may not fit in a rank.
    const std::uint64_t first = std::uint64_t{fanout} * rank + 1;
    const std::uint64_t end = std::min<std::uint64_t>(first + fanout, size);
    for (std::uint64_t child = first; child < end; ++child)
        ranks.push_back(static_cast<Rank>(child));
    return ranks;
}

std::optional<Rank> Tree::child_toward(Rank self, Rank to) const {
    if (to >= size || to <= self)
        return std::nullopt;
    // Up from `to`: ancestors have smaller ranks, so the walk stops once it
    // passes `self`.
    for (Rank rank = to; rank > self;) {
        const Rank up = *parent(rank);
        if (up == self)
            return rank;
        rank = up;
    }
    return std::nullopt;
}

std::vector<Rank> Tree::subtree(Rank rank) const {
    std::vector<Rank> ranks;
    if (rank >= size)
        return ranks;
    // Each level of the subtree is a run of consecutive ranks, and the runs
    // ascend.
    std::uint64_t first = rank;
    std::uint64_t last = rank;
    while (first < size) {
        last = std::min<std::uint64_t>(last, size - 1);
        for (std::uint64_t r = first; r <= last; ++r)
            ranks.push_back(static_cast<Rank>(r));
        first = first * fanout + 1;
        last = last * fanout + fanout;
    }
    return ranks;
}

}  // namespace gantry::overlay
