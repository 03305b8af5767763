// Signal quality estimation (recall α, false-signal rate ν, change rate Δ)
// from (τ, n, changed) triples: MATH.md Paper 2 (a) model, paper appendix E.
// Randomized tests use fixed, logged seeds.
#include "sched/signal_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

namespace freshd::sched {
namespace {

// Simulates one interval of length τ under the model.
SignalTriple Simulate(const SignalParams& p, double tau, std::mt19937_64& rng) {
  int changes = std::poisson_distribution<int>(p.delta * tau)(rng);
  int signals = std::binomial_distribution<int>(changes, p.alpha)(rng);
  signals += std::poisson_distribution<int>(p.nu * tau)(rng);
  return {tau, signals, changes > 0};
}

std::vector<SignalTriple> Dataset(const SignalParams& p, int n, uint64_t seed) {
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> tau(0.25, 6.0);
  std::vector<SignalTriple> data;
  for (int i = 0; i < n; ++i) data.push_back(Simulate(p, tau(rng), rng));
  return data;
}

const SignalParams kTruth{0.5, 0.7, 0.2};

TEST(SignalEstimatorTest, LikelihoodIsNormalizedAndMatchesFreshProbability) {
  const SignalParams p{0.8, 0.5, 0.2};
  for (double tau : {0.3, 2.0, 7.5}) {
    double total = 0;
    for (int n = 0; n < 200; ++n) {
      for (bool changed : {false, true}) {
        double ll = SignalLogLikelihood(p, {tau, n, changed});
        total += std::exp(ll + n * std::log(tau) - std::lgamma(n + 1.0));
      }
      // MATH.md Paper 2 (a): P(fresh | τ, n) = e^{−κτ} q^n.
      double fresh = std::exp(SignalLogLikelihood(p, {tau, n, false}));
      double changed = std::exp(SignalLogLikelihood(p, {tau, n, true}));
      if (n < 20) {
        double q = p.nu / (p.alpha * p.delta + p.nu);
        double expected =
            std::exp(-(1 - p.alpha) * p.delta * tau) * std::pow(q, n);
        EXPECT_NEAR(fresh / (fresh + changed), expected, 1e-12)
            << "tau " << tau << " n " << n;
      }
    }
    EXPECT_NEAR(total, 1.0, 1e-12) << "tau " << tau;
  }
  EXPECT_TRUE(std::isinf(SignalLogLikelihood(p, {1.0, -1, false})));
  EXPECT_EQ(SignalLogLikelihood(p, {0.0, 3, true}), 0);
}

TEST(SignalEstimatorTest, JointMleRecoversParameters) {
  std::vector<SignalTriple> data = Dataset(kTruth, 2000, 42);
  SignalFit fit = FitSignals(data, {}, {});
  std::cout << "delta " << fit.params.delta << " alpha " << fit.params.alpha
            << " nu " << fit.params.nu << " iterations " << fit.iterations
            << "\n";
  EXPECT_NEAR(fit.params.alpha, kTruth.alpha, 0.07);
  EXPECT_NEAR(fit.params.nu, kTruth.nu, 0.03);
  EXPECT_NEAR(fit.params.delta, kTruth.delta, 0.06);
  // It is a maximum: no neighbouring point has a higher likelihood.
  auto ll = [&](SignalParams p) {
    double s = 0;
    for (const SignalTriple& x : data) s += SignalLogLikelihood(p, x);
    return s;
  };
  EXPECT_NEAR(ll(fit.params), fit.log_likelihood, 1e-9);
  for (double dd : {-1e-3, 0.0, 1e-3}) {
    for (double da : {-1e-3, 0.0, 1e-3}) {
      for (double dn : {-1e-3, 0.0, 1e-3}) {
        SignalParams q{fit.params.delta + dd, fit.params.alpha + da,
                       fit.params.nu + dn};
        EXPECT_LE(ll(q), fit.log_likelihood + 1e-7);
      }
    }
  }
}

TEST(SignalEstimatorTest, MleGivenDeltaRecoversParameters) {
  std::vector<SignalTriple> data = Dataset(kTruth, 2000, 43);
  SignalFitOptions options;
  options.fix_delta = true;
  SignalFit fit = FitSignals(data, {kTruth.delta, 0.5, 0.1}, {}, options);
  std::cout << "alpha " << fit.params.alpha << " nu " << fit.params.nu << "\n";
  EXPECT_EQ(fit.params.delta, kTruth.delta);
  EXPECT_NEAR(fit.params.alpha, kTruth.alpha, 0.06);
  EXPECT_NEAR(fit.params.nu, kTruth.nu, 0.03);
}

TEST(SignalEstimatorTest, NaiveEstimatorIsBiasedMleIsNot) {
  // Appendix E: counting signals in changed intervals as true is biased
  // (false signals in changed intervals inflate "recall"); the MLE is not.
  std::vector<SignalTriple> data = Dataset(kTruth, 2000, 44);
  double changed_with_signal = 0, changed = 0;
  for (const SignalTriple& x : data) {
    if (x.changed) {
      changed += 1;
      changed_with_signal += x.signals > 0 ? 1 : 0;
    }
  }
  double naive_recall = changed_with_signal / changed;
  SignalFit fit = FitSignals(data, {}, {});
  std::cout << "naive recall " << naive_recall << " mle " << fit.params.alpha
            << "\n";
  EXPECT_GT(std::abs(naive_recall - kTruth.alpha),
            2 * std::abs(fit.params.alpha - kTruth.alpha));
}

TEST(SignalEstimatorTest, OnlineStatsConverge) {
  std::vector<SignalTriple> data = Dataset(kTruth, 4000, 45);
  SignalStats stats;
  SignalPrior weak;
  weak.center = {0.3, 0.5, 0.05};
  weak.change_weight = 1;
  weak.exposure_weight = 1;
  SignalParams current = weak.center;
  for (const SignalTriple& x : data) {
    stats.Observe(x, current, /*decay=*/0.999);
    current = stats.Estimate(weak);
  }
  std::cout << "online delta " << current.delta << " alpha " << current.alpha
            << " nu " << current.nu << "\n";
  EXPECT_NEAR(current.alpha, kTruth.alpha, 0.1);
  EXPECT_NEAR(current.nu, kTruth.nu, 0.05);
  EXPECT_NEAR(current.delta, kTruth.delta, 0.08);
  EXPECT_EQ(sizeof(SignalStats), 16u);
  std::cout << "sizeof(SignalStats) = " << sizeof(SignalStats) << "\n";
}

TEST(SignalEstimatorTest, FewObservationsShrinkTowardHost) {
  // A page whose truth differs from its host; the host prior dominates with
  // 5 intervals and fades with 2000.
  const SignalParams page{0.5, 0.2, 0.5};
  SignalPrior host;
  host.center = {0.5, 0.8, 0.05};
  host.change_weight = 4;
  host.exposure_weight = 4 / host.center.delta;
  SignalFitOptions options;
  options.fix_delta = true;

  std::vector<SignalTriple> few = Dataset(page, 5, 46);
  SignalFit shrunk = FitSignals(few, {0.5, 0.5, 0.1}, host, options);
  SignalFit raw = FitSignals(few, {0.5, 0.5, 0.1}, {}, options);
  std::cout << "few: shrunk alpha " << shrunk.params.alpha << " nu "
            << shrunk.params.nu << "; raw alpha " << raw.params.alpha << " nu "
            << raw.params.nu << "\n";
  EXPECT_LT(std::abs(shrunk.params.alpha - host.center.alpha),
            std::abs(raw.params.alpha - host.center.alpha) + 1e-12);
  EXPECT_LT(std::abs(shrunk.params.nu - host.center.nu),
            std::abs(raw.params.nu - host.center.nu) + 1e-12);
  EXPECT_LT(std::abs(shrunk.params.alpha - host.center.alpha), 0.3);

  std::vector<SignalTriple> many = Dataset(page, 2000, 47);
  SignalFit learned = FitSignals(many, {0.5, 0.5, 0.1}, host, options);
  std::cout << "many: alpha " << learned.params.alpha << " nu "
            << learned.params.nu << "\n";
  EXPECT_NEAR(learned.params.alpha, page.alpha, 0.08);
  EXPECT_NEAR(learned.params.nu, page.nu, 0.05);

  // No data at all: the prior's center.
  SignalFit empty = FitSignals({}, {}, host);
  EXPECT_EQ(empty.params.alpha, host.center.alpha);
  SignalStats none;
  EXPECT_EQ(none.Estimate(host).nu, host.center.nu);
}

TEST(SignalEstimatorTest, HostileInputsNeverGiveNan) {
  const uint64_t seed = 4242;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const double specials[] = {0.0, -1.0, 1e-300, 1e300, INFINITY, NAN, 0.5, 2};
  auto pick = [&] { return specials[rng() % std::size(specials)]; };
  for (int round = 0; round < 100; ++round) {
    std::vector<SignalTriple> data;
    SignalStats stats;
    for (int i = 0; i < 10; ++i) {
      SignalTriple x{pick(), static_cast<int>(rng() % 5) - 1, rng() % 2 == 0};
      if (rng() % 10 == 0) x.signals = 1 << 30;
      data.push_back(x);
      stats.Observe(x, {pick(), pick(), pick()}, pick());
    }
    SignalParams e = stats.Estimate({});
    EXPECT_FALSE(std::isnan(e.alpha) || std::isnan(e.nu) ||
                 std::isnan(e.delta));
    SignalFitOptions o;
    o.max_iterations = 50;
    SignalFit fit = FitSignals(data, {}, {}, o);
    EXPECT_FALSE(std::isnan(fit.params.alpha) || std::isnan(fit.params.nu));
  }
}

}  // namespace
}  // namespace freshd::sched
