// sim/trace_replay: replaying a real change history through the production
// scheduler; answers computed by hand from the fetch times the replay is
// bound to (one page and R pages a day: a fetch every 1/R days).

#include "sim/trace_replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace freshd::sim {
namespace {

constexpr double kT0 = 1'700'000'000;  // any Unix time

Trace MustParse(const std::string& text) {
  Result<Trace> t = ParseTraceText(text, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Trace{};
}

std::string At(double days) {
  return std::to_string(static_cast<int64_t>(kT0 + days * kDay));
}

TraceReplayOptions Uniform(double rate_per_day, double days) {
  TraceReplayOptions o;
  o.sim.policy = "uniform";
  o.sim.rate_per_day = rate_per_day;
  o.sim.days = days;
  o.sim.warmup_days = 0;
  o.sim.min_interval_s = 0;
  o.sim.estimate_samples = 0;
  return o;
}

// The fetch times of one page at one fetch a day, from the crawl count.
TEST(TraceReplayTest, OnePageUnderAFixedIntervalHasTheFreshnessByHand) {
  // t0 = day 0 (a change there is in the first copy); changes at days 0.5,
  // 2.5 and 3.25 of a 4-day run; the page is fetched once a day.
  const std::string trace = "url,time\nhttp://a.example/p," + At(0) +
                            "\nhttp://a.example/p," + At(0.5) +
                            "\nhttp://a.example/p," + At(2.5) +
                            "\nhttp://a.example/p," + At(3.25) + "\n";
  Trace t = MustParse(trace);
  auto r = ReplayTrace(t, Uniform(1, 4));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const SimResult& s = r->result;
  EXPECT_EQ(r->start, kT0);
  EXPECT_EQ(s.changes, 3u);
  // The bucket holds one token at 0 (a fetch that changes nothing) and
  // earns one a day: fetches at days 1, 2, 3 (and 4, the end).
  // Fresh: [0, .5] + [1, 2.5] + [3, 3.25] = 2.25 of 4.
  ASSERT_GE(s.total.crawls, 4u);
  ASSERT_LE(s.total.crawls, 5u);
  EXPECT_NEAR(s.total.fresh, 2.25 / 4, 1e-3);
  // Age: stale [.5, 1] (from .5), [2.5, 3] (from 2.5), [3.25, 4] (3.25):
  // (.125 + .125 + .28125) day² over 4 days.
  EXPECT_NEAR(s.total.age_days, (0.125 + 0.125 + 0.28125) / 4, 1e-3);
}

TEST(TraceReplayTest, DaysDefaultToTheSpanAndStartCanBeGiven) {
  Trace t = MustParse("url,time\nhttp://a.example/," + At(0) +
                      "\nhttp://a.example/," + At(10) + "\n");
  TraceReplayOptions o = Uniform(1, -1);
  auto r = ReplayTrace(t, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->days, 10);
  o.start = kT0 + 5 * kDay;
  r = ReplayTrace(t, o);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->days, 5);
  EXPECT_EQ(r->result.changes, 1u);
  // A trace with no time needs --days.
  Trace still = MustParse("url,time\nhttp://a.example/,\n");
  EXPECT_FALSE(ReplayTrace(still, Uniform(1, -1)).ok());
  auto fixed = ReplayTrace(still, Uniform(1, 3));
  ASSERT_TRUE(fixed.ok());
  EXPECT_DOUBLE_EQ(fixed->result.total.fresh, 1);  // never changes
}

TEST(TraceReplayTest, CreatedPagesCountFromCreationDeletedStopCounting) {
  // One fetch every 100 days, the one token at t0 spent at once: nothing
  // is fetched after day 0. `old` lives 10 days and is fresh throughout
  // (its change at the end counts, but leaves no time); `new` is created at
  // day 5 and counts from then, stale (never fetched); `gone` changes at
  // day 1 and is deleted at day 2: stale from 1 to 2, then it stops
  // counting (its change at day 3 is dropped).
  const std::string trace =
      "url,time,event\n"
      "http://a.example/old," +
      At(0) +
      ",change\n"
      "http://a.example/new," +
      At(5) +
      ",create\n"
      "http://a.example/gone," +
      At(1) +
      ",change\n"
      "http://a.example/gone," +
      At(2) +
      ",delete\n"
      "http://a.example/gone," +
      At(3) +
      ",change\n"
      "http://a.example/old," +
      At(10) + ",change\n";
  Trace t = MustParse(trace);
  auto r = ReplayTrace(t, Uniform(0.01, 10));  // one fetch every 100 days
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const SimResult& s = r->result;
  EXPECT_EQ(s.total.pages, 3u);
  EXPECT_EQ(s.changes, 2u);  // gone's at day 1, old's at day 10 (the end)
  // Counted time: old 10 d, new 5 d, gone 2 d = 17 d; fresh 10 + 0 + 1.
  EXPECT_LE(s.crawls_total, 1u);
  EXPECT_NEAR(s.total.fresh, 11 / 17.0, 1e-9);
  // With tokens to spare, the new page is fetched as soon as it appears
  // (it is first in line) and `gone` soon after its change.
  auto fast = ReplayTrace(t, Uniform(1000, 10));
  ASSERT_TRUE(fast.ok());
  EXPECT_GT(fast->result.total.fresh, 0.99);
  EXPECT_LT(fast->result.total.fresh, 1);
}

TEST(TraceReplayTest, OracleValuesPagesAtTheirTrueMeanRate) {
  // Two pages: `hot` changes every day, `cold` once; budget for ~1 fetch a
  // day. The oracle knows the rates: it spends its fetches on the page whose
  // value is higher; with uniform they alternate. Both runs must be valid
  // and the oracle's freshness at least the uniform one's.
  std::string trace = "url,time\nhttp://a.example/cold," + At(15) + "\n";
  for (int d = 0; d <= 30; ++d) {
    trace += "http://a.example/hot," + At(d + 0.5) + "\n";
  }
  Trace t = MustParse(trace);
  EXPECT_DOUBLE_EQ(TraceMeanRate(t.pages[1], kT0, kT0 + 30 * kDay),
                   30 / (30 * kDay));
  TraceReplayOptions o = Uniform(2, 30);
  auto uniform = ReplayTrace(t, o);
  o.sim.policy = "freshness";
  o.sim.oracle = true;
  auto oracle = ReplayTrace(t, o);
  ASSERT_TRUE(uniform.ok() && oracle.ok());
  EXPECT_GE(oracle->result.total.fresh, uniform->result.total.fresh - 1e-9);
  nlohmann::json j = nlohmann::json::parse(TraceReplayToJson(t, o, *oracle));
  EXPECT_TRUE(j["oracle"].get<bool>());
  EXPECT_TRUE(j["fragment_staleness"].is_null());
  EXPECT_TRUE(j["per_class"].is_null());
  EXPECT_EQ(j["trace"]["pages"], 2);
  EXPECT_DOUBLE_EQ(j["freshness"].get<double>(), oracle->result.total.fresh);
}

TEST(TraceReplayTest, SitemapSignalsFromTheTrace) {
  std::string trace = "url,time\n";
  for (int d = 0; d < 20; ++d) {
    trace += "http://a.example/hot," + At(d + 0.5) + "\n";
  }
  trace += "http://a.example/cold," + At(20) + "\n";
  Trace t = MustParse(trace);
  TraceReplayOptions o = Uniform(1, 20);
  o.sim.policy = "ncis";
  auto off = ReplayTrace(t, o);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(off->result.signals, 0u);
  // Every change listed, at once: one signal per change in the run (the
  // 19 of `hot` after t0 = day 0.5, and `cold`'s at the end).
  o.signals.recall = 1;
  auto all = ReplayTrace(t, o);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->result.changes, 20u);
  EXPECT_EQ(all->result.signals, 20u);
  // Precision 1/2: one false signal per true one.
  o.signals.precision = 0.5;
  o.signals.delay_days = 0.25;
  auto noisy = ReplayTrace(t, o);
  ASSERT_TRUE(noisy.ok());
  EXPECT_GE(noisy->result.signals, 38u);  // late ones past the end dropped
  EXPECT_LE(noisy->result.signals, 40u);
  nlohmann::json j = nlohmann::json::parse(TraceReplayToJson(t, o, *noisy));
  EXPECT_DOUBLE_EQ(j["trace_signals"]["precision"].get<double>(), 0.5);
  // Half the recall: about half the changes listed (deterministic draw).
  o.signals = {0.5, 1, 0};
  auto half = ReplayTrace(t, o);
  ASSERT_TRUE(half.ok());
  EXPECT_GT(half->result.signals, 3u);
  EXPECT_LT(half->result.signals, 17u);
  o.signals = {1.5, 1, 0};
  EXPECT_FALSE(ReplayTrace(t, o).ok());
  o.signals = {1, 0, 0};
  EXPECT_FALSE(ReplayTrace(t, o).ok());
}

