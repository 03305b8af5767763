// RuleTable alone: validation, the page -> rule bytes (none until a page
// has a rule), counts, the effective intervals and importance.

#include "sched/rule_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace freshd::sched {
namespace {

TEST(RuleTableTest, RejectsBadRulesAndKeepsTheOldOnes) {
  RuleTable t;
  std::vector<PageId> changed;
  const auto note = [&](PageId p) { changed.push_back(p); };
  ASSERT_TRUE(t.Set({{60, 3600, 2}}, note).ok());
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(t.Set({{-1, 0, 0}}, note).ok());
  EXPECT_FALSE(t.Set({{nan, 0, 0}}, note).ok());
  EXPECT_FALSE(t.Set({{0, inf, 0}}, note).ok());
  EXPECT_FALSE(t.Set({{7200, 3600, 0}}, note).ok());  // min > max
  EXPECT_TRUE(t.Set({{7200, 0, 0}}, note).ok());      // no max: any min
  EXPECT_FALSE(t.Set(std::vector<PageRule>(kMaxPageRules + 1), note).ok());
  EXPECT_EQ(t.rules().size(), 1u);
  EXPECT_TRUE(changed.empty());  // no page had a rule
}

TEST(RuleTableTest, PagesHoldOneByteOnceRuled) {
  RuleTable t;
  ASSERT_TRUE(t.Set({{60, 0, 0}, {0, 600, 3}}, [](PageId) {}).ok());
  EXPECT_EQ(t.RuleOf(5), 0);
  EXPECT_EQ(t.RuleFor(5), nullptr);
  EXPECT_FALSE(t.SetPageRule(10, 1, 10).ok());  // unknown page
  EXPECT_FALSE(t.SetPageRule(3, 3, 10).ok());   // unknown rule
  auto changed = t.SetPageRule(3, 2, 10);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  changed = t.SetPageRule(3, 2, 10);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);  // already so
  ASSERT_TRUE(t.SetPageRule(4, 1, 10).ok());
  EXPECT_EQ(t.PagesPerRule(10), (std::vector<uint64_t>{8, 1, 1}));
  EXPECT_EQ(t.ImportanceOf(3, 0.5), 3.0);
  EXPECT_EQ(t.ImportanceOf(4, 0.5), 0.5);  // rule 1 sets no importance
  EXPECT_EQ(t.MinIntervalOf(4, 30), 60.0);
  EXPECT_EQ(t.MinIntervalOf(4, 90), 90.0);
  EXPECT_EQ(t.MinIntervalOf(3, 30), 30.0);
  EXPECT_EQ(t.MaxIntervalOf(3), 600.0);
  EXPECT_TRUE(std::isinf(t.MaxIntervalOf(4)));

  // Fewer rules: pages whose rule is gone lose it; every ruled page is
  // reported changed.
  std::vector<PageId> changed_pages;
  ASSERT_TRUE(
      t.Set({{0, 0, 1}}, [&](PageId p) { changed_pages.push_back(p); }).ok());
  EXPECT_EQ(changed_pages, (std::vector<PageId>{3, 4}));
  EXPECT_EQ(t.RuleOf(3), 0);
  EXPECT_EQ(t.RuleOf(4), 1);
}

}  // namespace
}  // namespace freshd::sched
