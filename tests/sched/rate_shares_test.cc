// NextRateShares: the cluster's budget split toward equal thresholds λ
// (issue 30 item 4; sched/rate_shares.h).

#include "sched/rate_shares.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace freshd::sched {
namespace {

double Sum(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

TEST(RateSharesTest, SumsToTheTotal) {
  std::vector<ShareMember> m = {{"a", 3.0, 10},
                                {"b", 0.5, 40},
                                {"c", -1, 0},
                                {"d", 0.0, 5},
                                {"e", 1e9, 1}};
  for (double total : {1.0, 57.0, 1e4}) {
    const std::vector<double> s = NextRateShares(m, total);
    ASSERT_EQ(s.size(), m.size());
    EXPECT_NEAR(Sum(s), total, 1e-9 * total);
    EXPECT_EQ(s[3], 0);              // "d" has nothing to fetch
    for (size_t i : {0, 1, 2, 4}) {  // the floor: 5% of R/4
      EXPECT_GE(s[i], 0.05 * total / 4 * (1 - 1e-12)) << i;
    }
  }
  EXPECT_TRUE(NextRateShares({}, 10).empty());
  EXPECT_EQ(NextRateShares(m, 0), std::vector<double>(5, 0.0));
  EXPECT_EQ(NextRateShares(m, NAN), std::vector<double>(5, 0.0));
}

TEST(RateSharesTest, EqualLambdaIsAFixedPoint) {
  std::vector<ShareMember> m = {{"a", 2.5, 10}, {"b", 2.5, 30}, {"c", 2.5, 60}};
  const std::vector<double> s = NextRateShares(m, 100);
  EXPECT_NEAR(s[0], 10, 1e-9);
  EXPECT_NEAR(s[1], 30, 1e-9);
  EXPECT_NEAR(s[2], 60, 1e-9);
}

TEST(RateSharesTest, MovesRateTowardTheHigherThreshold) {
  // "a" leaves more value per crawl on the table than "b": it gets more.
  std::vector<ShareMember> m = {{"a", 4.0, 50}, {"b", 1.0, 50}};
  const std::vector<double> s = NextRateShares(m, 100);
  EXPECT_GT(s[0], 50);
  EXPECT_LT(s[1], 50);
  EXPECT_NEAR(s[0] + s[1], 100, 1e-9);
}

TEST(RateSharesTest, StepsAreBounded) {
  RateShareOptions o;
  o.max_step = 1.5;
  o.step = 1;
  std::vector<ShareMember> m = {
      {"a", 1e6, 25}, {"b", 1e-6, 25}, {"c", 1.0, 25}, {"d", 1.0, 25}};
  const std::vector<double> s = NextRateShares(m, 100, o);
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_LE(s[i], m[i].share * o.max_step * o.max_step + 1e-9) << i;
    EXPECT_GE(s[i], m[i].share / (o.max_step * o.max_step) - 1e-9) << i;
  }
  EXPECT_GT(s[0], 25 * 1.2);  // the bound is reached, not only respected
}

TEST(RateSharesTest, UnknownLambdaKeepsTheEqualShare) {
  std::vector<ShareMember> m = {
      {"a", -1, 70}, {"b", 2.0, 10}, {"c", 1.0, 10}, {"d", NAN, 10}};
  const std::vector<double> s = NextRateShares(m, 100);
  EXPECT_DOUBLE_EQ(s[0], 25);
  EXPECT_DOUBLE_EQ(s[3], 25);
  EXPECT_NEAR(s[1] + s[2], 50, 1e-9);
  EXPECT_GT(s[1], s[2]);
}

TEST(RateSharesTest, ANewMemberWithoutAShareStartsEqual) {
  std::vector<ShareMember> m = {{"a", 1.0, 50}, {"b", 1.0, 50}, {"c", -1, 0}};
  const std::vector<double> s = NextRateShares(m, 90);
  EXPECT_DOUBLE_EQ(s[2], 30);
  EXPECT_NEAR(s[0], 30, 1e-9);
  EXPECT_NEAR(s[1], 30, 1e-9);
}

TEST(RateSharesTest, NothingToFetchGetsNothingALowThresholdTheFloor) {
  RateShareOptions o;
  o.floor = 0.05;
  std::vector<ShareMember> m = {
      {"busy", 3.0, 30}, {"idle", 0.0, 30}, {"slow", 1e-9, 40}};
  for (int i = 0; i < 40; ++i) {
    const std::vector<double> s = NextRateShares(m, 100, o);
    for (size_t k = 0; k < m.size(); ++k) m[k].share = s[k];
  }
  EXPECT_EQ(m[1].share, 0);
  EXPECT_NEAR(m[2].share, 0.05 * 50, 1e-9);  // R/n over the two with pages
  EXPECT_NEAR(m[0].share, 100 - 0.05 * 50, 1e-9);
  // Nobody has anything: equal shares, nothing lost.
  const std::vector<double> none = NextRateShares(
      std::vector<ShareMember>{{"a", 0.0, 1}, {"b", 0.0, 1}}, 10, o);
  EXPECT_EQ(none, (std::vector<double>{5, 5}));
}

TEST(RateSharesTest, LambdaMeterMeansEachWindow) {
  LambdaMeter meter(3);
  EXPECT_EQ(meter.Update(10, 0, 0), -1);   // nothing measured
  EXPECT_EQ(meter.Update(10, 5, 2), -1);   // 2 < 3 selections
  EXPECT_EQ(meter.Update(10, 12, 3), 4);   // (12 - 0) / 3
  EXPECT_EQ(meter.Update(10, 13, 4), 4);   // window of 1: kept
  EXPECT_EQ(meter.Update(10, 42, 6), 10);  // (42 - 12) / 3
  EXPECT_EQ(meter.Update(0, 42, 6), 0);    // no pages
  EXPECT_EQ(meter.Update(5, 42, 6), -1);   // pages again: unknown
  EXPECT_EQ(meter.Update(5, 1, 1), -1);    // a new scheduler: restart
  EXPECT_EQ(meter.Update(5, 7, 4), 2);
}

TEST(RateSharesTest, TheResultDoesNotDependOnTheMembersOrder) {
  std::vector<ShareMember> m = {{"n1", 0.3, 12.5}, {"n2", 7.0, 3.25},
                                {"n3", 1.1, 40},   {"n4", -1, 9},
                                {"n5", 0.0, 1},    {"n6", 2.2, 0.5}};
  const std::vector<double> a = NextRateShares(m, 64);
  std::vector<ShareMember> r(m.rbegin(), m.rend());
  const std::vector<double> b = NextRateShares(r, 64);
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(a[i], b[m.size() - 1 - i]) << i;  // bit-identical
  }
}