TEST(TraceReplayTest, RefusesWhatOnlyAGeneratedWebHas) {
  Trace t = MustParse("url,time\nhttp://a.example/,1\nhttp://a.example/,9\n");
  TraceReplayOptions o = Uniform(1, 1);
  o.sim.shards = 2;
  EXPECT_FALSE(ReplayTrace(t, o).ok());
  o = Uniform(0, 1);
  EXPECT_FALSE(ReplayTrace(t, o).ok());
  EXPECT_FALSE(ReplayTrace(Trace{}, Uniform(1, 1)).ok());
}

TEST(TraceReplayTest, SeedShufflesTheRefreshPhasesDeterministically) {
  // Two pages fetched at t0, a fetch a day: uniform refetches them in the
  // order they were added. /a changes at day 0.5, /b at day 1.5. URL order
  // (/a at day 1, /b at day 2) keeps each stale half a day; the other order
  // (/b at day 1, /a at day 2) leaves /a stale for 1.5 days.
  const std::string trace = "url,time\nhttp://a.example/a," + At(0.5) +
                            "\nhttp://a.example/b," + At(1.5) +
                            "\nhttp://a.example/a," + At(0) +
                            "\nhttp://a.example/b," + At(0) + "\n";
  Trace t = MustParse(trace);
  auto freshness = [&](std::optional<uint64_t> seed) {
    TraceReplayOptions o = Uniform(1, 2.5);
    o.seed = seed;
    auto r = ReplayTrace(t, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->result.total.fresh : -1.0;
  };
  const double url_order = freshness(std::nullopt);
  bool other_order_seen = false, url_order_seen = false;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const double f = freshness(seed);
    EXPECT_EQ(f, freshness(seed)) << "seed " << seed;  // deterministic
    if (f == url_order) {
      url_order_seen = true;
    } else {
      other_order_seen = true;
      EXPECT_LT(f, url_order) << "seed " << seed;
    }
  }
  EXPECT_TRUE(other_order_seen);  // 16 seeds: each order with p = 1/2
  EXPECT_TRUE(url_order_seen);
  TraceReplayOptions o = Uniform(1, 2.5);
  o.seed = 7;
  auto r = ReplayTrace(t, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(nlohmann::json::parse(TraceReplayToJson(t, o, *r))["seed"], 7);
}

}  // namespace
}  // namespace freshd::sim
