// Tests of sched/refresh_math: Cho & Garcia-Molina's F̄, Ā (three sync orders),
// E[F(t)], E[A(t)] and the derivatives, against docs/MATH.md's test vectors
// (data/math/test_vectors.json), numerical quadrature of the definitions, and
// finite differences.

#include "sched/refresh_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "sched/special_functions.h"
#include "tests/sched/math_vectors.h"

namespace freshd::sched {
namespace {

using testing::LoadVectors;
using testing::Num;

// Composite Simpson rule on [a, b] with n (even) intervals.
template <typename F>
double Simpson(const F& f, double a, double b, int n = 20000) {
  const double h = (b - a) / n;
  double s = f(a) + f(b);
  for (int i = 1; i < n; ++i) s += f(a + i * h) * (i % 2 ? 4 : 2);
  return s * h / 3;
}

TEST(RefreshMathTest, MatchesEveryJsonVector) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  const auto& cases = v.at("P1.sync_order");
  ASSERT_EQ(cases.size(), 6u);
  for (const auto& c : cases) {
    const double lam = Num(c["inputs"]["lam"]), f = Num(c["inputs"]["f"]);
    const auto& o = c["outputs"];
    SCOPED_TRACE("lam=" + std::to_string(lam) + " f=" + std::to_string(f));
    auto near = [](double got, double want) {
      EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::fabs(want)));
    };
    near(TimeAveragedFreshness(SyncOrder::kFixed, lam, f), o["F_fixed"]);
    near(TimeAveragedAge(SyncOrder::kFixed, lam, f), o["A_fixed"]);
    near(TimeAveragedFreshness(SyncOrder::kRandom, lam, f),
         o["F_random_order"]);
    near(TimeAveragedAge(SyncOrder::kRandom, lam, f), o["A_random_order"]);
    near(TimeAveragedFreshness(SyncOrder::kPurelyRandom, lam, f),
         o["F_purely_random"]);
    near(TimeAveragedAge(SyncOrder::kPurelyRandom, lam, f),
         o["A_purely_random"]);
    near(FreshnessDerivative(lam, f), o["dF_df"]);
    near(AgeDerivative(lam, f), o["dA_df"]);
  }
}

TEST(RefreshMathTest, MatchesMathMdTableToFourDecimals) {
  struct Row {
    double lam, f, v[8];
  };
  const Row rows[] = {
      {1, 1, {.6321, .1321, .6004, .1838, .5000, .5000, .2642, -.2358}},
      {2, 1, {.4323, .2162, .4065, .2866, .3333, .6667, .2970, -.3515}},
      {3, .7, {.2301, .4577, .2210, .5737, .1892, 1.1583, .3091, -.9174}},
  };
  for (const Row& r : rows) {
    const double got[8] = {
        TimeAveragedFreshness(SyncOrder::kFixed, r.lam, r.f),
        TimeAveragedAge(SyncOrder::kFixed, r.lam, r.f),
        TimeAveragedFreshness(SyncOrder::kRandom, r.lam, r.f),
        TimeAveragedAge(SyncOrder::kRandom, r.lam, r.f),
        TimeAveragedFreshness(SyncOrder::kPurelyRandom, r.lam, r.f),
        TimeAveragedAge(SyncOrder::kPurelyRandom, r.lam, r.f),
        FreshnessDerivative(r.lam, r.f),
        AgeDerivative(r.lam, r.f)};
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(got[i], r.v[i], 5.01e-5) << i;
  }
}

TEST(RefreshMathTest, FixedOrderEqualsQuadratureOfExpectations) {
  // Fixed order: F̄ = f∫₀^{1/f} E[F(t)]dt, Ā = f∫₀^{1/f} E[A(t)]dt (Eq. 4, 5).
  for (double lam : {0.05, 0.7, 3.0}) {
    for (double f : {0.1, 1.0, 4.0}) {
      const double fq =
          f * Simpson([&](double t) { return ExpectedFreshness(lam, t); }, 0,
                      1 / f);
      const double aq =
          f * Simpson([&](double t) { return ExpectedAge(lam, t); }, 0, 1 / f);
      EXPECT_NEAR(TimeAveragedFreshness(SyncOrder::kFixed, lam, f), fq, 1e-10);
      EXPECT_NEAR(TimeAveragedAge(SyncOrder::kFixed, lam, f), aq,
                  1e-9 * (1 + aq));
    }
  }
}

