// FetchTable alone: slots by fetch, reused through the free list.

#include "daemon/fetch_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace freshd::daemon {
namespace {

TEST(FetchTableTest, HoldsAFetchUntilRemovedAndTellsStaleSlots) {
  FetchTable t;
  const FetchTable::Slot a = t.Add(7, 100.5);
  const FetchTable::Slot b = t.Add(9, 101);
  EXPECT_NE(a, b);
  EXPECT_TRUE(t.Holds(a, 7));
  EXPECT_FALSE(t.Holds(a, 9));   // another page's slot
  EXPECT_FALSE(t.Holds(42, 7));  // never given
  EXPECT_EQ(t.started_unix(a), 100.5);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.on_network(), 2u);

  t.LeaveNetwork(a);
  t.LeaveNetwork(a);  // once only
  EXPECT_FALSE(t.on_network(a));
  EXPECT_TRUE(t.on_network(b));
  EXPECT_EQ(t.on_network(), 1u);

  t.Remove(a);
  t.Remove(a);  // a free slot stays free
  EXPECT_FALSE(t.Holds(a, 7));
  EXPECT_EQ(t.size(), 1u);
  // The freed slot is the next one given: page 7's stale slot now holds
  // page 8's fetch, and is not taken for page 7's.
  const FetchTable::Slot c = t.Add(8, 102);
  EXPECT_EQ(c, a);
  EXPECT_FALSE(t.Holds(c, 7));
  EXPECT_TRUE(t.Holds(c, 8));
  EXPECT_EQ(t.on_network(), 2u);
  t.Remove(b);  // removed on the network
  EXPECT_EQ(t.on_network(), 1u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(FetchTableTest, GrowsOnlyPastItsPeak) {
  FetchTable t;
  std::vector<FetchTable::Slot> held;
  for (sched::PageId p = 0; p < 64; ++p) held.push_back(t.Add(p, p));
  EXPECT_EQ(t.capacity(), 64u);
  // 100,000 more fetches, never more than 64 at once: no slot added.
  sched::PageId next = 64;
  for (int i = 0; i < 100000; ++i) {
    const size_t k = (static_cast<size_t>(i) * 37) % held.size();
    t.Remove(held[k]);
    held[k] = t.Add(next, next);
    ASSERT_TRUE(t.Holds(held[k], next));
    ++next;
  }
  EXPECT_EQ(t.capacity(), 64u);
  EXPECT_EQ(t.size(), 64u);
  t.Add(next, next);
  EXPECT_EQ(t.capacity(), 65u);
}

}  // namespace
}  // namespace freshd::daemon
