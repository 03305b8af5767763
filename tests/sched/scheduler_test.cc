// The Scheduler facade (issue 4, item 5): every Select() equals a brute-force
// argmax of PriorityOf over all eligible pages, for every policy, oracle and
// estimated, under random observations, signals, closed hosts, in-flight
// pages and min_interval (and Summarize, /status's pass, its definition);
// RestorePage restores equal values; truth mixtures; max_pages, unknown ids,
// failure back-off classes. The horizon: scheduler_horizon_test.cc; what it
// learns: scheduler_estimates_test.cc; each part alone: rule_table_test,
// selection_index_test, estimator_test, valuer_test. Randomized tests use
// fixed seeds, logged with SCOPED_TRACE.

#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/sched/scheduler_test_util.h"
#include "tests/sched/test_truth.h"

namespace freshd::sched {
namespace {

using sched_test::Changed;
using sched_test::kDay;
using sched_test::kHosts;
using sched_test::Make;
using sched_test::SameKey;

// Drives one scheduler with random events; checks each Select against a
// brute-force argmax, and each step's Summarize against its definition.
// Returns the number of checked selections; counts the steps that had
// overdue pages in *steps_with_overdue.
// With `mixture` (oracle only), each page's model is a random weighted set
// of draws (TestTruth::SetMixture; some weights 0, some pages none).
// With `slice` > 0, the budget is low enough that a horizon spans days of
// events and the next one is staged `slice` pages a Select between them
// (SchedulerOptions::refresh_slice_pages); *staged counts the horizons so
// swapped in. With `rate_mixture` (estimated only),
// SchedulerOptions::rate_mixture and explore are on. With `coverage`, hosts
// report their signal sources' coverage (ObserveSignalCoverage) at random
// times up to a day back, some older than their last report.
int RunExactness(const std::string& policy, bool oracle, uint32_t seed,
                 int* steps_with_overdue, bool mixture = false,
                 size_t slice = 0, uint64_t* staged = nullptr,
                 bool rate_mixture = false, bool coverage = false) {
  SCOPED_TRACE(policy + (oracle ? " oracle" : " estimated") +
               (mixture ? " mixture" : "") + " seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  SchedulerOptions o;
  o.policy = policy;
  o.oracle = oracle;
  o.rate = 1e6;  // tokens are never the limit here
  o.burst = 1e9;
  o.min_interval = 600;
  o.max_interval = 6 * kDay;  // some pages become overdue
  o.new_page_value = 0.5 * kDay;
  o.rate_mixture = o.explore = rate_mixture;
  if (slice > 0) {
    o.refresh_slice_pages = slice;
    o.rate = 30 / kDay;  // a horizon of 2·241/slice + 16 tokens: days
  }
  TestTruth truth_source;
  auto sched = Make(o, &truth_source);
  const size_t n = 240;
  for (size_t i = 0; i < n; ++i) {
    auto id = sched->AddUrl(static_cast<HostId>(i % kHosts), 0.05 + u(rng));
    EXPECT_TRUE(id.ok());
    if (oracle) {
      PageParams p{(0.05 + 2 * u(rng)) / kDay, sched->page(*id).importance,
                   u(rng), 0.5 * u(rng) / kDay};
      DivergenceModel m;
      m.static_share = 0.3 * u(rng);
      m.churn_share = (1 - m.static_share) * u(rng);
      m.churn_rate = (0.1 + u(rng)) / kDay;
      m.scroll_k = 1 + static_cast<int>(u(rng) * 6);
      m.scroll_rate = (0.1 + 2 * u(rng)) / kDay;
      truth_source.Set(*sched, *id, p, m);
      if (mixture && u(rng) < 0.8) {
        std::vector<WeightedParams> draws;
        const int k = 1 + static_cast<int>(u(rng) * 4);
        for (int d = 0; d < k; ++d) {
          PageParams q{(0.05 + 2 * u(rng)) / kDay, p.mu, u(rng),
                       0.5 * u(rng) / kDay};
          draws.push_back({q, u(rng) < 0.2 ? 0.0 : u(rng)});
        }
        truth_source.SetMixture(*sched, *id, std::move(draws));
      }
    }
  }
  std::vector<PageId> in_flight;
  double now = 0;
  int checked = 0;
  for (int step = 0; step < 260; ++step) {
    now += u(rng) * 0.3 * kDay;
    // Signals, rediscoveries and a few unknown ids.
    for (int k = 0; k < 8; ++k) {
      PageId p = static_cast<PageId>(u(rng) * n);
      sched->Observe({p, now, SignalObs{}});
    }
    sched->Observe({static_cast<PageId>(n + 3), now, SignalObs{}});
    if (coverage) {
      for (HostId h = 0; h < kHosts; ++h) {
        if (u(rng) < 0.4) sched->ObserveSignalCoverage(h, now - u(rng) * kDay);
      }
    }
    for (int k = 0; k < 2; ++k) {  // rediscovered with a higher importance
      PageId p = static_cast<PageId>(u(rng) * n);
      DiscoveredObs d;
      d.importance = sched->page(p).importance * (1 + u(rng));
      sched->Observe({p, now, d});
    }
    // Finish some in-flight fetches: content, 304 or failure.
    for (size_t k = 0; k < in_flight.size();) {
      if (u(rng) < 0.5) {
        ++k;
        continue;
      }
      PageId p = in_flight[k];
      in_flight.erase(in_flight.begin() + static_cast<long>(k));
      double r = u(rng);
      if (r < 0.65) {
        FetchedObs f;
        f.changed = u(rng) < 0.6;
        double d = 0;
        for (size_t b = 0; b < sched->ProfileBaseTimes(p).size(); ++b) {
          d = std::min(1.0, d + 0.3 * u(rng));
          f.base_divergence.push_back(d);
        }
        sched->Observe({p, now, std::move(f)});
      } else if (r < 0.85) {
        sched->Observe({p, now, NotModifiedObs{}});
      } else {
        FailedObs f;
        f.failure = static_cast<FailureClass>(u(rng) * 9);
        sched->Observe({p, now, f});
      }
    }
    // The one-pass summary (/status) is its definition over every page.
    Scheduler::Summary summary = sched->Summarize(now);
    double weight = 0, fresh = 0;
    uint64_t overdue = 0, unfetched = 0, failed = 0;
    for (PageId p = 0; p < n; ++p) {
      weight += sched->page(p).importance;
      fresh += sched->page(p).importance * sched->FreshProbability(p, now);
      if (sched->page(p).failures > 0) ++failed;
      if (!sched->page(p).fetched()) {
        if (sched->page(p).failures == 0) ++unfetched;
      } else if (sched->PriorityOf(p, now).overdue) {
        ++overdue;
      }
    }
    EXPECT_NEAR(summary.estimated_freshness, fresh / weight, 1e-12);
    EXPECT_EQ(summary.overdue, overdue) << "step " << step;
    EXPECT_EQ(summary.unfetched, unfetched) << "step " << step;
    EXPECT_EQ(summary.failed, failed) << "step " << step;
    // The same pass in slices of 7 pages (the daemon's, beyond 65,536
    // pages) adds the same terms in the same order: equal bit for bit.
    Scheduler::SummaryPass pass;
    int slices = 1;
    while (!sched->SummarizeSome(now, 7, &pass)) ++slices;
    EXPECT_EQ(slices, static_cast<int>((n + 6) / 7));
    EXPECT_EQ(pass.next(), n);
    EXPECT_EQ(pass.summary().estimated_freshness, summary.estimated_freshness);
    EXPECT_EQ(pass.summary().overdue, summary.overdue);
    EXPECT_EQ(pass.summary().unfetched, summary.unfetched);
    EXPECT_EQ(pass.summary().failed, summary.failed);
    if (overdue > 0) ++*steps_with_overdue;
    // A random gate closes some hosts.
    std::vector<bool> open(kHosts);
    for (uint32_t h = 0; h < kHosts; ++h) open[h] = u(rng) < 0.7;
    Scheduler::HostOpenFn gate = [&](HostId h) { return bool(open[h]); };
    for (int pick = 0; pick < 3; ++pick) {
      // Brute force: overdue first by earliest deadline, then value.
      std::optional<PageId> best;
      Priority best_priority;
      for (PageId p = 0; p < n; ++p) {
        if (!sched->Eligible(p, now, gate)) continue;
        Priority pr = sched->PriorityOf(p, now);
        if (!best || Better(pr, best_priority)) {
          best = p;
          best_priority = pr;
        }
      }
      // A due-only policy (nutch, stormcrawler) leaves the token unused
      // when the best known page is not due (value 0).
      const bool unused = best.has_value() && sched->policy().due_only() &&
                          !best_priority.overdue &&
                          sched->page(*best).fetched() &&
                          !(best_priority.key > 0);
      std::optional<PageId> got = sched->Select(now, gate);
      EXPECT_EQ(got.has_value(), best.has_value() && !unused)
          << "step " << step;
      if (!got || !best || unused) break;
      EXPECT_TRUE(sched->page(*got).in_flight());
      // The choice's priority, as it was before Select marked it in flight.
      Priority gp = sched->PriorityOf(*got, now);
      EXPECT_EQ(gp.overdue, best_priority.overdue) << "step " << step;
      EXPECT_TRUE(SameKey(gp.key, best_priority.key))
          << "step " << step << " got " << *got << " key " << gp.key
          << " brute force " << *best << " key " << best_priority.key;
      in_flight.push_back(*got);
      ++checked;
    }
  }
  if (staged != nullptr) {
    *staged = sched->horizon_refreshes() - sched->full_refreshes();
  }
  return checked;
}

TEST(SchedulerTest, EverySelectionIsTheBruteForceArgmax) {
  for (const std::string& policy : PolicyNames()) {
    for (bool oracle : {true, false}) {
      int steps_with_overdue = 0;
      int checked = RunExactness(policy, oracle, 20261121, &steps_with_overdue);
      EXPECT_GT(checked, 300) << policy;
      EXPECT_GT(steps_with_overdue, 10) << policy;
    }
  }
}

// Valued over the grid posterior's draws, with exploration's deadlines: the
// bounds and deadlines still hold, every choice is exact.
TEST(SchedulerTest, RateMixtureSelectionsAreTheBruteForceArgmax) {
  for (const std::string& policy : PolicyNames()) {
    int steps_with_overdue = 0;
    int checked = RunExactness(policy, false, 20261126, &steps_with_overdue,
                               false, 0, nullptr, true);
    EXPECT_GT(checked, 300) << policy;
  }
}

// Signal coverage (ObserveSignalCoverage) moves the draws' weights of a
// value as τ would, also backwards relative to τ and in jumps: the index
// bounds and the lazy re-valuation still give the brute-force argmax, with
// truth mixtures, rate draws, the grid posterior and staged horizons.
TEST(SchedulerTest, SignalCoverageSelectionsAreTheBruteForceArgmax) {
  for (const char* policy : {"ncis", "ncis1", "cis", "freshness"}) {
    int overdue = 0;
    EXPECT_GT(RunExactness(policy, true, 20261127, &overdue, true, 0, nullptr,
                           false, true),
              300)
        << policy;
    EXPECT_GT(RunExactness(policy, false, 20261128, &overdue, false, 0, nullptr,
                           false, true),
              300)
        << policy;
    EXPECT_GT(RunExactness(policy, false, 20261129, &overdue, false, 0, nullptr,
                           true, true),
              300)
        << policy;
    uint64_t staged = 0;
    EXPECT_GT(RunExactness(policy, false, 20261130, &overdue, false, 7, &staged,
                           true, true),
              300)
        << policy;
    EXPECT_GT(staged, 5u) << policy;
  }
}

// Exploration: a page fetched once is due again after N/R; with the mixture,
// a page whose intervals all changed gets one probe at a quarter of its last
// interval, and not another right after it.
TEST(SchedulerTest, ExploreDueDatesFollowWhatThePageHasNotShown) {
  SchedulerOptions o;
  o.policy = "freshness";
  o.rate = 10.0 / kDay;  // 10 pages a day
  o.min_interval = 60;
  o.max_interval = 0;
  o.rate_mixture = o.explore = true;
  auto sched = Make(o);
  // The page's deadline as PriorityOf reports it once overdue (inf: none
  // within a year).
  auto deadline = [](const Scheduler& s, double after) {
    const Priority p = s.PriorityOf(0, after + 365 * kDay);
    return p.overdue ? p.key : std::numeric_limits<double>::infinity();
  };
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(sched->AddUrl(0, 1).ok());
  double now = 0;
  ASSERT_EQ(sched->Observe({0, now, Changed(false)}).page, true);
  EXPECT_NEAR(deadline(*sched, now), now + 50 / o.rate, 1e-6);
  // Without explore there is no deadline.
  o.explore = false;
  auto plain = Make(o);
  ASSERT_TRUE(plain->AddUrl(0, 1).ok());
  ASSERT_TRUE(plain->Observe({0, 0, Changed(false)}).page);
  EXPECT_TRUE(std::isinf(deadline(*plain, 0)));
  // Three daily intervals that all changed: a probe after 6 h.
  for (int i = 0; i < 3; ++i) {
    now += kDay;
    ASSERT_TRUE(sched->Observe({0, now, Changed(true)}).page);
  }
  EXPECT_NE(sched->page(0).flags & PageState::kProbe, 0);
  EXPECT_NEAR(deadline(*sched, now), now + kDay / 4, 1e-6);
  now += kDay / 4;  // the probe, changed again: no second probe
  ASSERT_TRUE(sched->Observe({0, now, Changed(true)}).page);
  EXPECT_EQ(sched->page(0).flags & PageState::kProbe, 0);
  EXPECT_TRUE(std::isinf(deadline(*sched, now)));
}

// A page whose model is a set of draws (the simulator's posterior) still has
// a valid index bound, though its value may fall as τ grows: the choice is
// still exact.
// The same with the next horizon staged a few pages a Select while signals,
// fetches, failures and rediscoveries change the pages already staged: the
// swapped-in bounds still hold, every choice is still the argmax.
TEST(SchedulerTest, StagedHorizonSelectionsAreTheBruteForceArgmax) {
  for (const std::string& policy : PolicyNames()) {
    for (bool oracle : {true, false}) {
      for (bool mixture : {false, true}) {
        if (mixture && !oracle) continue;
        int steps_with_overdue = 0;
        uint64_t staged = 0;
        int checked =
            RunExactness(policy, oracle, 20261126, &steps_with_overdue, mixture,
                         /*slice=*/7, &staged);
        EXPECT_GT(checked, 300) << policy;
        // Several staged horizons swapped in (5 for nutch, whose horizons
        // lengthen fastest).
        EXPECT_GE(staged, 4u) << policy;
      }
    }
  }
}

// Pages added while the next horizon is staged (before, during and after
// its bounds are ordered) are indexed in it: every choice is the argmax.
// New pages come in batches valued above all others, so one left out of
// the swapped-in order would be missed (leaving out those added after the
// bounds ended fails 133 checks).
TEST(SchedulerTest, PagesAddedWhileStagingAreIndexed) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0, 1);
  SchedulerOptions o;
  o.policy = "freshness";
  o.oracle = true;
  o.rate = 30 / kDay;
  o.burst = 1e9;
  o.min_interval = 600;
  o.max_interval = 0;
  o.new_page_value = 100 * kDay;
  o.refresh_slice_pages = 8;
  TestTruth truth_source;
  auto s = Make(o, &truth_source);
  auto add = [&] {
    PageId id =
        s->AddUrl(static_cast<HostId>(u(rng) * kHosts), u(rng) + 0.05).value();
    truth_source.Set(
        *s, id, PageParams{u(rng) / kDay, s->page(id).importance, 0, 0}, {});
  };
  for (int i = 0; i < 100; ++i) add();
  auto open = [](HostId) { return true; };
  double now = 0;
  int checked = 0;
  for (int step = 0; step < 1500; ++step) {
    now = s->NextTokenTime(now + u(rng) * 0.02 * kDay);
    if (step % 37 == 0) {  // a batch of new pages, fetched first
      for (int k = 0; k < 12; ++k) add();
    }
    std::optional<PageId> best;
    Priority best_priority;
    for (PageId p = 0; p < s->size(); ++p) {
      if (!s->Eligible(p, now, open)) continue;
      Priority pr = s->PriorityOf(p, now);
      if (!best || Better(pr, best_priority)) {
        best = p;
        best_priority = pr;
      }
    }
    std::optional<PageId> got = s->Select(now, open);
    ASSERT_EQ(got.has_value(), best.has_value());
    if (!got) continue;
    Priority gp = s->PriorityOf(*got, now);
    EXPECT_TRUE(SameKey(gp.key, best_priority.key))
        << "step " << step << " got " << *got << " brute force " << *best;
    ++checked;
    s->Observe({*got, now, Changed(u(rng) < 0.5)});
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(s->horizon_refreshes() - s->full_refreshes(), 5u);
}

TEST(SchedulerTest, MixtureSelectionsAreTheBruteForceArgmax) {
  for (const std::string policy :
       {"freshness", "age", "ncis", "ncis1", "ncis2", "cis", "uniform"}) {
    int steps_with_overdue = 0;
    int checked =
        RunExactness(policy, true, 20261125, &steps_with_overdue, true);
    EXPECT_GT(checked, 300) << policy;
  }
}

// The same at a budget whose horizon spans hours, so a draw's weight moves
// during it: quiet time shifts weight toward draws of few signals, whose
// value may be the higher (the bound's tilt term).
TEST(SchedulerTest, MixtureBoundHoldsOverLongHorizons) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  SchedulerOptions o;
  o.policy = "ncis";
  o.oracle = true;
  o.rate = 100 / kDay;
  o.min_interval = 0;
  o.max_interval = 0;
  TestTruth truth_source;
  auto s = Make(o, &truth_source);
  const size_t n = 300;
  for (size_t i = 0; i < n; ++i) {
    PageId id = *s->AddUrl(0, 0.1 + u(rng));
    truth_source.Set(*s, id,
                     {1 / kDay, s->page(id).importance, 0.5, 0.1 / kDay}, {});
    s->Observe({id, 0, Changed(false)});
    std::vector<WeightedParams> draws;
    for (int d = 0; d < 3; ++d) {  // fast unsignalled or slow well signalled
      const bool quiet = u(rng) < 0.5;
      draws.push_back({{(quiet ? 1 + 3 * u(rng) : 0.05 + 0.2 * u(rng)) / kDay,
                        s->page(id).importance, quiet ? 0.02 : 0.95,
                        (quiet ? 0.01 : 1.5) * u(rng) / kDay},
                       0.2 + u(rng)});
    }
    truth_source.SetMixture(*s, id, std::move(draws));
  }
  auto open = [](HostId) { return true; };
  double now = 0;
  int checked = 0;
  for (int step = 0; step < 400; ++step) {
    now = s->NextTokenTime(now);
    for (int k = 0; k < 2; ++k) {
      s->Observe({static_cast<PageId>(u(rng) * n), now, SignalObs{}});
    }
    std::optional<PageId> best;
    double best_value = 0;
    for (PageId p = 0; p < n; ++p) {
      const double v = s->Value(p, now);
      if (!best || v > best_value) {
        best = p;
        best_value = v;
      }
    }
    std::optional<PageId> got = s->Select(now, open);
    ASSERT_TRUE(got.has_value()) << "step " << step;
    EXPECT_TRUE(SameKey(s->Value(*got, now), best_value))
        << "step " << step << " got " << *got << " " << s->Value(*got, now)
        << " brute force " << *best << " " << best_value;
    s->Observe({*got, now, Changed(u(rng) < 0.5)});
    ++checked;
  }
  EXPECT_EQ(checked, 400);
  EXPECT_GT(s->horizon_refreshes(), 5u);
}

// The value over draws is their weighted average, each weighted by the
// likelihood of the signals since the fetch (σⁿe^{−στ}) for the signal
// policies, by its weight alone for the others.
TEST(SchedulerTest, MixtureValueIsTheSignalWeightedAverage) {
  for (const std::string name : {"ncis", "freshness"}) {
    SCOPED_TRACE(name);
    SchedulerOptions o;
    o.policy = name;
    o.oracle = true;
    o.rate = 1.0 / kDay;
    TestTruth truth_source;
    auto s = Make(o, &truth_source);
    PageId id = *s->AddUrl(0, 0.7);
    const PageParams truth{0.4 / kDay, 0.7, 0.5, 0.1 / kDay};
    truth_source.Set(*s, id, truth, {});
    s->Observe({id, 0, Changed(false)});
    for (int i = 0; i < 3; ++i) s->Observe({id, kDay * (1 + i), SignalObs{}});
    const std::vector<WeightedParams> draws = {
        {{0.1 / kDay, 0.7, 0.9, 0.05 / kDay}, 1.0},
        {{2.0 / kDay, 0.7, 0.2, 0.4 / kDay}, 3.0},
        {{0.5 / kDay, 0.7, 0.6, 0.2 / kDay}, 0.0}};
    const double now = 4.5 * kDay;
    const double before = s->Value(id, now);
    truth_source.SetMixture(*s, id, draws);
    auto policy = MakePolicy(name, {});
    ASSERT_TRUE(policy.ok());
    PolicyInput in;
    in.state = &s->page(id);
    in.oracle = true;
    in.mean_interval = 1 / o.rate;
    double sum = 0, total = 0;
    for (const auto& d : draws) {
      in.params = d.params;
      const double sigma = d.params.alpha * d.params.delta + d.params.nu;
      const double w =
          d.weight *
          (name == "ncis" ? std::pow(sigma, 3) * std::exp(-sigma * now) : 1.0);
      sum += w * (*policy)->Value(in, now);
      total += w;
    }
    EXPECT_NEAR(s->Value(id, now), sum / total, 1e-12 * sum / total);
    EXPECT_NE(s->Value(id, now), before);
    EXPECT_EQ(s->Params(id).delta, truth.delta);  // Params keeps the true ones
    // Removed by an empty set; rejected with a bad weight.
    truth_source.SetMixture(*s, id, {{draws[0].params, -1.0}});
    EXPECT_NEAR(s->Value(id, now), sum / total, 1e-12 * sum / total);
    truth_source.SetMixture(*s, id, {});
    EXPECT_EQ(s->Value(id, now), before);
  }
}

// Outside oracle mode a mixture is ignored.
TEST(SchedulerTest, MixtureIsIgnoredWhenEstimating) {
  SchedulerOptions o;
  o.policy = "ncis";
  o.rate = 1.0 / kDay;
  TestTruth truth_source;
  auto s = Make(o, &truth_source);
  PageId id = *s->AddUrl(0, 1);
  s->Observe({id, 0, Changed(false)});
  const double before = s->Value(id, kDay);
  truth_source.SetMixture(*s, id, {{{5.0 / kDay, 1, 0.5, 0.1 / kDay}, 1.0}});
  EXPECT_EQ(s->Value(id, kDay), before);
}

// Pages saved from one scheduler and restored into another (host statistics
// copied first) value and rank exactly as before.
TEST(SchedulerTest, RestoredPagesValueAsTheOriginals) {
  for (const std::string& policy : PolicyNames()) {
    for (bool oracle : {false, true}) {
      SCOPED_TRACE(policy + (oracle ? " oracle" : " estimated") + " seed 11");
      std::mt19937_64 rng(11);
      std::uniform_real_distribution<double> u(0, 1);
      SchedulerOptions o;
      o.policy = policy;
      o.oracle = oracle;
      o.max_interval = 5 * kDay;
      TestTruth truth_a;
      auto a = Make(o, &truth_a);
      std::vector<PageParams> truth;
      const size_t n = 60;
      for (size_t i = 0; i < n; ++i) {
        PageId id = a->AddUrl(static_cast<HostId>(i % 3), 0.1 + u(rng)).value();
        truth.push_back({u(rng) / kDay, a->page(id).importance, u(rng),
                         0.3 * u(rng) / kDay});
        truth_a.Set(*a, id, truth.back(), {0.2, 0.5, 1 / kDay, 3, 0.5 / kDay});
      }
      double now = 0;
      for (int k = 0; k < 600; ++k) {
        now += 0.01 * kDay * u(rng);
        PageId p = static_cast<PageId>(u(rng) * n);
        if (u(rng) < 0.3) {
          a->Observe({p, now, SignalObs{}});
          continue;
        }
        FetchedObs f;
        f.changed = u(rng) < 0.5;
        for (size_t b = 0; b < a->ProfileBaseTimes(p).size(); ++b) {
          f.base_divergence.push_back(0.8 * u(rng));
        }
        a->Observe({p, now, std::move(f)});
      }
      TestTruth truth_b;
      auto b = Make(o, &truth_b);
      b->mutable_hosts() = a->hosts();
      for (PageId p = 0; p < n; ++p) {
        std::optional<ProfileSet> profiles;
        if (a->Profiles(p) != nullptr) profiles = *a->Profiles(p);
        PageId q =
            b->RestorePage(a->Snapshot(p), profiles, {}, a->RateMemoryOf(p))
                .value();
        ASSERT_EQ(q, p);
        truth_b.Set(*b, q, truth[p], {0.2, 0.5, 1 / kDay, 3, 0.5 / kDay});
      }
      for (double later : {now, now + 0.5 * kDay, now + 9 * kDay}) {
        for (PageId p = 0; p < n; ++p) {
          EXPECT_TRUE(SameKey(a->Value(p, later), b->Value(p, later)))
              << "page " << p << ": " << a->Value(p, later) << " vs "
              << b->Value(p, later);
          Priority pa = a->PriorityOf(p, later), pb = b->PriorityOf(p, later);
          EXPECT_EQ(pa.overdue, pb.overdue);
          EXPECT_TRUE(SameKey(pa.key, pb.key)) << "page " << p;
        }
      }
    }
  }
}

// When deadlines decide every choice, the implied threshold still follows
// the margin: the best value a token could have bought (it used to freeze,
// and longevity's risk bound ρ·T then forced every crawl).
TEST(SchedulerTest, ThresholdTracksTheMarginWhenDeadlinesDecide) {
  SchedulerOptions o;
  o.policy = "freshness";
  o.rate = 1e6;
  o.burst = 1e9;
  o.max_interval = 1 * kDay;
  auto sched = Make(o);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  const PageId n = 50;
  for (PageId p = 0; p < n; ++p) {
    ASSERT_TRUE(sched->AddUrl(p % 5, 0.1 + u(rng)).ok());
    sched->Observe({p, 0, Changed(false)});
  }
  Scheduler::HostOpenFn open = [](HostId) { return true; };
  double now = 3 * kDay, expected = 0;
  for (int k = 0; k < 20; ++k) {
    now += 60;
    double best = 0;
    for (PageId p = 0; p < n; ++p) {
      if (sched->Eligible(p, now, open)) {
        best = std::max(best, sched->Value(p, now));
      }
    }
    std::optional<PageId> got = sched->Select(now, open);
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(sched->PriorityOf(*got, now).overdue);
    expected = expected > 0 ? 0.99 * expected + 0.01 * best : best;
    EXPECT_TRUE(SameKey(sched->threshold(), expected))
        << k << ": " << sched->threshold() << " vs " << expected;
  }
  EXPECT_GT(sched->threshold(), 0);
}

// Estimated longevity: a page whose profiles never showed a change keeps a
// positive value (the host prior's curve at its estimated rate), not the
// "static forever" fit that left it unfetched; its model is saved with the
// profiles.
TEST(SchedulerTest, YoungLongevityPagesAreNotAbandoned) {
  SchedulerOptions o;
  o.policy = "longevity";
  auto sched = Make(o);
  PageId p = sched->AddUrl(0, 1).value();
  for (int k = 0; k < 5; ++k) {
    FetchedObs f;
    f.base_divergence.assign(sched->ProfileBaseTimes(p).size(), 0.0);
    sched->Observe({p, k * kDay, std::move(f)});
    EXPECT_GT(sched->Value(p, (k + 30) * kDay), 0) << k;
    ASSERT_NE(sched->Profiles(p), nullptr);
    EXPECT_TRUE(sched->Profiles(p)->fitted().has_value());
  }
}

TEST(SchedulerTest, MaxPagesBoundsAddAndRestore) {
  SchedulerOptions o;
  o.max_pages = 3;
  auto s = Make(o);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(s->AddUrl(0, 1).ok());
  auto more = s->AddUrl(0, 1);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), Status::Code::kResourceExhausted);
  auto restored = s->RestorePage(PageSnapshot{});
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.status().code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(s->size(), 3u);
}