// Iterated against members whose λ falls as share⁻² (a freshness crawler at
// short intervals), each with its own scale: the λs meet within 1% and the
// shares then sum to the total, within 20 steps from a 100x spread.
TEST(RateSharesTest, IteratedAgainstAThresholdCurveTheLambdasMeet) {
  const std::vector<double> scale = {1, 9, 30, 100};
  std::vector<ShareMember> m(scale.size());
  for (size_t i = 0; i < m.size(); ++i) {
    m[i].node = "n" + std::to_string(i);
    m[i].share = 25;
  }
  auto measure = [&] {
    for (size_t i = 0; i < m.size(); ++i) {
      m[i].lambda = scale[i] / (m[i].share * m[i].share);
    }
  };
  measure();
  EXPECT_GT(LambdaSpread(m), 99);
  for (int step = 0; step < 20; ++step) {
    const std::vector<double> s = NextRateShares(m, 100);
    for (size_t i = 0; i < m.size(); ++i) m[i].share = s[i];
    measure();
  }
  EXPECT_LT(LambdaSpread(m), 1.01);
  // The equal-λ split gives each member ∝ √scale.
  EXPECT_NEAR(m[3].share / m[0].share, 10, 0.05);
}

TEST(RateSharesTest, SpreadIgnoresUnknownAndZero) {
  std::vector<ShareMember> m = {
      {"a", 2, 1}, {"b", 3, 1}, {"c", 0, 1}, {"d", -1, 1}};
  EXPECT_DOUBLE_EQ(LambdaSpread(m), 1.5);
  EXPECT_EQ(LambdaSpread(std::vector<ShareMember>{{"a", 0, 1}}), 0);
}

}  // namespace
}  // namespace freshd::sched
