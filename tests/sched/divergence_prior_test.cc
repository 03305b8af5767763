// The host-pooled prior of young pages' divergence curves: saturation
// levels pooled per host (falling back to the global level, then 0.5), the
// scroll fits' own level, and the fit options and prior model it hands the
// scheduler.
#include "sched/divergence_prior.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sched/divergence_model.h"

namespace freshd::sched {
namespace {

DivergenceModel Churn(double a, double rate) {
  const double c = a / (2 - a);
  return {1 - c, c, rate, 1, 0};
}

TEST(DivergencePriorTest, SaturationDivergenceIsTheLimitOfTheCurve) {
  for (const DivergenceModel& m :
       {Churn(0.3, 2.0), DivergenceModel{0.4, 0, 0, 5, 1.5},
        DivergenceModel{0.2, 0.3, 0.5, 4, 2.0}}) {
    EXPECT_NEAR(SaturationDivergence(m), Divergence(m, 1e6), 1e-9);
  }
  EXPECT_EQ(SaturationDivergence(Churn(0.3, 0)), 0);  // rate 0: static
  EXPECT_EQ(SaturationDivergence(DivergenceModel{}), 0);
}

TEST(DivergencePriorTest, PoolsLevelsPerHostThenGlobally) {
  DivergencePrior prior;
  EXPECT_EQ(prior.Saturation(7), DivergencePrior::kDefaultSaturation);
  for (int i = 0; i < 50; ++i) prior.Observe(1, Churn(0.2, 1));
  EXPECT_NEAR(prior.Saturation(1), 0.2, 1e-6);
  EXPECT_NEAR(prior.Saturation(2), 0.2, 1e-6);  // unseen host: global
  for (int i = 0; i < 50; ++i) prior.Observe(2, Churn(0.8, 1));
  EXPECT_NEAR(prior.Saturation(2), 0.8, 1e-6);
  EXPECT_NEAR(prior.Saturation(1), 0.2, 1e-6);
  // Global: both hosts, the newer fits weighing more (decay 0.99 per fit).
  double w_new = (1 - std::pow(0.99, 50)) / 0.01;
  double w_old = std::pow(0.99, 50) * w_new;
  EXPECT_NEAR(prior.Saturation(3),
              (0.2 * w_old + 0.8 * w_new) / (w_old + w_new), 1e-5);
  // Ids past kMaxHosts share the global level and allocate nothing.
  prior.Observe(DivergencePrior::kMaxHosts + 5, Churn(0.8, 1));
  EXPECT_NEAR(prior.Saturation(DivergencePrior::kMaxHosts + 5),
              prior.Saturation(3), 1e-12);
  // Newer fits weigh more (decay): the level follows a host that changes.
  for (int i = 0; i < 500; ++i) prior.Observe(1, Churn(0.6, 1));
  EXPECT_NEAR(prior.Saturation(1), 0.6, 0.01);
}

TEST(DivergencePriorTest, FitOptionsAndModelForYoungPages) {
  DivergencePrior prior;
  for (int i = 0; i < 20; ++i) prior.Observe(4, Churn(0.4, 1));
  DivergenceFitOptions o = prior.FitOptions(4, 2e-5);
  EXPECT_EQ(o.event_rate, 2e-5);
  EXPECT_NEAR(o.saturation_prior, 0.4, 1e-6);
  EXPECT_EQ(o.saturation_weight, DivergencePrior::kPseudoPoints);
  EXPECT_EQ(prior.FitOptions(4, 0).event_rate, 0);  // no rate: fitted freely
  EXPECT_EQ(
      prior.FitOptions(4, std::numeric_limits<double>::infinity()).event_rate,
      0);
  DivergenceModel m = prior.Model(4, 2e-5);
  EXPECT_EQ(m.churn_rate, 2e-5);
  EXPECT_NEAR(SaturationDivergence(m), 0.4, 1e-6);
  EXPECT_GT(Utility(m, 86400), 0);  // a young page is worth refetching
  EXPECT_EQ(Utility(prior.Model(4, 0), 86400), 0);
}

// Scroll pages saturate higher than churn pages on the same host (a whole
// list turns over, not one block): their fits get their own level, and
// every fit is told to shape the curve from changed points only.
TEST(DivergencePriorTest, ScrollFitsHaveTheirOwnLevel) {
  DivergencePrior prior;
  EXPECT_EQ(prior.ScrollSaturation(1), DivergencePrior::kDefaultSaturation);
  for (int i = 0; i < 30; ++i) prior.Observe(1, Churn(0.3, 1));
  EXPECT_NEAR(prior.ScrollSaturation(1), 0.3, 1e-6);  // no scroll fit yet
  const DivergenceModel scroll{0.375, 0, 0, 8, 1.0};
  const double level = SaturationDivergence(scroll);  // g(0.625) ≈ 0.77
  for (int i = 0; i < 30; ++i) {
    prior.Observe(1, scroll);
    prior.Observe(1, Churn(0.3, 1));
  }
  EXPECT_NEAR(prior.ScrollSaturation(1), level, 1e-5);
  EXPECT_GT(prior.Saturation(1), 0.3);  // every fit counts for the host
  EXPECT_LT(prior.Saturation(1), 0.6);
  EXPECT_NEAR(prior.ScrollSaturation(9), level, 1e-5);  // unseen: global
  DivergenceFitOptions o = prior.FitOptions(1, 1e-5);
  EXPECT_NEAR(o.scroll_saturation_prior, level, 1e-5);
  EXPECT_NEAR(o.saturation_prior, prior.Saturation(1), 1e-12);
  EXPECT_TRUE(o.given_change);
}

}  // namespace
}  // namespace freshd::sched
