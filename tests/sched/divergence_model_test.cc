// Tests of sched/divergence_model: docs/MATH.md Paper 3 (a) vectors (churn,
// scroll, mixed, φ), U against quadrature of t·D − ∫D, D against Monte Carlo of
// its definition (fixed seed), sup U, monotonicity, and invalid models.

#include "sched/divergence_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include "tests/sched/math_vectors.h"

namespace freshd::sched {
namespace {

using testing::LoadVectors;
using testing::Num;

// Churn-only model with asymptote a = g(c) = 2c/(1+c), i.e. c = a/(2 − a).
DivergenceModel Churn(double a, double lam) {
  const double c = a / (2 - a);
  return {1 - c, c, lam, 1, 0};
}
DivergenceModel Scroll(double s, int k, double lam) {
  return {s, 0, 0, k, lam};
}

template <typename F>
double Simpson(const F& f, double a, double b, int n = 4000) {
  const double h = (b - a) / n;
  double s = f(a) + f(b);
  for (int i = 1; i < n; ++i) s += f(a + i * h) * (i % 2 ? 4 : 2);
  return s * h / 3;
}

TEST(DivergenceModelTest, MatchesEveryJsonVector) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  int checked = 0;
  for (const auto& c : v.at("P3.churn")) {
    const auto& in = c["inputs"];
    const DivergenceModel m = Churn(in["a"], in["lam"]);
    EXPECT_NEAR(Divergence(m, in["t"]), c["outputs"]["D"].get<double>(), 1e-12);
    EXPECT_NEAR(Utility(m, in["t"]), c["outputs"]["U"].get<double>(), 1e-12);
    ++checked;
  }
  for (const auto& c : v.at("P3.scroll")) {
    const auto& in = c["inputs"];
    const DivergenceModel m = Scroll(in["s"], in["K"], in["lam"]);
    EXPECT_NEAR(Divergence(m, in["t"]), c["outputs"]["D"].get<double>(), 1e-12);
    EXPECT_NEAR(Utility(m, in["t"]), c["outputs"]["U"].get<double>(), 1e-12);
    ++checked;
  }
  for (const auto& c : v.at("P3.mixed")) {
    const auto& in = c["inputs"];
    const DivergenceModel m{in["s"], in["c"], in["lam_c"], in["K"],
                            in["lam_s"]};
    EXPECT_NEAR(Divergence(m, in["t"]), c["outputs"]["D"].get<double>(), 1e-12);
    EXPECT_NEAR(Utility(m, in["t"]), c["outputs"]["U"].get<double>(), 1e-11);
    ++checked;
  }
  for (const auto& c : v.at("P3.refresh_period")) {
    const auto& in = c["inputs"];
    const double target = in["T"];
    const DivergenceModel churn = Churn(in["churn"][0], in["churn"][1]);
    const DivergenceModel scroll =
        Scroll(in["scroll"][0], in["scroll"][1], in["scroll"][2]);
    EXPECT_NEAR(UtilityInverse(churn, target),
                c["outputs"]["phi_churn"].get<double>(), 1e-9);
    EXPECT_NEAR(UtilityInverse(scroll, target),
                c["outputs"]["phi_scroll"].get<double>(), 1e-9);
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(DivergenceModelTest, MatchesMathMdToFourDecimals) {
  const DivergenceModel mixed{.4, .2, 1, 5, .3};
  EXPECT_NEAR(Divergence(mixed, 4), .4447, 5e-5);
  EXPECT_NEAR(Utility(mixed, 10), 1.5125, 5e-5);
  EXPECT_NEAR(UtilityInverse(Churn(2.0 / 3, .25), 2), 10.7705, 5e-5);
  EXPECT_NEAR(UtilityInverse(Scroll(.5, 10, .25), 1), 9.8430, 5e-5);
}

TEST(DivergenceModelTest, UtilityEqualsQuadratureOfDefinition) {
  const DivergenceModel models[] = {Churn(.5, .7),
                                    Scroll(.3, 7, .4),
                                    {.4, .2, 1, 5, .3},
                                    {.1, .5, .05, 12, 2.5},
                                    {0, .3, .3, 1, .3}};
  for (const DivergenceModel& m : models) {
    for (double t : {0.3, 2.0, 9.0, 40.0}) {
      const double integral =
          Simpson([&](double x) { return Divergence(m, x); }, 0, t);
      EXPECT_NEAR(Utility(m, t), t * Divergence(m, t) - integral, 1e-9)
          << m.static_share << " " << m.churn_share << " t=" << t;
    }
  }
}

TEST(DivergenceModelTest, DivergenceMatchesMonteCarloOfDefinition) {
  // D = E[g(u)], u = c·B + k·min(J,K)/K, B ~ Bernoulli(1−e^{−λ_c t}), J ~
  // Poisson(λ_s t).
  const unsigned seed = 7;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed 7");
  const DivergenceModel m{.25, .35, .4, 6, .8};
  const double k = 1 - m.static_share - m.churn_share;
  for (double t : {0.5, 3.0, 10.0}) {
    std::bernoulli_distribution b(1 - std::exp(-m.churn_rate * t));
    std::poisson_distribution<int> j(m.scroll_rate * t);
    const int n = 200000;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; ++i) {
      const double u = m.churn_share * b(rng) +
                       k * std::min(j(rng), m.scroll_k) / m.scroll_k;
      const double d = 2 * u / (1 + u);
      sum += d;
      sum2 += d * d;
    }
    const double mean = sum / n, se = std::sqrt((sum2 / n - mean * mean) / n);
    EXPECT_NEAR(Divergence(m, t), mean, 4 * se) << t;
  }
}

TEST(DivergenceModelTest, MonotoneWithCorrectLimits) {
  const DivergenceModel m{.4, .2, 1, 5, .3};
  double prev_d = 0, prev_u = 0;
  for (double t = 0.01; t < 400; t *= 1.2) {
    const double d = Divergence(m, t), u = Utility(m, t);
    EXPECT_GE(d, prev_d);
    EXPECT_GE(u, prev_u - 1e-12);
    prev_d = d;
    prev_u = u;
  }
  EXPECT_NEAR(prev_d, 2 * .6 / 1.6, 1e-12);  // g(1 − s)
  EXPECT_NEAR(prev_u, SupUtility(m), 1e-9);
  EXPECT_EQ(Divergence(m, 0), 0);
  EXPECT_EQ(Utility(m, 0), 0);
  // Churn only: sup U = a/λ.
  EXPECT_NEAR(SupUtility(Churn(2.0 / 3, .25)), (2.0 / 3) / .25, 1e-14);
}

// U(U⁻¹(T)) = T over random mixed models and targets up to sup U.
TEST(DivergenceModelTest, InverseRoundTripsOverRandomModels) {
  const uint64_t seed = 9137;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  int checked = 0;
  for (int i = 0; i < 500; ++i) {
    DivergenceModel m;
    m.static_share = 0.5 * u(rng);
    m.churn_share = (1 - m.static_share) * u(rng);
    m.churn_rate = u(rng) < 0.2 ? 0 : std::exp(8 * u(rng) - 4);
    m.scroll_k = 1 + static_cast<int>(20 * u(rng));
    m.scroll_rate = std::exp(8 * u(rng) - 4);
    const double sup = SupUtility(m);
    const double target = sup * (0.999 * u(rng) + 1e-6);
    const double phi = UtilityInverse(m, target);
    ASSERT_TRUE(std::isfinite(phi)) << "seed " << seed << " case " << i;
    EXPECT_NEAR(Utility(m, phi), target, 1e-11 * sup) << "case " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 500);
}

TEST(DivergenceModelTest, InverseEdgeCases) {
  const DivergenceModel churn = Churn(2.0 / 3, .25);  // sup U = 8/3
  EXPECT_TRUE(std::isinf(UtilityInverse(churn, 3)));
  EXPECT_TRUE(std::isinf(UtilityInverse(churn, 8.0 / 3)));
  EXPECT_EQ(UtilityInverse(churn, 0), 0);
  const double phi = UtilityInverse(churn, 2.6);
  EXPECT_NEAR(Utility(churn, phi), 2.6, 1e-10);
  // A page that never changes: D ≡ 0, φ = ∞.
  EXPECT_TRUE(std::isinf(UtilityInverse({1, 0, 0, 1, 0}, 0.1)));
  EXPECT_EQ(Divergence({.5, .5, 0, 1, 0}, 10), 0);  // rate-0 churn is static
}

TEST(DivergenceModelTest, InvalidModelsGiveNaN) {
  EXPECT_TRUE(std::isnan(Divergence({.8, .5, 1, 1, 1}, 1)));   // s + c > 1
  EXPECT_TRUE(std::isnan(Divergence({.5, .2, -1, 1, 1}, 1)));  // negative rate
  EXPECT_TRUE(std::isnan(Utility({.5, .2, 1, 0, 1}, 1)));      // K = 0
  EXPECT_TRUE(std::isnan(Utility({.5, .2, 1, kMaxScrollItems + 1, 1}, 1)));
  EXPECT_TRUE(std::isnan(SupUtility({.5, .2, 1, 3, NAN})));
  EXPECT_TRUE(std::isnan(UtilityInverse({.5, .2, 1, 3, 1}, NAN)));
  EXPECT_TRUE(std::isnan(Divergence({.5, .2, 1, 3, 1}, -1)));
}

// The churn model at a level saturates exactly there (g⁻¹ inverts g).
TEST(DivergenceModelTest, ChurnModelAtLevelSaturatesThere) {
  for (double a : {0.0, 0.3, 2.0 / 3, 1.0}) {
    DivergenceModel m = ChurnModelAtLevel(a, 0.5);
    ASSERT_TRUE(IsValid(m)) << a;
    EXPECT_NEAR(SaturationDivergence(m), a > 0 ? a : 0, 1e-12) << a;
    EXPECT_NEAR(Divergence(m, 1e6), a, 1e-9) << a;
  }
}

}  // namespace
}  // namespace freshd::sched
