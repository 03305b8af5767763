// Tests of sched/crawl_value: every Paper 2 vector of docs/MATH.md and
// test_vectors.json, the identities (V(0) = 0, V′ > 0, V(∞) = μ/Δ, G′ =
// e^{−κθ}L′, ν → 0 gives CIS, α = 0 gives GREEDY, α → 1 limit), GREEDY =
// μ·∂F̄/∂f, the age value = −μ·∂Ā/∂f, and a Monte Carlo check of L and G (fixed
// seed).

#include "sched/crawl_value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include "sched/refresh_math.h"
#include "tests/sched/math_vectors.h"

namespace freshd::sched {
namespace {

using testing::LoadVectors;
using testing::Num;

void ExpectClose(double got, double want, double rel, const char* what) {
  if (std::isinf(want)) {
    EXPECT_TRUE(std::isinf(got)) << what;
    return;
  }
  EXPECT_NEAR(got, want, rel * std::max(1.0, std::fabs(want))) << what;
}

TEST(CrawlValueTest, MatchesEveryJsonVector) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  const auto& cases = v.at("P2.values");
  ASSERT_EQ(cases.size(), 20u);
  for (const auto& c : cases) {
    const auto& in = c["inputs"];
    const PageParams p{in["Delta"], in["mu"], in["alpha"], in["nu"]};
    const double tau = in["tau"];
    const int n = in["n"];
    SCOPED_TRACE(in.dump());
    const auto& o = c["outputs"];
    const double ts = SignalTimeEquivalent(p);
    ExpectClose(ts, Num(o["tau_s"]), 1e-12, "tau_s");
    const double teff = n == 0 ? tau : tau + n * ts;
    ExpectClose(teff, Num(o["tau_eff"]), 1e-12, "tau_eff");
    ExpectClose(NcisValue(p, tau, n), o["V_ncis"], 1e-10, "V_ncis");
    ExpectClose(NcisValue(p, tau, n, 1), o["V_approx1"], 1e-10, "V_approx1");
    ExpectClose(NcisValue(p, tau, n, 2), o["V_approx2"], 1e-10, "V_approx2");
    ExpectClose(GreedyValue(p.delta, p.mu, tau), o["V_greedy"], 1e-12,
                "V_greedy");
    ExpectClose(CisValue(p, tau, n), o["V_cis"], 1e-10, "V_cis");
    if (o.contains("p_fresh")) {
      ExpectClose(FreshProbability(p, tau, n), o["p_fresh"], 1e-12, "p");
    }
    if (o.contains("L")) {
      ExpectClose(NcisCycleLength(p, teff), o["L"], 1e-10, "L");
      ExpectClose(NcisFreshTime(p, teff), o["G"], 1e-10, "G");
      // P(fresh | τ, n) = e^{−κ τ_eff}.
      ExpectClose(std::exp(-(1 - p.alpha) * p.delta * teff), o["p_fresh"],
                  1e-12, "p");
    }
  }
}

TEST(CrawlValueTest, MatchesMathMdRowsToFourDecimals) {
  const PageParams a{.8, .6, .5, .2};
  EXPECT_NEAR(SignalTimeEquivalent(a), 2.7465, 5e-5);
  EXPECT_NEAR(NcisValue(a, 2, 0), .2048, 5e-5);
  EXPECT_NEAR(NcisValue(a, 2, 1), .4744, 5e-5);
  EXPECT_NEAR(NcisValue(a, 2, 1, 1), .4537, 5e-5);
  EXPECT_NEAR(CisValue(a, 2, 1), .7500, 5e-5);
  EXPECT_NEAR(NcisValue(a, 5, 3), .7312, 5e-5);
  EXPECT_NEAR(NcisValue(a, 5, 3, 1), .5950, 5e-5);
  EXPECT_NEAR(NcisValue(a, 5, 3, 2), .7100, 5e-5);
  EXPECT_NEAR(NcisCycleLength(a, 13.2396), 5.3230, 5e-5);
  EXPECT_NEAR(NcisFreshTime(a, 13.2396), 1.2453, 5e-5);
  const PageParams b{.3, 1, .9, .05};
  EXPECT_NEAR(SignalTimeEquivalent(b), 61.8766, 5e-5);
  EXPECT_NEAR(NcisValue(b, 5, 3), 3.2929, 5e-5);
  EXPECT_NEAR(NcisValue(b, 5, 3, 1), 2.8469, 5e-5);
  EXPECT_NEAR(NcisValue(b, 5, 3, 2), 3.2448, 5e-5);
  const PageParams c{1, .5, .2, .4};
  EXPECT_NEAR(NcisValue(c, 2, 0), .2438, 5e-5);
  EXPECT_NEAR(NcisValue(c, 2, 0, 1), .2179, 5e-5);
  EXPECT_NEAR(NcisValue(c, 2, 0, 2), .2429, 5e-5);
  const PageParams d{.5, .7, .7, 0};
  EXPECT_NEAR(NcisValue(d, 2, 0), .1391, 5e-5);
  EXPECT_NEAR(CisValue(d, 2, 0), .1391, 5e-5);
  EXPECT_DOUBLE_EQ(NcisValue(d, 2, 1), 1.4);
  const PageParams e{.6, .8, 0, .3};
  EXPECT_NEAR(NcisValue(e, 2, 4), .4498, 5e-5);
  EXPECT_NEAR(NcisValue(e, 2, 4, 1), .3796, 5e-5);
}

TEST(CrawlValueTest, AlphaOneLimitJsonAndClampConvergence) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  for (const auto& c : v.at("P2.alpha1_limit")) {
    const auto& in = c["inputs"];
    const PageParams p{in["Delta"], in["mu"], in["alpha"], in["nu"]};
    const int n = in["n"];
    const double want = c["outputs"]["V"];
    EXPECT_NEAR(NcisValue(p, 2.0, n), want, 1e-12) << n;
    // Clamping α to 1 − 1e-6 converges to the same value (docs/MATH.md).
    PageParams near = p;
    near.alpha = 1 - 1e-6;
    EXPECT_NEAR(NcisValue(near, 2.0, n), want, 1e-4) << n;
  }
}

