// Operators' rules (Scheduler::SetRules, SetPageRule; issue 31 item 7): the
// constraints hold while the rest of the budget is spent as before. A web of
// Poisson pages in oracle mode (so the choices depend on the schedule only)
// is fetched token by token; each interval's expected fresh time
// (1 − e^{−λτ})/λ gives the time-averaged freshness exactly.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "sched/scheduler.h"
#include "tests/sched/test_truth.h"

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;

struct Web {
  std::vector<double> rate;        // λ, per second
  std::vector<double> importance;  // μ
};

// Slow pages (monthly and slower) 0..n/2, fast pages (several a day) after.
Web MakeWeb(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Web web;
  for (size_t i = 0; i < n; ++i) {
    const bool fast = i >= n / 2;
    web.rate.push_back((fast ? 2 + 6 * u(rng) : 0.01 + 0.03 * u(rng)) / kDay);
    web.importance.push_back(0.5 + u(rng));
  }
  return web;
}

struct Trace {
  std::vector<std::vector<double>> fetch_times;  // by page
  double freshness = 0;  // time-averaged, μ-weighted, over `pages`
  uint64_t fetches = 0;
};

// Fetches `web` for `days` at `rate` pages a second (freshness policy,
// oracle). `rules`/`page_rule`: the operator's rules, if any. Freshness is
// measured over the pages with measured[i] and the second half of the run.
Trace Simulate(const Web& web, double rate, double days,
               const std::vector<PageRule>& rules,
               const std::vector<uint8_t>& page_rule,
               const std::vector<bool>& measured) {
  SchedulerOptions o;
  o.policy = "freshness";
  o.oracle = true;
  o.rate = rate;
  o.burst = 1;
  o.min_interval = 60;
  o.max_interval = 0;  // no scheduler-wide floor: only the rules' deadlines
  TestTruth truth;
  auto created = Scheduler::Create(o, &truth);
  EXPECT_TRUE(created.ok());
  Scheduler& s = **created;
  const size_t n = web.rate.size();
  for (size_t i = 0; i < n; ++i) {
    auto id = s.AddUrl(static_cast<HostId>(i % 5), web.importance[i]);
    EXPECT_TRUE(id.ok());
    truth.Set(s, *id, PageParams{web.rate[i], web.importance[i], 0, 0}, {});
  }
  if (!rules.empty()) {
    EXPECT_TRUE(s.SetRules(rules).ok());
    for (size_t i = 0; i < n; ++i) {
      if (page_rule[i] != 0) {
        EXPECT_TRUE(s.SetPageRule(static_cast<PageId>(i), page_rule[i]).ok());
      }
    }
  }
  Trace run;
  run.fetch_times.resize(n);
  const double end = days * kDay;
  const auto open = [](HostId) { return true; };
  for (double t = 0; t < end;) {
    const auto page = s.Select(t, open);
    if (!page) {
      t = std::max(t + 1, s.NextTokenTime(t));
      continue;
    }
    run.fetch_times[*page].push_back(t);
    ++run.fetches;
    s.Observe(Observation{*page, t, FetchedObs{}});
  }
  // Freshness over [end/2, end]: each interval's expected fresh time.
  const double from = end / 2;
  double fresh = 0, weight = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!measured[i]) continue;
    const double lambda = web.rate[i];
    std::vector<double> times = run.fetch_times[i];
    times.push_back(end);
    double page_fresh = 0;
    for (size_t k = 0; k + 1 < times.size(); ++k) {
      const double a = std::max(times[k], from), b = times[k + 1];
      if (b <= a) continue;
      // Fresh from the fetch at times[k] until the first change: the part of
      // that in [a, b] is e^{−λ(a−t_k)}(1 − e^{−λ(b−a)})/λ.
      page_fresh += std::exp(-lambda * (a - times[k])) *
                    -std::expm1(-lambda * (b - a)) / lambda;
    }
    fresh += web.importance[i] * page_fresh / (end - from);
    weight += web.importance[i];
  }
  run.freshness = weight > 0 ? fresh / weight : 0;
  return run;
}

