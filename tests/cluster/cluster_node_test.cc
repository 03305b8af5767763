// cluster/cluster_node.h against a real nats-server on loopback: nodes find
// each other through the member bucket, partition the shards exactly, hand
// a leaving node's shards over without two owners at any moment, own
// nothing without NATS, and refuse to share a name.

#include "cluster/cluster_node.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/nats_server.h"

namespace freshd::cluster {
namespace {

constexpr uint32_t kShards = 64;

class ClusterNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("cluster_node_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    server_ = std::make_unique<testing::NatsServer>(dir_);
    ASSERT_TRUE(server_->ok());
  }
  void TearDown() override {
    nodes_.clear();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  ClusterNode* AddNode(const std::string& name, std::string url = "") {
    ClusterNodeOptions o;
    o.nats_url = url.empty() ? server_->url() : url;
    o.node = name;
    o.shards = kShards;
    o.heartbeat_s = 0.2;
    o.ttl_s = 1;
    auto node = ClusterNode::Create(o, nullptr);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    if (!node.ok()) return nullptr;
    nodes_.push_back(std::move(node).value());
    nodes_.back()->Start();
    return nodes_.back().get();
  }

  // Polls every 20 ms until `ok` holds or `timeout_s` passes; each poll
  // also checks that no shard has two owners among `nodes`.
  bool Until(const std::vector<ClusterNode*>& nodes,
             const std::function<bool(const std::vector<ClusterView>&)>& ok,
             double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(int(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<ClusterView> views;
      for (ClusterNode* n : nodes) views.push_back(n->view());
      for (uint32_t s = 0; s < kShards; ++s) {
        int owners = 0;
        for (const auto& v : views) owners += (*v.owned)[s] ? 1 : 0;
        EXPECT_LE(owners, 1) << "shard " << s << " has two owners";
        if (owners > 1) return false;
      }
      if (ok(views)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  static bool Partitioned(const std::vector<ClusterView>& views,
                          size_t members) {
    size_t total = 0;
    for (const auto& v : views) {
      if (v.members.size() != members || v.shards_pending != 0) return false;
      total += v.shards_owned;
    }
    return total == kShards;
  }

  std::filesystem::path dir_;
  std::unique_ptr<testing::NatsServer> server_;
  std::vector<std::unique_ptr<ClusterNode>> nodes_;
};

TEST_F(ClusterNodeTest, ThreeNodesPartitionTheShardsExactly) {
  std::vector<ClusterNode*> three = {AddNode("a"), AddNode("b"), AddNode("c")};
  ASSERT_TRUE(Until(
      three, [](auto& v) { return Partitioned(v, 3); }, 15));
  for (ClusterNode* n : three) {
    ClusterView v = n->view();
    EXPECT_TRUE(v.connected);
    EXPECT_TRUE(v.problem.empty()) << v.problem;
    EXPECT_GT(v.shards_owned, 0u);
  }
}

TEST_F(ClusterNodeTest, ALeavingNodesShardsMoveWithNoMomentOfTwoOwners) {
  ClusterNode* a = AddNode("a");
  ClusterNode* b = AddNode("b");
  ClusterNode* c = AddNode("c");
  ASSERT_TRUE(Until(
      {a, b, c}, [](auto& v) { return Partitioned(v, 3); }, 15));
  c->Stop();  // deletes its entry
  const auto stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(Until(
      {a, b}, [](auto& v) { return Partitioned(v, 2); }, 10));
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped)
          .count();
  // The handoff waits a ttl (1 s) after the delete is seen.
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 1 + 3.0);

  // A node joining takes its share back: released by the others first.
  ClusterNode* d = AddNode("d");
  ASSERT_TRUE(Until(
      {a, b, d}, [](auto& v) { return Partitioned(v, 3); }, 15));
}

TEST_F(ClusterNodeTest, WithoutNatsANodeOwnsNothing) {
  ClusterNode* lone = AddNode(
      "lone", "nats://127.0.0.1:" + std::to_string(testing::FreePort()));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ClusterView v = lone->view();
  EXPECT_FALSE(v.connected);
  EXPECT_EQ(v.shards_owned, 0u);
  EXPECT_FALSE(v.problem.empty());
}

TEST_F(ClusterNodeTest, TwoProcessesOfOneNameOwnNothing) {
  ClusterNode* first = AddNode("twin");
  ClusterNode* second = AddNode("twin");
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_EQ(first->view().shards_owned, 0u);
  EXPECT_EQ(second->view().shards_owned, 0u);
  EXPECT_NE(first->view().problem.find("name"), std::string::npos)
      << first->view().problem;
}

TEST(MemberCodingTest, RoundTripsAndRejectsWhatIsNotAHeartbeat) {
  MemberInfo in{"n1", 256, 3.5, 2.0};
  MemberInfo out;
  uint64_t instance = 0;
  ASSERT_TRUE(DecodeMember("n1", EncodeMember(in, 42), &out, &instance));
  EXPECT_EQ(out, in);
  EXPECT_EQ(instance, 42u);
  in.lambda = -1;  // unknown: null on the wire
  ASSERT_TRUE(DecodeMember("n1", EncodeMember(in, 1), &out, &instance));
  EXPECT_EQ(out.lambda, -1);
  EXPECT_FALSE(DecodeMember("n1", "not json", &out, &instance));
  EXPECT_FALSE(DecodeMember("n1", "{\"shards\": -1}", &out, &instance));
  EXPECT_FALSE(DecodeMember("n1", std::string(2000, ' '), &out, &instance));
}

TEST(MemberCodingTest, CarriesTheNodesSummary) {
  MemberInfo in{"n1", 256, 3.5, 2.0};
  in.summary = R"({"changes":7,"pages_known":12})";
  MemberInfo out;
  uint64_t instance = 0;
  ASSERT_TRUE(DecodeMember("n1", EncodeMember(in, 42), &out, &instance));
  EXPECT_EQ(out, in);
  in.summary = "not json";  // not announced
  ASSERT_TRUE(DecodeMember("n1", EncodeMember(in, 42), &out, &instance));
  EXPECT_EQ(out.summary, "");
}

}  // namespace
}  // namespace freshd::cluster
