// Scheduler::SetHeld (operator holds, daemon/operator_controls.h): a held
// page is never selected, every Select still chooses the brute-force argmax
// of PriorityOf over the pages that are eligible and not held, and a
// release makes the page selectable again without a re-index.

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

#include "sched/scheduler.h"
#include "sched/selector.h"
#include "tests/sched/scheduler_test_util.h"

namespace freshd::sched {
namespace {

using sched_test::kDay;
using sched_test::Make;

TEST(HeldPagesTest, HeldPagesAreNeverSelectedAndComeBackOnRelease) {
  SchedulerOptions o;
  o.policy = "uniform";
  o.rate = 1e6;
  o.burst = 1e9;
  o.min_interval = 600;
  o.max_interval = 4 * kDay;
  auto sched = Make(o);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  constexpr size_t kPages = 200;
  for (size_t i = 0; i < kPages; ++i) {
    ASSERT_TRUE(sched->AddUrl(static_cast<HostId>(i % 5), 0.1 + u(rng)).ok());
  }
  // Hold every third page, and one unknown id (ignored).
  for (PageId p = 0; p < kPages; p += 3) sched->SetHeld(p, true);
  sched->SetHeld(kPages + 10, true);
  EXPECT_EQ(sched->held_pages(), (kPages + 2) / 3);
  sched->SetHeld(0, true);  // twice: counted once
  EXPECT_EQ(sched->held_pages(), (kPages + 2) / 3);

  const Scheduler::HostOpenFn open = [](HostId) { return true; };
  double now = 1000;
  std::vector<bool> selected(kPages, false);
  for (int step = 0; step < 150; ++step) {
    now += 60;
    // The brute force over eligible, unheld pages.
    std::optional<PageId> best;
    for (PageId p = 0; p < kPages; ++p) {
      if (!sched->Eligible(p, now, open)) continue;
      EXPECT_FALSE(sched->held(p));
      if (!best ||
          Better(sched->PriorityOf(p, now), sched->PriorityOf(*best, now))) {
        best = p;
      }
    }
    const std::optional<PageId> got = sched->Select(now, open);
    ASSERT_EQ(got.has_value(), best.has_value()) << step;
    if (!got) break;
    EXPECT_FALSE(sched->held(*got)) << *got;
    EXPECT_FALSE(
        Better(sched->PriorityOf(*best, now), sched->PriorityOf(*got, now)));
    selected[*got] = true;
    sched->Observe({*got, now, sched_test::Changed(false)});
  }
  for (PageId p = 0; p < kPages; p += 3) EXPECT_FALSE(selected[p]) << p;
  // Released: eligible again at once, and selected.
  for (PageId p = 0; p < kPages; p += 3) sched->SetHeld(p, false);
  EXPECT_EQ(sched->held_pages(), 0u);
  now += 60;
  EXPECT_TRUE(sched->Eligible(3, now, open));
  bool released_chosen = false;
  for (int step = 0; step < 400 && !released_chosen; ++step) {
    now += 60;
    const std::optional<PageId> got = sched->Select(now, open);
    if (!got) continue;
    released_chosen = *got % 3 == 0;
    sched->Observe({*got, now, sched_test::Changed(false)});
  }
  EXPECT_TRUE(released_chosen);
}

}  // namespace
}  // namespace freshd::sched
