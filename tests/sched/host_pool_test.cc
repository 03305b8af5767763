// Host pooling: global → host → page shrinkage of change rates and signal
// quality; new pages start from their host's estimate. Fixed, logged seeds.
#include "sched/host_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  // Two hosts 20x apart: the pull toward the global rate is the weakest
  // allowed. The Gamma prior still pulls a host 12x faster than the global
  // estimate down more than it pulls a slow one up (1.85 at 2 pseudo-
  // changes; 1.58 at a fixed 6).
  std::cout << "spread " << pool.HostRateSpread() << " weight "
            << pool.HostRateWeight() << "\n";
  EXPECT_EQ(pool.HostRateWeight(), pool.options().min_host_rate_weight);
  EXPECT_NEAR(pool.HostRate(0) / 2.0, 1.0, 0.1);
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
              : stats->EstimateRate({global, pool.HostRateWeight()});
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

// The host weight follows the data: hosts alike lean on each other as hard
// as allowed, hosts apart barely.
TEST(HostPoolTest, HostWeightFollowsTheSpreadOfHostRates) {
  const uint64_t seed = 8;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  HostPool alike(UnitOptions()), apart(UnitOptions());
  for (uint32_t h = 0; h < 12; ++h) {
    Feed(alike, h, 0.5, 0.5, 0.1, 20, 8, rng);
    // 0.03 to 3: log rates spread with variance ~1.9.
    Feed(apart, h, 0.03 * std::pow(100.0, h / 11.0), 0.5, 0.1, 20, 8, rng);
  }
  std::cout << "alike spread " << alike.HostRateSpread() << " weight "
            << alike.HostRateWeight() << "; apart spread "
            << apart.HostRateSpread() << " weight " << apart.HostRateWeight()
            << "\n";
  EXPECT_LT(alike.HostRateSpread(), 1 / alike.options().max_host_rate_weight);
  EXPECT_EQ(alike.HostRateWeight(), alike.options().max_host_rate_weight);
  EXPECT_GT(apart.HostRateSpread(), 1.0);
  EXPECT_EQ(apart.HostRateWeight(), apart.options().min_host_rate_weight);

  // A host alike to the others whose first intervals were all short and
  // changed (fetches right after signals): it stays near the others instead
  // of running away.
  for (int i = 0; i < 6; ++i) alike.ObserveChange(20, 0.3, true);
  std::cout << "short-interval host " << alike.HostRate(20) << "\n";
  EXPECT_LT(alike.HostRate(20), 0.5 * 1.5);

  // Equal bounds fix the weight.
  HostPoolOptions fixed = UnitOptions();
  fixed.min_host_rate_weight = fixed.max_host_rate_weight = 6;
  HostPool pool(fixed);
  Feed(pool, 0, 0.5, 0.5, 0.1, 5, 5, rng);
  Feed(pool, 1, 3.0, 0.5, 0.1, 5, 5, rng);
  EXPECT_EQ(pool.HostRateWeight(), 6);
}

