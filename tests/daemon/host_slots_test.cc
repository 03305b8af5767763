// HostSlots: the scheduler thread's mirror of per-host politeness.

#include "daemon/host_slots.h"

#include <gtest/gtest.h>

#include <cmath>

namespace freshd::daemon {
namespace {

TEST(HostSlotsTest, InFlightLimitHoldsPerHost) {
  HostSlots slots(2);
  EXPECT_TRUE(slots.Open(7, 0));  // an unknown host is open
  slots.Start(7);
  EXPECT_TRUE(slots.Open(7, 0));
  slots.Start(7);
  EXPECT_FALSE(slots.Open(7, 0));  // at the limit
  EXPECT_TRUE(slots.Open(3, 0));   // other hosts unaffected
  EXPECT_EQ(slots.total_in_flight(), 2u);
  slots.Finish(7, 0);
  EXPECT_TRUE(slots.Open(7, 0));
  EXPECT_EQ(slots.in_flight(7), 1);
}

TEST(HostSlotsTest, AFinishedHostReopensWhenItsGateSays) {
  HostSlots slots(1);
  slots.Start(1);
  slots.Finish(1, 10.25);  // the gate's delay after the response
  EXPECT_FALSE(slots.Open(1, 10.0));
  EXPECT_TRUE(slots.Open(1, 10.25));
  EXPECT_DOUBLE_EQ(slots.NextOpening(10.0), 10.25);
  EXPECT_TRUE(std::isinf(slots.NextOpening(10.25)));  // passed
}

TEST(HostSlotsTest, NextOpeningIsTheEarliestAndSkipsSupersededTimes) {
  HostSlots slots(1);
  slots.Start(1);
  slots.Finish(1, 5.0);
  slots.Start(2);
  slots.Finish(2, 3.0);
  EXPECT_DOUBLE_EQ(slots.NextOpening(0), 3.0);
  // Host 2 went again and finished with a later opening: 3.0 is stale.
  slots.Start(2);
  slots.Finish(2, 8.0);
  EXPECT_DOUBLE_EQ(slots.NextOpening(0), 5.0);
  EXPECT_DOUBLE_EQ(slots.NextOpening(6.0), 8.0);
}

// A restart: the gate's restored times and its hold on every host close
// the hosts here too, and the earliest reopening is the dispatcher's wake.
TEST(HostSlotsTest, ARestartsHoldsCloseHostsUntilTheGateOpensThem) {
  HostSlots slots(2);
  slots.HoldAll(10);
  slots.HoldUntil(3, 40);            // in back-off, or under a Crawl-delay
  EXPECT_FALSE(slots.Open(1, 9.9));  // never seen: held like every host
  EXPECT_TRUE(slots.Open(1, 10));
  EXPECT_EQ(slots.OpensAt(7), 10);
  EXPECT_FALSE(slots.Open(3, 10));
  EXPECT_TRUE(slots.Open(3, 40));
  EXPECT_EQ(slots.NextOpening(5), 10);  // the hold on all ends first
  EXPECT_EQ(slots.NextOpening(10), 40);
  EXPECT_EQ(slots.next_allowed(1), 10);
  // The hold counts no request: both slots are free once it ends.
  slots.Start(1);
  slots.Start(1);
  EXPECT_FALSE(slots.Open(1, 11));
  slots.Finish(1, 11);
  EXPECT_TRUE(slots.Open(1, 11));
}

TEST(HostSlotsTest, AFinishWithoutAStartNeverGoesNegative) {
  HostSlots slots(1);
  slots.Finish(4, 0);
  EXPECT_EQ(slots.in_flight(4), 0);
  EXPECT_EQ(slots.total_in_flight(), 0u);
  EXPECT_TRUE(slots.Open(4, 0));
}

}  // namespace
}  // namespace freshd::daemon
