// RateMixture: the grid posterior under a host's distribution of rates, its
// censoring (intervals that all changed bound the rate below), the
// histogram's bookkeeping, and ChangeRateStats' likelihood it rests on.
#include "sched/rate_mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;

RateTerciles Counted(RateTerciles t) {
  t.counted = true;
  return t;
}

// `pages` pages of `host` whose evidence is `intervals` unchanged intervals
// of `interval` (slow pages) added to the mixture; returns their draws.
void AddSlowPages(RateMixture* m, uint32_t host, int pages, double interval) {
  ChangeRateStats slow;
  for (int i = 0; i < 8; ++i) slow.Observe(interval, false);
  for (int p = 0; p < pages; ++p) {
    RateTerciles d = Counted(m->Posterior(host, slow, {}));
    m->Move(host, {}, d);
  }
}

TEST(ChangeRateStatsTest, LikelihoodOfChangedIntervalsOnlyBoundsTheRate) {
  ChangeRateStats s;
  for (int i = 0; i < 6; ++i) s.Observe(kDay, true);
  // Non-decreasing in the rate, and flat far above 1/interval: a censored
  // observation, not a maximum near 1/interval.
  double previous = -INFINITY;
  for (double r = 0.01 / kDay; r < 1000 / kDay; r *= 1.5) {
    const double ll = s.LogLikelihood(r);
    EXPECT_GE(ll, previous - 1e-12) << r * kDay;
    previous = ll;
  }
  EXPECT_NEAR(s.LogLikelihood(50 / kDay), 0, 1e-12);
  EXPECT_LT(s.LogLikelihood(0.5 / kDay), -3);
  EXPECT_EQ(s.RecentChangedRun(), 6);
  EXPECT_DOUBLE_EQ(s.RecentInterval(0), kDay);
  EXPECT_EQ(s.RecentInterval(6), -1);
}

TEST(ChangeRateStatsTest, LikelihoodPeaksAtTheRateOfMixedEvidence) {
  // 2 changed of 8 daily intervals: the likelihood's maximum is the MLE,
  // −ln(6/8) per day.
  ChangeRateStats s;
  for (int i = 0; i < 8; ++i) s.Observe(kDay, i % 4 == 0);
  const double mle = -std::log(6.0 / 8) / kDay;
  EXPECT_GT(s.LogLikelihood(mle), s.LogLikelihood(mle * 1.2));
  EXPECT_GT(s.LogLikelihood(mle), s.LogLikelihood(mle / 1.2));
  EXPECT_EQ(s.RecentChangedRun(), 0);
}

TEST(RateMixtureTest, NoEvidenceGivesThePriorsTercilesInOrder) {
  RateMixture m;
  const RateTerciles d = m.Posterior(0, ChangeRateStats{}, {});
  ASSERT_FALSE(d.empty());
  EXPECT_LT(d.rate[0], d.rate[1]);
  EXPECT_LT(d.rate[1], d.rate[2]);
  EXPECT_GE(d.rate[0], m.grid(0) * 0.999);
  EXPECT_LE(d.rate[2], m.grid(kRateGridPoints - 1) * 1.001);
  double sum = 0;
  for (double p : m.Prior(0, {})) sum += p;
  EXPECT_NEAR(sum, 1, 1e-9);
}

TEST(RateMixtureTest, MoveBackAndForthLeavesTheHistogramAsItWas) {
  RateMixture m;
  AddSlowPages(&m, 3, 10, 30 * kDay);
  const auto before = m.Prior(3, {});
  RateTerciles a = Counted(m.Posterior(3, ChangeRateStats{}, {}));
  RateTerciles b = a;
  b.rate = {1 / kDay, 2 / kDay, 4 / kDay};
  m.Move(3, {}, a);
  m.Move(3, a, b);
  m.Move(3, b, {});
  const auto after = m.Prior(3, {});
  for (int k = 0; k < kRateGridPoints; ++k) {
    EXPECT_NEAR(before[k], after[k], 1e-6) << k;
  }
  // An uncounted page gives nothing back.
  RateTerciles uncounted = b;
  uncounted.counted = false;
  m.Move(3, {}, uncounted);
  const auto same = m.Prior(3, {});
  for (int k = 0; k < kRateGridPoints; ++k) {
    EXPECT_NEAR(before[k], same[k], 1e-6) << k;
  }
}

TEST(RateMixtureTest, AHostOfSlowPagesPullsAnUnknownPageSlow) {
  RateMixture m;
  AddSlowPages(&m, 1, 40, 30 * kDay);
  const RateTerciles slow_host = m.Posterior(1, ChangeRateStats{}, {});
  const RateTerciles other_host = m.Posterior(2, ChangeRateStats{}, {});
  EXPECT_LT(slow_host.rate[1], 1 / (30 * kDay));
  // Another host borrows only the global histogram, shrunk toward uniform:
  // less sure.
  EXPECT_GT(other_host.rate[2] / other_host.rate[0],
            slow_host.rate[2] / slow_host.rate[0]);
}

TEST(RateMixtureTest, AlwaysChangedIsCensoredNotPulledToTheHostsRate) {
  // 40 slow pages and 4 fast ones (every 3 h) on one host: a page whose 8
  // daily intervals all changed is read as fast, above 1/interval, where a
  // Gamma prior at the host's one rate puts its mode below 1/interval.
  RateMixture m;
  AddSlowPages(&m, 1, 40, 30 * kDay);
  ChangeRateStats fast_seen_often;
  for (int i = 0; i < 8; ++i) fast_seen_often.Observe(kDay / 48, i % 6 != 0);
  for (int p = 0; p < 4; ++p) {
    m.Move(1, {}, Counted(m.Posterior(1, fast_seen_often, {})));
  }
  ChangeRateStats censored;
  for (int i = 0; i < 8; ++i) censored.Observe(kDay, true);
  const RateTerciles d = m.Posterior(1, censored, {});
  EXPECT_GT(d.rate[0], 1 / kDay);
  EXPECT_GT(d.rate[1], 2 / kDay);
  const RatePrior one_rate{1 / (30 * kDay), 1};
  EXPECT_LT(censored.Estimate(one_rate), 1 / kDay);
}

TEST(RateMixtureTest, TheTercilesFollowThePosteriorOfAPoissonPage) {
  // A page changing 4 times a day crawled every 6 hours, 8 times, on a host
  // with no history (the prior's middle is near 0.2 a day, 20x slower):
  // the middle draw lands near the truth, and the draws bracket it.
  std::mt19937_64 rng(7);
  RateMixture m;
  const double rate = 4 / kDay, interval = kDay / 4;
  int near = 0, bracketed = 0;
  const int trials = 400;
  for (int trial = 0; trial < trials; ++trial) {
    ChangeRateStats s;
    std::poisson_distribution<int> changes(rate * interval);
    for (int i = 0; i < 8; ++i) s.Observe(interval, changes(rng) > 0);
    const RateTerciles d = m.Posterior(0, s, {});
    if (d.rate[1] / 2 <= rate && rate <= d.rate[1] * 2) ++near;
    if (d.rate[0] <= rate && rate <= d.rate[2]) ++bracketed;
  }
  std::printf("middle draw within 2x: %d/%d, bracketed: %d/%d\n", near, trials,
              bracketed, trials);
  EXPECT_GE(near, trials * 6 / 10);
  EXPECT_GE(bracketed, trials * 6 / 10);
}

}  // namespace
}  // namespace freshd::sched
