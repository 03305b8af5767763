// Claim (c) of issue 4 on a small fixed-seed instance: on a scroll-heavy web
// the longevity policy (Olston & Pandey) reaches a fragment staleness that
// holistic freshness (Cho & Garcia-Molina's GREEDY) needs at least 1/0.6 of
// the crawls for, at the paper's budget (refresh cost 0.2: every page every
// 10 days). Both with true parameters, as in the paper's Fig. 11. The web is
// sim/webs/scroll-small.toml (200 pages); docs/RESULTS.md has the full
// measurement (1,000 pages, 5 seeds, several budgets). The continuous optima
// (no simulation) are checked against the simulated policies and, on the
// 1,000-page webs of RESULTS, for the ratio they allow.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

constexpr double kPages = 200;

WebModel LoadModel(uint64_t seed) {
  Result<WebSpec> spec =
      LoadWebSpec(FRESHD_SOURCE_DIR "/sim/webs/scroll-small.toml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return WebModel::Build(*spec, seed);
}

SimResult Simulate(const WebModel& model, const std::string& policy,
                   double rate) {
  SimOptions options;
  options.policy = policy;
  options.oracle = true;
  options.rate_per_day = rate;
  options.days = 60;
  options.warmup_days = 20;
  Result<SimResult> r = RunSimulation(model, options);
  EXPECT_TRUE(r.ok()) << policy << ": " << r.status().ToString();
  return r.ok() ? *r : SimResult{};
}

// Freshness staleness decreases with the budget, so "freshness needs at
// least R/0.6 crawls to match longevity at R" is: staleness of freshness at
// R/0.6 is still at least longevity's at R.
TEST(SimLongevityTest, LongevityNeedsAtMostSixTenthsOfTheCrawls) {
  const double rate = 0.1 * kPages;  // every page every 10 days
  for (uint64_t seed : {1u, 2u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    WebModel model = LoadModel(seed);
    SimResult longevity = Simulate(model, "longevity", rate);
    SimResult freshness = Simulate(model, "freshness", rate / 0.6);
    EXPECT_NEAR(longevity.total.crawls / longevity.measured_days, rate, 0.5);
    // Measured staleness, not two zeros (a web without divergence).
    ASSERT_GT(longevity.total.staleness, 0);
    EXPECT_LE(longevity.total.staleness, freshness.total.staleness)
        << "longevity at R=" << rate << ": " << longevity.total.staleness
        << ", freshness at R/0.6: " << freshness.total.staleness;
  }
}

// The simulated policies against the continuous optima computed from the same
// web's true curves (sched::LongevityContinuousOptimum, PeriodicStaleness):
// longevity with true parameters reaches the staleness optimum and GREEDY the
// staleness of the Azar optimum's rates, within sampling noise (200 pages, 40
// measured days); and the analytic budget at which the Azar optimum is as
// stale as the staleness optimum lies beyond R/0.6 on this web.
TEST(SimLongevityTest, SimulatedPoliciesReachTheirContinuousStaleness) {
  const double rate = 0.1 * kPages;
  for (uint64_t seed : {1u, 2u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    WebModel model = LoadModel(seed);
    SimResult longevity = Simulate(model, "longevity", rate);
    SimResult freshness = Simulate(model, "freshness", rate);
    ASSERT_GT(longevity.staleness_optimum, 0);
    EXPECT_NEAR(longevity.total.staleness / longevity.staleness_optimum, 1,
                0.04);
    EXPECT_NEAR(
        freshness.total.staleness / longevity.staleness_at_freshness_optimum, 1,
        0.04);
    EXPECT_GT(longevity.staleness_at_freshness_optimum,
              1.1 * longevity.staleness_optimum);
    EXPECT_GT(longevity.freshness_rate_for_staleness_optimum, rate / 0.6);
    EXPECT_LT(freshness.staleness_optimum, 0);  // computed for longevity only
  }
}

// docs/RESULTS.md (c) in one test: the crawl ratio of the two continuous
// optima at R = 100/day (the paper's cost 0.2) is within the paper's claim on
// scroll.toml and beyond it on scroll-paper.toml, whose scroll content is
// about 4% of all words: there no policy can show 0.6x. A run that computed
// no optimum (freshness_rate_for_staleness_optimum −1: not computed or not
// reached) is a failure, not a ratio: it used to read as 0, which passed the
// first check without measuring anything.
TEST(SimLongevityTest, TheOptimaRatioIsAPropertyOfTheWeb) {
  const auto optima_ratio =
      [](const std::string& file) -> std::optional<double> {
    Result<WebSpec> spec = LoadWebSpec(FRESHD_SOURCE_DIR "/sim/webs/" + file);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    if (!spec.ok()) return std::nullopt;
    WebModel model = WebModel::Build(*spec, 1);
    SimOptions options;
    options.policy = "longevity";
    options.oracle = true;
    options.rate_per_day = 100;
    options.days = 1;  // only the optima are used
    Result<SimResult> r = RunSimulation(model, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !(r->freshness_rate_for_staleness_optimum > 0)) {
      return std::nullopt;
    }
    return 100 / r->freshness_rate_for_staleness_optimum;
  };
  const std::optional<double> scroll = optima_ratio("scroll.toml");
  ASSERT_TRUE(scroll.has_value()) << "scroll.toml: no optima ratio measured";
  EXPECT_GT(*scroll, 0);
  EXPECT_LT(*scroll, 0.6);
  const std::optional<double> paper = optima_ratio("scroll-paper.toml");
  ASSERT_TRUE(paper.has_value()) << "scroll-paper.toml: no ratio measured";
  EXPECT_GT(*paper, 0.7);
}

// At equal budget, longevity wins by moving crawls from churn pages (their
// content is gone by the next visit) to scroll pages (items last K updates).
TEST(SimLongevityTest, LongevityBeatsFreshnessByFavouringScrollContent) {
  WebModel model = LoadModel(3);
  const double rate = 0.2 * kPages;
  SimResult longevity = Simulate(model, "longevity", rate);
  SimResult freshness = Simulate(model, "freshness", rate);
  EXPECT_LT(longevity.total.staleness, freshness.total.staleness);
  ASSERT_EQ(model.spec.classes[0].name, "scroll");
  ASSERT_EQ(model.spec.classes[1].name, "churn");
  const SimMetrics& ls = longevity.per_class[0];
  const SimMetrics& fs = freshness.per_class[0];
  const SimMetrics& lc = longevity.per_class[1];
  const SimMetrics& fc = freshness.per_class[1];
  EXPECT_GT(ls.crawls, fs.crawls);
  EXPECT_LT(lc.crawls, fc.crawls);
  EXPECT_LT(ls.staleness, fs.staleness);
}

}  // namespace
}  // namespace freshd::sim
