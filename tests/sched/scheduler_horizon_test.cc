// The Scheduler's selection horizon through the facade: no Select computes
// more than a slice of bounds, the horizon's scale starts where told and
// adapts so selection and refresh work balance, and a budget change moves
// the pace, not the choices.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "tests/sched/scheduler_test_util.h"
#include "tests/sched/test_truth.h"

namespace freshd::sched {
namespace {

using sched_test::Changed;
using sched_test::kDay;
using sched_test::kHosts;
using sched_test::Make;
using sched_test::SameKey;
// At 200k pages no Select computes more than one slice of bounds once the
// first horizon is set (the refresh used to compute all 200k in one Select),
// and the staging keeps up: every horizon after the first is swapped in.
// Counts bound evaluations, not time.
// Options for the horizon tests: a budget of a quarter of the n pages a
// day, one token of burst, no interval limits.
SchedulerOptions HorizonOptions(const std::string& policy, size_t n) {
  SchedulerOptions o;
  o.policy = policy;
  o.oracle = policy == "freshness";
  o.rate = 0.25 * static_cast<double>(n) / kDay;
  o.burst = 1;
  o.min_interval = 0;
  o.max_interval = 0;
  return o;
}

TEST(SchedulerTest, NoSelectComputesMoreThanASliceOfBounds) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> u(0, 1);
  const size_t n = 200'000;
  for (const std::string policy : {"freshness", "ncis"}) {
    SCOPED_TRACE(policy);
    SchedulerOptions o = HorizonOptions(policy, n);
    TestTruth truth_source;
    auto s = Make(o, &truth_source);
    ASSERT_EQ(o.refresh_slice_pages, 1024u);
    std::vector<double> delta(n);
    for (size_t i = 0; i < n; ++i) {
      delta[i] = u(rng) / kDay;
      PageId id = s->AddUrl(static_cast<HostId>(i % 1000), u(rng)).value();
      truth_source.Set(*s, id,
                       PageParams{delta[i], s->page(id).importance, 0, 0}, {});
      s->Observe({id, -u(rng) * 4 * kDay, FetchedObs{}});
    }
    auto open = [](HostId) { return true; };
    double t = 0;
    uint64_t most = 0;
    for (int k = 0; k < 4000; ++k) {
      t = s->NextTokenTime(t);
      const uint64_t before = s->bound_evaluations();
      auto p = s->Select(t, open);
      ASSERT_TRUE(p.has_value());
      if (k > 0) most = std::max(most, s->bound_evaluations() - before);
      const double tau = t - s->page(*p).last_fetch;
      s->Observe({*p, t, Changed(u(rng) < -std::expm1(-delta[*p] * tau))});
    }
    EXPECT_LE(most, o.refresh_slice_pages);
    EXPECT_GT(most, 0u);
    EXPECT_GE(s->horizon_refreshes(), 3u);
    EXPECT_EQ(s->full_refreshes(), 1u);  // the first
    EXPECT_EQ(s->late_refreshes(), 0u);
  }
}

// The horizon starts at SchedulerOptions::initial_horizon_scale, and a
// staging floor above the scale counts as the scale the horizon had: the
// first rescale steps from there (20k pages in slices of 16: every horizon
// holds >= 2,516 Selects, scale 17.8), not from 1 under the floor, where
// steps of at most 1.41x would leave the span unchanged for horizons on end.
TEST(SchedulerTest, TheHorizonScaleStartsWhereToldAndStepsFromTheFloor) {
  SchedulerOptions bad;
  bad.initial_horizon_scale = 0.5;
  EXPECT_FALSE(Scheduler::Create(bad).ok());
  bad.initial_horizon_scale = kMaxHorizonScale * 2;
  EXPECT_FALSE(Scheduler::Create(bad).ok());

  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0, 1);
  const size_t n = 20'000;
  for (const double initial : {1.0, 32.0}) {
    SCOPED_TRACE(initial);
    SchedulerOptions o = HorizonOptions("freshness", n);
    o.refresh_slice_pages = 16;
    o.initial_horizon_scale = initial;
    TestTruth truth_source;
    auto s = Make(o, &truth_source);
    EXPECT_EQ(s->horizon_scale(), initial);
    std::vector<double> delta(n);
    for (size_t i = 0; i < n; ++i) {
      delta[i] = u(rng) / kDay;
      PageId id = s->AddUrl(static_cast<HostId>(i % 100), 1).value();
      truth_source.Set(*s, id, PageParams{delta[i], 1, 0, 0}, {});
      s->Observe({id, -u(rng) * 4 * kDay, FetchedObs{}});
    }
    auto open = [](HostId) { return true; };
    double t = 0;
    while (s->horizon_refreshes() < 2) {
      t = s->NextTokenTime(t);
      auto p = s->Select(t, open);
      ASSERT_TRUE(p.has_value());
      const double tau = t - s->page(*p).last_fetch;
      s->Observe({*p, t, Changed(u(rng) < -std::expm1(-delta[*p] * tau))});
    }
    const double floor_scale = (2.0 * (n + 1) / 16 + 16) / std::sqrt(n + 1.0);
    // One step (at most 2x either way) from max(initial, floor); from 1
    // it would have ended at 2 or below.
    const double from = std::max(initial, floor_scale);
    EXPECT_GE(s->horizon_scale(), from / 2 - 1e-9);
    EXPECT_LE(s->horizon_scale(), from * 2 + 1e-9);
  }
}
// The selection horizon adapts its length so that the values evaluated by
// selections during a horizon balance a refresh's cost (about 2 per page):
// from the initial sqrt(N) token intervals, where selections evaluate far
// fewer (0.6% of it here), it lengthens until the two are within a small
// factor, inside [kMinHorizonScale, kMaxHorizonScale].
TEST(SchedulerTest, HorizonBalancesSelectionAndRefreshWork) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const size_t n = 20000;
  SchedulerOptions o = HorizonOptions("freshness", n);
  TestTruth truth_source;
  auto s = Make(o, &truth_source);
  std::vector<PageParams> truth(n);
  for (size_t i = 0; i < n; ++i) {
    truth[i] = PageParams{u(rng) / kDay, u(rng), 0, 0};
    PageId id = s->AddUrl(static_cast<HostId>(i % 100), truth[i].mu).value();
    truth_source.Set(*s, id, truth[i], {});
    s->Observe({id, -u(rng) * 4 * kDay, FetchedObs{}});
  }
  auto open = [](HostId) { return true; };
  std::vector<double> per_horizon;  // evaluations by selections, per horizon
  double evaluations = 0;
  uint64_t refreshes = 0;
  double t = 0;
  for (int k = 0; k < 60 * 141; ++k) {
    t = s->NextTokenTime(t);
    auto p = s->Select(t, open);
    ASSERT_TRUE(p.has_value());
    if (s->horizon_refreshes() != refreshes) {  // this Select refreshed
      if (refreshes > 0) per_horizon.push_back(evaluations);
      refreshes = s->horizon_refreshes();
      evaluations = 0;
    }
    evaluations += static_cast<double>(s->last_evaluations());
    const double tau = t - s->page(*p).last_fetch;
    s->Observe({*p, t, Changed(u(rng) < -std::expm1(-truth[*p].delta * tau))});
  }
  ASSERT_GE(per_horizon.size(), 8u);
  EXPECT_LT(per_horizon.front(), 0.05 * 2 * n);  // the initial span
  const double last = per_horizon.back();
  EXPECT_GT(last, 2.0 * n / 8) << "scale " << s->horizon_scale();
  EXPECT_LT(last, 2.0 * n * 8) << "scale " << s->horizon_scale();
  EXPECT_GT(s->horizon_scale(), 1);
  EXPECT_LE(s->horizon_scale(), kMaxHorizonScale);
}

