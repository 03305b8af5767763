// PopulationPosterior: the prior is the web's own distributions; the
// posterior follows a page's evidence and agrees with direct integration.

#include "sim/population_posterior.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

constexpr double kDay = 86400;

WebModel NoisyWeb(uint32_t pages) {
  // noisy.toml: Δ ~ U(0, 1)/day, α ~ Beta(.5, .5), ν ~ U(0, .5)/day.
  Result<WebSpec> spec = LoadWebSpec(FRESHD_SOURCE_DIR "/sim/webs/noisy.toml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  spec->hosts = 1;
  spec->pages_per_host = pages;
  return WebModel::Build(*spec, 7);
}

TEST(PopulationPosteriorTest, WithoutEvidenceItIsThePopulationMean) {
  WebModel web = NoisyWeb(3);
  auto post = PopulationPosterior::Create(web, 11, true);
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  sched::PageParams m = post->Mean(1, 0.25);
  // Means of 4,096 draws: standard errors 0.0045/day, 0.0055, 0.0023/day.
  EXPECT_NEAR(m.delta * kDay, 0.5, 0.02);
  EXPECT_NEAR(m.alpha, 0.5, 0.025);
  EXPECT_NEAR(m.nu * kDay, 0.25, 0.01);
  EXPECT_EQ(m.mu, 0.25);
}

TEST(PopulationPosteriorTest, BitsOnlyAgreeWithDirectIntegration) {
  WebModel web = NoisyWeb(2);
  auto post = PopulationPosterior::Create(web, 3, false);
  ASSERT_TRUE(post.ok());
  // Page 0: intervals of 1, 2 and 4 days, changed, unchanged, changed.
  const double taus[] = {1, 2, 4};
  const bool changed[] = {true, false, true};
  for (int i = 0; i < 3; ++i) {
    post->Observe(0, taus[i] * kDay, 5, changed[i]);  // counts ignored
  }
  // E[Δ | bits] under Δ ~ U(0, 1)/day by the midpoint rule.
  double num = 0, den = 0;
  for (int j = 0; j < 100000; ++j) {
    const double d = (j + 0.5) / 100000;
    double like = 1;
    for (int i = 0; i < 3; ++i) {
      const double q = std::exp(-d * taus[i]);
      like *= changed[i] ? 1 - q : q;
    }
    num += d * like;
    den += like;
  }
  const double exact = num / den;  // about 0.41/day
  EXPECT_NEAR(post->Mean(0, 1).delta * kDay, exact, 0.03 * exact);
  // The other page saw nothing.
  EXPECT_NEAR(post->Mean(1, 1).delta * kDay, 0.5, 0.02);
}

TEST(PopulationPosteriorTest, FollowsAPagesEvidence) {
  WebModel web = NoisyWeb(2);
  auto post = PopulationPosterior::Create(web, 5, true);
  ASSERT_TRUE(post.ok());
  // A page with Δ = 0.2/day, α = 0.9, ν = 0.05/day crawled daily for 200
  // days: each interval's changes, signalled changes and false signals.
  std::mt19937_64 rng(42);
  const double delta = 0.2, alpha = 0.9, nu = 0.05;
  for (int day = 0; day < 200; ++day) {
    const int changes = std::poisson_distribution<int>(delta)(rng);
    const int signalled = std::binomial_distribution<int>(changes, alpha)(rng);
    const int false_signals = std::poisson_distribution<int>(nu)(rng);
    post->Observe(0, kDay, signalled + false_signals, changes > 0);
  }
  sched::PageParams m = post->Mean(0, 1);
  EXPECT_NEAR(m.delta * kDay, delta, 0.05);
  EXPECT_GT(m.alpha, 0.75);
  EXPECT_LT(m.nu * kDay, 0.1);
}

TEST(PopulationPosteriorTest, DrawsFollowThePosterior) {
  WebModel web = NoisyWeb(2);
  auto post = PopulationPosterior::Create(web, 9, false);
  ASSERT_TRUE(post.ok());
  EXPECT_TRUE(post->Draws(0, 1, 0).empty());
  // Without evidence: the population (Δ ~ U(0, 1)/day; the mean of 64
  // draws has a standard deviation of 0.036/day).
  std::vector<sched::PageParams> prior = post->Draws(0, 0.3, 64);
  ASSERT_EQ(prior.size(), 64u);
  double mean = 0;
  for (const auto& d : prior) mean += d.delta * kDay / 64;
  EXPECT_NEAR(mean, 0.5, 0.11);
  EXPECT_EQ(prior[0].mu, 0.3);
  // A page unchanged over 40 daily crawls: every draw is slow, and the
  // draws' mean is the posterior mean.
  for (int i = 0; i < 40; ++i) post->Observe(0, kDay, 0, false);
  std::vector<sched::PageParams> slow = post->Draws(0, 1, 64);
  ASSERT_EQ(slow.size(), 64u);
  mean = 0;
  for (const auto& d : slow) {
    EXPECT_LT(d.delta * kDay, 0.2);
    mean += d.delta / 64;
  }
  EXPECT_NEAR(mean, post->Mean(0, 1).delta, 0.1 * post->Mean(0, 1).delta);
}

TEST(PopulationPosteriorTest, MemoryIsBounded) {
  WebModel web = NoisyWeb(2);
  EXPECT_FALSE(PopulationPosterior::Create(web, 1, true, 8).ok());
  EXPECT_FALSE(PopulationPosterior::Create(
                   web, 1, true, PopulationPosterior::kMaxCells / 2 + 1)
                   .ok());
}

TEST(PopulationPosteriorTest, SimulatorRunsItOnlyAsAnOracleDiagnostic) {
  WebModel web = NoisyWeb(200);
  SimOptions o;
  o.policy = "ncis";
  o.rate_per_day = 20;
  o.days = 30;
  o.oracle = true;
  o.oracle_posterior_draws = 8;
  EXPECT_FALSE(RunSimulation(web, o).ok());  // draws need the posterior
  o.oracle_posterior_draws = 0;
  o.oracle = false;
  o.oracle_posterior = true;
  EXPECT_FALSE(RunSimulation(web, o).ok());  // needs --oracle
  o.oracle = true;
  o.policy = "longevity";
  EXPECT_FALSE(RunSimulation(web, o).ok());  // no change profiles
  o.policy = "ncis";
  o.oracle_rate_slope = 0.5;
  EXPECT_FALSE(RunSimulation(web, o).ok());  // no distortion as well
  o.oracle_rate_slope = 1;
  o.oracle_posterior_draws = 257;
  EXPECT_FALSE(RunSimulation(web, o).ok());  // at most 256 draws
  o.oracle_posterior_draws = 8;
  Result<SimResult> valued = RunSimulation(web, o);
  ASSERT_TRUE(valued.ok()) << valued.status().ToString();
  o.oracle_posterior_draws = 0;
  Result<SimResult> a = RunSimulation(web, o);
  Result<SimResult> b = RunSimulation(web, o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->total.fresh, b->total.fresh);  // deterministic
  o.oracle_posterior = false;
  Result<SimResult> truth = RunSimulation(web, o);
  ASSERT_TRUE(truth.ok());
  EXPECT_NE(a->total.fresh, truth->total.fresh);   // not the true models
  EXPECT_NE(valued->total.fresh, a->total.fresh);  // not the mean
  EXPECT_GT(valued->total.fresh, 0.1);
  EXPECT_GT(a->total.fresh, 0.1);
  EXPECT_LE(a->total.fresh, 1);
}

}  // namespace
}  // namespace freshd::sim