TEST(CrawlValueTest, IdentitiesOfTheValueFunction) {
  const PageParams pages[] = {{.8, .6, .5, .2}, {.3, 1, .9, .05},
                              {1, .5, .2, .4},  {.5, .7, .7, 0},
                              {.6, .8, 0, .3},  {2, 1.5, .05, 3}};
  for (const PageParams& p : pages) {
    SCOPED_TRACE(std::to_string(p.delta) + "," + std::to_string(p.alpha) + "," +
                 std::to_string(p.nu));
    EXPECT_EQ(NcisValueAtTheta(p, 0), 0);
    double prev = 0;
    const double top = p.mu / p.delta;
    const double kappa = (1 - p.alpha) * p.delta;
    for (double th = 1e-3 / p.delta; th < 60 / kappa; th *= 1.3) {
      const double v = NcisValueAtTheta(p, th);
      // V′ > 0 (strict while V is distinguishable from its limit in double
      // precision).
      if (v < top * (1 - 1e-13)) {
        EXPECT_GT(v, prev) << th;
      } else {
        EXPECT_GE(v, prev) << th;
      }
      prev = v;
    }
    EXPECT_NEAR(prev, top, 1e-9 * top);  // V(∞) = μ/Δ
    EXPECT_NEAR(NcisValueAtTheta(p, INFINITY), p.mu / p.delta, 1e-15);
    // V′ = μκe^{−κθ}L and G′ = e^{−κθ}L′ by central differences.
    for (double th : {0.5 / p.delta, 2.0 / p.delta, 7.0 / p.delta}) {
      const double h = 1e-5 * th;
      const double dv =
          (NcisValueAtTheta(p, th + h) - NcisValueAtTheta(p, th - h)) / (2 * h);
      const double l = NcisCycleLength(p, th);
      EXPECT_NEAR(dv, p.mu * kappa * std::exp(-kappa * th) * l,
                  1e-6 * (1 + dv));
      const double dg =
          (NcisFreshTime(p, th + h) - NcisFreshTime(p, th - h)) / (2 * h);
      const double dl =
          (NcisCycleLength(p, th + h) - NcisCycleLength(p, th - h)) / (2 * h);
      EXPECT_NEAR(dg, std::exp(-kappa * th) * dl, 1e-6);
    }
  }
}

