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
  ASSERT_EQ(p.grid_freshness.size(), o.grid.size());
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
  o.target = 0.99;
  Result<Plan> plan = PlanBudgets(Staggered(), o);
  ASSERT_TRUE(plan.ok());
  EXPECT_LT(plan->policies[0].pages_per_day, 0);
  const nlohmann::json j = nlohmann::json::parse(PlanToJson(o, *plan));
  EXPECT_FALSE(j["policies"][0]["reached"].get<bool>());
  EXPECT_TRUE(j["policies"][0]["pages_per_day"].is_null());
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
}

}  // namespace
}  // namespace freshd::sim
