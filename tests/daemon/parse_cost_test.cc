// ParseCost alone, and in FairShare: the parse pool's time by host, from
// notes the test makes.

#include "daemon/parse_cost.h"

#include <gtest/gtest.h>

#include "daemon/fair_share.h"

namespace freshd::daemon {
namespace {

int Nobody(sched::HostId) { return 0; }

TEST(ParseCostTest, AHostOverItsFairShareOfParseTimeWeighsLess) {
  ParseCost p;
  p.Roll(0);
  // Host 0's bodies take 80% of the pool's time; hosts 1..4 5% each.
  p.Note(0, 0.8);
  for (sched::HostId h = 1; h <= 4; ++h) p.Note(h, 0.05);
  // Within the window nothing is known yet.
  EXPECT_EQ(p.Factor(0), 1.0f);
  p.Roll(ParseCost::kWindowS);
  EXPECT_EQ(p.hosts_last_window(), 5u);
  EXPECT_DOUBLE_EQ(p.fair_share(), 0.2);
  EXPECT_NEAR(p.ShareOf(0), 0.8, 1e-6);
  EXPECT_NEAR(p.Factor(0), 0.25, 1e-6);  // 0.2 / 0.8
  EXPECT_EQ(p.Factor(1), 1.0f);          // under its share
  EXPECT_EQ(p.Factor(9), 1.0f);          // never parsed
  EXPECT_EQ(p.hosts_over_last_window(), 1u);
  EXPECT_NEAR(p.max_share_last_window(), 0.8, 1e-6);
  EXPECT_NEAR(p.seconds_total(), 1.0, 1e-6);
  // Notes in the next window change nothing until it ends...
  p.Note(1, 0.5);
  p.Note(0, 0.5);
  EXPECT_NEAR(p.Factor(0), 0.25, 1e-6);
  // ... then two hosts share evenly: nobody over.
  p.Roll(2 * ParseCost::kWindowS);
  EXPECT_DOUBLE_EQ(p.fair_share(), 0.5);
  EXPECT_EQ(p.Factor(0), 1.0f);
  EXPECT_EQ(p.hosts_over_last_window(), 0u);
  // A window without parse time: no one is weighed.
  p.Roll(3 * ParseCost::kWindowS);
  EXPECT_EQ(p.Factor(0), 1.0f);
  EXPECT_EQ(p.ShareOf(0), 0.0);
}

TEST(ParseCostTest, ALoneHostOrAnIdlePoolIsNotWeighed) {
  ParseCost p;
  p.Roll(0);
  p.Note(3, 5.0);  // the only host parsing: its fair share is all
  p.Roll(ParseCost::kWindowS);
  EXPECT_EQ(p.Factor(3), 1.0f);
  p.Note(3, 0.001);  // too little to share
  p.Note(4, 0.0001);
  p.Roll(2 * ParseCost::kWindowS);
  EXPECT_EQ(p.Factor(3), 1.0f);
}

// In FairShare: while nine hosts contend for 64 connections, the one whose
// bodies take most of the parse pool holds fewer than the others.
TEST(ParseCostTest, FairShareCutsTheConnectionsOfACostlyHost) {
  FairShare f(64, 16);
  f.Roll(0, Nobody);
  for (sched::HostId h = 0; h <= 8; ++h) {
    f.NoteParseTime(h, h == 0 ? 0.5 : 0.01);  // host 0: 86% of the pool
  }
  f.Roll(ParseCost::kWindowS, Nobody);
  for (sched::HostId h = 0; h <= 8; ++h) f.NoteHeld(h, 7);
  f.NoteContended();
  f.Roll(ParseCost::kWindowS + FairShare::kWindowS, Nobody);
  EXPECT_NEAR(f.Weight(0), (1.0 / 9) / (0.5 / 0.58), 1e-3);
  EXPECT_EQ(f.Weight(1), 1.0f);
  EXPECT_EQ(f.CapOf(1), 8);  // the eight others fill the connections
  EXPECT_EQ(f.CapOf(0), 1);
  EXPECT_EQ(f.parse_cost().hosts_over_last_window(), 1u);
}

}  // namespace
}  // namespace freshd::daemon
