// The tree the brokers of an instance form: rank 0 at the root, and the
// children of rank r are k*r+1 .. k*r+k (those below the instance's size),
// where k is the fanout. Each broker connects to its parent only, so a
// message between two ranks goes up to their nearest common ancestor and
// down again.
#pragma once

#include <optional>
#include <vector>

#include "overlay/message.h"

namespace gantry::overlay {

// Two children a broker: as flux's default (tbon.fanout = 2). Each broker
// then serves at most two children whatever the instance's size, so the
// work a broker does for the tree (heartbeats, forwarding, the handshakes
// of restarted children) stays small and the same on every node, while the
// depth grows as log2(size): 10 hops for 1024 nodes, which the messages the
// overlay carries (control, not bulk data) afford.
inline constexpr unsigned kDefaultFanout = 2;

struct Tree {
    Rank size = 1;
    unsigned fanout = kDefaultFanout;  // >= 1

    // The rank's parent; none for rank 0.
    std::optional<Rank> parent(Rank rank) const;
    // The rank's children, k*r+1 .. k*r+k below size, ascending.
    std::vector<Rank> children(Rank rank) const;
    // The child of `self` whose subtree holds `to`; none when `to` is not
    // below `self` (or is `self`, or is not in the tree).
    std::optional<Rank> child_toward(Rank self, Rank to) const;
    // `rank` and all its descendants, ascending.
    std::vector<Rank> subtree(Rank rank) const;

    bool operator==(const Tree&) const = default;
};

}  // namespace gantry::overlay
