// cluster/membership.h: members live from a heartbeat until ttl after their
// latest; shards are acquired only after the handoff delay and released at
// once.

#include "cluster/membership.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace freshd::cluster {
namespace {

MemberInfo Member(const std::string& name) {
  MemberInfo m;
  m.node = name;
  m.shards = 8;
  return m;
}

TEST(MembershipTest, LiveUntilTtlAfterTheLatestHeartbeat) {
  Membership m(5);
  m.Heard(Member("b"), 100);
  m.Heard(Member("a"), 101);
  ASSERT_EQ(m.Live(102).size(), 2u);
  EXPECT_EQ(m.Live(102)[0].node, "a");  // sorted
  m.Heard(Member("b"), 104);            // renewed
  EXPECT_TRUE(m.IsLive("a", 105.9));
  EXPECT_FALSE(m.IsLive("a", 106));  // 101 + 5
  EXPECT_TRUE(m.IsLive("b", 108.9));
  EXPECT_EQ(m.Live(107).size(), 1u);
  m.Expire(110);
  EXPECT_EQ(m.LastHeard("b"), -1);
  EXPECT_TRUE(m.Live(110).empty());
}

TEST(MembershipTest, LeavingRemovesAtOnceAndAHeartbeatBringsBack) {
  Membership m(5);
  m.Heard(Member("a"), 0);
  m.Left("a");
  EXPECT_FALSE(m.IsLive("a", 0.1));
  m.Heard(Member("a"), 1);
  EXPECT_TRUE(m.IsLive("a", 1.1));
  m.Left("never-seen");  // harmless
}

TEST(MembershipTest, KeepsTheLatestFiguresAndBoundsTheMembers) {
  Membership m(5);
  MemberInfo a = Member("a");
  a.lambda = 2.5;
  m.Heard(a, 0);
  EXPECT_EQ(m.Live(1)[0].lambda, 2.5);
  for (size_t i = 0; i < kMaxMembers + 10; ++i) {
    m.Heard(Member("n" + std::to_string(i)), 1);
  }
  EXPECT_EQ(m.Live(2).size(), kMaxMembers);
  EXPECT_EQ(m.ignored(), 11u);  // "a" took one place
}

TEST(ShardOwnershipTest, AcquiresAfterTheHandoffReleasesAtOnce) {
  ShardOwnership o(4, 3);
  const std::vector<bool> two = {true, true, false, false};
  EXPECT_FALSE(o.Update(two, 10));
  EXPECT_EQ(o.owned_count(), 0u);
  EXPECT_EQ(o.pending_count(), 2u);
  EXPECT_FALSE(o.Update(two, 12.9));
  EXPECT_TRUE(o.Update(two, 13));
  EXPECT_EQ(o.owned(), two);
  // Shard 1 taken away: released at once; shard 2 given: pending.
  const std::vector<bool> moved = {true, false, true, false};
  EXPECT_TRUE(o.Update(moved, 14));
  EXPECT_EQ(o.owned(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(o.pending_count(), 1u);
  EXPECT_TRUE(o.Update(moved, 17));
  EXPECT_EQ(o.owned(), moved);
}

TEST(ShardOwnershipTest, AGiftWithdrawnDuringTheHandoffStartsOver) {
  ShardOwnership o(2, 3);
  o.Update({true, false}, 0);
  o.Update({false, false}, 2);  // withdrawn before the handoff ended
  o.Update({true, false}, 2.5);
  EXPECT_FALSE(o.Update({true, false}, 4));  // 0 + 3 no longer counts
  EXPECT_TRUE(o.Update({true, false}, 5.5));
}

TEST(ShardOwnershipTest, ReleaseAllAndAWrongSizeReleaseEverything) {
  ShardOwnership o(2, 0);
  EXPECT_TRUE(o.Update({true, true}, 0));
  EXPECT_TRUE(o.ReleaseAll());
  EXPECT_EQ(o.owned_count(), 0u);
  EXPECT_FALSE(o.ReleaseAll());
  EXPECT_TRUE(o.Update({true, true}, 1));
  EXPECT_TRUE(o.Update({true}, 2));
  EXPECT_EQ(o.owned_count(), 0u);
}

}  // namespace
}  // namespace freshd::cluster
