// Where a seek in a plan lands (seek_target, plan_reader.hpp): inside the plan or at its end,
// from each origin, and never past either end, whatever the offset.
#include "tensoracle/deploy/plan_reader.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>

namespace tensoracle::deploy {
namespace {

TEST(PlanSeek, LandsInsideThePlanOrAtItsEnd) {
    EXPECT_EQ(seek_target(7, 100, SeekFrom::start, 10), 10U);
    EXPECT_EQ(seek_target(7, 100, SeekFrom::current, 10), 17U);
    EXPECT_EQ(seek_target(7, 100, SeekFrom::current, -7), 0U);
    EXPECT_EQ(seek_target(7, 100, SeekFrom::end, -5), 95U);
    EXPECT_EQ(seek_target(7, 100, SeekFrom::end, 0), 100U);
    EXPECT_EQ(seek_target(7, 100, SeekFrom::start, 100), 100U);
}

TEST(PlanSeek, RefusesEveryPositionOutsideThePlan) {
    EXPECT_FALSE(seek_target(7, 100, SeekFrom::end, 1));
    EXPECT_FALSE(seek_target(7, 100, SeekFrom::start, -1));
    EXPECT_FALSE(seek_target(7, 100, SeekFrom::current, -8));
    EXPECT_FALSE(seek_target(7, 100, SeekFrom::current, 94));
    constexpr auto kLowest = std::numeric_limits<std::int64_t>::min();
    constexpr auto kHighest = std::numeric_limits<std::int64_t>::max();
    EXPECT_FALSE(seek_target(7, 100, SeekFrom::end, kLowest));
    EXPECT_FALSE(seek_target(7, 100, SeekFrom::current, kHighest));
    constexpr auto kAll = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(seek_target(0, kAll, SeekFrom::end, kLowest), kAll - (std::uint64_t{1} << 63U));
}

} // namespace
} // namespace tensoracle::deploy