TEST(RefreshMathTest, PurelyRandomEqualsQuadratureOverExponentialIntervals) {
  // Purely random sync: intervals ~ Exp(f); F̄ = E[∫F]/E[I] over the interval
  // density.
  const double lam = 1.3, f = 0.8;
  const double fq =
      f * Simpson(
              [&](double x) {
                return f * std::exp(-f * x) * (-std::expm1(-lam * x)) / lam;
              },
              0, 60, 60000);
  EXPECT_NEAR(TimeAveragedFreshness(SyncOrder::kPurelyRandom, lam, f), fq,
              1e-9);
  const double aq =
      f * Simpson(
              [&](double x) {
                // ∫₀^x E[A(t)]dt = x²/2 − x/λ + (1−e^{−λx})/λ².
                const double inner =
                    x * x / 2 - x / lam - std::expm1(-lam * x) / (lam * lam);
                return f * std::exp(-f * x) * inner;
              },
              0, 60, 60000);
  EXPECT_NEAR(TimeAveragedAge(SyncOrder::kPurelyRandom, lam, f), aq, 1e-8);
}

TEST(RefreshMathTest, DerivativesMatchFiniteDifferences) {
  for (double lam : {0.3, 1.0, 5.0}) {
    for (double f : {0.2, 1.0, 3.0}) {
      const double h = 1e-5 * f;
      const double df = (TimeAveragedFreshness(SyncOrder::kFixed, lam, f + h) -
                         TimeAveragedFreshness(SyncOrder::kFixed, lam, f - h)) /
                        (2 * h);
      const double da = (TimeAveragedAge(SyncOrder::kFixed, lam, f + h) -
                         TimeAveragedAge(SyncOrder::kFixed, lam, f - h)) /
                        (2 * h);
      EXPECT_NEAR(FreshnessDerivative(lam, f), df, 1e-7 * (1 + std::fabs(df)));
      EXPECT_NEAR(AgeDerivative(lam, f), da, 1e-6 * (1 + std::fabs(da)));
    }
  }
}

TEST(RefreshMathTest, FreshnessDerivativeFallsFromOneOverLambdaToZero) {
  const double lam = 2.0;
  EXPECT_DOUBLE_EQ(FreshnessDerivative(lam, 0), 1 / lam);
  EXPECT_NEAR(FreshnessDerivative(lam, 1e-3), 1 / lam, 1e-15);
  double prev =
      FreshnessDerivative(lam, 0.1);  // below, 1/λ to double precision
  for (double f = 0.15; f < 1e4; f *= 1.5) {
    const double d = FreshnessDerivative(lam, f);
    EXPECT_LT(d, prev) << f;  // strictly decreasing: F̄ concave in f
    prev = d;
  }
  EXPECT_LT(prev, 1e-7);
  EXPECT_GT(prev, 0);
}

TEST(RefreshMathTest, SmallRatioSeriesAreContinuousAndAccurate) {
  // Around r = 0.02 (series / closed-form switch) and for r → 0 the values
  // approach the limits.
  for (double r : {1e-9, 1e-5, 0.0199999, 0.0200001, 0.05}) {
    const double f = 1.0, lam = r;
    const double r2 = r * r, r3 = r2 * r, r4 = r3 * r, r5 = r4 * r, r6 = r5 * r;
    EXPECT_NEAR(
        TimeAveragedAge(SyncOrder::kRandom, lam, f),
        r / 4 - 31 * r2 / 360 + r3 / 40 - 127 * r4 / 20160 + 17 * r5 / 12096,
        1e-13 * r + 1e-3 * r6);
    EXPECT_NEAR(TimeAveragedAge(SyncOrder::kFixed, lam, f),
                r / 6 - r2 / 24 + r3 / 120 - r4 / 720 + r5 / 5040,
                1e-13 * r + 1e-4 * r6);
    EXPECT_NEAR(TimeAveragedFreshness(SyncOrder::kRandom, lam, f),
                1 - 7 * r / 12 + r2 / 4 - 31 * r3 / 360, 1e-15 + 0.03 * r4);
  }
}

