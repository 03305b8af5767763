// OperatorControls alone: parsing of POST /control bodies (bad actions and
// patterns refused with RE2's error), the transitions, host and pattern
// matching, the bounds, the per-host-id gate cache and what a release
// reopens, the store hand-off (TakeBatch puts and deletes) and Restore.

#include "daemon/operator_controls.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace freshd::daemon {
namespace {

using store::ControlRecord;

OperatorControls::Request Req(OperatorControls& c, const std::string& body) {
  auto r = c.Parse(body);
  EXPECT_TRUE(r.ok()) << body << ": " << r.status().ToString();
  return r.ok() ? *r : OperatorControls::Request{};
}

TEST(OperatorControlsTest, ParseRefusesBadBodiesActionsAndPatterns) {
  OperatorControls c;
  EXPECT_FALSE(c.Parse("not json").ok());
  EXPECT_FALSE(c.Parse("[]").ok());
  EXPECT_FALSE(c.Parse(R"({"host": "a.test"})").ok());
  auto unknown = c.Parse(R"({"action": "delete", "host": "a.test"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown action"),
            std::string::npos);
  EXPECT_FALSE(c.Parse(R"({"action": "pause"})").ok());
  EXPECT_FALSE(
      c.Parse(R"({"action": "pause", "host": "a.test", "pattern": "x"})").ok());
  EXPECT_FALSE(c.Parse(R"({"action": "pause", "host": "a b"})").ok());
  EXPECT_FALSE(c.Parse(R"({"action": "pause", "host": 7})").ok());
  auto bad = c.Parse(R"({"action": "pause", "pattern": "a(b"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("missing )"), std::string::npos)
      << bad.status().message();
  const std::string too_long(2000, 'a');
  EXPECT_FALSE(
      c.Parse(R"({"action": "pause", "pattern": ")" + too_long + "\"}").ok());
  // A pattern over its RE2 memory budget is refused by RE2 itself.
  OperatorControls small(OperatorControls::Limits{.pattern_max_mem = 4096});
  auto big = small.Parse(R"({"action": "pause", "pattern": "(\\w+){1000}"})");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("bad pattern"), std::string::npos);
  auto host = c.Parse(R"({"action": "block", "host": "A.Test:8080"})");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->target, "a.test:8080");
  EXPECT_EQ(host->action, OperatorControls::Action::kBlock);
}

TEST(OperatorControlsTest, HostControlsMatchNameOrAuthority) {
  OperatorControls c;
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "pause", "host": "a.test"})"), 1).ok());
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "block", "host": "b.test:81"})"), 2).ok());
  EXPECT_TRUE(c.Held("http://a.test/x"));
  EXPECT_TRUE(c.Held("http://a.test:8080/x"));  // a name: any port
  EXPECT_FALSE(c.Blocked("http://a.test/x"));   // paused only
  EXPECT_TRUE(c.Blocked("http://b.test:81/"));
  EXPECT_FALSE(c.Held("http://b.test:82/"));  // an authority: that port
  EXPECT_FALSE(c.Held("http://c.test/"));
  EXPECT_TRUE(c.Admit("http://a.test/new"));  // paused: still added
  EXPECT_FALSE(c.Admit("http://b.test:81/new"));
  EXPECT_EQ(c.turned_away_total(), 1u);
  // The gate's cache per host id.
  EXPECT_TRUE(c.HostHeld(0, "a.test:8080"));
  EXPECT_FALSE(c.HostHeld(1, "c.test"));
  EXPECT_TRUE(c.HostHeld(2, "b.test:81"));
  EXPECT_TRUE(c.TakeHostsToReopen().empty());
  // Resuming a: the hosts held before are handed back to reopen.
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "resume", "host": "a.test"})"), 3).ok());
  std::vector<sched::HostId> reopen = c.TakeHostsToReopen();
  EXPECT_EQ(reopen, (std::vector<sched::HostId>{0, 2}));
  EXPECT_FALSE(c.HostHeld(0, "a.test:8080"));
  EXPECT_TRUE(c.HostHeld(2, "b.test:81"));
}

