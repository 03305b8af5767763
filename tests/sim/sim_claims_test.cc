// The key claims of docs (issue 4, item 8 a/b) on small fixed-seed instances:
// the production scheduler, driven by the simulator in virtual time, against
// the continuous Lagrangian optimum and against each other. Fixed seeds; each
// run is a few hundred milliseconds.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

WebModel LoadModel(const std::string& file, uint64_t seed) {
  Result<WebSpec> spec = LoadWebSpec(FRESHD_SOURCE_DIR "/sim/webs/" + file);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return WebModel::Build(*spec, seed);
}

SimResult Simulate(const WebModel& model, const std::string& policy,
                   double rate, bool oracle = true) {
  SimOptions options;
  options.policy = policy;
  options.oracle = oracle;
  options.rate_per_day = rate;
  options.days = 120;
  Result<SimResult> r = RunSimulation(model, options);
  EXPECT_TRUE(r.ok()) << policy << ": " << r.status().ToString();
  return r.ok() ? *r : SimResult{};
}

// Claim (a): GREEDY with true parameters reaches >= 98% of the continuous
// optimum (Azar / Cho & Garcia-Molina Lagrange solution) at several budgets.
TEST(SimClaimsTest, GreedyOracleReachesTheContinuousOptimum) {
  for (uint64_t seed : {1u, 2u}) {
    WebModel model = LoadModel("uniform.toml", seed);
    for (double rate : {50.0, 100.0, 300.0}) {
      SimResult r = Simulate(model, "freshness", rate);
      ASSERT_GT(r.continuous_optimum, 0);
      SCOPED_TRACE("seed " + std::to_string(seed) + " rate " +
                   std::to_string(rate));
      EXPECT_GE(r.total.fresh, 0.98 * r.continuous_optimum)
          << "freshness " << r.total.fresh << " optimum "
          << r.continuous_optimum;
      // Spending exactly the budget: R crawls per day in the window.
      EXPECT_NEAR(r.total.crawls / r.measured_days, rate, 1.0);
    }
  }
}

// Claim (b): with the paper's noisy signals (α ~ Beta(.5,.5), ν ~ U(0,.5)),
// GREEDY-NCIS beats GREEDY and comes near its own continuous optimum, while
// GREEDY-CIS (which trusts every signal) falls below GREEDY.
TEST(SimClaimsTest, NcisBeatsGreedyAndCisDegradesWithFalseSignals) {
  WebModel model = LoadModel("noisy.toml", 1);
  SimResult greedy = Simulate(model, "freshness", 100);
  SimResult ncis = Simulate(model, "ncis", 100);
  SimResult cis = Simulate(model, "cis", 100);
  EXPECT_GT(ncis.total.fresh, greedy.total.fresh + 0.01)
      << "ncis " << ncis.total.fresh << " greedy " << greedy.total.fresh;
  ASSERT_GT(ncis.continuous_optimum_ncis, 0);
  EXPECT_GE(ncis.total.fresh, 0.98 * ncis.continuous_optimum_ncis);
  EXPECT_LT(cis.total.fresh, greedy.total.fresh)
      << "cis " << cis.total.fresh << " greedy " << greedy.total.fresh;
}

// The daemon's /status estimated_freshness is the scheduler's P(fresh)
// averaged over pages (sched::Scheduler::FreshProbability). With the true
// parameters it is calibrated: its time average matches the measured
// freshness, for NCIS (where the signals since a fetch decide it) as for
// GREEDY; estimated online it stays close. Measured, |estimated − true|:
// 0.0000 ncis, 0.0017 cis, 0.0002 freshness with true parameters, 0.017 ncis
// estimated; ignoring the signals since the fetch gives 0.057, 0.054 and
// 0.042.
TEST(SimClaimsTest, EstimatedFreshnessMatchesTheTruth) {
  WebModel model = LoadModel("noisy.toml", 1);
  for (const char* policy : {"ncis", "cis", "freshness"}) {
    SimResult r = Simulate(model, policy, 100);
    ASSERT_GE(r.estimated_freshness, 0) << policy;
    EXPECT_NEAR(r.estimated_freshness, r.total.fresh, 0.01) << policy;
  }
  SimResult estimated = Simulate(model, "ncis", 100, false);
  EXPECT_NEAR(estimated.estimated_freshness, estimated.total.fresh, 0.03);
}

