// The status endpoint while the store is recovered: RouteRecoveringRequest
// driven directly, and StatusService::StartRecovering on a real loopback
// socket (/status says "recovering" with the progress as it moves, other
// routes and /changes 503).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "daemon/recovery.h"
#include "daemon/status_routes.h"
#include "daemon/status_service.h"
#include "tests/cli/run_command.h"

namespace freshd::daemon {
namespace {

HttpRequest Request(const std::string& method, const std::string& target) {
  HttpRequest r;
  r.method = method;
  r.target = target;
  return r;
}

TEST(StatusRecoveringTest, StatusAnswersProgressOtherRoutesAreNotReady) {
  RecoveryProgress progress;
  progress.started_unix = 1000;
  progress.expected_pages = 500;
  progress.hosts_restored = 3;
  progress.pages_restored = 120;
  HttpReply r =
      RouteRecoveringRequest(progress, Request("GET", "/status"), 1002.5);
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["state"], "recovering");
  EXPECT_EQ(j["recovery"]["pages_restored"], 120);
  EXPECT_EQ(j["recovery"]["pages_expected"], 500);
  EXPECT_EQ(j["recovery"]["hosts_restored"], 3);
  EXPECT_DOUBLE_EQ(j["recovery"]["elapsed_s"].get<double>(), 2.5);

  progress.pages_restored = 480;
  j = nlohmann::json::parse(
      RouteRecoveringRequest(progress, Request("GET", "/status?x=1"), 1003)
          .body);
  EXPECT_EQ(j["recovery"]["pages_restored"], 480);

  EXPECT_EQ(
      RouteRecoveringRequest(progress, Request("POST", "/status"), 1003).status,
      405);
  for (const char* path : {"/metrics", "/healthz", "/page?url=x", "/", "/x"}) {
    HttpReply n = RouteRecoveringRequest(progress, Request("GET", path), 1003);
    EXPECT_EQ(n.status, 503) << path;
    nlohmann::json e = nlohmann::json::parse(n.body);
    EXPECT_EQ(e["state"], "recovering") << path;
    EXPECT_NE(e.value("error", "").find("recovering"), std::string::npos);
    ASSERT_EQ(n.headers.size(), 1u);
    EXPECT_EQ(n.headers[0].first, "Retry-After");
  }
  EXPECT_EQ(
      RouteRecoveringRequest(progress, Request("POST", "/signal"), 1003).status,
      503);
}

// After the store, the start adds its seeds before the loop serves: still
// "recovering", phase "seeds" with the lines read of the file's count.
TEST(StatusRecoveringTest, SeedsAddedAfterTheStoreAreAPhaseOfTheStart) {
  RecoveryProgress progress;
  progress.started_unix = 1000;
  progress.expected_pages = 500;
  progress.pages_restored = 500;
  nlohmann::json j = nlohmann::json::parse(
      RouteRecoveringRequest(progress, Request("GET", "/status"), 1001).body);
  EXPECT_EQ(j["state"], "recovering");
  EXPECT_EQ(j["recovery"]["phase"], "store");
  EXPECT_EQ(j["recovery"]["seeds_read"], 0);
  EXPECT_EQ(j["recovery"]["seeds_total"], 0);
  progress.seeds_total = 2000;
  progress.adding_seeds = true;
  progress.seeds_read = 750;
  j = nlohmann::json::parse(
      RouteRecoveringRequest(progress, Request("GET", "/status"), 1002).body);
  EXPECT_EQ(j["state"], "recovering");
  EXPECT_EQ(j["recovery"]["phase"], "seeds");
  EXPECT_EQ(j["recovery"]["seeds_read"], 750);
  EXPECT_EQ(j["recovery"]["seeds_total"], 2000);
  EXPECT_EQ(j["recovery"]["pages_restored"], 500);
  EXPECT_EQ(
      RouteRecoveringRequest(progress, Request("GET", "/metrics"), 1002).status,
      503);
}

TEST(StatusRecoveringTest, ServiceAnswersFromProgressOnLoopback) {
  RecoveryProgress progress;
  progress.started_unix = 1;  // long ago: elapsed is large, never negative
  progress.expected_pages = 1000;
  auto service = StatusService::StartRecovering(progress, "127.0.0.1:0");
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  const uint16_t port = (*service)->port();

  auto [code, body] = testing::HttpGetStatus(port, "/status");
  ASSERT_EQ(code, 200) << body;
  nlohmann::json j = nlohmann::json::parse(body);
  EXPECT_EQ(j["state"], "recovering");
  EXPECT_EQ(j["recovery"]["pages_restored"], 0);
  EXPECT_GT(j["recovery"]["elapsed_s"].get<double>(), 0);

  progress.pages_restored.store(640);  // as the rebuilding thread does
  std::tie(code, body) = testing::HttpGetStatus(port, "/status");
  ASSERT_EQ(code, 200) << body;
  EXPECT_EQ(nlohmann::json::parse(body)["recovery"]["pages_restored"], 640);

  for (const char* path : {"/metrics", "/changes?since=0", "/hosts"}) {
    std::tie(code, body) = testing::HttpGetStatus(port, path);
    EXPECT_EQ(code, 503) << path << " " << body;
  }
}

}  // namespace
}  // namespace freshd::daemon