TEST(CrawlValueTest, SpecialCasesReduceToGreedyAndCis) {
  for (double tau : {0.1, 1.0, 4.0, 20.0}) {
    // α = 0: signals carry no information, whatever ν and n.
    EXPECT_NEAR(NcisValue({.6, .8, 0, .3}, tau, 3), GreedyValue(.6, .8, tau),
                1e-14);
    EXPECT_NEAR(CisValue({.6, .8, 0, 0}, tau, 0), GreedyValue(.6, .8, tau),
                1e-14);
    // ν → 0 gives V_CIS, for n = 0 and n ≥ 1.
    const PageParams p{.7, 1.2, .6, 0};
    PageParams tiny = p;
    tiny.nu = 1e-9;
    EXPECT_NEAR(NcisValue(tiny, tau, 0), CisValue(p, tau, 0), 1e-6);
    EXPECT_NEAR(NcisValue(tiny, tau, 1), CisValue(p, tau, 1), 1e-6);
    EXPECT_NEAR(NcisValue(p, tau, 0), CisValue(p, tau, 0), 1e-14);
    // The closed-form CIS value of docs/MATH.md.
    const double d = .7, a = .6;
    const double cis =
        1.2 / d *
        (1 - std::exp(-d * tau) -
         (std::exp(-(1 - a) * d * tau) - std::exp(-d * tau)) / a);
    EXPECT_NEAR(CisValue(p, tau, 0), cis, 1e-13);
    // CIS ignores ν: a page with many false signals still reads μ/Δ after one
    // signal.
    EXPECT_DOUBLE_EQ(CisValue({.7, 1.2, .6, 5}, tau, 1), 1.2 / .7);
  }
}

TEST(CrawlValueTest, FreshProbabilityLimits) {
  const PageParams p{.8, .6, .5, .2};
  // The docs/MATH.md row: (.8,.6,.5,.2, τ 2, n 1) → P(fresh) .1498.
  EXPECT_NEAR(FreshProbability(p, 2, 1), .1498, 5e-5);
  // Each signal multiplies by q = ν/σ; time by e^{−κτ}.
  EXPECT_NEAR(FreshProbability(p, 2, 3) / FreshProbability(p, 2, 2), .2 / .6,
              1e-12);
  EXPECT_NEAR(FreshProbability(p, 3, 0) / FreshProbability(p, 1, 0),
              std::exp(-2 * .4), 1e-12);
  // α = 0: signals say nothing, GREEDY's e^{−Δτ}.
  EXPECT_NEAR(FreshProbability({.8, .6, 0, .2}, 2, 5), std::exp(-1.6), 1e-12);
  // ν = 0: one signal proves a change; without one, only unsignalled
  // changes can have happened.
  EXPECT_EQ(FreshProbability({.8, .6, .5, 0}, 2, 1), 0);
  EXPECT_NEAR(FreshProbability({.8, .6, .5, 0}, 2, 0), std::exp(-.8), 1e-12);
  // α = 1: only signals matter.
  EXPECT_NEAR(FreshProbability({.6, .8, 1, .3}, 7, 2), 1.0 / 9, 1e-12);
  EXPECT_EQ(FreshProbability({.6, .8, 1, .3}, 7, 0), 1);
  // No signal process at all (σ = 0): n is ignored.
  EXPECT_NEAR(FreshProbability({.8, .6, 0, 0}, 2, 3), std::exp(-1.6), 1e-12);
  // A page that never changes stays fresh.
  EXPECT_EQ(FreshProbability({0, .6, .5, .2}, 50, 4), 1);
  EXPECT_TRUE(std::isnan(FreshProbability(p, -1, 0)));
  EXPECT_TRUE(std::isnan(FreshProbability(p, 1, -1)));
  EXPECT_TRUE(std::isnan(FreshProbability({.8, .6, 1.5, .2}, 1, 0)));
}

