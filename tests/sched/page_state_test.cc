// PageState compactness (reported) and ProfileSet bookkeeping (Olston &
// Pandey §4.1 change profiles with base sketches).

#include "sched/page_state.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "base/sketch.h"

namespace freshd::sched {
namespace {

TEST(PageStateTest, CompactEnoughForTenMillionPages) {
  std::printf(
      "[ INFO     ] sizeof(PageState) = %zu bytes; 10M pages = %.2f GB\n",
      kPageStateBytes, kPageStateBytes * 1e7 / 1e9);
  EXPECT_LE(kPageStateBytes, 88u);
  PageState s;
  EXPECT_FALSE(s.fetched());
  EXPECT_FALSE(s.in_flight());
}

TEST(PageStateTest, SignalCountSaturates) {
  PageState s;
  s.signals = UINT16_MAX - 1;
  AddSignal(s);
  AddSignal(s);
  EXPECT_EQ(s.signals, UINT16_MAX);
}

BottomSketch SketchOf(std::vector<uint64_t> v) { return Sketch(v, 8); }

TEST(ProfileSetTest, KeepsNewestHistoryProfilesWithBaseTimes) {
  ProfileSet ps(2);
  ps.OnFetch(10, {}, {});
  ps.OnFetch(12, {0.2}, {});
  ps.OnFetch(15, {0.3, 0.1}, {});
  ASSERT_EQ(ps.BaseTimes(), (std::vector<double>{12, 15}));
  // The profile based at 12 got (3, 0.1).
  const CompactProfile& p = ps.profiles().profile(0);
  ASSERT_EQ(p.size, 1);
  EXPECT_NEAR(p.point(0).t, 3, 1e-6);
  EXPECT_NEAR(p.point(0).d, 0.1, 1e-4);
}

TEST(ProfileSetTest, MissingDivergencesRepeatTheLastPoint) {
  ProfileSet ps(3);
  ps.OnFetch(0, {}, {});
  ps.OnFetch(1, {0.4}, {});
  ps.OnFetch(2, {}, {});  // e.g. a 304: nothing new
  const CompactProfile& p = ps.profiles().profile(0);
  ASSERT_EQ(p.size, 2);
  EXPECT_NEAR(p.point(1).d, 0.4, 1e-4);
  EXPECT_NEAR(ps.profiles().profile(1).point(0).d, 0.0, 1e-9);
}

TEST(ProfileSetTest, DivergencesFromStoredBaseSketches) {
  ProfileSet ps(4);
  ps.OnFetch(0, {}, SketchOf({1, 2, 3, 4}));
  ps.OnFetch(1, {0.0}, SketchOf({1, 2, 3, 5}));
  std::vector<double> d = ps.DivergencesFrom(SketchOf({1, 2, 3, 4}));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_DOUBLE_EQ(d[0], 0.0);
  EXPECT_NEAR(d[1], 1 - 3.0 / 5.0, 1e-12);
}

}  // namespace
}  // namespace freshd::sched