TEST(SchedulerTest, UnknownPageIdsAreIgnored) {
  for (bool oracle : {false, true}) {
    SchedulerOptions o;
    o.oracle = oracle;
    o.policy = "longevity";
    TestTruth truth_source;
    auto s = Make(o, &truth_source);
    PageId id = s->AddUrl(0, 1).value();
    s->Observe({id, 0, FetchedObs{}});
    const PageState before = s->page(id);
    for (PageId bad : {id + 1, id + 1000, PageId{0xffffffff}}) {
      s->Observe({bad, 10, Changed(true)});
      s->Observe({bad, 10, NotModifiedObs{}});
      s->Observe({bad, 10, FailedObs{}});
      s->Observe({bad, 10, SignalObs{}});
      s->Observe({bad, 10, DiscoveredObs{5}});
      truth_source.Set(*s, bad, {1, 1, 0, 0}, {});
      EXPECT_TRUE(s->ProfileBaseTimes(bad).empty());
    }
    EXPECT_EQ(s->size(), 1u);
    EXPECT_EQ(s->page(id).signals, before.signals);
    EXPECT_EQ(s->page(id).last_fetch, before.last_fetch);
    EXPECT_EQ(s->page(id).importance, before.importance);
  }
}

// robots-denied and 4xx wait max_interval; transient failures back off
// exponentially from max(min_interval, 60 s), capped at a day; success
// clears it.
TEST(SchedulerTest, FailureBackOffDependsOnTheClass) {
  SchedulerOptions o;
  o.min_interval = 120;
  o.max_interval = 3 * kDay;
  auto s = Make(o);
  auto open = [](HostId) { return true; };
  PageId id = s->AddUrl(0, 1).value();
  ASSERT_EQ(s->Select(0, open), id);
  s->Observe({id, 0, FailedObs{FailureClass::kRobotsDenied}});
  EXPECT_DOUBLE_EQ(s->page(id).not_before, 3 * kDay);
  EXPECT_FALSE(s->Eligible(id, 3 * kDay - 1, open));
  EXPECT_FALSE(s->Select(3 * kDay - 1, open).has_value());
  ASSERT_EQ(s->Select(3 * kDay, open), id);
  s->Observe({id, 3 * kDay, FailedObs{FailureClass::kHttp4xx}});
  EXPECT_DOUBLE_EQ(s->page(id).not_before, 6 * kDay);

  double t = 6 * kDay;
  double expected = 120;  // failures 2, 3, ...: 120·2^(f−1)... capped
  for (int k = 0; k < 14; ++k) {
    ASSERT_EQ(s->Select(t, open), id) << k;
    s->Observe({id, t, FailedObs{FailureClass::kHttp5xx}});
    const int failures = s->page(id).failures;
    expected = std::min(kDay, 120 * std::ldexp(1.0, failures - 1));
    EXPECT_DOUBLE_EQ(s->page(id).not_before - t, expected) << failures;
    t = s->page(id).not_before;
  }
  EXPECT_DOUBLE_EQ(expected, kDay);
  ASSERT_EQ(s->Select(t, open), id);
  s->Observe({id, t, FetchedObs{}});
  EXPECT_EQ(s->page(id).failures, 0);
  EXPECT_EQ(s->page(id).not_before, 0);
  // Without a max_interval, a 4xx waits 30 days.
  o.max_interval = 0;
  auto s2 = Make(o);
  PageId j = s2->AddUrl(0, 1).value();
  s2->Observe({j, 5, FailedObs{FailureClass::kHttp4xx}});
  EXPECT_DOUBLE_EQ(s2->page(j).not_before, 5 + 30 * kDay);
}

}  // namespace
}  // namespace freshd::sched
