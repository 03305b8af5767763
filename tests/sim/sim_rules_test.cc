// Operators' rules in simulation (SimOptions::rules, `freshd sim --rule`;
// issue 31 item 7): a max_interval rule on a slow class and a min_interval
// rule on a fast class hold over the whole run, estimated and oracle, and
// the JSON reports what the ruled pages saw; a rule for an unknown class is
// an error.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

constexpr double kDay = 86400;

constexpr char kWeb[] = R"(
name = "two-speeds"
hosts = 4
pages_per_host = 50
crawl_delay_s = 1

[[class]]
name = "slow"
share = 0.5
importance = { dist = "uniform", min = 0.1, max = 1.0 }
[class.churn]
words = 100
rate = { dist = "loguniform", min = 0.01, max = 0.1 }

[[class]]
name = "fast"
share = 0.5
importance = { dist = "uniform", min = 0.1, max = 1.0 }
[class.churn]
words = 100
rate = { dist = "loguniform", min = 2.0, max = 10.0 }
)";

WebModel Model() {
  Result<WebSpec> spec = ParseWebSpec(kWeb, "two-speeds.toml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return WebModel::Build(*spec, 3);
}

SimOptions Options(bool oracle) {
  SimOptions o;
  o.policy = "freshness";
  o.oracle = oracle;
  o.rate_per_day = 40;  // 200 pages: every page every 5 days on average
  o.days = 60;
  o.warmup_days = 10;
  return o;
}

TEST(SimRulesTest, RulesHoldAndAreReported) {
  const WebModel model = Model();
  for (bool oracle : {true, false}) {
    SCOPED_TRACE(oracle ? "oracle" : "estimated");
    SimOptions o = Options(oracle);
    const Result<SimResult> unruled = RunSimulation(model, o);
    ASSERT_TRUE(unruled.ok()) << unruled.status().ToString();
    EXPECT_TRUE(unruled->rules.empty());
    EXPECT_FALSE(nlohmann::json::parse(SimResultToJson(model, o, *unruled))
                     .contains("rules"));
    o.rules = {{"slow", {0, 4 * kDay, 0}}, {"fast", {kDay, 0, 0}}};
    const Result<SimResult> ruled = RunSimulation(model, o);
    ASSERT_TRUE(ruled.ok()) << ruled.status().ToString();
    ASSERT_EQ(ruled->rules.size(), 2u);
    const SimRuleResult& slow = ruled->rules[0];
    const SimRuleResult& fast = ruled->rules[1];
    EXPECT_EQ(slow.pages + fast.pages, 200u);
    EXPECT_GT(slow.crawls, 0u);
    // One token is 36 min, the host's delay 1 s; exploration's probes
    // share the deadline queue (earliest first), so a wave of them can
    // hold a ruled page back a few tokens (measured 4 d + 72 min).
    EXPECT_LE(slow.longest_interval, 4 * kDay + 2 * 3600);
    EXPECT_GE(fast.shortest_interval, kDay);
    // The rules bit: without them the optimum fetched the fast pages more
    // often and left the slow ones longer (from the per-class crawls).
    EXPECT_LT(ruled->per_class[1].crawls, unruled->per_class[1].crawls);
    EXPECT_GT(ruled->per_class[0].crawls, unruled->per_class[0].crawls);
    const auto j =
        nlohmann::json::parse(SimResultToJson(model, o, *ruled))["rules"];
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[0]["class"], "slow");
    EXPECT_EQ(j[0]["max_interval_s"], 4 * kDay);
    EXPECT_EQ(j[1]["shortest_interval_s"], fast.shortest_interval);
  }
  SimOptions o = Options(true);
  o.rules = {{"nonesuch", {0, kDay, 0}}};
  const Result<SimResult> bad = RunSimulation(model, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nonesuch"), std::string::npos);
}

}  // namespace
}  // namespace freshd::sim
