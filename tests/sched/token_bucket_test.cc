// TokenBucket: accrual at the rate, the burst cap, and rate changes that keep
// earned tokens (the budget contract of docs/DESIGN.md).

#include "sched/token_bucket.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace freshd::sched {
namespace {

TEST(TokenBucketTest, StartsWithOneTokenAndAccruesAtRate) {
  TokenBucket b(2.0, 5.0, 100.0);
  EXPECT_TRUE(b.TryTake(100.0));
  EXPECT_FALSE(b.TryTake(100.0));
  EXPECT_DOUBLE_EQ(b.NextTokenTime(100.0), 100.5);
  EXPECT_FALSE(b.TryTake(100.4));
  EXPECT_TRUE(b.TryTake(100.5));
}

TEST(TokenBucketTest, BurstCapsAccumulation) {
  TokenBucket b(1.0, 3.0, 0.0);
  EXPECT_DOUBLE_EQ(b.Available(1000.0), 3.0);
  int taken = 0;
  while (b.TryTake(1000.0)) ++taken;
  EXPECT_EQ(taken, 3);
}

TEST(TokenBucketTest, SetRateKeepsEarnedTokensAndChangesFutureAccrual) {
  TokenBucket b(1.0, 10.0, 0.0);
  ASSERT_TRUE(b.TryTake(0.0));
  b.SetRate(4.0, 0.5);  // 0.5 token earned at the old rate
  EXPECT_NEAR(b.Available(0.5), 0.5, 1e-12);
  EXPECT_NEAR(b.NextTokenTime(0.5), 0.625, 1e-12);
}

TEST(TokenBucketTest, ZeroRateNeverRefills) {
  TokenBucket b(0.0, 2.0, 0.0);
  EXPECT_TRUE(b.TryTake(0.0));
  EXPECT_TRUE(std::isinf(b.NextTokenTime(1e9)));
  EXPECT_FALSE(b.TryTake(1e9));
}

TEST(TokenBucketTest, TimeGoingBackwardsIsIgnored) {
  TokenBucket b(1.0, 2.0, 10.0);
  ASSERT_TRUE(b.TryTake(10.0));
  EXPECT_FALSE(b.TryTake(5.0));
  EXPECT_TRUE(b.TryTake(11.0));
}

TEST(TokenBucketTest, LongRunRateIsExact) {
  TokenBucket b(3.0, 1.0, 0.0);
  double t = 0;
  int n = 0;
  while (t < 1000.0) {
    t = b.NextTokenTime(t);
    if (t >= 1000.0) break;
    ASSERT_TRUE(b.TryTake(t));
    ++n;
  }
  EXPECT_NEAR(n, 3000, 1);
}

}  // namespace
}  // namespace freshd::sched

namespace freshd::sched {
namespace {

// The sustained rate is `rate` at both ends of the budget, whatever `burst`:
// a taker that wakes every few milliseconds (an event loop) loses no token,
// where a bucket capped at `burst` alone would give it burst per wake-up.
TEST(TokenBucketTest, BurstNeverCapsTheSustainedRate) {
  for (double rate : {0.01, 1.0, 1000.0, 50000.0}) {
    for (double burst : {1.0, 10.0}) {
      TokenBucket b(rate, burst, 0.0);
      const double wake = 0.005;  // a 5 ms event-loop wake-up
      const int64_t wakes =
          static_cast<int64_t>(std::max(100.0 / rate, 10.0) / wake);
      uint64_t taken = 0;
      for (int64_t i = 0; i <= wakes; ++i) {
        while (b.TryTake(static_cast<double>(i) * wake)) ++taken;
      }
      // The first token is free; at most one fractional token is left.
      const double expected = rate * static_cast<double>(wakes) * wake + 1;
      EXPECT_NEAR(static_cast<double>(taken), expected, 1.0)
          << "rate " << rate << " burst " << burst;
    }
  }
}

TEST(TokenBucketTest, CapacityIsBurstOrATenthOfASecondOfTheRate) {
  EXPECT_DOUBLE_EQ(TokenBucket(1.0, 10.0).capacity(), 10.0);
  EXPECT_DOUBLE_EQ(TokenBucket(50000.0, 10.0).capacity(), 5000.0);
  // After an idle spell a fast bucket holds at most its capacity.
  TokenBucket b(50000.0, 10.0, 0.0);
  EXPECT_DOUBLE_EQ(b.Available(1000.0), 5000.0);
}

}  // namespace
}  // namespace freshd::sched
