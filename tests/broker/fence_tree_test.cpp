// Which ranks of a job a broker gathers a PMI barrier for, and which of its
// children the completed barrier goes down to.
#include "broker/fence_tree.h"

#include <vector>

#include <gtest/gtest.h>

namespace gantry::broker {
namespace {

// Seven ranks, fanout 2: 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6.
const overlay::Tree kTree{7, 2};

TEST(FenceTree, RanksBelowCountsTheSubtreesRanksOfTheJob) {
    const IdSet all = IdSet::range(0, 6);
    EXPECT_EQ(ranks_below(kTree, 0, all), 7u);
    EXPECT_EQ(ranks_below(kTree, 1, all), 3u);
    EXPECT_EQ(ranks_below(kTree, 6, all), 1u);
    // A job on 3, 5 and 6: rank 1 gathers for 3 alone, though it does not
    // run the job itself; rank 4 for none.
    const IdSet some{3, 5, 6};
    EXPECT_EQ(ranks_below(kTree, 0, some), 3u);
    EXPECT_EQ(ranks_below(kTree, 1, some), 1u);
    EXPECT_EQ(ranks_below(kTree, 2, some), 2u);
    EXPECT_EQ(ranks_below(kTree, 4, some), 0u);
    // Ranks beyond the instance are no one's.
    EXPECT_EQ(ranks_below(kTree, 0, IdSet{2, 9}), 1u);
}

TEST(FenceTree, ChildrenTowardAreThoseWithRanksOfTheJob) {
    EXPECT_EQ(children_toward(kTree, 0, IdSet::range(0, 6)), (std::vector<overlay::Rank>{1, 2}));
    EXPECT_EQ(children_toward(kTree, 0, IdSet{0, 4}), (std::vector<overlay::Rank>{1}));
    EXPECT_EQ(children_toward(kTree, 1, IdSet{0, 4}), (std::vector<overlay::Rank>{4}));
    EXPECT_EQ(children_toward(kTree, 2, IdSet{0, 4}), (std::vector<overlay::Rank>{}));
    EXPECT_EQ(children_toward(kTree, 6, IdSet::range(0, 6)), (std::vector<overlay::Rank>{}));
}

}  // namespace
}  // namespace gantry::broker