// The spread is the robust empirical-Bayes one computed from scratch, also
// after restores in either order (the daemon's recovery), and is refreshed
// as hosts are observed.
TEST(HostPoolTest, HostSpreadMatchesARecomputation) {
  std::mt19937_64 rng(9);
  const HostPoolOptions options = UnitOptions();
  HostPool pool(options);
  for (uint32_t h = 0; h < 7; ++h) {
    Feed(pool, h, 0.1 * (h + 1), 0.5, 0.1, 4, 6, rng);
  }
  pool.AddPage(9);  // a host with no intervals yet: not counted
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  auto from_scratch = [&](const HostPool& p) {
    std::vector<double> logs, noises, shrinkages;
    const double w0 = options.host_spread_prior_weight;
    for (uint32_t h = 0; h < p.hosts(); ++h) {
      const HostStats* stats = p.Find(h);
      if (stats->observations() < 1) continue;
      const double rate = stats->EstimateRate({p.GlobalRate(), w0});
      const double info = stats->LogRateInformation(rate);
      const double b = info / (info + w0);
      logs.push_back(std::log(rate));
      noises.push_back(b * b / info);
      shrinkages.push_back(b * b);
    }
    EXPECT_EQ(logs.size(), 7u);
    const double center = median(logs);
    for (double& l : logs) l = std::abs(l - center);
    const double scale = 1.4826 * median(logs);
    return (scale * scale - median(noises)) / median(shrinkages);
  };
  // A restore marks the spread stale: recomputed at the next question.
  pool.RestoreGlobal(pool.global());
  const double spread = from_scratch(pool);
  EXPECT_NEAR(pool.HostRateSpread(), spread, 1e-12);
  EXPECT_GT(spread, 0.05);  // the hosts differ
  EXPECT_EQ(pool.HostRateWeight(), std::clamp(1 / spread, 2.0, 50.0));

  HostPool restored(options);  // hosts before the globals ...
  for (uint32_t h = 0; h < pool.hosts(); ++h) {
    restored.Restore(h, *pool.Find(h));
  }
  restored.RestoreGlobal(pool.global());
  EXPECT_NEAR(restored.HostRateSpread(), spread, 1e-12);
  HostPool reversed(options);  // ... and after them
  reversed.RestoreGlobal(pool.global());
  EXPECT_EQ(reversed.HostRateSpread(), 0);  // no host yet
  for (uint32_t h = 0; h < pool.hosts(); ++h) {
    reversed.Restore(h, *pool.Find(h));
  }
  EXPECT_NEAR(reversed.HostRateSpread(), spread, 1e-12);

  // Within as many intervals as there are hosts (10 ids) it is kept; then
  // it follows them.
  for (int i = 0; i < 9; ++i) pool.ObserveChange(0, 5.0, false);
  EXPECT_EQ(pool.HostRateSpread(), spread);
  pool.ObserveChange(0, 5.0, false);
  EXPECT_NEAR(pool.HostRateSpread(), from_scratch(pool), 1e-12);
  EXPECT_NE(pool.HostRateSpread(), spread);
}

// The spread is robust: one host among alike ones whose rate ran away does
// not free itself from the pull, as it would by the variance.
TEST(HostPoolTest, OneRunawayHostDoesNotWidenTheSpread) {
  std::mt19937_64 rng(10);
  HostPool pool(UnitOptions());
  for (uint32_t h = 0; h < 10; ++h) Feed(pool, h, 0.4, 0.5, 0.1, 20, 8, rng);
  for (int i = 0; i < 16; ++i) pool.ObserveChange(10, 0.4, true);
  std::cout << "spread " << pool.HostRateSpread() << " weight "
            << pool.HostRateWeight() << " runaway host " << pool.HostRate(10)
            << " global " << pool.GlobalRate() << "\n";
  EXPECT_EQ(pool.HostRateWeight(), pool.options().max_host_rate_weight);
  EXPECT_LT(pool.HostRate(10), 2 * pool.GlobalRate());
  // The moment estimate (variance less mean noise) would have let it go.
  double k = 0, sum = 0, sum2 = 0, noise = 0;
  for (uint32_t h = 0; h < pool.hosts(); ++h) {
    const HostStats& stats = *pool.Find(h);
    const double l = std::log(stats.EstimateRate({pool.GlobalRate(), 1}));
    k += 1;
    sum += l;
    sum2 += l * l;
    noise += 1 / stats.observations();
  }
  const double moment = (sum2 - sum * sum / k) / (k - 1) - noise / k;
  std::cout << "moment estimate " << moment << "\n";
  EXPECT_GT(moment, 0.1);
}