// Issue 31 item 2: on a web whose rates are heavy-tailed and tied to
// importance, the host's distribution of rates with exploration beats one
// Gamma rate per host for the estimated freshness policy, and its
// estimated_freshness tells the truth where the Gamma model's is off.
TEST(SimClaimsTest, RateMixtureWithExplorationReadsAHeavyTailedWeb) {
  WebModel model = LoadModel("heavy-tail.toml", 1);
  SimOptions options;
  options.policy = "freshness";
  options.rate_per_day = 100;
  options.days = 120;
  options.warmup_days = 30;
  options.rate_model = "gamma";  // the default before
  options.explore = false;
  Result<SimResult> gamma = RunSimulation(model, options);
  options.rate_model = "mixture";
  options.explore = true;
  Result<SimResult> mixture = RunSimulation(model, options);
  ASSERT_TRUE(gamma.ok() && mixture.ok());
  std::printf(
      "heavy-tail freshness: gamma %.4f (estimated %.4f), mixture + "
      "explore %.4f (estimated %.4f)\n",
      gamma->total.fresh, gamma->estimated_freshness, mixture->total.fresh,
      mixture->estimated_freshness);
  EXPECT_GT(mixture->total.fresh, gamma->total.fresh + 0.01);
  EXPECT_NEAR(mixture->estimated_freshness, mixture->total.fresh, 0.03);
  EXPECT_GT(std::abs(gamma->estimated_freshness - gamma->total.fresh), 0.02);
  options.rate_model = "beta";
  EXPECT_FALSE(RunSimulation(model, options).ok());
}

// Claim (b), second half: when signals are pure noise (α = 0), NCIS learns
// to ignore them and loses at most 0.5% against GREEDY.
TEST(SimClaimsTest, NcisLosesLittleWhenSignalsArePureNoise) {
  WebModel model = LoadModel("noise-only.toml", 1);
  SimResult greedy = Simulate(model, "freshness", 100);
  SimResult ncis = Simulate(model, "ncis", 100);
  EXPECT_GE(ncis.total.fresh, 0.995 * greedy.total.fresh)
      << "ncis " << ncis.total.fresh << " greedy " << greedy.total.fresh;
}

// Every informed policy beats the baselines users have today at the same
// budget: Nutch's adaptive interval and uniform spacing.
TEST(SimClaimsTest, ValuePoliciesBeatNutchAndUniform) {
  WebModel model = LoadModel("noisy.toml", 2);
  SimResult nutch = Simulate(model, "nutch", 100);
  SimResult uniform = Simulate(model, "uniform", 100);
  for (const char* policy : {"freshness", "ncis"}) {
    SimResult r = Simulate(model, policy, 100);
    EXPECT_GT(r.total.fresh, nutch.total.fresh) << policy;
    EXPECT_GT(r.total.fresh, uniform.total.fresh) << policy;
  }
}

// The nutch baseline is Nutch as shipped (issue 31 item 3): only due pages
// are fetched, so more budget never lowers its freshness (the old
// τ/interval ranking let pages shrunk to the 60 s minimum interval take every
// extra token: 0.424 → 0.300 → 0.287 as the budget grew on the issue's
// heavy-tailed web), and a budget beyond what is due is left unused rather
// than spent (the old ranking spent all 1,000 a day here). Measured, seed 1,
// R = 50/100/300/1000: freshness 0.195/0.216/0.227/0.230 on 47.6/63.8/68.7/
// 73.9 crawls a day.
TEST(SimClaimsTest, NutchFreshnessDoesNotFallWithTheBudget) {
  WebModel model = LoadModel("noisy.toml", 1);
  double previous_fresh = 0, previous_crawls = 0;
  for (double rate : {50.0, 100.0, 300.0, 1000.0}) {
    SCOPED_TRACE("rate " + std::to_string(rate));
    SimResult r = Simulate(model, "nutch", rate, false);
    const double crawls_per_day = r.total.crawls / r.measured_days;
    ASSERT_GT(r.total.crawls, 0u);
    EXPECT_GE(r.total.fresh, previous_fresh - 0.005);
    EXPECT_LE(crawls_per_day, rate * 1.01);
    EXPECT_GE(crawls_per_day, previous_crawls * 0.99);
    previous_fresh = r.total.fresh;
    previous_crawls = crawls_per_day;
  }
  // 1,000 pages at 1,000 fetches a day: far more than Nutch's intervals
  // (≥ 60 s, mostly days) ask for on this web, so most tokens go unused.
  EXPECT_LT(previous_crawls, 0.9 * 1000);
  // Exploration leaves the baseline's schedule alone (with it, its due
  // dates moved and freshness fell 0.212 -> 0.164 from R = 300 to 1000).
  SimOptions options;
  options.policy = "nutch";
  options.rate_per_day = 1000;
  options.days = 120;
  Result<SimResult> plain = RunSimulation(model, options);
  options.rate_model = "mixture";
  options.explore = true;
  Result<SimResult> explored = RunSimulation(model, options);
  ASSERT_TRUE(plain.ok() && explored.ok());
  EXPECT_EQ(explored->total.crawls, plain->total.crawls);
  EXPECT_EQ(explored->total.fresh, plain->total.fresh);
}

