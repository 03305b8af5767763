#include "daemon/cost_bounded_cache.h"

#include <gtest/gtest.h>

namespace freshd::daemon {
namespace {

TEST(CostBoundedCacheTest, EmptyCacheHasNothing) {
  CostBoundedCache<int> cache(1e-3, 100);
  EXPECT_EQ(cache.Get(0), nullptr);
}

// A result cheaper than min_cost is never reused: every call is exact.
TEST(CostBoundedCacheTest, CheapResultsAreRecomputed) {
  CostBoundedCache<int> cache(1e-3, 100);
  cache.Put(7, 10.0, 0.9e-3);
  EXPECT_EQ(cache.Get(10.0), nullptr);
  EXPECT_EQ(cache.Get(10.01), nullptr);
}

// An expensive result is reused for factor·cost after it was computed, then
// not: polling spends at most ~1/factor of the thread on it.
TEST(CostBoundedCacheTest, ExpensiveResultsAreReusedForFactorTimesTheirCost) {
  CostBoundedCache<int> cache(1e-3, 100);
  EXPECT_EQ(cache.Put(7, 10.0, 0.02), 7);  // 20 ms: reused for 2 s
  ASSERT_NE(cache.Get(10.0), nullptr);
  EXPECT_EQ(*cache.Get(10.0), 7);
  ASSERT_NE(cache.Get(11.99), nullptr);
  EXPECT_EQ(cache.Get(12.0), nullptr);
  EXPECT_EQ(cache.Get(9.99), nullptr);  // a clock before the result: unusable
  cache.Put(8, 12.0, 0.5e-3);           // the new pass was cheap: not reused
  EXPECT_EQ(cache.Get(12.0), nullptr);
  cache.Put(9, 20.0, 0.01);
  ASSERT_NE(cache.Get(20.5), nullptr);
  EXPECT_EQ(*cache.Get(20.5), 9);
}

}  // namespace
}  // namespace freshd::daemon