TEST(CrawlValueTest, GreedyIsMuTimesFreshnessDerivative) {
  for (double d : {0.1, 1.0, 3.0}) {
    for (double tau : {0.01, 0.5, 2.0, 30.0}) {
      EXPECT_NEAR(GreedyValue(d, 0.7, tau),
                  0.7 * FreshnessDerivative(d, 1 / tau), 1e-14 * (1 + 1 / d));
      // d/dr[r·F(1/r)] with F(τ) = μ(1−e^{−Δτ})/Δ at r = 1/τ.
      auto phi = [d](double r) { return r * 0.7 * -std::expm1(-d / r) / d; };
      const double r = 1 / tau, h = 1e-6 * r;
      EXPECT_NEAR(GreedyValue(d, 0.7, tau), (phi(r + h) - phi(r - h)) / (2 * h),
                  1e-6 * (1 + 1 / d));
    }
  }
  EXPECT_EQ(GreedyValue(1, 1, 0), 0);
  EXPECT_NEAR(GreedyValue(2, 1, 1e-8), 1e-16,
              1e-22);  // ≈ μΔτ²/2, no cancellation
  EXPECT_DOUBLE_EQ(GreedyValue(2, 3, INFINITY), 1.5);
}

TEST(CrawlValueTest, AgeValueIsMinusMuTimesAgeDerivative) {
  for (double d : {0.2, 1.0, 4.0}) {
    double prev = 0;
    for (double tau : {0.01, 0.3, 1.0, 5.0, 50.0}) {
      const double v = AgeValue(d, 1.3, tau);
      EXPECT_NEAR(v, -1.3 * AgeDerivative(d, 1 / tau), 1e-12 * (1 + v));
      EXPECT_GT(v, prev);
      prev = v;
      // dV/dτ = μτ(1 − e^{−Δτ}).
      const double h = 1e-6 * tau;
      EXPECT_NEAR(
          (AgeValue(d, 1.3, tau + h) - AgeValue(d, 1.3, tau - h)) / (2 * h),
          1.3 * tau * -std::expm1(-d * tau), 1e-6 * (1 + v));
    }
  }
  EXPECT_EQ(AgeValue(1, 1, 0), 0);
  EXPECT_EQ(AgeValue(0, 1, 5), 0);
  EXPECT_TRUE(std::isnan(AgeValue(-1, 1, 5)));
}

// Monte Carlo of threshold cycles: a cycle starts fresh at τ = 0; changes
// arrive at rate Δ (each signalled with prob. α), false signals at rate ν; the
// cycle ends when τ + nτ_s ≥ θ.
TEST(CrawlValueTest, CycleLengthAndFreshTimeMatchMonteCarlo) {
  const unsigned seed = 20260421;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PageParams p{.8, 1, .5, .2};
  const double ts = SignalTimeEquivalent(p);
  for (double theta : {2.0, 6.0}) {
    std::exponential_distribution<double> next(p.delta + p.nu);
    std::uniform_real_distribution<double> u(0, 1);
    const int cycles = 100000;
    double sum_l = 0, sum_l2 = 0, sum_g = 0, sum_g2 = 0;
    for (int c = 0; c < cycles; ++c) {
      double t = 0, fresh_until = -1;
      int n = 0;
      while (true) {
        const double end =
            theta - n * ts;   // real time at which the threshold is reached
        if (end <= t) break;  // the last signal reached it
        const double dt = next(rng);
        if (t + dt >= end) {
          t = end;
          break;
        }
        t += dt;
        const double x = u(rng) * (p.delta + p.nu);
        if (x < p.delta) {  // a real change
          if (fresh_until < 0) fresh_until = t;
          if (u(rng) < p.alpha) ++n;
        } else {
          ++n;  // false signal
        }
      }
      const double g = fresh_until < 0 ? t : fresh_until;
      sum_l += t;
      sum_l2 += t * t;
      sum_g += g;
      sum_g2 += g * g;
    }
    const double ml = sum_l / cycles, mg = sum_g / cycles;
    const double se_l = std::sqrt((sum_l2 / cycles - ml * ml) / cycles);
    const double se_g = std::sqrt((sum_g2 / cycles - mg * mg) / cycles);
    EXPECT_NEAR(NcisCycleLength(p, theta), ml, 4 * se_l) << theta;
    EXPECT_NEAR(NcisFreshTime(p, theta), mg, 4 * se_g) << theta;
  }
}

