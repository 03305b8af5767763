// The selector's choice equals a brute-force argmax over all eligible pages
// (issue 4, item 5: within 1e-9 relative), under random bounds, values,
// eligibility and deadlines; seed logged.

#include "sched/selector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace freshd::sched {
namespace {

TEST(SelectorTest, EveryChoiceMatchesBruteForceArgmax) {
  const uint32_t seed = 20261121;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const size_t n = 500;
  const double inf = std::numeric_limits<double>::infinity();
  Selector selector;
  selector.Resize(n);
  std::vector<double> value(n), bound(n), deadline(n);
  std::vector<bool> eligible(n);
  int overdue_choices = 0;
  for (int round = 0; round < 400; ++round) {
    const double now = round;
    for (PageId p = 0; p < n; ++p) {
      // Re-index a random subset each round, as observations would.
      if (round == 0 || u(rng) < 0.2) {
        value[p] = u(rng) * 10;
        bound[p] = u(rng) < 0.1 ? inf : value[p] * (1 + u(rng));
        deadline[p] = u(rng) < 0.02 ? now + u(rng) * 3 : inf;
        selector.Update(p, bound[p], deadline[p]);
      }
      eligible[p] = u(rng) < 0.7;
    }
    auto choice = selector.Select(
        now, [&](PageId p) { return static_cast<bool>(eligible[p]); },
        [&](PageId p) { return value[p]; });

    // Brute force: overdue (deadline <= now) first by earliest deadline, then
    // highest value; ties to the lower id.
    int best = -1;
    bool best_overdue = false;
    for (PageId p = 0; p < n; ++p) {
      if (!eligible[p]) continue;
      bool overdue = deadline[p] <= now;
      if (best < 0) {
        best = p, best_overdue = overdue;
        continue;
      }
      if (overdue != best_overdue) {
        if (overdue) best = p, best_overdue = true;
        continue;
      }
      double key = overdue ? -deadline[p] : value[p];
      double best_key = overdue ? -deadline[best] : value[best];
      if (key > best_key) best = p;
    }
    ASSERT_EQ(choice.has_value(), best >= 0) << "round " << round;
    if (best < 0) continue;
    overdue_choices += best_overdue;
    const PageId chosen = choice->page;
    ASSERT_TRUE(eligible[chosen]) << "round " << round;
    if (best_overdue) {
      EXPECT_EQ(deadline[chosen], deadline[best]) << "round " << round;
    } else {
      EXPECT_LE(std::fabs(value[chosen] - value[best]),
                1e-9 * std::fabs(value[best]))
          << "round " << round << " chose " << chosen << " best " << best;
    }
  }
  EXPECT_GT(overdue_choices, 0);  // the deadline path was exercised
}

TEST(SelectorTest, NothingEligibleGivesNoChoice) {
  Selector selector;
  selector.Resize(3);
  for (PageId p = 0; p < 3; ++p) selector.Update(p, 1.0, 1e9);
  auto choice = selector.Select(
      0, [](PageId) { return false; }, [](PageId) { return 1.0; });
  EXPECT_FALSE(choice.has_value());
}

}  // namespace
}  // namespace freshd::sched
