// Scheduler::Remove (pages gone for good, daemon/page_book.h "Removal"): a
// removed page is never selected, every Select still chooses the
// brute-force argmax over the live eligible pages, a Select over removed
// pages only evaluates none of them, the summary does not count them, and
// their observations are ignored.

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

TEST(RemovedPagesTest, RemovedPagesAreNeverSelectedNorEvaluated) {
  for (const char* policy : {"uniform", "freshness"}) {
    SchedulerOptions o;
    o.policy = policy;
    o.rate = 1e6;
    o.burst = 1e9;
    o.min_interval = 600;
    o.max_interval = 4 * kDay;
    auto sched = Make(o);
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    constexpr size_t kPages = 300;
    for (size_t i = 0; i < kPages; ++i) {
      ASSERT_TRUE(sched->AddUrl(static_cast<HostId>(i % 7), 0.1 + u(rng)).ok());
    }
    const Scheduler::HostOpenFn open = [](HostId) { return true; };
    double now = 1000;
    // Fetch every page once, so values and deadlines differ.
    for (size_t i = 0; i < kPages; ++i) {
      auto got = sched->Select(now += 1, open);
      ASSERT_TRUE(got.has_value());
      sched->Observe({*got, now, sched_test::Changed(u(rng) < 0.5)});
    }
    // Remove every fourth page (one while in flight) and an unknown id.
    auto in_flight = sched->Select(now += 700, open);
    ASSERT_TRUE(in_flight.has_value());
    sched->Remove(*in_flight);
    for (PageId p = 0; p < kPages; p += 4) sched->Remove(p);
    sched->Remove(kPages + 5);
    const size_t removed = sched->removed_pages();
    EXPECT_GE(removed, kPages / 4);
    EXPECT_FALSE(sched->page(*in_flight).in_flight());
    // Its fetch's observation comes back: ignored.
    EXPECT_FALSE(
        sched->Observe({*in_flight, now, sched_test::Changed(true)}).page);
    EXPECT_TRUE(sched->page(*in_flight).removed());

    std::vector<bool> selected(kPages, false);
    for (int step = 0; step < 400; ++step) {
      now += 3600;
      std::optional<PageId> best;
      for (PageId p = 0; p < kPages; ++p) {
        if (!sched->Eligible(p, now, open)) continue;
        EXPECT_FALSE(sched->removed(p));
        if (!best ||
            Better(sched->PriorityOf(p, now), sched->PriorityOf(*best, now))) {
          best = p;
        }
      }
      const std::optional<PageId> got = sched->Select(now, open);
      ASSERT_EQ(got.has_value(), best.has_value()) << policy << " " << step;
      if (!got) continue;
      EXPECT_FALSE(sched->removed(*got)) << *got;
      EXPECT_FALSE(
          Better(sched->PriorityOf(*best, now), sched->PriorityOf(*got, now)));
      selected[*got] = true;
      sched->Observe({*got, now, sched_test::Changed(u(rng) < 0.5)});
    }
    for (PageId p = 0; p < kPages; p += 4) EXPECT_FALSE(selected[p]) << p;
    // The summary counts the live pages only.
    const Scheduler::Summary s = sched->Summarize(now);
    EXPECT_EQ(s.unfetched, 0u);
    // Every live page removed too: a Select finds nothing and evaluates
    // none of the removed pages.
    for (PageId p = 0; p < kPages; ++p) sched->Remove(p);
    EXPECT_EQ(sched->removed_pages(), kPages);
    EXPECT_FALSE(sched->Select(now += 1e7, open).has_value());
    EXPECT_EQ(sched->last_evaluations(), 0u) << policy;
    EXPECT_EQ(sched->Summarize(now).overdue, 0u);
  }
}

}  // namespace
}  // namespace freshd::sched
