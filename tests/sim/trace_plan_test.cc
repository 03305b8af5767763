// sim/trace_plan: the budget planner finds a budget that reaches the target
// on the history (checked by replaying at it and just below it), reports an
// unreachable target as such, and writes its JSON and SVG.

#include "sim/trace_plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace freshd::sim {
namespace {

constexpr int64_t kT0 = 1'700'000'000;

// 20 pages, page i changing every (i + 1) days at half past, for 60 days.
Trace Staggered() {
  std::string text = "url,time\n";
  for (int i = 0; i < 20; ++i) {
    const std::string url = "http://a.example/p" + std::to_string(i);
    text += url + "," + std::to_string(kT0) + "\n";
    for (double d = 0.5; d < 60; d += i + 1) {
      text += url + "," +
              std::to_string(kT0 + static_cast<int64_t>(d * 86400)) + "\n";
    }
  }
  Result<Trace> t = ParseTraceText(text, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

PlanOptions Options() {
  PlanOptions o;
  o.replay.sim.days = 60;
  o.replay.sim.warmup_days = 0;
  o.replay.sim.estimate_samples = 0;
  o.policies = {"uniform"};
  o.target = 0.8;
  return o;
}

TEST(TracePlanTest, FindsABudgetThatReachesTheTarget) {
  const Trace t = Staggered();
  const PlanOptions o = Options();
  Result<Plan> plan = PlanBudgets(t, o);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->policies.size(), 1u);
  const PolicyPlan& p = plan->policies[0];
  EXPECT_EQ(plan->pages, 20u);
  ASSERT_EQ(p.grid_freshness.size(), plan->grid.size());
  ASSERT_GT(p.pages_per_day, 0);
  EXPECT_DOUBLE_EQ(p.rate_per_second, p.pages_per_day / 86400);
  EXPECT_GE(p.freshness_at_budget, o.target);
  // Replaying at the budget found reaches the target; far below it, not.
  TraceReplayOptions r = o.replay;
  r.sim.policy = "uniform";
  r.sim.rate_per_day = p.pages_per_day;
  auto at = ReplayTrace(t, r);
  ASSERT_TRUE(at.ok());
  EXPECT_GE(at->result.total.fresh, o.target);
  r.sim.rate_per_day = p.pages_per_day / 2;
  auto half = ReplayTrace(t, r);
  ASSERT_TRUE(half.ok());
  EXPECT_LT(half->result.total.fresh, o.target);
  // Within the precision: a probe just below the budget missed the target.
  bool bracketed = false;
  for (const auto& [budget, fresh] : p.probes) {
    bracketed = bracketed || (budget < p.pages_per_day &&
                              budget * (1 + o.precision) >= p.pages_per_day &&
                              fresh < o.target);
  }
  EXPECT_TRUE(bracketed);
  // The grid is in R/n: the most generous budget buys the most freshness.
  EXPECT_GT(p.grid_freshness.back(), p.grid_freshness.front());
  EXPECT_EQ(plan->grid_pages_per_day.front(), o.grid.front() * 20);

  const nlohmann::json j = nlohmann::json::parse(PlanToJson(o, *plan));
  EXPECT_EQ(j["policies"][0]["policy"], "uniform");
  EXPECT_TRUE(j["policies"][0]["reached"].get<bool>());
  EXPECT_DOUBLE_EQ(j["policies"][0]["pages_per_day"].get<double>(),
                   p.pages_per_day);
  const std::string svg = PlanToSvg(o, *plan);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(TracePlanTest, AnUnreachableTargetIsSaidSo) {
  PlanOptions o = Options();
  o.grid = {1.0 / 365, 1.0 / 30};  // at most one fetch a month a page
  o.max_budget = 0;                // and nothing above the grid
  o.target = 0.99;
  Result<Plan> plan = PlanBudgets(Staggered(), o);
  ASSERT_TRUE(plan.ok());
  EXPECT_LT(plan->policies[0].pages_per_day, 0);
  const nlohmann::json j = nlohmann::json::parse(PlanToJson(o, *plan));
  EXPECT_FALSE(j["policies"][0]["reached"].get<bool>());
  EXPECT_TRUE(j["policies"][0]["pages_per_day"].is_null());
}

// Above the grid, the budget doubles until the target is reached.
TEST(TracePlanTest, ATargetAboveTheGridIsFoundByDoubling) {
  PlanOptions o = Options();
  o.grid = {1.0 / 365, 1.0 / 30};
  o.target = 0.9;
  Result<Plan> plan = PlanBudgets(Staggered(), o);
  ASSERT_TRUE(plan.ok());
  const PolicyPlan& p = plan->policies[0];
  EXPECT_LT(p.grid_freshness.back(), o.target);
  ASSERT_GT(p.pages_per_day, plan->grid_pages_per_day.back());
  EXPECT_LE(p.pages_per_day, o.max_budget * 20);
  EXPECT_GE(p.freshness_at_budget, o.target);
}

// The grid stops one budget past the first where every policy reaches the
// target (unless full_grid), and threads change nothing but the time.
TEST(TracePlanTest, GridStopsPastTheTargetAndThreadsChangeNothing) {
  const Trace t = Staggered();
  PlanOptions o = Options();
  o.policies = {"uniform", "freshness", "ncis"};
  o.grid = {1.0 / 30, 1.0 / 7, 0.5, 1, 2, 4};
  o.target = 0.7;
  o.threads = 1;
  Result<Plan> one = PlanBudgets(t, o);
  ASSERT_TRUE(one.ok());
  ASSERT_GE(one->grid.size(), 2u);
  ASSERT_LT(one->grid.size(), o.grid.size()) << "all reached only at the top";
  const size_t reached = one->grid.size() - 2;
  for (const PolicyPlan& p : one->policies) {
    EXPECT_GE(p.grid_freshness[reached], o.target) << p.policy;
    EXPECT_EQ(p.grid_freshness.size(), one->grid.size());
  }
  o.threads = 3;
  Result<Plan> three = PlanBudgets(t, o);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(PlanToJson(o, *one), PlanToJson(o, *three));
  EXPECT_EQ(three->replays, one->replays);

  o.full_grid = true;
  Result<Plan> full = PlanBudgets(t, o);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->grid, o.grid);
  EXPECT_EQ(full->policies[0].pages_per_day, one->policies[0].pages_per_day);
}

TEST(TracePlanTest, RefusesBadOptions) {
  const Trace t = Staggered();
  PlanOptions o = Options();
  o.target = 1;
  EXPECT_FALSE(PlanBudgets(t, o).ok());
  o = Options();
  o.grid = {1, 0.5};
  EXPECT_FALSE(PlanBudgets(t, o).ok());
  o = Options();
  o.policies.clear();
  EXPECT_FALSE(PlanBudgets(t, o).ok());
  o = Options();
  o.policies = {"no-such-policy"};
  EXPECT_FALSE(PlanBudgets(t, o).ok());
  o = Options();
  o.threads = 0;
  EXPECT_FALSE(PlanBudgets(t, o).ok());
  o = Options();
  o.precision = 0;
  EXPECT_FALSE(PlanBudgets(t, o).ok());
}

}  // namespace
}  // namespace freshd::sim