// Hosts of a few pages: each host's log rate is noisy and shrunk toward
// the global one, and 1/intervals understates that noise (a bit-only
// interval tells at most 0.65 of an event about ln λ); alike small hosts
// still lean hard on each other, small hosts apart do not (with 1/n for
// the noise, alike hosts of 10 pages read weight 20, of 3 pages 6.6).
TEST(HostPoolTest, SmallHostsAlikeAndApart) {
  for (int pages : {3, 10}) {
    for (double apart : {1.0, 100.0}) {
      std::mt19937_64 rng(12);
      std::uniform_real_distribution<double> u(0, 1);
      HostPool pool(UnitOptions());
      for (uint32_t h = 0; h < 400; ++h) {
        const double rate = 0.3 * std::pow(apart, u(rng) - 0.5);
        for (int p = 0; p < pages; ++p) {
          pool.AddPage(h);
          for (int i = 0; i < 4; ++i) {
            const double tau = 0.2 + 1.6 * u(rng);
            pool.ObserveChange(h, tau, u(rng) < 1 - std::exp(-rate * tau));
          }
        }
      }
      std::cout << pages << " pages a host, rates " << apart
                << "x apart: spread " << pool.HostRateSpread() << " weight "
                << pool.HostRateWeight() << "\n";
      if (apart == 1 && pages == 3) {         // 12 intervals a host: 11 to 50
        EXPECT_GT(pool.HostRateWeight(), 6);  // over 6 seeds
      } else if (apart == 1) {
        EXPECT_EQ(pool.HostRateWeight(), pool.options().max_host_rate_weight);
      } else {  // log-rate variance (ln 100)²/12 = 1.77
        EXPECT_NEAR(pool.HostRateSpread(), 1.77, 1.0);
        EXPECT_EQ(pool.HostRateWeight(), pool.options().min_host_rate_weight);
      }
    }
  }
}

// The information about ln λ: x²e^{−x}/(1−e^{−x}) per bit-only interval
// of length τ (x = λτ), one per timed change.
TEST(HostPoolTest, LogRateInformation) {
  HostStats stats;
  auto info = [](double x) {
    return x * x * std::exp(-x) / (1 - std::exp(-x));
  };
  for (int i = 0; i < 10; ++i) stats.ObserveChange(2.0, false, -1, 1);
  EXPECT_NEAR(stats.LogRateInformation(0.5), 10 * info(1.0), 1e-5);
  stats.ObserveChange(1.0, true, -1, 1);   // a binned changed interval
  stats.ObserveChange(3.0, true, 0.5, 1);  // a timed change
  EXPECT_NEAR(stats.LogRateInformation(0.5), 10 * info(1.0) + info(0.5) + 1,
              1e-5);
  EXPECT_EQ(HostStats().LogRateInformation(0.5), 0);
  // At most ~0.65 an interval, at x ≈ 1.6.
  EXPECT_LT(info(1.6), 0.65);
  EXPECT_GT(info(1.6), 0.64);
}

// A sample of the hosts stands for them all (bounded pause at 10M pages).
TEST(HostPoolTest, HostSpreadFromASample) {
  std::mt19937_64 rng(11);
  HostPoolOptions options = UnitOptions();
  options.host_spread_sample = 6;
  HostPool alike(options), apart(options);
  for (uint32_t h = 0; h < 24; ++h) {
    Feed(alike, h, 0.5, 0.5, 0.1, 10, 8, rng);
    Feed(apart, h, 0.03 * std::pow(100.0, (h % 12) / 11.0), 0.5, 0.1, 10, 8,
         rng);
  }
  EXPECT_EQ(alike.HostRateWeight(), options.max_host_rate_weight);
  EXPECT_EQ(apart.HostRateWeight(), options.min_host_rate_weight);
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
  // 300 B, plus each signal source's own SignalStats and the mask of the
  // sources seen (issue 44 item 4: 5 × 20 + 1, padded: 404 B).
  EXPECT_LE(sizeof(HostStats), 404u);
}

}  // namespace
}  // namespace freshd::sched
