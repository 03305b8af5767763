// Signal quality estimation (recall α, false-signal rate ν, change rate Δ)
// from (τ, n, changed) triples: docs/MATH.md Paper 2 (a) model, paper appendix
// E. Randomized tests use fixed, logged seeds.
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
      // docs/MATH.md Paper 2 (a): P(fresh | τ, n) = e^{−κτ} q^n.
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
  EXPECT_EQ(sizeof(SignalStats), 20u);
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

// log of the timed likelihood's dropped factors: the volumes of the b signal
// positions before the change and the m after it.
double PositionVolume(double before, int b, double after, int m) {
  auto term = [](double length, int k) {
    return k == 0 ? 0 : k * std::log(length) - std::lgamma(k + 1.0);
  };
  return term(before, b) + term(after, m);
}

TEST(SignalEstimatorTest, TimedLikelihoodIntegratesToTheChangedOne) {
  // Summed over where the newest change fell (s) and how the n signals fell
  // around it, the timed likelihood is the count-only P(changed, n | τ).
  const SignalParams p{0.8, 0.6, 0.3};
  for (double tau : {0.4, 2.5}) {
    for (int n : {0, 1, 3}) {
      constexpr int kSteps = 4000;  // Simpson over s ∈ [0, τ]
      double total = 0;
      for (int i = 0; i <= kSteps; ++i) {
        const double s = tau * i / kSteps;
        const double w = (i == 0 || i == kSteps) ? 1 : (i % 2 ? 4 : 2);
        double density = 0;
        for (bool at_change : {false, true}) {
          for (int m = 0; m + (at_change ? 1 : 0) <= n; ++m) {
            const int b = n - m - (at_change ? 1 : 0);
            if ((b > 0 && s >= tau) || (m > 0 && s <= 0)) continue;
            SignalTriple x{tau, n, true};
            x.quiet = std::min(s, std::nextafter(tau, 0.0));
            x.signals_after = m;
            x.signal_at_change = at_change;
            density += std::exp(SignalLogLikelihood(p, x) +
                                PositionVolume(tau - s, b, s, m));
          }
        }
        total += w * density * tau / kSteps / 3;
      }
      const double expected =
          std::exp(SignalLogLikelihood(p, {tau, n, true}) + n * std::log(tau) -
                   std::lgamma(n + 1.0));
      EXPECT_NEAR(total, expected, 1e-7 * expected)
          << "tau " << tau << " n " << n;
    }
  }
}

TEST(SignalEstimatorTest, ContradictoryTimingCountsAsCountOnly) {
  const SignalParams p{0.8, 0.6, 0.3};
  const SignalTriple plain{2.0, 2, true};
  auto timed = [&](bool changed, double quiet, int after, bool at) {
    SignalTriple x{2.0, 2, changed};
    x.quiet = quiet;
    x.signals_after = after;
    x.signal_at_change = at;
    return x;
  };
  const double ll = SignalLogLikelihood(p, plain);
  EXPECT_EQ(SignalLogLikelihood(p, timed(true, 2.0, 0, false)), ll);  // s ≥ τ
  EXPECT_EQ(SignalLogLikelihood(p, timed(true, 0.5, 2, true)), ll);   // 3 > n
  EXPECT_EQ(SignalLogLikelihood(p, timed(true, 0.5, -1, false)), ll);
  EXPECT_EQ(SignalLogLikelihood(p, timed(false, 0.5, 0, false)),
            SignalLogLikelihood(p, {2.0, 2, false}));
  EXPECT_NE(SignalLogLikelihood(p, timed(true, 0.5, 1, true)), ll);
}

// A page whose fetches follow its signals: each signal is followed by a
// fetch `lag` later (unless another fetch comes first), and without one the
// page is fetched every `gap`. With a Last-Modified, each changed interval is
// timed. Signals arrive when their change happens (no delay).
std::vector<SignalTriple> SignalDrivenHistory(const SignalParams& p,
                                              int intervals, double lag,
                                              double gap, uint64_t seed) {
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> change(p.delta), noise(p.nu);
  std::bernoulli_distribution signalled(p.alpha);
  double next_change = change(rng), next_noise = noise(rng);
  double fetch = 0;
  std::vector<SignalTriple> out;
  while (static_cast<int>(out.size()) < intervals) {
    SignalTriple x{0, 0, false};
    double next_fetch = fetch + gap, last_change = -1;
    bool last_signalled = false;
    std::vector<double> signal_times;
    while (true) {
      const double t = std::min({next_change, next_noise, next_fetch});
      if (t == next_fetch) break;
      if (t == next_change) {
        last_change = t;
        last_signalled = signalled(rng);
        if (last_signalled) signal_times.push_back(t);
        next_change = t + change(rng);
      } else {
        signal_times.push_back(t);
        next_noise = t + noise(rng);
      }
      if (!signal_times.empty() && signal_times.back() == t) {
        next_fetch = std::min(next_fetch, t + lag);
      }
    }
    x.tau = next_fetch - fetch;
    x.signals = static_cast<int>(signal_times.size());
    x.changed = last_change >= 0;
    if (x.changed) {
      x.quiet = next_fetch - last_change;
      x.signal_at_change = last_signalled;
      for (double t : signal_times) x.signals_after += t > last_change;
    }
    out.push_back(x);
    fetch = next_fetch;
  }
  return out;
}

