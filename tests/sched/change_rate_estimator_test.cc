// Change-rate estimator: Cho & Garcia-Molina's irregular-interval MLE with a
// Gamma prior, the online ChangeRateStats, and the Last-Modified estimator.
// Randomized tests simulate Poisson pages with fixed, logged seeds.
#include "sched/change_rate_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

namespace freshd::sched {
namespace {

// A Poisson page crawled at irregular intervals; yields the observations.
class PoissonPage {
 public:
  PoissonPage(double rate, uint64_t seed) : rate_(rate), rng_(seed) {
    next_change_ = Exp(rate_);
  }
  void set_rate(double rate) {
    rate_ = rate;
    next_change_ = now_ + Exp(rate_);
  }
  // Crawls `interval` after the previous crawl.
  ChangeObservation Crawl(double interval) {
    double end = now_ + interval;
    double last = -1;
    while (next_change_ <= end) {
      last = next_change_;
      next_change_ += Exp(rate_);
    }
    now_ = end;
    ChangeObservation o{interval, last >= 0, -1};
    if (last >= 0) o.since_modified = end - last;
    return o;
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  double Exp(double rate) {
    return std::exponential_distribution<double>(rate)(rng_);
  }
  double rate_;
  std::mt19937_64 rng_;
  double now_ = 0;
  double next_change_ = 0;
};

ChangeObservation BitOnly(ChangeObservation o) {
  o.since_modified = -1;
  return o;
}

// Irregular intervals: uniform on [0.2, 3] × mean_interval / 1.6.
double Interval(std::mt19937_64& rng, double mean_interval) {
  return std::uniform_real_distribution<double>(0.2, 3.0)(rng) * mean_interval /
         1.6;
}

constexpr RatePrior kWeakPrior{1.0, 0.5};

TEST(ChangeRateEstimatorTest, BatchMleConvergesAndBeatsNaive) {
  for (double rate : {0.1, 1.0, 4.0}) {
    const uint64_t seed = 1234 + static_cast<uint64_t>(rate * 10);
    std::cout << "seed " << seed << " rate " << rate << "\n";
    PoissonPage page(rate, seed);
    std::vector<ChangeObservation> obs;
    for (int i = 0; i < 3000; ++i) {
      obs.push_back(BitOnly(page.Crawl(Interval(page.rng(), 1.0))));
    }
    double mle = EstimateChangeRate(obs, kWeakPrior);
    double naive = NaiveChangeRate(obs);
    EXPECT_NEAR(mle / rate, 1.0, 0.08) << "rate " << rate;
    // The naive estimator misses repeated changes: biased low once λI ~ 1.
    if (rate >= 1) {
      EXPECT_LT(naive / rate, 0.75) << "rate " << rate;
      EXPECT_LT(std::abs(mle / rate - 1), std::abs(naive / rate - 1) / 4);
    }
  }
}

TEST(ChangeRateEstimatorTest, RelativeErrorShrinksWithObservations) {
  // Mean relative error over 200 pages (true λ = 1), after N observations.
  const uint64_t seed = 99;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 seeder(seed);
  double previous = 1e9;
  for (int n : {10, 100, 1000}) {
    double sum_abs = 0, sum = 0;
    const int pages = 200;
    for (int p = 0; p < pages; ++p) {
      PoissonPage page(1.0, seeder());
      std::vector<ChangeObservation> obs;
      for (int i = 0; i < n; ++i) {
        obs.push_back(BitOnly(page.Crawl(Interval(page.rng(), 1.0))));
      }
      double e = EstimateChangeRate(obs, kWeakPrior) - 1.0;
      sum_abs += std::abs(e);
      sum += e;
    }
    double mae = sum_abs / pages, bias = sum / pages;
    std::cout << "n=" << n << " mean |rel err| " << mae << " bias " << bias
              << "\n";
    EXPECT_LT(mae, previous * 0.6);
    EXPECT_LT(std::abs(bias), n >= 100 ? 0.04 : 0.2);
    previous = mae;
  }
  EXPECT_LT(previous, 0.05);  // at n = 1000
}

TEST(ChangeRateEstimatorTest, PriorAtOneObservation) {
  const RatePrior prior{0.5, 1.0};
  ChangeRateStats unchanged;
  unchanged.Observe(2.0, false);
  double r0 = unchanged.Estimate(prior);
  EXPECT_GT(r0, 0);
  EXPECT_LT(r0, prior.rate);
  EXPECT_NEAR(r0, 1.0 / (1.0 / 0.5 + 2.0), 1e-6);  // a / (a/λ₀ + I)

  ChangeRateStats changed;
  changed.Observe(2.0, true);
  double r1 = changed.Estimate(prior);
  EXPECT_TRUE(std::isfinite(r1));
  EXPECT_GT(r1, prior.rate);

  // No prior: the raw MLE is 0 and ∞ respectively.
  EXPECT_EQ(unchanged.Estimate({1.0, 0}), 0);
  EXPECT_TRUE(std::isinf(changed.Estimate({1.0, 0})));
  // No data at all: the prior's rate.
  EXPECT_NEAR(ChangeRateStats().Estimate(prior), prior.rate, 1e-9);
}

// A static share π₀ (zero-inflated prior): while no change has been seen,
// the Gamma estimate is scaled by 1 − P(static | no change in E), with
// P = π₀/(π₀ + (1−π₀)(1 + Eλ₀/w)^(−w)); one change removes the discount.
TEST(ChangeRateEstimatorTest, StaticShareDiscountsPagesNeverSeenChanging) {
  const RatePrior gamma{0.5, 1.0};
  RatePrior mixed = gamma;
  mixed.static_share = 0.3;
  EXPECT_DOUBLE_EQ(StaticPosterior(mixed, 0), 0.3);
  EXPECT_NEAR(StaticPosterior(mixed, 20), 0.3 / (0.3 + 0.7 / 11), 1e-12);
  EXPECT_EQ(StaticPosterior(gamma, 20), 0);
  EXPECT_EQ(StaticPosterior({0.5, 0, 0.3}, 20), 0);  // no Gamma part
  ChangeRateStats quiet;
  EXPECT_EQ(quiet.StaticPosterior(mixed), 0);  // no evidence yet
  EXPECT_NEAR(quiet.Estimate(mixed), quiet.Estimate(gamma), 1e-15);
  double last_ratio = 1;
  for (int i = 1; i <= 8; ++i) {
    quiet.Observe(5, false, -1, 1.0);
    const double p = StaticPosterior(mixed, 5.0 * i);
    EXPECT_NEAR(quiet.StaticPosterior(mixed), p, 1e-9);
    EXPECT_NEAR(quiet.Estimate(mixed), (1 - p) * quiet.Estimate(gamma),
                1e-12 * quiet.Estimate(gamma));
    const double ratio = quiet.Estimate(mixed) / quiet.Estimate(gamma);
    EXPECT_LT(ratio, last_ratio);  // the evidence for "static" grows
    last_ratio = ratio;
  }
  EXPECT_LT(last_ratio, 0.1);
  EXPECT_GT(quiet.Estimate(mixed), 0);  // never exactly 0
  // The batch estimator agrees.
  std::vector<ChangeObservation> batch(8, ChangeObservation{5, false});
  EXPECT_NEAR(EstimateChangeRate(batch, mixed), quiet.Estimate(mixed),
              1e-9 * quiet.Estimate(mixed));
  // One change: an ordinary Gamma estimate again (online and batch).
  quiet.Observe(5, true, -1, 1.0);
  EXPECT_EQ(quiet.StaticPosterior(mixed), 0);
  EXPECT_EQ(quiet.Estimate(mixed), quiet.Estimate(gamma));
  batch.push_back({5, true});
  EXPECT_EQ(EstimateChangeRate(batch, mixed), EstimateChangeRate(batch, gamma));
  // Hostile shares stay in [0, 1) and give finite estimates.
  for (double share : {-1.0, 1.0, 2.0, std::nan("")}) {
    RatePrior h = gamma;
    h.static_share = share;
    const double p = StaticPosterior(h, 1e30);
    EXPECT_GE(p, 0) << share;
    EXPECT_LT(p, 1) << share;
  }
}

TEST(ChangeRateEstimatorTest, OnlineStatsMatchBatchWithoutDecay) {
  const uint64_t seed = 7;
  std::cout << "seed " << seed << "\n";
  PoissonPage page(0.8, seed);
  std::vector<ChangeObservation> obs;
  ChangeRateStats stats;
  for (int i = 0; i < 500; ++i) {
    ChangeObservation o = BitOnly(page.Crawl(Interval(page.rng(), 1.0)));
    obs.push_back(o);
    stats.Observe(o.interval, o.changed, -1, /*decay=*/1.0);
  }
  double batch = EstimateChangeRate(obs, kWeakPrior);
  // Folded changed intervals are approximated at their mean interval.
  EXPECT_NEAR(stats.Estimate(kWeakPrior) / batch, 1.0, 0.05);
  EXPECT_NEAR(stats.observations(), 500, 1e-3);
}

TEST(ChangeRateEstimatorTest, OnlineStatsAdaptToRateChange) {
  const uint64_t seed = 11;
  std::cout << "seed " << seed << "\n";
  // Crawled about once per true mean change interval (λI ≈ 1).
  std::mt19937_64 seeder(seed);
  double sum_before = 0, sum_after = 0;
  const int pages = 50;
  for (int p = 0; p < pages; ++p) {
    PoissonPage page(2.0, seeder());
    ChangeRateStats stats;
    for (int i = 0; i < 300; ++i) {
      ChangeObservation o = page.Crawl(Interval(page.rng(), 0.5));
      stats.Observe(o.interval, o.changed);
    }
    sum_before += stats.Estimate(kWeakPrior);
    page.set_rate(0.2);
    for (int i = 0; i < 300; ++i) {
      ChangeObservation o = page.Crawl(Interval(page.rng(), 5.0));
      stats.Observe(o.interval, o.changed);
    }
    sum_after += stats.Estimate(kWeakPrior);
  }
  EXPECT_NEAR(sum_before / pages / 2.0, 1.0, 0.1);
  EXPECT_NEAR(sum_after / pages / 0.2, 1.0, 0.1);
}

TEST(ChangeRateEstimatorTest, LastModifiedGivesExactTimeEstimator) {
  // With trusted Last-Modified the estimator sees change times: lower error
  // than the bit-only MLE at sparse crawling (λI ≈ 3).
  const uint64_t seed = 2024;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 seeder(seed);
  double se_lm = 0, se_bit = 0;
  const int pages = 300;
  for (int p = 0; p < pages; ++p) {
    PoissonPage page(1.0, seeder());
    std::vector<ChangeObservation> lm, bit;
    for (int i = 0; i < 40; ++i) {
      ChangeObservation o = page.Crawl(Interval(page.rng(), 3.0));
      lm.push_back(o);
      bit.push_back(BitOnly(o));
    }
    se_lm += std::pow(EstimateChangeRate(lm, kWeakPrior) - 1, 2);
    se_bit += std::pow(EstimateChangeRate(bit, kWeakPrior) - 1, 2);
  }
  double rmse_lm = std::sqrt(se_lm / pages),
         rmse_bit = std::sqrt(se_bit / pages);
  std::cout << "rmse last-modified " << rmse_lm << " bit-only " << rmse_bit
            << "\n";
  EXPECT_LT(rmse_lm, 0.7 * rmse_bit);
  EXPECT_LT(rmse_lm, 0.25);

  // The closed form: events / exposure, as ChangeRateStats computes it too.
  ChangeRateStats stats;
  stats.Observe(4.0, true, 1.0);
  stats.Observe(2.0, false);
  EXPECT_NEAR(stats.Estimate({1.0, 0}), 1.0 / (1.0 + 2.0), 1e-12);
  // An inconsistent Last-Modified (older than the previous crawl) is ignored.
  ChangeRateStats bad;
  bad.Observe(4.0, true, 9.0);
  EXPECT_TRUE(std::isinf(bad.Estimate({1.0, 0})));
}

TEST(ChangeRateEstimatorTest, RegularIntervalEstimatorIsFinite) {
  // Cho & Garcia-Molina's bias-reduced estimator: finite when all changed.
  EXPECT_NEAR(RegularIntervalChangeRate(10, 10, 2.0),
              -std::log(0.5 / 10.5) / 2.0, 1e-12);
  EXPECT_EQ(RegularIntervalChangeRate(10, 0, 1.0), 0);
  // And the MLE on regular intervals is −log(1 − x/n)/I.
  std::vector<ChangeObservation> obs;
  for (int i = 0; i < 10; ++i) obs.push_back({2.0, i < 4});
  EXPECT_NEAR(EstimateChangeRate(obs, {1.0, 0}), -std::log(0.6) / 2.0, 1e-9);
}

TEST(ChangeRateEstimatorTest, IgnoresInvalidIntervalsAndIsCompact) {
  ChangeRateStats stats;
  stats.Observe(-1, true);
  stats.Observe(0, true);
  stats.Observe(std::nan(""), true);
  EXPECT_EQ(stats.observations(), 0);
  std::cout << "sizeof(ChangeRateStats) = " << sizeof(ChangeRateStats) << "\n";
  EXPECT_LE(sizeof(ChangeRateStats), 64u);
}

TEST(ChangeRateEstimatorTest, HostileInputsNeverGiveNan) {
  const uint64_t seed = 31337;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const double specials[] = {0.0, -1.0, 1e-300, 1e300, INFINITY,
                             NAN, 1e-9, 1.0,    86400, -INFINITY};
  auto pick = [&] { return specials[rng() % std::size(specials)]; };
  for (int round = 0; round < 200; ++round) {
    ChangeRateStats stats;
    for (int i = 0; i < 20; ++i) {
      stats.Observe(pick(), rng() % 2, pick(), pick());
    }
    RatePrior prior{pick(), pick()};
    double r = stats.Estimate(prior);
    EXPECT_FALSE(std::isnan(r));
    EXPECT_GE(r, 0);
    EXPECT_FALSE(std::isnan(stats.observations()));
  }
}

// The information about ln λ: x²/(eˣ − 1) per bit-only interval of
// x = λI, 1 per timed change, the decayed aggregates at their mean interval.
TEST(ChangeRateStatsTest, LogRateInformationFollowsItsFormula) {
  auto per = [](double x) { return x * x / std::expm1(x); };
  ChangeRateStats s;
  EXPECT_EQ(s.LogRateInformation(1.0), 0);
  s.Observe(2.0, true);
  s.Observe(0.5, false);
  s.Observe(3.0, true, 1.0);  // timed
  const double rate = 0.7;
  EXPECT_NEAR(s.LogRateInformation(rate), per(1.4) + per(0.35) + 1, 1e-12);
  // A long fast run tells little: every interval changed at λI = 20.
  ChangeRateStats fast;
  for (int i = 0; i < 8; ++i) fast.Observe(20.0, true);
  EXPECT_LT(fast.LogRateInformation(1.0), 1e-5);
  // Past the ring, equal intervals fold into exact aggregates (decay 1).
  ChangeRateStats many;
  for (int i = 0; i < 20; ++i) many.Observe(1.5, i % 3 == 0, -1, 1.0);
  EXPECT_NEAR(many.LogRateInformation(0.4), 20 * per(0.6), 1e-9);
  // The most information per bit is near λI = 1.6 (0.648).
  EXPECT_GT(per(1.6), per(0.5));
  EXPECT_GT(per(1.6), per(4.0));
}

}  // namespace
}  // namespace freshd::sched