// R -> 2R: twice the selections per unit time; the ranking (and the values
// evaluated per choice) are untouched: nothing is recomputed.
TEST(SchedulerTest, SetRateChangesThePaceNotTheChoices) {
  const uint32_t seed = 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  SchedulerOptions o;
  o.policy = "freshness";
  o.oracle = true;
  o.rate = 100 / kDay;
  o.burst = 1;
  o.min_interval = 0;
  o.max_interval = 0;
  TestTruth truth_source;
  auto a = Make(o, &truth_source), b = Make(o, &truth_source);
  for (size_t i = 0; i < 500; ++i) {
    PageParams p{u(rng) / kDay, u(rng), 0, 0};
    for (auto* s : {a.get(), b.get()}) {
      PageId id = s->AddUrl(static_cast<HostId>(i % kHosts), p.mu).value();
      truth_source.Set(*s, id, p, {});
      s->Observe({id, 0.0, FetchedObs{}});
    }
  }
  auto open = [](HostId) { return true; };
  auto run = [&](Scheduler& s, double from, double to, size_t* evaluations) {
    int count = 0;
    for (double t = s.NextTokenTime(from); t < to; t = s.NextTokenTime(t)) {
      auto p = s.Select(t, open);
      if (!p) break;
      *evaluations += s.last_evaluations();
      s.Observe({*p, t, Changed(true)});
      ++count;
    }
    return count;
  };
  size_t ea = 0, eb = 0;
  EXPECT_EQ(run(*a, 1, 10 * kDay, &ea), run(*b, 1, 10 * kDay, &eb));
  EXPECT_EQ(ea, eb);
  a->SetRate(200 / kDay, 10 * kDay);
  EXPECT_EQ(a->selections(), b->selections());  // SetRate selects nothing
  // The next choice (same time, same state) is the same page after the same
  // number of value evaluations.
  auto pa = a->Select(10 * kDay + 1000, open);
  auto pb = b->Select(10 * kDay + 1000, open);
  ASSERT_TRUE(pa && pb);
  EXPECT_EQ(*pa, *pb);
  EXPECT_EQ(a->last_evaluations(), b->last_evaluations());
  EXPECT_LT(a->last_evaluations(), 500u);  // the bounds still prune
  a->Observe({*pa, 10 * kDay + 1000, Changed(true)});
  size_t e2 = 0;
  int twice = run(*a, 10 * kDay + 1000, 20 * kDay, &e2);
  EXPECT_NEAR(twice, 2000, 3);
  a->SetRate(100 / kDay, 20 * kDay);
  EXPECT_NEAR(run(*a, 20 * kDay, 30 * kDay, &e2), 1000, 3);
}

}  // namespace
}  // namespace freshd::sched
