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

// 32 children a broker, as flux's default topology (tbon.topo kary:32;
// PRRTE's routing tree has a radix of 64): an instance of up to 33 brokers
// is one hop deep, and 1,057 two, so that every message (a job's start, its
// tasks' ends, each barrier) crosses few brokers, each of which parses,
// decrypts and passes it on. A broker then serves up to 32 children's
// heartbeats and handshakes, which its event loop affords; --fanout 2 makes
// the deep binary tree, whose per-broker load is smallest.
inline constexpr unsigned kDefaultFanout = 32;

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
