// The brokers' tree: parent, children, the child toward a rank and
// subtrees, as tables for trees of several sizes and fanouts.
#include "overlay/tree.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace gantry {
namespace {

using overlay::Rank;
using overlay::Tree;

constexpr int kNone = -1;

struct Node {
    int parent;  // kNone for the root
    std::vector<Rank> children;
    std::vector<Rank> subtree;
    // child_toward(rank, to) for each `to` from 0 to size - 1.
    std::vector<int> toward;
};

struct Case {
    Tree tree;
    std::vector<Node> nodes;  // by rank
};

std::optional<Rank> rank_or_none(int rank) {
    return rank == kNone ? std::nullopt : std::optional<Rank>(static_cast<Rank>(rank));
}

const Case kCases[] = {
    {{1, 2}, {{kNone, {}, {0}, {kNone}}}},
    {{7, 2},
     {
         {kNone, {1, 2}, {0, 1, 2, 3, 4, 5, 6}, {kNone, 1, 2, 1, 1, 2, 2}},
         {0, {3, 4}, {1, 3, 4}, {kNone, kNone, kNone, 3, 4, kNone, kNone}},
         {0, {5, 6}, {2, 5, 6}, {kNone, kNone, kNone, kNone, kNone, 5, 6}},
         {1, {}, {3}, {kNone, kNone, kNone, kNone, kNone, kNone, kNone}},
         {1, {}, {4}, {kNone, kNone, kNone, kNone, kNone, kNone, kNone}},
         {2, {}, {5}, {kNone, kNone, kNone, kNone, kNone, kNone, kNone}},
         {2, {}, {6}, {kNone, kNone, kNone, kNone, kNone, kNone, kNone}},
     }},
    {{13, 3},
     {
         {kNone,
          {1, 2, 3},
          {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
          {kNone, 1, 2, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3}},
         {0,
          {4, 5, 6},
          {1, 4, 5, 6},
          {kNone, kNone, kNone, kNone, 4, 5, 6, kNone, kNone, kNone, kNone, kNone, kNone}},
         {0,
          {7, 8, 9},
          {2, 7, 8, 9},
          {kNone, kNone, kNone, kNone, kNone, kNone, kNone, 7, 8, 9, kNone, kNone, kNone}},
         {0,
          {10, 11, 12},
          {3, 10, 11, 12},
          {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, 10, 11, 12}},
         {1, {}, {4}, std::vector<int>(13, kNone)},
         {1, {}, {5}, std::vector<int>(13, kNone)},
         {1, {}, {6}, std::vector<int>(13, kNone)},
         {2, {}, {7}, std::vector<int>(13, kNone)},
         {2, {}, {8}, std::vector<int>(13, kNone)},
         {2, {}, {9}, std::vector<int>(13, kNone)},
         {3, {}, {10}, std::vector<int>(13, kNone)},
         {3, {}, {11}, std::vector<int>(13, kNone)},
         {3, {}, {12}, std::vector<int>(13, kNone)},
     }},
    {{5, 1},
     {
         {kNone, {1}, {0, 1, 2, 3, 4}, {kNone, 1, 1, 1, 1}},
         {0, {2}, {1, 2, 3, 4}, {kNone, kNone, 2, 2, 2}},
         {1, {3}, {2, 3, 4}, {kNone, kNone, kNone, 3, 3}},
         {2, {4}, {3, 4}, {kNone, kNone, kNone, kNone, 4}},
         {3, {}, {4}, {kNone, kNone, kNone, kNone, kNone}},
     }},
};

TEST(Tree, Tables) {
    for (const Case& c : kCases) {
        ASSERT_EQ(c.nodes.size(), c.tree.size);
        for (Rank rank = 0; rank < c.tree.size; ++rank) {
            const Node& node = c.nodes[rank];
            SCOPED_TRACE("size " + std::to_string(c.tree.size) + " fanout " +
                         std::to_string(c.tree.fanout) + " rank " + std::to_string(rank));
            EXPECT_EQ(c.tree.parent(rank), rank_or_none(node.parent));
            EXPECT_EQ(c.tree.children(rank), node.children);
            EXPECT_EQ(c.tree.subtree(rank), node.subtree);
            ASSERT_EQ(node.toward.size(), c.tree.size);
            for (Rank to = 0; to < c.tree.size; ++to)
                EXPECT_EQ(c.tree.child_toward(rank, to), rank_or_none(node.toward[to]))
                    << "toward " << to;
        }
    }
}

TEST(Tree, RanksOutsideTheTree) {
    const Tree tree{7, 2};
    EXPECT_EQ(tree.parent(7), std::nullopt);
    EXPECT_EQ(tree.children(7), std::vector<Rank>{});
    EXPECT_EQ(tree.children(3), std::vector<Rank>{});
    EXPECT_EQ(tree.subtree(7), std::vector<Rank>{});
    EXPECT_EQ(tree.child_toward(0, 7), std::nullopt);
    EXPECT_EQ(tree.child_toward(0, 4000000000u), std::nullopt);
}

TEST(Tree, DefaultsAndLargeRanks) {
    EXPECT_EQ(Tree{}, (Tree{1, overlay::kDefaultFanout}));
    EXPECT_EQ(overlay::kDefaultFanout, 32u);
    // 40 brokers by default: rank 0 has 32 children, rank 1 the other 7.
    const Tree forty{40};
    EXPECT_EQ(forty.children(0).size(), 32u);
    EXPECT_EQ(forty.children(0).back(), 32u);
    EXPECT_EQ(forty.children(1), (std::vector<Rank>{33, 34, 35, 36, 37, 38, 39}));
    EXPECT_EQ(forty.children(2), std::vector<Rank>{});
    EXPECT_EQ(forty.parent(39), 1u);
    EXPECT_EQ(forty.child_toward(0, 39), 1u);
    // k*r+k beyond 32 bits: no wrap around.
    const Tree wide{4294967295u, 65536};
    EXPECT_EQ(wide.children(65536), (std::vector<Rank>{}));
    EXPECT_EQ(wide.children(65535).size(), 65534u);
    EXPECT_EQ(wide.children(65535).front(), 4294901761u);
    EXPECT_EQ(wide.children(65535).back(), 4294967294u);
    EXPECT_EQ(wide.parent(4294967294u), 65535u);
    EXPECT_EQ(wide.child_toward(0, 4294967294u), 65535u);
    const Tree chain{100000, 1};
    EXPECT_EQ(chain.child_toward(0, 99999), 1u);
    EXPECT_EQ(chain.subtree(99998), (std::vector<Rank>{99998, 99999}));
}

}  // namespace
}  // namespace gantry