TEST(CrawlValueTest, TruncationAndLargeInputsStayFiniteAndBounded) {
  // A page neglected for a very long time: V = μ/Δ to double precision,
  // quickly.
  const PageParams p{.5, 1, .3, .2};
  EXPECT_NEAR(NcisValue(p, 1e7, 0), 2.0, 1e-12);
  EXPECT_NEAR(NcisValue(p, 10, 100000), 2.0, 1e-12);
  // Nearly-noise signals (ν ≫ Δ, tiny α): many terms, still GREEDY-like and
  // finite.
  const PageParams q{.01, 1, 1e-4, 50};
  const double v = NcisValue(q, 300, 1000);
  EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(v, GreedyValue(.01, 1, 300), 0.02 * v);
  // Invalid inputs.
  EXPECT_TRUE(std::isnan(NcisValue({-1, 1, .5, .1}, 1, 0)));
  EXPECT_TRUE(std::isnan(NcisValue({1, 1, 1.5, .1}, 1, 0)));
  EXPECT_TRUE(std::isnan(NcisValue({1, 1, .5, .1}, -1, 0)));
  EXPECT_TRUE(std::isnan(NcisValue({1, 1, .5, .1}, 1, -2)));
  EXPECT_EQ(NcisValue({0, 1, .5, .1}, 1, 2), 0);
}

// The closed forms (renewal-function residues) agree with the term-by-term
// sums (max_terms past every term's index forces those) over a spread of
// parameters, and are taken for the long-neglected pages with weak signals
// that made the sums slow (the 10M-page restart of issue 29).
TEST(CrawlValueTest, ClosedFormSumsAgreeWithTheTermByTermSums) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> u(0, 1);
  auto log_uniform = [&](double lo, double hi) {
    return lo * std::pow(hi / lo, u(rng));
  };
  constexpr int kAllTerms = 1 << 20;
  int closed = 0, summed = 0;
  for (int i = 0; i < 3000; ++i) {
    const PageParams p{log_uniform(1e-3, 10), 1, 0.95 * u(rng),
                       log_uniform(1e-3, 10)};
    const double theta = log_uniform(1e-2, 300);
    if (NcisSumsInClosedForm(p, theta)) {
      ++closed;
    } else {
      ++summed;
    }
    const std::string what =
        "Δ " + std::to_string(p.delta) + " α " + std::to_string(p.alpha) +
        " ν " + std::to_string(p.nu) + " θ " + std::to_string(theta);
    const double g = NcisFreshTime(p, theta, kAllTerms);
    const double l = NcisCycleLength(p, theta, kAllTerms);
    EXPECT_NEAR(NcisFreshTime(p, theta), g, 1e-12 * g) << what;
    EXPECT_NEAR(NcisCycleLength(p, theta), l, 1e-12 * l) << what;
    EXPECT_NEAR(NcisValueAtTheta(p, theta),
                NcisValueAtTheta(p, theta, kAllTerms), 1e-12 / p.delta)
        << what;
  }
  EXPECT_GT(closed, 400);
  EXPECT_GT(summed, 600);
  // A page of a host whose sitemap lists it far more often than it changes,
  // 80 days unfetched: 829 terms in each sum before.
  const PageParams weak{0.159, 1, 0.022, 9.89};
  EXPECT_TRUE(NcisSumsInClosedForm(weak, 81.96));
  EXPECT_NEAR(NcisValueAtTheta(weak, 81.96),
              NcisValueAtTheta(weak, 81.96, kAllTerms), 1e-13 / weak.delta);
  // Strong signals (τ_s long) or a young page: the sums.
  EXPECT_FALSE(NcisSumsInClosedForm({0.159, 1, 0.9, 0.1}, 81.96));
  EXPECT_FALSE(NcisSumsInClosedForm(weak, 0.001));
}

}  // namespace
}  // namespace freshd::sched