// A web whose servers report an exact Last-Modified: once a host's check
// trusts it, each changed fetch times the latest change, and the change-rate
// estimates get closer to the truth than from changed bits alone.
// The rate error over 8 webs pooled: one web of 200 pages is a lottery (at
// seed 3 alone, timed / bits < 0.8 held for 47 of 80 seeds with f08ed31's
// build, 39 of 80 after the ring's 16-bit floats, mean ratio 0.794 ± 0.010
// and 0.797 ± 0.009; pooled over 8 seeds 0.75-0.82 either way).
TEST(SimClaimsTest, LastModifiedSharpensTheChangeRateEstimates) {
  auto web = [](bool last_modified, uint64_t seed) {
    std::string text =
        "hosts = 4\npages_per_host = 50\n[[class]]\n"
        "importance = { dist = \"uniform\", min = 0.0, max = 1.0 }\n";
    if (last_modified) text += "last_modified = true\n";
    text +=
        "[class.churn]\nwords = 100\n"
        "rate = { dist = \"uniform\", min = 0.0, max = 1.0 }\n";
    Result<WebSpec> spec = ParseWebSpec(text, "lm-web");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return WebModel::Build(spec.ok() ? *spec : WebSpec{}, seed);
  };
  double bits_error = 0, timed_error = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    WebModel bits = web(false, seed), timed = web(true, seed);
    ASSERT_EQ(bits.pages.size(), timed.pages.size());
    for (size_t p = 0; p < bits.pages.size(); ++p) {  // the same pages
      ASSERT_EQ(bits.ChangeRate(p), timed.ChangeRate(p));
      EXPECT_TRUE(timed.pages[p].last_modified);
    }
    SimResult a = Simulate(bits, "freshness", 20, false);
    SimResult b = Simulate(timed, "freshness", 20, false);
    ASSERT_GT(a.rate_log_error, 0);
    ASSERT_GE(b.rate_log_error, 0);
    bits_error += a.rate_log_error;
    timed_error += b.rate_log_error;
    if (seed == 1) {
      EXPECT_EQ(Simulate(timed, "freshness", 20, true).rate_log_error, -1);
    }
  }
  std::printf("[ INFO     ] rate log error over 8 webs: bits %.4f timed %.4f\n",
              bits_error / 8, timed_error / 8);
  EXPECT_LT(timed_error, 0.88 * bits_error);

  Result<WebSpec> bad = ParseWebSpec(
      "[[class]]\nstatic_words = 5\nlast_modified = 1\n", "bad-lm");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("last_modified"), std::string::npos);
}

// The distortion diagnostic: slope 1 and no noise is the identity, slope 0
// puts every page at its host's mean, and the noise is N(0, sd) in ln Δ,
// deterministic per (seed, page).
TEST(SimClaimsTest, DistortedRatesHaveTheAskedShape) {
  const double c = std::log(0.5);
  EXPECT_DOUBLE_EQ(DistortedRate(1, 7, 0.2, c, 1, 0), 0.2);
  EXPECT_NEAR(DistortedRate(1, 7, 0.2, c, 0, 0), 0.5, 1e-12);
  EXPECT_NEAR(DistortedRate(1, 7, 0.2, c, 0.5, 0), std::sqrt(0.2 * 0.5), 1e-12);
  EXPECT_EQ(DistortedRate(1, 7, 0, c, 0.5, 1), 0);  // never changes
  EXPECT_EQ(DistortedRate(3, 9, 0.2, c, 1, 0.4),
            DistortedRate(3, 9, 0.2, c, 1, 0.4));
  double sum = 0, sum2 = 0;
  const int n = 20000;
  for (uint32_t p = 0; p < n; ++p) {
    const double z = std::log(DistortedRate(3, p, 0.2, c, 1, 0.4) / 0.2);
    sum += z;
    sum2 += z * z;
  }
  EXPECT_NEAR(sum / n, 0, 0.01);
  EXPECT_NEAR(std::sqrt(sum2 / n), 0.4, 0.01);
}

