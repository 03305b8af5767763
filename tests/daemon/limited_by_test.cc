// /status "limited_by" from the decayed seconds each stage held the rate
// back and the achieved rate against the budget (daemon::LimitedBy).

#include <gtest/gtest.h>

#include "daemon/crawl_loop.h"

namespace freshd::daemon {
namespace {

struct Seconds {
  double s[kLimits] = {};
  Seconds& Add(Limit l, double seconds) {
    s[static_cast<int>(l)] = seconds;
    return *this;
  }
};

// Issue #40: hosts closed most of the time while the achieved rate was the
// budget read 'politeness'; the bucket was the limit.
TEST(LimitedByTest, PolitenessAtTheBudgetsRateIsTheBudget) {
  Seconds t;
  t.Add(Limit::kPoliteness, 7).Add(Limit::kBudget, 3);
  EXPECT_STREQ(LimitName(LimitedBy(t.s, 20.0, 20.0)), "budget");
  EXPECT_STREQ(LimitName(LimitedBy(t.s, 19.2, 20.0)), "budget");  // >= 95%
  // Below the budget, politeness did hold the rate back.
  EXPECT_STREQ(LimitName(LimitedBy(t.s, 15.0, 20.0)), "politeness");
  EXPECT_STREQ(LimitName(LimitedBy(t.s, 0.0, 20.0)), "politeness");
}

TEST(LimitedByTest, IdleAtTheBudgetsRateIsTheBudget) {
  Seconds t;
  t.Add(Limit::kIdle, 5).Add(Limit::kBudget, 1);
  EXPECT_STREQ(LimitName(LimitedBy(t.s, 10.0, 10.0)), "budget");
  EXPECT_STREQ(LimitName(LimitedBy(t.s, 2.0, 10.0)), "idle");
}

// The stages that bound the rate from inside keep their name whatever the
// rate: the rule only reads politeness and idle time as the budget's.
TEST(LimitedByTest, OtherStagesKeepTheirNameAndTheMostSecondsWin) {
  for (Limit l :
       {Limit::kNetwork, Limit::kParse, Limit::kWrite, Limit::kScheduler}) {
    Seconds t;
    t.Add(l, 4).Add(Limit::kPoliteness, 1);
    EXPECT_EQ(LimitedBy(t.s, 20.0, 20.0), l) << LimitName(l);
    EXPECT_EQ(LimitedBy(t.s, 1.0, 20.0), l) << LimitName(l);
  }
  Seconds none;
  EXPECT_STREQ(LimitName(LimitedBy(none.s, 0.0, 20.0)), "none");
  // No budget (rate 0): never 'budget' by this rule.
  Seconds polite;
  polite.Add(Limit::kPoliteness, 1);
  EXPECT_STREQ(LimitName(LimitedBy(polite.s, 0.0, 0.0)), "politeness");
}

}  // namespace
}  // namespace freshd::daemon
