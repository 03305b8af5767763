// Policies as value functions: each equals the docs/MATH.md crawl value it
// names, never exceeds its upper bound (the selector's pruning relies on it),
// and Nutch's interval follows AdaptiveFetchSchedule (inc 0.4, dec 0.2, clamp,
// sync_delta 0.3) and only due pages have value.

#include "sched/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace freshd::sched {
namespace {

std::unique_ptr<Policy> Make(const std::string& name) {
  auto p = MakePolicy(name, PolicyOptions{});
  EXPECT_TRUE(p.ok()) << name;
  return std::move(p).value();
}

TEST(PolicyTest, EveryConfiguredNameIsBuiltAndUnknownIsRejected) {
  for (const std::string& n : PolicyNames()) {
    auto p = MakePolicy(n, PolicyOptions{});
    ASSERT_TRUE(p.ok()) << n;
    EXPECT_EQ((*p)->name(), n);
  }
  auto bad = MakePolicy("oldest-first", PolicyOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
}

// docs/MATH.md Paper 2 test vectors: (Δ,μ,α,ν,τ,n) = (.8,.6,.5,.2,2,1) ->
// V_NCIS .4744, APPROX-1 .4537, V_GREEDY .3563, V_CIS .7500.
TEST(PolicyTest, SignalValuesMatchMathTestVectors) {
  PageState s;
  s.signals = 1;
  PolicyInput in{.state = &s,
                 .params = PageParams{.8, .6, .5, .2},
                 .model = nullptr,
                 .profiles = nullptr,
                 .oracle = true};
  EXPECT_NEAR(Make("ncis")->Value(in, 2), .4744, 5e-5);
  EXPECT_NEAR(Make("ncis1")->Value(in, 2), .4537, 5e-5);
  EXPECT_NEAR(Make("ncis2")->Value(in, 2), .4744, 5e-5);
  EXPECT_NEAR(Make("freshness")->Value(in, 2), .3563, 5e-5);
  EXPECT_NEAR(Make("cis")->Value(in, 2), .7500, 5e-5);
}

TEST(PolicyTest, ValuesStayBelowUpperBoundsAndGrowWithTau) {
  PageState s;
  s.signals = 2;
  s.fetches = 3;
  DivergenceModel m{0.4, 0.2, 1.0, 5, 0.3};
  ProfileSet ps(4);
  ps.OnFetch(0, {}, {});
  ps.OnFetch(2, {.2}, {});
  ps.OnFetch(5, {.2, .1}, {});
  for (const std::string& n : PolicyNames()) {
    auto p = Make(n);
    PolicyInput in{.state = &s,
                   .params = PageParams{.3, .7, .6, .1},
                   .model = &m,
                   .profiles = &ps,
                   .oracle = true};
    double ub = p->UpperBound(in), prev = -1;
    for (double tau = 0; tau < 200; tau += 0.37) {
      double v = p->Value(in, tau);
      ASSERT_TRUE(std::isfinite(v)) << n << " tau " << tau;
      ASSERT_LE(v, ub * (1 + 1e-12)) << n << " tau " << tau;
      ASSERT_GE(v, prev - 1e-12) << n << " tau " << tau;
      prev = v;
    }
  }
}

// Issue 31 item 4, as sched/policy.cc documents it: APPROX-1's value never
// exceeds μ/(Δ+ν), so where false signals are frequent (ν ≫ Δ) ncis1 values
// a long-neglected page at a small share of the exact μ/Δ (here 1/21) and
// abandons it; its floor is the scheduler's max_interval, not a value floor.
TEST(PolicyTest, Ncis1CeilingIsMuOverDeltaPlusNu) {
  const double delta = 0.1, mu = 1, alpha = 0.9, nu = 2;
  const double ceiling = mu / (delta + nu);
  for (uint16_t n : {0, 1, 5}) {
    PageState s;
    s.signals = n;
    PolicyInput in{.state = &s,
                   .params = PageParams{delta, mu, alpha, nu},
                   .model = nullptr,
                   .profiles = nullptr,
                   .oracle = true};
    SCOPED_TRACE("signals " + std::to_string(n));
    for (double tau : {1.0, 10.0, 100.0, 1e3, 1e4}) {
      EXPECT_LE(Make("ncis1")->Value(in, tau), ceiling * (1 + 1e-9)) << tau;
    }
    EXPECT_GT(Make("ncis1")->Value(in, 1e4), 0.99 * ceiling);
    EXPECT_GT(Make("ncis")->Value(in, 1e4), 0.99 * mu / delta);
  }
}

TEST(PolicyTest, PageThatNeverChangesHasNoValue) {
  PageState s;
  PolicyInput in{.state = &s,
                 .params = PageParams{0, 1, 0, 0},
                 .model = nullptr,
                 .profiles = nullptr,
                 .oracle = true};
  for (const char* n : {"freshness", "age", "ncis", "cis"}) {
    EXPECT_EQ(Make(n)->Value(in, 1e6), 0) << n;
  }
}

TEST(PolicyTest, NutchIntervalFollowsAdaptiveFetchSchedule) {
  auto p = Make("nutch");
  PageState s;
  PolicyInput in{.state = &s,
                 .params = PageParams{0, 1},
                 .model = nullptr,
                 .profiles = nullptr,
                 .oracle = false};
  p->OnFetched(in, s, false, 0, 0);  // first fetch: default 30 days
  EXPECT_FLOAT_EQ(s.interval, 30 * 86400.f);
  p->OnFetched(in, s, true, 10, 0);
  EXPECT_FLOAT_EQ(s.interval, 30 * 86400.f * 0.8f);
  p->OnFetched(in, s, false, 10, 0);
  EXPECT_NEAR(s.interval, 30 * 86400.0 * 0.8 * 1.4, 1.0);
  for (int i = 0; i < 100; ++i) p->OnFetched(in, s, true, 10, 0);
  EXPECT_FLOAT_EQ(s.interval, 60.f);
  for (int i = 0; i < 100; ++i) p->OnFetched(in, s, false, 10, 0);
  EXPECT_FLOAT_EQ(s.interval, 365 * 86400.f);
  EXPECT_DOUBLE_EQ(p->Value(in, 365 * 86400.0), 1.0);
}

// Generator + AdaptiveFetchSchedule: a page is worth its score (importance)
// once due and nothing before, and sync_delta (rate 0.3) pulls the next fetch
// toward the last change: unchanged for `delta`, the interval rises to delta
// and the page is due at interval − 0.3·delta.
TEST(PolicyTest, NutchFetchesOnlyDuePagesByScore) {
  auto p = Make("nutch");
  EXPECT_TRUE(p->due_only());
  EXPECT_FALSE(Make("uniform")->due_only());
  const double day = 86400;
  PageState s;
  PolicyInput in{.state = &s,
                 .params = PageParams{1e-6, 3.5, 0, 0},
                 .model = nullptr,
                 .profiles = nullptr,
                 .oracle = false};
  p->OnFetched(in, s, true, 0, 0);  // first fetch: no change status
  EXPECT_EQ(p->Value(in, 30 * day - 1), 0);
  EXPECT_EQ(p->Value(in, 30 * day), 3.5);
  EXPECT_EQ(p->UpperBound(in), 3.5);
  // Unchanged after 30 days: interval 42 days, delta 30 days since the
  // change seen at the first fetch, due 42 − 9 = 33 days on.
  p->OnFetched(in, s, false, 30 * day, 0);
  EXPECT_NEAR(s.interval, 42 * day, 1);
  EXPECT_NEAR(s.forced, 30 * day, 1);
  EXPECT_EQ(p->Value(in, 32.9 * day), 0);
  EXPECT_EQ(p->Value(in, 33.1 * day), 3.5);
  // Unchanged again after 33 days: 58.8 days, delta 63 days > 58.8, so the
  // interval is 63 days, due at 63 − 18.9 = 44.1 days.
  p->OnFetched(in, s, false, 33 * day, 0);
  EXPECT_NEAR(s.interval, 63 * day, 1);
  EXPECT_EQ(p->Value(in, 44.0 * day), 0);
  EXPECT_EQ(p->Value(in, 44.2 * day), 3.5);
  // A change resets delta: 63 × 0.8 days, due after the whole interval.
  p->OnFetched(in, s, true, 45 * day, 0);
  EXPECT_NEAR(s.interval, 50.4 * day, 1);
  EXPECT_EQ(s.forced, 0);
  EXPECT_EQ(p->Value(in, 50.3 * day), 0);
  EXPECT_EQ(p->Value(in, 50.5 * day), 3.5);
}

// StormCrawler's AdaptiveScheduler: 1 day first, a change halves the way to
// the 60-minute minimum, no change ×1.5 up to 2 weeks; the most overdue
// page first, nothing before it is due.
TEST(PolicyTest, StormCrawlerIntervalFollowsAdaptiveScheduler) {
  auto p = Make("stormcrawler");
  EXPECT_TRUE(p->due_only());
  const double day = 86400;
  PageState s;
  PolicyInput in{.state = &s,
                 .params = PageParams{1e-6, 1},
                 .model = nullptr,
                 .profiles = nullptr,
                 .oracle = false};
  p->OnFetched(in, s, true, 0, 0);  // first fetch: the default interval
  EXPECT_EQ(s.interval, day);
  EXPECT_EQ(p->Value(in, day - 1), 0);
  EXPECT_EQ(p->Value(in, day), 1);
  EXPECT_EQ(p->Value(in, day + 100), 101);
  p->OnFetched(in, s, true, day, 0);
  EXPECT_EQ(s.interval, 0.5 * day + 0.5 * 3600);
  p->OnFetched(in, s, false, day, 0);
  EXPECT_EQ(s.interval, std::floor(1.5 * (0.5 * day + 1800) / 60) * 60);
  for (int i = 0; i < 40; ++i) p->OnFetched(in, s, true, day, 0);
  EXPECT_NEAR(s.interval, 3600, 60);
  for (int i = 0; i < 40; ++i) p->OnFetched(in, s, false, day, 0);
  EXPECT_EQ(s.interval, 14 * day);
}

// Longevity value is μ·U of the model (docs/MATH.md Paper 3 test vector: mixed
// s=.4, c=.2, λc=1, K=5, λs=.3 -> U(4) = .5226).
TEST(PolicyTest, LongevityValueIsImportanceTimesUtility) {
  PageState s;
  DivergenceModel m{0.4, 0.2, 1.0, 5, 0.3};
  PolicyInput in{.state = &s,
                 .params = PageParams{1, 2, 0, 0},
                 .model = &m,
                 .profiles = nullptr,
                 .oracle = true};
  EXPECT_NEAR(Make("longevity")->Value(in, 4), 2 * .5226, 2e-4);
}

// Bound-based: the paper's profile <(0,0),(2,.2),(5,.2),(13,.3)> gives
// U_max = 1.3, U_min = -0.4 at τ = 9. The value is μ·max(0, sup U) of the
// expected curve between the bounds at the page's estimated rate
// (ExpectedUtility): the faster the page, the earlier each rise.
TEST(PolicyTest, LongevityBoundValueIsTheExpectedCurveUtility) {
  ProfileSet ps(4);
  ps.OnFetch(0, {}, {});
  ps.OnFetch(2, {.2}, {});
  ps.OnFetch(5, {.2, .05}, {});
  ps.OnFetch(13, {.3, .1, .1}, {});
  PageState s;
  PolicyInput in{.state = &s,
                 .params = PageParams{1, 2, 0, 0},
                 .model = nullptr,
                 .profiles = &ps,
                 .oracle = false};
  auto p = Make("longevity-bound");
  UtilityBounds b0 = ProfileBounds(ps.profiles().profile(0), 9, 1.0);
  EXPECT_NEAR(b0.u_max, 1.3, 1e-3);
  EXPECT_NEAR(b0.u_min, -0.4, 1e-3);
  for (double rate : {0.0, 0.01, 0.5, 1.0, 5.0, 1e3}) {
    in.params.delta = rate;
    for (double tau : {1.0, 9.0, 13.0, 20.0}) {
      CurveUtility c = ExpectedUtility(ps.profiles(), tau, rate);
      EXPECT_NEAR(p->Value(in, tau), 2 * std::max(0.0, c.u_sup), 1e-12);
      UtilityBounds b = AveragedBounds(ps.profiles(), tau, 1.0);
      EXPECT_GE(c.u, b.u_min - 1e-12) << rate << " " << tau;
      EXPECT_LE(c.u, b.u_max + 1e-12) << rate << " " << tau;
    }
  }
  ProfileSet empty(4);
  in.profiles = &empty;
  EXPECT_EQ(p->Value(in, 9), 0);
}

// Profiles that never saw the page change have no curve to value it by (a
// slow page between changes): longevity-bound then values it by its model,
// as the curve-fitting policy would, instead of 0 until a deadline.
TEST(PolicyTest, LongevityBoundValuesAnUnchangedPageByItsModel) {
  ProfileSet flat(4);
  flat.OnFetch(0, {}, {});
  flat.OnFetch(10, {0}, {});
  flat.OnFetch(30, {0, 0}, {});
  ASSERT_EQ(MaxDivergence(flat.profiles()), 0);
  PageState s;
  DivergenceModel churn{0.5, 0.5, 0.1, 1, 0};  // half churns at rate .1
  PolicyInput in{.state = &s,
                 .params = PageParams{0.1, 2, 0, 0},
                 .model = &churn,
                 .profiles = &flat,
                 .oracle = false};
  auto p = Make("longevity-bound");
  for (double tau : {1.0, 10.0, 40.0}) {
    EXPECT_NEAR(p->Value(in, tau), 2 * Utility(churn, tau), 1e-12) << tau;
    EXPECT_GT(p->Value(in, tau), 0);
  }
  in.model = nullptr;  // no model either: nothing to value it by
  EXPECT_EQ(p->Value(in, 10), 0);
  // One change seen: the profiles' own curve again, whatever the model.
  flat.OnFetch(40, {0.4, 0.4, 0.4}, {});
  in.model = &churn;
  EXPECT_NEAR(p->Value(in, 10),
              2 * ExpectedUtility(flat.profiles(), 10, 0.1).u_sup, 1e-12);
  EXPECT_NE(p->Value(in, 10), 2 * Utility(churn, 10));
}

TEST(PolicyTest, LongevityLearningPhaseAndRiskBoundForceDeadlines) {
  PolicyOptions o;
  o.learning_l = 100;
  o.risk_rho = 2;
  auto p = MakePolicy("longevity", o);
  ASSERT_TRUE(p.ok());
  PageState s;
  s.fetches = 3;
  DivergenceModel m;
  PolicyInput in{.state = &s,
                 .params = PageParams{1, 2, 0, 0},
                 .model = &m,
                 .profiles = nullptr,
                 .oracle = false};
  (*p)->OnFetched(in, s, true, 1, 0);
  EXPECT_FLOAT_EQ(s.forced, 300.f);     // l·n
  (*p)->OnFetched(in, s, true, 1, 50);  // ρ·T/D_max = 2·(50/2)
  EXPECT_FLOAT_EQ(s.forced, 50.f);
  in.oracle = true;
  (*p)->OnFetched(in, s, true, 1, 50);
  EXPECT_FLOAT_EQ(s.forced, 0.f);  // oracle: no learning needed
}

// learning_l = 0: l is kAutoLearningShare of the mean refresh interval the
// scheduler passes (pages / rate), so learning scales with the budget.
TEST(PolicyTest, AutoLearningPhaseFollowsTheMeanInterval) {
  PolicyOptions o;  // defaults: learning_l = 0 (auto), risk_rho = 0 (auto)
  ASSERT_EQ(o.learning_l, 0);
  EXPECT_EQ(o.risk_rho, 0);
  auto p = MakePolicy("longevity", o);
  ASSERT_TRUE(p.ok());
  PageState s;
  s.fetches = 3;
  DivergenceModel m;
  PolicyInput in{.state = &s,
                 .params = PageParams{1, 1, 0, 0},
                 .model = &m,
                 .profiles = nullptr,
                 .oracle = false};
  in.mean_interval = 1000;
  (*p)->OnFetched(in, s, true, 1, 0);
  EXPECT_FLOAT_EQ(s.forced, kAutoLearningShare * 1000 * 3);
  in.mean_interval = 4000;  // half the budget: twice the learning interval
  (*p)->OnFetched(in, s, true, 1, 0);
  EXPECT_FLOAT_EQ(s.forced, kAutoLearningShare * 4000 * 3);
  (*p)->OnFetched(in, s, true, 1, 30);  // auto ρ·T/D_max = 30·30 binds
  EXPECT_FLOAT_EQ(s.forced, kAutoRiskRhoCurveFit * 30);
}

// The learning phase φ <= l·n lasts until a change profile holds 3 points:
// the 4th refresh with h >= 4, never with h <= 3 (a profile holds at most
// h − 1). After it, a page that value alone abandons (a fast churn page) is
// not refreshed at l·n forever.
TEST(PolicyTest, LearningPhaseEndsOnceAProfileHoldsThreePoints) {
  PolicyOptions o;
  o.learning_l = 100;
  for (const char* name : {"longevity", "longevity-bound"}) {
    auto p = MakePolicy(name, o);
    ASSERT_TRUE(p.ok());
    for (int h : {3, 4, 8}) {
      ProfileSet ps(h);
      PageState s;
      DivergenceModel m;
      PolicyInput in{.state = &s,
                     .params = PageParams{1, 1, 0, 0},
                     .model = &m,
                     .profiles = &ps,
                     .oracle = false};
      std::vector<double> divergences;
      for (int n = 1; n <= 6; ++n) {
        ps.OnFetch(10.0 * n, divergences, {});
        if (static_cast<int>(divergences.size()) < h - 1) {
          divergences.push_back(0.3);
        }
        s.fetches = n;
        (*p)->OnFetched(in, s, true, 10, 0);  // threshold 0: no risk bound
        if (n < 4 || h < 4) {
          EXPECT_FLOAT_EQ(s.forced, 100.f * n)
              << name << " h=" << h << " " << n;
        } else {
          EXPECT_EQ(s.forced, 0.f) << name << " h=" << h << " " << n;
        }
      }
    }
  }
}

// risk_rho = 0: the curve-fitting policy bounds its risk at its own ρ; the
// bound-based one values a page its profiles never saw change by its model,
// so it needs no bound, unless a profile holds a single point (h <= 2), too
// little to value pages by. A configured ρ applies to both.
TEST(PolicyTest, AutoRiskBoundIsPerPolicy) {
  PageState s;
  s.fetches = 1000;
  DivergenceModel m;
  for (int h : {2, 4}) {
    ProfileSet ps(h);
    for (int n = 0; n < 4; ++n) {
      ps.OnFetch(n, std::vector<double>(std::min(n, h - 1), 0.1), {});
    }
    PolicyInput in{.state = &s,
                   .params = PageParams{1, 2, 0, 0},
                   .model = &m,
                   .profiles = &ps,
                   .oracle = false};
    in.mean_interval = 1e6;  // the learning phase (with h = 2) binds later
    for (double rho : {0.0, 4.0}) {
      PolicyOptions o;
      o.risk_rho = rho;
      auto fit = MakePolicy("longevity", o);
      auto bound = MakePolicy("longevity-bound", o);
      ASSERT_TRUE(fit.ok() && bound.ok());
      (*fit)->OnFetched(in, s, true, 1, 50);  // T = 50/μ = 25
      EXPECT_FLOAT_EQ(s.forced, (rho > 0 ? rho : kAutoRiskRhoCurveFit) * 25);
      (*bound)->OnFetched(in, s, true, 1, 50);
      const double auto_rho = h <= 2 ? kAutoRiskRhoBound : 0;
      EXPECT_FLOAT_EQ(s.forced, (rho > 0 ? rho : auto_rho) * 25) << h;
    }
  }
}

}  // namespace
}  // namespace freshd::sched
