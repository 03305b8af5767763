// End to end: the real daemon loop (libcurl over loopback, the parse pool,
// the scheduler, LevelDB on disk) crawling sim/webs/noisy-small.toml served
// by the test web in compressed time (1 virtual day per wall second) reaches
// the freshness the simulator predicts for the same web, seed, policy and
// budget, its policy's advantage over `uniform` carries over from the
// simulator to the live web, and its change-rate estimates follow the
// truth. Each run takes 16 wall seconds; with feeds on, the daemon polls
// the feed each host serves (6 wall seconds).

#include "cli/live_web.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "sim/page_process.h"
#include "sim/simulator.h"
#include "sim/test_web.h"
#include "sim/web_model.h"

namespace freshd::cli {
namespace {

constexpr double kRate = 40;  // per virtual day: R/n = 0.2
constexpr double kDays = 16, kWarmup = 6;
constexpr uint64_t kSeed = 1;
// |estimated - true freshness| allowed (EstimatedFreshnessFollowsTheTruth;
// measured 0.005-0.04; 0.49 with the mixture's grid pinned at 1/600 s).
constexpr double kEstimateTolerance = 0.15;

sim::WebSpec NoisySmall() {
  auto spec = sim::LoadWebSpec(std::string(FRESHD_SOURCE_DIR) +
                               "/sim/webs/noisy-small.toml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? spec.value() : sim::WebSpec{};
}

LiveWebOptions Live(const std::string& policy) {
  LiveWebOptions o;
  o.policy = policy;
  o.rate_per_day = kRate;
  o.days = kDays;
  o.warmup_days = kWarmup;
  o.day_seconds = 1;
  return o;
}

// The simulator's prediction for the web as the daemon sees it (signals
// through daily sitemap polling) and the daemon's figure.
struct Compared {
  double predicted = 0;
  double predicted_estimate = 0;  // the simulated scheduler's own estimate
  LiveWebResult live;
  // Pearson correlation of ln Δ̂ (the daemon's estimates) and ln Δ (the
  // truth) over the pages fetched at least 3 times, at the end.
  double rate_correlation = 0;
};

double Correlation(const std::vector<std::pair<double, double>>& xy) {
  const double n = static_cast<double>(xy.size());
  double mx = 0, my = 0;
  for (auto [x, y] : xy) mx += x / n, my += y / n;
  double cxx = 0, cyy = 0, cxy = 0;
  for (auto [x, y] : xy) {
    cxx += (x - mx) * (x - mx);
    cyy += (y - my) * (y - my);
    cxy += (x - mx) * (y - my);
  }
  return cxx > 0 && cyy > 0 ? cxy / std::sqrt(cxx * cyy) : 0;
}

Compared CrawlAndPredict(const std::string& policy) {
  sim::WebSpec spec = NoisySmall();
  Compared c;
  sim::SimOptions so;
  so.policy = policy;
  so.rate_per_day = kRate;
  so.days = kDays;
  so.warmup_days = kWarmup;
  so.max_interval_days = 90;
  auto predicted = sim::RunSimulation(
      sim::WebModel::Build(sim::PolledSignalsSpec(spec, 1), kSeed), so);
  EXPECT_TRUE(predicted.ok()) << predicted.status().ToString();
  if (predicted.ok()) {
    c.predicted = predicted.value().total.fresh;
    c.predicted_estimate = predicted.value().estimated_freshness;
  }

  sim::WebModel model = sim::WebModel::Build(spec, kSeed);
  // At the end, the meter's figure is checked against a brute-force one:
  // each page's state recomputed from the page process at that instant.
  LiveWebOptions o = Live(policy);
  int checked = 0;
  o.on_report = [&](const LiveWebProgress& p) {
    if (!p.final) return;
    ++checked;
    std::vector<double> fetched(model.pages.size(), -1);
    std::vector<std::pair<double, double>> rates;  // (ln Δ̂, ln Δ)
    for (size_t id = 0; id < p.loop->urls().size(); ++id) {
      const std::string url(p.loop->urls()[id]);
      size_t at = url.rfind("/p/");
      const auto& s = p.loop->scheduler().page(static_cast<sched::PageId>(id));
      if (at == std::string::npos || !s.fetched()) continue;
      const auto page = static_cast<uint32_t>(std::stoul(url.substr(at + 3)));
      fetched[page] = s.last_fetch;
      if (s.fetches >= 3 && s.rate > 0 && model.ChangeRate(page) > 0) {
        rates.emplace_back(std::log(s.rate), std::log(model.ChangeRate(page)));
      }
    }
    c.rate_correlation = Correlation(rates);
    const double now = p.web->VirtualTime(p.unix_time);
    double weight = 0, fresh = 0, stale = 0;
    for (uint32_t page = 0; page < model.pages.size(); ++page) {
      const double mu = model.pages[page].importance;
      weight += mu;
      if (fetched[page] < 0) {
        stale += mu;
        continue;
      }
      const double at = p.web->VirtualTime(fetched[page]);
      if (p.web->PageAt(page, now).last_change <= at) fresh += mu;
      stale += mu * sim::VersionDivergence(model.pages[page],
                                           sim::VersionAt(model, page, at),
                                           sim::VersionAt(model, page, now));
    }
    EXPECT_NEAR(p.true_freshness, fresh / weight, 1e-12);
    EXPECT_NEAR(p.true_staleness, stale / weight, 1e-12);
  };
  auto live = RunOnLiveWeb(model, o);
  EXPECT_TRUE(live.ok()) << live.status().ToString();
  if (live.ok()) c.live = live.value();
  EXPECT_EQ(checked, 1);
  return c;
}

TEST(LiveWebTest, DaemonReachesTheSimulatorsPredictionAndBeatsUniform) {
  Compared ncis = CrawlAndPredict("ncis");
  Compared uniform = CrawlAndPredict("uniform");
  for (const Compared* c : {&ncis, &uniform}) {
    const char* name = c == &ncis ? "ncis" : "uniform";
    SCOPED_TRACE(name);
    std::printf(
        "%s: daemon %.4f (its estimate %.4f), simulator %.4f (its estimate "
        "%.4f), %.1f fetches/day, corr(ln rate) %.3f\n",
        name, c->live.true_freshness, c->live.estimated_freshness, c->predicted,
        c->predicted_estimate, c->live.fetches_per_day, c->rate_correlation);
    // The budget was spent: 40 fetches per virtual day, a token bucket of 5.
    EXPECT_GT(c->live.fetches_per_day, 0.85 * kRate);
    EXPECT_LT(c->live.fetches_per_day, 1.05 * kRate);
    EXPECT_NEAR(c->live.measured_days, kDays - kWarmup, 0.05);
    EXPECT_TRUE(c->live.status["errors"].empty()) << c->live.status.dump();
    // The change-rate estimates follow the truth (measured 0.65-0.73; about
    // 0 when every 304 is taken for a change, which costs ncis only 0.02
    // of freshness here, so the freshness checks alone would not see it).
    EXPECT_GT(c->rate_correlation, 0.4);
    // Within 15% of the simulator (measured: 0.95-1.05, one seed, noisy).
    ASSERT_GT(c->predicted, 0.2);
    EXPECT_GT(c->live.true_freshness, 0.85 * c->predicted);
    EXPECT_LT(c->live.true_freshness, 1.15 * c->predicted);
  }
  // The simulator says NCIS buys about 0.06 more freshness than uniform
  // here; the daemon shows it live.
  EXPECT_GT(ncis.predicted, uniform.predicted + 0.03);
  EXPECT_GT(ncis.live.true_freshness, uniform.live.true_freshness + 0.02);
}

// The daemon's estimated freshness follows the truth, time-averaged over
// the same window, with one Gamma rate a host and with the grid posterior
// (and exploration): the signals come from daily sitemap reads, and the
// time since a host's last read is not taken for silence (issue 31).
// Measured (one run each, shared machine), estimated / true: gamma 0.518 /
// 0.540; mixture 0.534 / 0.493. Without coverage: gamma 0.562 / 0.533,
// mixture 0.605 / 0.506; and with the mixture's grid not scaled to the
// compressed clock as well, 0.973 / 0.483.
TEST(LiveWebTest, EstimatedFreshnessFollowsTheTruth) {
  for (const char* rate_model : {"gamma", "mixture"}) {
    SCOPED_TRACE(rate_model);
    sim::WebModel model = sim::WebModel::Build(NoisySmall(), kSeed);
    LiveWebOptions o = Live("ncis");
    o.rate_model = rate_model;
    o.explore = o.rate_model == "mixture";
    // Every host's sitemap was read within the last 3 virtual days (daily)
    // at the end, and reported as the host's signal coverage.
    int covered = 0;
    o.on_report = [&](const LiveWebProgress& p) {
      if (!p.final) return;
      const sched::Scheduler& s = p.loop->scheduler();
      for (sched::HostId h = 0; h < model.spec.hosts; ++h) {
        const double through = s.SignalCoverage(h);
        EXPECT_LE(through, p.unix_time) << "host " << h;
        EXPECT_GT(through, p.unix_time - 3 * o.day_seconds) << "host " << h;
        covered += through <= p.unix_time;
      }
    };
    auto live = RunOnLiveWeb(model, o);
    EXPECT_EQ(covered, static_cast<int>(model.spec.hosts));
    ASSERT_TRUE(live.ok()) << live.status().ToString();
    const LiveWebResult& r = live.value();
    std::printf("%s: estimated %.4f, true %.4f\n", rate_model,
                r.estimated_freshness, r.true_freshness);
    EXPECT_TRUE(r.status["errors"].empty()) << r.status.dump();
    EXPECT_GT(r.status["sitemaps_fetched_total"].get<int>(), 0)
        << r.status.dump();
    EXPECT_NEAR(r.estimated_freshness, r.true_freshness, kEstimateTolerance);
  }
}

// With feeds on, the harness's web serves a feed per host and the daemon
// finds and polls it daily: feed entries become signals (a short run, 6
// virtual days; what feeds buy is measured in bench/e2e/RESULTS-e2e.md).
TEST(LiveWebTest, FeedsArePolledWhenTheWebServesThem) {
  sim::WebModel model = sim::WebModel::Build(NoisySmall(), kSeed);
  LiveWebOptions o = Live("ncis");
  o.days = 6;
  o.warmup_days = 2;
  o.feeds = true;
  o.feed_entries = 10;
  auto live = RunOnLiveWeb(model, o);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  const nlohmann::json& s = live.value().status;
  EXPECT_EQ(s["site_feeds"]["known"], model.spec.hosts) << s.dump();
  EXPECT_GE(s["site_feeds"]["polled_total"].get<int>(),
            3 * static_cast<int>(model.spec.hosts))
      << s.dump();
  EXPECT_GT(s["site_feeds"]["signals_total"].get<int>(), 0) << s.dump();
  EXPECT_EQ(s["site_feeds"]["errors_total"], 0) << s.dump();
  EXPECT_TRUE(s["errors"].empty()) << s.dump();
}

}  // namespace
}  // namespace freshd::cli
