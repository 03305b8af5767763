// Valuer alone, on a hand-made page table: its value is the policy's at the
// page's estimates (or truth), a rule's importance replaces μ, deadlines
// follow the floor and the rule, never-fetched pages are worth
// new_page_value, and bounds bound values over a horizon.

#include "sched/valuer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <span>
#include <vector>

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;

class OneTruth final : public ModelSource {
 public:
  PageParams params{2 / kDay, 1, 0, 0};
  const PageParams* TrueParams(PageId p) const override {
    return p == 0 ? &params : nullptr;
  }
  const DivergenceModel* TrueModel(PageId) const override { return nullptr; }
  std::span<const WeightedParams> TrueMixture(PageId) const override {
    return {};
  }
};

struct Fixture {
  explicit Fixture(bool oracle) {
    options.policy = "freshness";
    options.oracle = oracle;
    options.rate_mixture = false;
    options.value_over_rate_uncertainty = false;
    options.max_interval = 10 * kDay;
    policy = std::move(MakePolicy(options.policy, {})).value();
    PageState fetched;
    fetched.last_fetch = 0;
    fetched.fetches = 1;
    fetched.rate = static_cast<float>(1 / kDay);
    fetched.importance = 0.5f;
    pages = {fetched, PageState{}};
    estimator = std::make_unique<Estimator>(options, *policy, &pages);
    valuer = std::make_unique<Valuer>(options, *policy, pages, rules,
                                      *estimator, bucket);
    valuer->set_model_source(&truth);
  }
  SchedulerOptions options;
  std::unique_ptr<Policy> policy;
  std::vector<PageState> pages;
  RuleTable rules;
  TokenBucket bucket{1, 1, 0};
  OneTruth truth;
  std::unique_ptr<Estimator> estimator;
  std::unique_ptr<Valuer> valuer;
};

TEST(ValuerTest, ValuesAtTheEstimatesOrTheTruth) {
  for (bool oracle : {false, true}) {
    SCOPED_TRACE(oracle ? "oracle" : "estimated");
    Fixture f(oracle);
    const PageParams p = f.valuer->Params(0);
    EXPECT_FLOAT_EQ(p.delta, oracle ? 2 / kDay : 1 / kDay);
    PolicyInput in = f.valuer->Input(0);
    EXPECT_EQ(in.params.delta, p.delta);
    EXPECT_DOUBLE_EQ(f.valuer->Value(0, kDay), f.policy->Value(in, kDay));
    EXPECT_EQ(f.valuer->Value(1, kDay), f.options.new_page_value);
    EXPECT_EQ(f.valuer->FreshProbability(1, kDay), 0.0);
    EXPECT_NEAR(f.valuer->FreshProbability(0, kDay), std::exp(-p.delta * kDay),
                1e-9);
    // Values grow between observations: the horizon's bound holds them.
    EXPECT_GE(f.valuer->IndexBound(0, 0, 3 * kDay), f.valuer->Value(0, kDay));
    EXPECT_GE(f.valuer->ValueGrowth(0), 0.0);
  }
}

TEST(ValuerTest, RulesSetImportanceAndDeadlines) {
  Fixture f(false);
  EXPECT_EQ(f.valuer->Deadline(0), 10 * kDay);     // the floor
  EXPECT_TRUE(std::isinf(f.valuer->Deadline(1)));  // never fetched
  const double before = f.valuer->Value(0, kDay);
  ASSERT_TRUE(f.rules.Set({{0, 2 * kDay, 2}}, [](PageId) {}).ok());
  ASSERT_TRUE(f.rules.SetPageRule(0, 1, f.pages.size()).ok());
  EXPECT_EQ(f.valuer->Params(0).mu, 2.0);
  EXPECT_NEAR(f.valuer->Value(0, kDay), 4 * before, 1e-9 * before);
  EXPECT_EQ(f.valuer->Deadline(0), 2 * kDay);
  EXPECT_TRUE(f.valuer->PriorityOf(0, 3 * kDay).overdue);
  EXPECT_FALSE(f.valuer->PriorityOf(0, kDay).overdue);
}

}  // namespace
}  // namespace freshd::sched
