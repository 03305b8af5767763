// FairShare alone: the water-filled caps from notes the test makes.

#include "daemon/fair_share.h"

#include <gtest/gtest.h>

#include <map>

namespace freshd::daemon {
namespace {

int Nobody(sched::HostId) { return 0; }

TEST(FairShareTest, WithoutContentionEveryHostMayUseItsWholeAllowance) {
  FairShare f(64, 16);
  for (sched::HostId h = 0; h < 9; ++h) f.NoteHeld(h, 16);
  f.Roll(0, Nobody);  // the first window ends at once
  EXPECT_EQ(f.cap(), 16);
  EXPECT_FALSE(f.contended_last_window());
}

TEST(FairShareTest, ContendingHostsShareTheConnectionsEvenly) {
  FairShare f(64, 16);
  f.Roll(0, Nobody);
  // A hostile host at its 16, eight others at 6: every slot taken.
  f.NoteHeld(0, 16);
  for (sched::HostId h = 1; h <= 8; ++h) f.NoteHeld(h, 6);
  f.NoteContended();
  f.Roll(0.1, Nobody);  // the window is not over: no cap yet
  EXPECT_EQ(f.cap(), 16);
  f.Roll(FairShare::kWindowS, Nobody);
  EXPECT_EQ(f.cap(), 8);  // 9 x 7 = 63 < 64 <= 9 x 8: every slot used
  EXPECT_EQ(f.hosts_last_window(), 9u);
  EXPECT_TRUE(f.contended_last_window());
}

TEST(FairShareTest, AHostWhoseFetchesFindNothingGetsAnEighth) {
  FairShare f(64, 16);
  f.Roll(0, Nobody);
  EXPECT_EQ(f.Weight(0), 1.0f);  // not fetched yet: full weight
  for (int i = 0; i < 100; ++i) f.NoteOutcome(0, false);  // 404s
  for (sched::HostId h = 1; h <= 8; ++h) {
    for (int i = 0; i < 100; ++i) f.NoteOutcome(h, i % 10 != 0);  // 90%
  }
  EXPECT_EQ(f.Weight(0), FairShare::kMinWeight);
  EXPECT_NEAR(f.Weight(1), 0.9, 0.1);
  for (sched::HostId h = 0; h <= 8; ++h) f.NoteHeld(h, 7);
  f.NoteContended();
  f.Roll(1, Nobody);
  // The eight hosts of pages fill the connections; host 0 keeps one.
  EXPECT_EQ(f.CapOf(0), 1);
  EXPECT_EQ(f.CapOf(1), 8);
  EXPECT_EQ(f.low_yield_last_window(), 1u);
  // It finds pages again: its weight comes back.
  for (int i = 0; i < 100; ++i) f.NoteOutcome(0, true);
  EXPECT_GT(f.Weight(0), 0.95f);
}

TEST(FairShareTest, HostsHeldBackByADelayKeepOnlyWhatTheyUsed) {
  FairShare f(64, 16);
  f.Roll(0, Nobody);
  // Sixty polite hosts hold one connection each, their delay between; two
  // hosts without a delay share the remaining four.
  for (sched::HostId h = 0; h < 60; ++h) {
    f.NoteHeld(h, 1);
    f.NoteDelayed(h);
  }
  f.NoteHeld(60, 3);
  f.NoteHeld(61, 1);
  f.NoteContended();
  f.Roll(1, Nobody);
  EXPECT_EQ(f.cap(), 2);
}

TEST(FairShareTest, MoreHostsThanConnectionsLeavesOneEach) {
  FairShare f(4, 16);
  f.Roll(0, Nobody);
  for (sched::HostId h = 0; h < 10; ++h) f.NoteHeld(h, 1);
  f.NoteContended();
  f.Roll(1, Nobody);
  EXPECT_EQ(f.cap(), 1);
}

TEST(FairShareTest, AHostStillHoldingConnectionsCountsInTheNextWindow) {
  FairShare f(10, 10);
  f.Roll(0, Nobody);
  f.NoteHeld(0, 10);  // slow fetches, started in this window
  f.NoteContended();
  std::map<sched::HostId, int> held = {{0, 10}};
  f.Roll(1, [&](sched::HostId h) { return held[h]; });
  EXPECT_EQ(f.cap(), 10);  // alone: all of them
  // Next window: host 0 starts nothing (it still holds 10); host 1 comes.
  f.NoteHeld(1, 1);
  f.NoteContended();
  f.Roll(2, [&](sched::HostId h) { return held[h]; });
  EXPECT_EQ(f.cap(), 5);  // two hosts contending for ten
  EXPECT_EQ(f.hosts_last_window(), 2u);
  // Once nobody waits for a connection the cap is lifted.
  f.Roll(3, Nobody);
  EXPECT_EQ(f.cap(), 10);
}

}  // namespace
}  // namespace freshd::daemon