// An oracle that sees the change rates pulled toward the hosts' (what a
// strong prior does to estimates) allocates worse than one that sees them
// as they are, and the estimated runs report that pull as a slope < 1.
TEST(SimClaimsTest, CompressedRatesCostTheOracleFreshness) {
  WebModel model = LoadModel("noisy.toml", 1);
  SimOptions options;
  options.policy = "freshness";
  options.oracle = true;
  options.rate_per_day = 100;
  options.days = 120;
  Result<SimResult> exact = RunSimulation(model, options);
  options.oracle_rate_slope = 0;  // every page at its host's mean rate
  Result<SimResult> flat = RunSimulation(model, options);
  ASSERT_TRUE(exact.ok() && flat.ok());
  EXPECT_LT(flat->total.fresh, exact->total.fresh - 0.01)
      << "flat " << flat->total.fresh << " exact " << exact->total.fresh;
  EXPECT_EQ(exact->rate_log_scatter, -1);  // oracle: nothing estimated

  SimResult estimated = Simulate(model, "freshness", 100, false);
  EXPECT_GT(estimated.rate_log_slope, 0.2);
  EXPECT_LT(estimated.rate_log_slope, 0.95);
  EXPECT_GT(estimated.rate_log_scatter, 0);

  options.oracle_rate_slope = -1;
  EXPECT_FALSE(RunSimulation(model, options).ok());
  options.oracle_rate_slope = 1;
  options.oracle_rate_noise = std::nan("");
  EXPECT_FALSE(RunSimulation(model, options).ok());
}

// Signals that arrive a day late, with recall 1 and no false ones: counted
// as they come, the ones about changes a fetch already saw make fresh pages
// look changed. Dropping a signal whose lastmod is not after the last fetch,
// or (with no lastmod) one arriving within a day of the fetch, removes
// exactly those, and buys the freshness back.
TEST(SimClaimsTest, StaleDelayedSignalsAreDropped) {
  const auto web = [](bool lastmod) {
    Result<WebSpec> spec = ParseWebSpec(
        std::string(
            "name = \"late\"\nhosts = 4\npages_per_host = 50\n"
            "[[class]]\nname = \"page\"\n"
            "importance = { dist = \"uniform\", min = 0.0, max = 1.0 }\n"
            "[class.churn]\nwords = 100\n"
            "rate = { dist = \"uniform\", min = 0.0, max = 1.0 }\n"
            "[class.signals]\nrecall = 1.0\ndelay_days = 1.0\n"
            "lastmod = ") +
            (lastmod ? "true" : "false") + "\n",
        "late.toml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return WebModel::Build(*spec, 1);
  };
  const auto run = [](const WebModel& model, double window_days) {
    SimOptions options;
    options.policy = "ncis";
    options.oracle = true;
    options.rate_per_day = 20;
    options.days = 120;
    options.signal_window_days = window_days;
    Result<SimResult> r = RunSimulation(model, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->total.fresh : 0.0;
  };
  const WebModel hints = web(false), lastmods = web(true);
  const double naive = run(hints, 0);
  const double by_lastmod = run(lastmods, 0);
  const double by_window = run(hints, 1);
  EXPECT_GT(by_lastmod, naive + 0.02);
  EXPECT_NEAR(by_window, by_lastmod, 1e-3);
}

TEST(SimClaimsTest, BadOptionsAreErrorsNotCrashes) {
  WebModel model = LoadModel("uniform.toml", 1);
  SimOptions options;
  options.policy = "no-such-policy";
  EXPECT_FALSE(RunSimulation(model, options).ok());
  options.policy = "freshness";
  options.rate_per_day = 0;
  EXPECT_FALSE(RunSimulation(model, options).ok());
}

}  // namespace
}  // namespace freshd::sim