TEST(OperatorControlsTest, TransitionsAndBounds) {
  OperatorControls c(OperatorControls::Limits{.max_controls = 2});
  auto pause = Req(c, R"({"action": "pause", "host": "a.test"})");
  ASSERT_TRUE(c.Apply(pause, 1).ok());
  // Block replaces the pause; pause and resume of a block are refused.
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "block", "host": "a.test"})"), 2).ok());
  EXPECT_EQ(c.Apply(pause, 3).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(c.Apply(Req(c, R"({"action": "resume", "host": "a.test"})"), 3)
                .status()
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(c.Apply(Req(c, R"({"action": "unblock", "host": "x.test"})"), 3)
                .status()
                .code(),
            Status::Code::kNotFound);
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "pause", "pattern": "/tmp/"})"), 4).ok());
  auto third = c.Apply(Req(c, R"({"action": "pause", "host": "c.test"})"), 5);
  EXPECT_EQ(third.status().code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(c.size(), 2u);
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "unblock", "host": "a.test"})"), 6).ok());
  EXPECT_EQ(c.size(), 1u);
  EXPECT_FALSE(c.Held("http://a.test/"));
}

TEST(OperatorControlsTest, PatternsHoldAndBlockPages) {
  OperatorControls c;
  EXPECT_FALSE(c.has_patterns());
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "pause", "pattern": "/p/[0-4]$"})"), 1)
          .ok());
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "block", "pattern": "\\?session="})"), 2)
          .ok());
  EXPECT_TRUE(c.has_patterns());
  EXPECT_TRUE(c.PatternHeld("http://a.test/p/3"));
  EXPECT_FALSE(c.PatternHeld("http://a.test/p/7"));
  EXPECT_TRUE(c.PatternHeld("http://a.test/x?session=1"));
  EXPECT_FALSE(c.Blocked("http://a.test/p/3"));
  EXPECT_TRUE(c.Blocked("http://a.test/x?session=1"));
  EXPECT_FALSE(c.Admit("http://b.test/y?session=2"));
  EXPECT_TRUE(c.Admit("http://b.test/p/3"));
  const nlohmann::json j = c.Json(1);
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["patterns_paused"], 1);
  EXPECT_EQ(j["patterns_blocked"], 1);
  EXPECT_EQ(j["turned_away_total"], 1);
  EXPECT_EQ(j["list"].size(), 1u);
  EXPECT_TRUE(j["list_truncated"].get<bool>());
}

TEST(OperatorControlsTest, ChangesGoToTheStoreAndComeBack) {
  OperatorControls c;
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "block", "host": "a.test"})"), 100).ok());
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "pause", "pattern": "/p/"})"), 101).ok());
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "pause", "host": "gone.test"})"), 102).ok());
  ASSERT_TRUE(
      c.Apply(Req(c, R"({"action": "resume", "host": "gone.test"})"), 103)
          .ok());
  EXPECT_TRUE(c.marked());
  store::StoreBatch batch;
  c.TakeBatch(&batch);
  EXPECT_FALSE(c.marked());
  EXPECT_EQ(batch.operations(), 3u);  // two puts, one delete

  // What a store would hand back at start.
  std::vector<ControlRecord> stored = {
      {ControlRecord::kHost, "a.test", ControlRecord::kBlock, 100},
      {ControlRecord::kPattern, "/p/", ControlRecord::kPause, 101},
      {ControlRecord::kPattern, "a(b", ControlRecord::kPause, 102}};
  OperatorControls restored;
  std::vector<std::string> skipped;
  restored.Restore(stored, &skipped);
  EXPECT_EQ(skipped, std::vector<std::string>{"a(b"});
  EXPECT_EQ(restored.size(), 2u);
  EXPECT_TRUE(restored.Blocked("http://a.test/"));
  EXPECT_TRUE(restored.PatternHeld("http://b.test/p/1"));
  EXPECT_FALSE(restored.marked());  // nothing new to write
}

TEST(ControlRecordTest, ValueRoundTripsAndRejectsGarbage) {
  ControlRecord r{ControlRecord::kPattern, "x", ControlRecord::kBlock,
                  1764400000.25};
  ControlRecord back;
  ASSERT_TRUE(
      store::DecodeControlValue(store::EncodeControlValue(r), &back).ok());
  EXPECT_EQ(back.action, ControlRecord::kBlock);
  EXPECT_EQ(back.since_unix, 1764400000.25);
  EXPECT_FALSE(store::DecodeControlValue("", &back).ok());
  std::string wrong = store::EncodeControlValue(r);
  wrong[1] = 9;  // no such action
  EXPECT_FALSE(store::DecodeControlValue(wrong, &back).ok());
}

}  // namespace
}  // namespace freshd::daemon
