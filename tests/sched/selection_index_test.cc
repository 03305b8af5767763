// SelectionIndex alone, over a fake IndexedValues (no scheduler, no policy):
// every Select chooses what a brute-force argmax of priority over the
// eligible pages chooses, through horizon moves, staged refreshes, lazy
// re-valuation and a bulk restore.

#include "sched/selection_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace freshd::sched {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Page p's value grows linearly from its last "fetch": v = base + slope ×
// (now − since); its deadline is since + due (+inf: none).
class LinearValues final : public IndexedValues {
 public:
  struct Page {
    double base = 0, slope = 0, since = 0, due = kInfinity;
  };
  std::vector<Page> page;

  size_t pages() const override { return page.size(); }
  double Value(PageId p, double now) const override {
    const Page& x = page[p];
    return x.base + x.slope * std::max(0.0, now - x.since);
  }
  double IndexBound(PageId p, double /*start*/, double end) const override {
    return Value(p, end);
  }
  double Deadline(PageId p) const override {
    return page[p].since + page[p].due;
  }
  double ValueGrowth(PageId p) const override { return page[p].slope; }
  Priority PriorityOf(PageId p, double now) const {
    const double d = Deadline(p);
    return d <= now ? Priority{true, d} : Priority{false, Value(p, now)};
  }
};

// Runs `steps` Selects on n random pages, refetching each choice; checks
// each against the brute-force argmax. Returns the horizons moved.
uint64_t RunAgainstBruteForce(size_t n, size_t slice, bool memo, bool restore,
                              uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  LinearValues values;
  SelectionIndex index(values, {slice, kMinHorizonScale, memo, {}});
  if (restore) index.BeginRestore();
  for (size_t i = 0; i < n; ++i) {
    values.page.push_back({u(rng), u(rng), -u(rng) * 10,
                           u(rng) < 0.2 ? 5 + 20 * u(rng) : kInfinity});
    index.Reindex(static_cast<PageId>(i));
  }
  const double rate = 4;  // tokens a unit of time
  if (restore) index.FinishRestore(0.0, rate);
  std::vector<bool> blocked(n);
  double now = 0;
  for (int step = 0; step < 600; ++step) {
    now += u(rng) / rate;
    for (size_t i = 0; i < n; ++i) blocked[i] = u(rng) < 0.1;
    const auto eligible = [&](PageId p) { return !blocked[p]; };
    std::optional<PageId> best;
    for (PageId p = 0; p < n; ++p) {
      if (!eligible(p)) continue;
      if (!best ||
          Better(values.PriorityOf(p, now), values.PriorityOf(*best, now))) {
        best = p;
      }
    }
    const auto chosen = index.Select(
        now, rate, eligible, [](const Selector::Choice&) { return true; });
    EXPECT_EQ(chosen.has_value(), best.has_value());
    if (!chosen || !best) continue;
    EXPECT_EQ(chosen->choice.page, *best) << "step " << step;
    if (chosen->choice.priority.overdue) {
      EXPECT_TRUE(chosen->margin.has_value());
    }
    LinearValues::Page& x = values.page[chosen->choice.page];
    x.base = 0;
    x.since = now;
    index.Reindex(chosen->choice.page);
  }
  return index.horizon_refreshes();
}

TEST(SelectionIndexTest, ChoosesTheBruteForceArgmax) {
  for (bool memo : {false, true}) {
    SCOPED_TRACE(memo ? "lazy re-valuation" : "every value");
    EXPECT_GT(RunAgainstBruteForce(300, 0, memo, false, 1), 1u);
  }
}

TEST(SelectionIndexTest, StagedHorizonsChooseTheSame) {
  for (bool memo : {false, true}) {
    SCOPED_TRACE(memo ? "lazy re-valuation" : "every value");
    EXPECT_GT(RunAgainstBruteForce(300, 16, memo, false, 2), 1u);
  }
}

TEST(SelectionIndexTest, BulkRestoreChoosesTheSame) {
  EXPECT_GT(RunAgainstBruteForce(300, 16, true, true, 3), 1u);
}

TEST(SelectionIndexTest, RestoringDefersIndexingToFinishRestore) {
  LinearValues values;
  SelectionIndex index(values, {1024, kMinHorizonScale, false, {}});
  index.BeginRestore();
  for (int i = 0; i < 10; ++i) {
    values.page.push_back({1.0 + i, 0, 0, kInfinity});
    index.Reindex(static_cast<PageId>(i));
  }
  EXPECT_EQ(index.bound_evaluations(), 0u);
  index.FinishRestore(1.0, 1.0);
  EXPECT_FALSE(index.restoring());
  EXPECT_EQ(index.bound_evaluations(), 10u);  // one pass at the first horizon
  EXPECT_EQ(index.horizon_refreshes(), 1u);
  const auto chosen = index.Select(
      1.0, 1.0, [](PageId) { return true; },
      [](const Selector::Choice&) { return true; });
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->choice.page, 9u);
}

TEST(SelectionIndexTest, AnUnusableChoiceSelectsNothing) {
  LinearValues values;
  values.page.push_back({2, 0, 0, kInfinity});
  SelectionIndex index(values, {1024, kMinHorizonScale, false, {}});
  index.Reindex(0);
  const auto none = index.Select(
      0, 1, [](PageId) { return true; },
      [](const Selector::Choice&) { return false; });
  EXPECT_FALSE(none.has_value());
  const auto blocked = index.Select(
      0, 1, [](PageId) { return false; },
      [](const Selector::Choice&) { return true; });
  EXPECT_FALSE(blocked.has_value());
}

}  // namespace
}  // namespace freshd::sched