TEST(SignalEstimatorTest, TimedFitHoldsWhenSignalsChooseFetchTimes) {
  // The quiet time alone (ChangeRateStats' λe^{−λs}) reads such a history as
  // a fast page; the timed likelihood, which conditions on the signals,
  // recovers (Δ, α, ν), and pins α down better than the changed bits do.
  const SignalParams truth{0.5, 0.7, 0.2};  // per day
  std::vector<SignalTriple> timed =
      SignalDrivenHistory(truth, 3000, /*lag=*/0.05, /*gap=*/8, 48);
  std::vector<SignalTriple> bits = timed;
  double changes = 0, quiet = 0, unchanged_time = 0;
  for (SignalTriple& x : bits) {
    if (x.changed) {
      changes += 1;
      quiet += x.quiet;
    } else {
      unchanged_time += x.tau;
    }
    x.quiet = -1;
  }
  const double bare_rate = changes / (quiet + unchanged_time);
  SignalFit with_time = FitSignals(timed, {}, {});
  SignalFit count_only = FitSignals(bits, {}, {});
  std::cout << "bare quiet-time rate " << bare_rate << "; timed delta "
            << with_time.params.delta << " alpha " << with_time.params.alpha
            << " nu " << with_time.params.nu << "; count-only delta "
            << count_only.params.delta << " alpha " << count_only.params.alpha
            << " nu " << count_only.params.nu << "\n";
  EXPECT_GT(bare_rate, 1.5 * truth.delta);
  EXPECT_NEAR(with_time.params.delta, truth.delta, 0.05);
  EXPECT_NEAR(with_time.params.alpha, truth.alpha, 0.04);
  EXPECT_NEAR(with_time.params.nu, truth.nu, 0.02);

  // The online statistics, one EM step per interval, agree.
  SignalStats stats;
  SignalPrior weak;
  weak.center = {0.3, 0.5, 0.05};
  weak.change_weight = 1;
  weak.exposure_weight = 1 / weak.center.delta;
  SignalParams current = weak.center;
  for (const SignalTriple& x : timed) {
    stats.Observe(x, current, /*decay=*/0.999);
    current = stats.Estimate(weak);
  }
  std::cout << "online timed delta " << current.delta << " alpha "
            << current.alpha << " nu " << current.nu << "\n";
  EXPECT_LT(stats.quiet(), stats.exposure());
  EXPECT_NEAR(current.delta, truth.delta, 0.08);
  EXPECT_NEAR(current.alpha, truth.alpha, 0.08);
  EXPECT_NEAR(current.nu, truth.nu, 0.04);

  // A page's worth of history (15 intervals) fetched days after its
  // signals, as at a tight budget: nearly every interval shows a change, so
  // the changed bits say little about Δ; the timed changes still do.
  const SignalParams fast{1.5, 0.3, 0.2};
  double timed_error = 0, bits_error = 0;
  for (uint64_t seed = 100; seed < 140; ++seed) {
    std::vector<SignalTriple> page =
        SignalDrivenHistory(fast, 15, /*lag=*/3, /*gap=*/8, seed);
    SignalFit a = FitSignals(page, {}, weak);
    for (SignalTriple& x : page) x.quiet = -1;
    SignalFit b = FitSignals(page, {}, weak);
    timed_error += std::abs(std::log(a.params.delta / fast.delta));
    bits_error += std::abs(std::log(b.params.delta / fast.delta));
  }
  std::cout << "mean |ln(delta/truth)| over 40 pages of 15 intervals: timed "
            << timed_error / 40 << ", count-only " << bits_error / 40 << "\n";
  EXPECT_LT(timed_error, 0.5 * bits_error);
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
      if (rng() % 2 == 0) {  // timed evidence, consistent or not
        x.quiet = pick();
        x.signals_after = static_cast<int>(rng() % 5) - 1;
        x.signal_at_change = rng() % 2 == 0;
      }
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