TEST(RefreshMathTest, PaperTextClaims) {
  // r = 0.4642 gives F̄ = 0.8 (paper: 0.46).
  const double r = FindRoot(
      [](double x) {
        return TimeAveragedFreshness(SyncOrder::kFixed, x, 1) - 0.8;
      },
      0.1, 1);
  EXPECT_NEAR(r, 0.4642, 5e-5);
  // Fixed-order age at r = 1 is 0.264 × purely random and 0.719 × random order
  // (MATH (b)).
  const double fixed = TimeAveragedAge(SyncOrder::kFixed, 1, 1);
  EXPECT_NEAR(fixed / TimeAveragedAge(SyncOrder::kPurelyRandom, 1, 1), 0.264,
              5e-4);
  EXPECT_NEAR(fixed / TimeAveragedAge(SyncOrder::kRandom, 1, 1), 0.719, 5e-4);
}

TEST(RefreshMathTest, EdgeCasesAndInvalidInput) {
  EXPECT_EQ(TimeAveragedFreshness(SyncOrder::kFixed, 1, 0), 0);
  EXPECT_TRUE(std::isinf(TimeAveragedAge(SyncOrder::kRandom, 1, 0)));
  EXPECT_EQ(TimeAveragedFreshness(SyncOrder::kRandom, 0, 1), 1);
  EXPECT_EQ(TimeAveragedAge(SyncOrder::kPurelyRandom, 0, 1), 0);
  EXPECT_TRUE(std::isnan(TimeAveragedFreshness(SyncOrder::kFixed, -1, 1)));
  EXPECT_TRUE(std::isnan(ExpectedAge(NAN, 1)));
  EXPECT_EQ(ExpectedAge(2, 0), 0);
  EXPECT_NEAR(ExpectedAge(1e-12, 3), 4.5e-12 - 4.5e-24,
              1e-14 * 4.5e-12);  // λt²/2 − λ²t³/6
  EXPECT_NEAR(ExpectedAge(2, 50), 50 - 0.5, 1e-12);
}

TEST(SpecialFunctionsTest, GammaJMatchesDirectSumAndLimits) {
  // γ_j(x) = 1 − e^{−x}Σ x^i/i! where that sum is well conditioned; and the
  // Poisson identity Σ_{j≥0} γ_j(x) = x.
  for (double x : {0.3, 2.0, 7.5, 40.0}) {
    double sum = 0;
    for (int j = 0; j < 400; ++j) sum += GammaJ(j, x);
    EXPECT_NEAR(sum, x, 1e-12 * (1 + x)) << x;
  }
  EXPECT_NEAR(GammaJ(0, 1.5), -std::expm1(-1.5), 1e-16);
  EXPECT_NEAR(GammaJ(1, 1e-6), 0.5e-12 - 1e-18 / 3 + 1e-24 / 8,
              1e-14 * 0.5e-12);  // no cancellation
  EXPECT_NEAR(GammaJ(3, 2.0), 1 - std::exp(-2.0) * (1 + 2 + 2 + 8.0 / 6),
              1e-15);
  // Log-space branches (large x or j) agree with the normal approximation's
  // centre.
  EXPECT_NEAR(GammaJ(1000, 1000.5), 0.5, 0.02);
  EXPECT_NEAR(GammaJ(10, 900.0), 1.0, 1e-15);
  EXPECT_EQ(GammaJ(2, 0), 0);
  EXPECT_EQ(GammaJ(2, INFINITY), 1);
}

TEST(SpecialFunctionsTest, AgeIntegralAndExpRemainder) {
  for (double x : {1e-6, 0.01, 0.7, 3.0, 30.0}) {
    const double q =
        Simpson([](double s) { return s * -std::expm1(-s); }, 0, x);
    EXPECT_NEAR(AgeIntegral(x), q, 1e-12 * (1 + q)) << x;
  }
  EXPECT_NEAR(ExpRemainder(3, -1e-3),
              -1e-9 / 6 + 1e-12 / 24 - 1e-15 / 120 + 1e-18 / 720,
              1e-14 * 1.7e-10);
  EXPECT_NEAR(ExpRemainder(2, 5.0), std::exp(5.0) - 6, 1e-12);
}

}  // namespace
}  // namespace freshd::sched