TEST(RulesTest, NoRulesMeansNoSideTable) {
  SchedulerOptions o;
  auto s = std::move(Scheduler::Create(o)).value();
  ASSERT_TRUE(s->AddUrl(0, 1).ok());
  EXPECT_EQ(s->RuleOf(0), 0);
  EXPECT_EQ(s->PagesPerRule(), (std::vector<uint64_t>{1}));
  // Bad rules are refused, the table unchanged.
  EXPECT_FALSE(s->SetRules({PageRule{100, 10, 0}}).ok());
  EXPECT_FALSE(s->SetRules({PageRule{-1, 0, 0}}).ok());
  EXPECT_FALSE(s->SetRules({PageRule{0, 0, NAN}}).ok());
  EXPECT_FALSE(
      s->SetRules(std::vector<PageRule>(kMaxPageRules + 1, PageRule{})).ok());
  EXPECT_TRUE(s->rules().empty());
  EXPECT_FALSE(s->SetPageRule(0, 1).ok());  // no such rule
  ASSERT_TRUE(s->SetRules({PageRule{3600, 0, 2}}).ok());
  EXPECT_FALSE(s->SetPageRule(7, 1).ok());  // no such page
  ASSERT_TRUE(s->SetPageRule(0, 1).ok());
  EXPECT_EQ(s->PagesPerRule(), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(s->Params(0).mu, 2);
  // Dropping the rule from the table drops it from the page.
  ASSERT_TRUE(s->SetRules({}).ok());
  EXPECT_EQ(s->RuleOf(0), 0);
  EXPECT_EQ(s->Params(0).mu, 1);
}

// A max_interval rule on slow pages (the optimum would leave them for weeks)
// and a min_interval rule on fast ones (it would fetch them hourly): every
// interval honours its rule, within one token's wait for the maximum.
TEST(RulesTest, IntervalsStayWithinTheRules) {
  const size_t n = 200;
  const Web web = MakeWeb(n, 31);
  const double rate = 0.3 * static_cast<double>(n) / kDay;  // R/n = 0.3/day
  const std::vector<PageRule> rules = {
      PageRule{0, 3 * kDay, 0},  // 1: slow pages at least every 3 days
      PageRule{kDay, 0, 0},      // 2: fast pages at most daily
  };
  std::vector<uint8_t> page_rule(n, 0);
  for (size_t i = 0; i < 20; ++i) page_rule[i] = 1;              // 20 slow
  for (size_t i = n / 2; i < n / 2 + 20; ++i) page_rule[i] = 2;  // 20 fast
  const std::vector<bool> all(n, true);
  const Trace unconstrained = Simulate(web, rate, 60, {}, {}, all);
  const Trace ruled = Simulate(web, rate, 60, rules, page_rule, all);

  // Without the rules the optimum breaks both (else the test shows nothing).
  double unconstrained_longest = 0, unconstrained_shortest = 1e18;
  double longest = 0, shortest = 1e18;
  for (size_t i = 0; i < n; ++i) {
    if (page_rule[i] == 0) continue;
    for (int which = 0; which < 2; ++which) {
      const auto& times = (which ? ruled : unconstrained).fetch_times[i];
      for (size_t k = 1; k < times.size(); ++k) {
        const double gap = times[k] - times[k - 1];
        double& lo = which ? shortest : unconstrained_shortest;
        double& hi = which ? longest : unconstrained_longest;
        if (page_rule[i] == 1) hi = std::max(hi, gap);
        if (page_rule[i] == 2) lo = std::min(lo, gap);
      }
      if (page_rule[i] == 1 && which == 1) {  // fetched, and then regularly
        ASSERT_GE(times.size(), 2u) << i;
        EXPECT_LE(60 * kDay - times.back(), 3 * kDay + 1 / rate) << i;
      }
    }
  }
  EXPECT_GT(unconstrained_longest, 4.5 * kDay);
  EXPECT_LT(unconstrained_shortest, 0.75 * kDay);
  EXPECT_LE(longest, 3 * kDay + 1 / rate);
  EXPECT_GE(shortest, kDay);
  // The same bucket: the rules took no extra tokens.
  EXPECT_LE(ruled.fetches, unconstrained.fetches + 1);
  EXPECT_GE(ruled.fetches + 1, unconstrained.fetches);
}

// The rest of the budget is still spent optimally: the unruled pages of the
// ruled run are as fresh as an optimal run on those pages alone with the
// tokens the ruled pages did not take.
TEST(RulesTest, TheRestIsSpentLikeTheOptimum) {
  const size_t n = 200;
  const Web web = MakeWeb(n, 7);
  const double rate = 0.2 * static_cast<double>(n) / kDay;
  const double days = 60;
  const std::vector<PageRule> rules = {PageRule{0, 2 * kDay, 0}};
  std::vector<uint8_t> page_rule(n, 0);
  std::vector<bool> unruled(n, true);
  for (size_t i = 0; i < 10; ++i) {
    page_rule[i] = 1;
    unruled[i] = false;
  }
  const Trace ruled = Simulate(web, rate, days, rules, page_rule, unruled);
  uint64_t ruled_fetches = 0;
  for (size_t i = 0; i < 10; ++i) {
    ruled_fetches += ruled.fetch_times[i].size();
  }
  // About 30 days' worth of every-2-days fetches of 10 pages: a real share.
  EXPECT_GT(ruled_fetches, 250u);

  Web rest;
  for (size_t i = 10; i < n; ++i) {
    rest.rate.push_back(web.rate[i]);
    rest.importance.push_back(web.importance[i]);
  }
  const double rest_rate =
      rate - static_cast<double>(ruled_fetches) / (days * kDay);
  const Trace optimum =
      Simulate(rest, rest_rate, days, {}, {}, std::vector<bool>(n - 10, true));
  const Trace without = Simulate(web, rate, days, {}, {}, unruled);
  SCOPED_TRACE(testing::Message()
               << "ruled " << ruled.freshness << " optimum of the rest "
               << optimum.freshness << " no rule " << without.freshness);
  std::printf(
      "unruled pages' freshness: ruled run %.4f, optimum of the rest "
      "%.4f, no rule %.4f; ruled pages' fetches %llu\n",
      ruled.freshness, optimum.freshness, without.freshness,
      static_cast<unsigned long long>(ruled_fetches));
  EXPECT_NEAR(ruled.freshness, optimum.freshness, 0.01);
  // And the rule cost the other pages something (the tokens it took).
  EXPECT_LT(ruled.freshness, without.freshness);
}

// A rule's importance is the page's μ: a page made important is fetched
// more than its twin without the rule.
TEST(RulesTest, ImportanceSetsTheValue) {
  const size_t n = 40;
  Web web;
  for (size_t i = 0; i < n; ++i) {
    web.rate.push_back(1 / kDay);
    web.importance.push_back(1);
  }
  std::vector<uint8_t> page_rule(n, 0);
  page_rule[0] = 1;
  const Trace run =
      Simulate(web, 0.2 * static_cast<double>(n) / kDay, 30,
               {PageRule{0, 0, 20}}, page_rule, std::vector<bool>(n, true));
  EXPECT_GT(run.fetch_times[0].size(), 3 * run.fetch_times[1].size());
}

}  // namespace
}  // namespace freshd::sched
