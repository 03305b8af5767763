// Host pooling: global → host → page shrinkage of change rates and signal
// quality; new pages start from their host's estimate. Fixed, logged seeds.
#include "sched/host_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace freshd::sched {
namespace {

// One simulated interval of a Poisson page with signals.
struct Outcome {
  double interval;
  bool changed;
  int signals;
};

Outcome Interval(double rate, double alpha, double nu, double mean_interval,
                 std::mt19937_64& rng) {
  double tau =
      std::uniform_real_distribution<double>(0.2, 1.8)(rng) * mean_interval;
  int changes = std::poisson_distribution<int>(rate * tau)(rng);
  int signals = std::binomial_distribution<int>(changes, alpha)(rng) +
                std::poisson_distribution<int>(nu * tau)(rng);
  return {tau, changes > 0, signals};
}

HostPoolOptions UnitOptions() {
  HostPoolOptions o;
  o.global_prior = {1.0, 1.0};  // time unit 1 here, not seconds
  return o;
}

// Feeds `pages` pages of `host`, each `n` intervals, to the pool and to the
// pages' own statistics.
void Feed(HostPool& pool, uint32_t host, double rate, double alpha, double nu,
          int pages, int n, std::mt19937_64& rng,
          std::vector<ChangeRateStats>* page_stats = nullptr) {
  for (int p = 0; p < pages; ++p) {
    pool.AddPage(host);
    ChangeRateStats rs;
    SignalStats ss;
    for (int i = 0; i < n; ++i) {
      Outcome o = Interval(rate, alpha, nu, 1.0 / rate, rng);
      rs.Observe(o.interval, o.changed);
      pool.ObserveChange(host, o.interval, o.changed);
      double page_rate = rs.Estimate(pool.PageRatePrior(host));
      SignalParams current = ss.Estimate(pool.PageSignalPrior(host), page_rate);
      SignalTriple x{o.interval, o.signals, o.changed};
      ss.Observe(x, current);
      pool.ObserveSignals(host, x, current);
    }
    if (page_stats != nullptr) page_stats->push_back(rs);
  }
}

TEST(HostPoolTest, HostsGetTheirOwnPooledRates) {
  const uint64_t seed = 5;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  HostPool pool(UnitOptions());
  Feed(pool, 0, 2.0, 0.5, 0.1, 30, 20, rng);
  Feed(pool, 1, 0.1, 0.5, 0.01, 30, 20, rng);
  std::cout << "host 0 " << pool.HostRate(0) << " host 1 " << pool.HostRate(1)
            << " global " << pool.GlobalRate() << "\n";
  // The Gamma prior (host_rate_weight pseudo-changes at the global rate)
  // pulls a host 12x faster than the global estimate down more than it
  // pulls a slow one up: 1.85 at 2 pseudo-changes, 1.58 at 6, the price of
  // not letting a host's first short intervals run its rate away
  // (tests/sim/host_starvation_test.cc).
  EXPECT_NEAR(pool.HostRate(0) / 2.0, 1.0, 0.25);
  EXPECT_GT(pool.HostRate(0), 5 * pool.GlobalRate());
  EXPECT_NEAR(pool.HostRate(1) / 0.1, 1.0, 0.1);
  // An unseen host uses the global estimate, between the two.
  EXPECT_EQ(pool.HostRate(7), pool.GlobalRate());
  EXPECT_GT(pool.GlobalRate(), 0.1);
  EXPECT_LT(pool.GlobalRate(), 2.0);
  EXPECT_EQ(pool.Find(0)->pages(), 30u);
}

// Solved rates are cached between observations: after every observation
// and restore, the pool answers as a solve from its statistics would.
TEST(HostPoolTest, CachedRatesFollowObservationsAndRestores) {
  std::mt19937_64 rng(6);
  const HostPoolOptions options = UnitOptions();
  HostPool pool(options);
  auto expect_fresh = [&](const std::string& when) {
    const double global = pool.global().EstimateRate(options.global_prior);
    EXPECT_EQ(pool.GlobalRate(), global) << when;
    for (uint32_t h = 0; h < 4; ++h) {
      const HostStats* stats = pool.Find(h);
      const double expected =
          stats == nullptr
              ? global
              : stats->EstimateRate({global, options.host_rate_weight});
      EXPECT_EQ(pool.HostRate(h), expected) << when << ", host " << h;
    }
  };
  for (int round = 0; round < 20; ++round) {
    const uint32_t host = round % 3;
    Feed(pool, host, 0.2 * (host + 1), 0.5, 0.1, 1, 3, rng);  // asks, too
    expect_fresh("round " + std::to_string(round));
  }
  ASSERT_NE(pool.HostRate(0), pool.HostRate(2));
  pool.Restore(0, *pool.Find(2));
  expect_fresh("after Restore");
  EXPECT_EQ(pool.HostRate(0), pool.HostRate(2));
  const double global = pool.GlobalRate();
  pool.RestoreGlobal(*pool.Find(1));
  expect_fresh("after RestoreGlobal");
  EXPECT_NE(pool.GlobalRate(), global);
}

// The static share: Beta(a, b) on the global share, each host's shrunk
// toward it by host_static_pages; pages report P(static) changes.
TEST(HostPoolTest, StaticShareFollowsThePagesReports) {
  HostPool pool(UnitOptions());
  const HostPoolOptions& o = pool.options();
  const double a = o.static_prior_a, b = o.static_prior_b,
               k = o.host_static_pages;
  EXPECT_DOUBLE_EQ(pool.StaticShare(0), a / (a + b));  // before any report
  for (int i = 0; i < 40; ++i) pool.AdjustStatic(0, 0, 0.9, true);
  double global = (36 + a) / (40 + a + b);
  EXPECT_NEAR(pool.StaticShare(0), (36 + k * global) / (40 + k), 1e-9);
  EXPECT_NEAR(pool.StaticShare(5), global, 1e-12);  // unknown host
  for (int i = 0; i < 40; ++i) pool.AdjustStatic(1, 0, 0, true);
  global = (36 + a) / (80 + a + b);
  EXPECT_NEAR(pool.StaticShare(1), k * global / (40 + k), 1e-9);
  EXPECT_EQ(pool.PageRatePrior(1).static_share, pool.StaticShare(1));
  // A page revising its report moves the sum, not the page count.
  pool.AdjustStatic(0, 0.9, 0.1, false);
  global = (35.2 + a) / (80 + a + b);
  EXPECT_NEAR(pool.StaticShare(0), (35.2 + k * global) / (40 + k), 1e-9);
  // Ids past max_hosts count globally only.
  pool.AdjustStatic(static_cast<uint32_t>(o.max_hosts), 0, 1, true);
  EXPECT_NEAR(pool.StaticShare(static_cast<uint32_t>(o.max_hosts)),
              (36.2 + a) / (81 + a + b), 1e-9);
}

TEST(HostPoolTest, NewPagesStartFromTheirHostAndShrinkLess) {
  const uint64_t seed = 6;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  HostPool pool(UnitOptions());
  Feed(pool, 3, 2.0, 0.5, 0.1, 30, 20, rng);
  RatePrior prior = pool.PageRatePrior(3);
  prior.static_share = 0;  // the Gamma part (static share: next test)
  // A never-observed page: exactly the host's pooled estimate.
  EXPECT_EQ(ChangeRateStats().Estimate(prior), pool.HostRate(3));
  EXPECT_NEAR(ChangeRateStats().Estimate(prior) / 2.0, 1.0, 0.1);
  // One unchanged crawl: pulled down but near the host, not 0.
  ChangeRateStats once;
  once.Observe(0.5, false);
  double r1 = once.Estimate(prior);
  EXPECT_LT(r1, prior.rate);
  EXPECT_GT(r1, 0.4 * prior.rate);
  // A page with a long history of its own (true rate 0.2) escapes the host.
  ChangeRateStats own;
  for (int i = 0; i < 400; ++i) {
    Outcome o = Interval(0.2, 0, 0, 5.0, rng);
    own.Observe(o.interval, o.changed, -1, 0.999);
  }
  EXPECT_NEAR(own.Estimate(prior) / 0.2, 1.0, 0.2);
}

TEST(HostPoolTest, PooledSignalQualityIsTheHostsAndShrinksToIt) {
  const uint64_t seed = 8;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  HostPool pool(UnitOptions());
  Feed(pool, 0, 1.0, 0.8, 0.2, 40, 40, rng);
  SignalPrior prior = pool.PageSignalPrior(0);
  std::cout << "host alpha " << prior.center.alpha << " nu " << prior.center.nu
            << " delta " << prior.center.delta << "\n";
  EXPECT_NEAR(prior.center.alpha, 0.8, 0.1);
  EXPECT_NEAR(prior.center.nu, 0.2, 0.05);
  EXPECT_GT(prior.change_weight, 0);
  // A new page's signal estimate is the host's.
  SignalParams fresh = SignalStats().Estimate(prior, prior.center.delta);
  EXPECT_NEAR(fresh.alpha, prior.center.alpha, 1e-12);
  EXPECT_NEAR(fresh.nu, prior.center.nu, 1e-12);
  // A page with two intervals stays closer to the host than its raw counts.
  SignalStats two;
  two.Observe({1.0, 0, true}, prior.center);  // changed, no signal
  two.Observe({1.0, 0, true}, prior.center);
  SignalParams shrunk = two.Estimate(prior, 1.0);
  SignalParams raw = two.Estimate({}, 1.0);
  EXPECT_LT(raw.alpha, shrunk.alpha);
  EXPECT_LT(std::abs(shrunk.alpha - prior.center.alpha),
            std::abs(raw.alpha - prior.center.alpha));
}

TEST(HostPoolTest, JointPriorTimesChangesAgainstTheSignals) {
  // Every page of host 1 changes every 5 days with a signal, is fetched an
  // hour after it (a timed change the signal claims) and again 2 days after
  // that (unchanged). The changed bits alone read 3-day intervals that all
  // changed and 2-day ones that did not: 0.31 a day. The signal model's own
  // Δ, with the timed changes, reads the truth: 0.2 a day.
  HostPool pool;
  constexpr double kDay = 86400;
  const SignalParams current{0.2 / kDay, 0.5, 0.01 / kDay};
  for (int i = 0; i < 200; ++i) {
    pool.ObserveChange(1, 3 * kDay, true);
    SignalTriple signalled{3 * kDay, 1, true};
    signalled.quiet = 3600;
    signalled.signal_at_change = true;
    pool.ObserveSignals(1, signalled, current);
    pool.ObserveChange(1, 2 * kDay, false);
    pool.ObserveSignals(1, {2 * kDay, 0, false}, current);
  }
  const double bits = pool.PageSignalPrior(1).center.delta * kDay;
  const SignalPrior joint = pool.PageSignalPrior(1, true);
  std::cout << "host rate from bits " << bits << "/day, joint "
            << joint.center.delta * kDay << "/day, alpha " << joint.center.alpha
            << "\n";
  EXPECT_EQ(bits, pool.HostRate(1) * kDay);
  EXPECT_NEAR(bits, 0.305, 0.02);
  EXPECT_NEAR(joint.center.delta * kDay, 0.2, 0.02);
  EXPECT_GT(joint.center.alpha, 0.9);
  // The pseudo-time matches the centre's rate (a prior of page_signal_weight
  // changes).
  EXPECT_NEAR(joint.exposure_weight * joint.center.delta, joint.change_weight,
              1e-9);
}

TEST(HostPoolTest, LastModifiedTrustNeedsAgreement) {
  HostPool pool;
  for (int i = 0; i < 4; ++i) pool.ObserveLastModifiedAgreement(1, true);
  EXPECT_FALSE(pool.TrustLastModified(1));  // too few checks
  pool.ObserveLastModifiedAgreement(1, true);
  EXPECT_TRUE(pool.TrustLastModified(1));
  for (int i = 0; i < 10; ++i) pool.ObserveLastModifiedAgreement(2, i % 3 != 0);
  EXPECT_FALSE(pool.TrustLastModified(2));
  EXPECT_FALSE(pool.TrustLastModified(99));
}

TEST(HostPoolTest, HostIdsAreBounded) {
  HostPoolOptions o = UnitOptions();
  o.max_hosts = 4;
  HostPool pool(o);
  pool.ObserveChange(1000000, 1.0, true);  // counted globally only
  pool.AddPage(1000000);
  EXPECT_EQ(pool.hosts(), 0u);
  EXPECT_EQ(pool.Find(1000000), nullptr);
  EXPECT_EQ(pool.HostRate(1000000), pool.GlobalRate());
  pool.ObserveChange(3, 1.0, false);
  EXPECT_EQ(pool.hosts(), 4u);
  std::cout << "sizeof(HostStats) = " << sizeof(HostStats) << "\n";
  EXPECT_LE(sizeof(HostStats), 320u);
}

}  // namespace
}  // namespace freshd::sched
