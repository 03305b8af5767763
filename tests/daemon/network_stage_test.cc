// NetworkStage alone (no loop): fetch requests reach the network thread in
// batches — the requests made before it runs start as one batch, in the
// order made — and after Stop none is started or reported.

#include "daemon/network_stage.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fetch/test_server.h"

namespace freshd::daemon {
namespace {

using fetch::testing::Reply;
using fetch::testing::ServerRequest;
using fetch::testing::TestServer;

Config LoopbackConfig() {
  Config c;
  c.fetch.allow_private_networks = true;
  c.politeness.min_delay_s = 0;
  c.politeness.max_in_flight_per_host = 1;  // one at a time: order shows
  return c;
}

TEST(NetworkStageTest, RequestsMadeTogetherStartAsOneBatchInOrder) {
  TestServer server([](const ServerRequest& r) {
    if (r.target == "/robots.txt") return Reply::Status(404);
    return Reply::Html("<p>" + r.target + "</p>");
  });
  auto created = NetworkStage::Create(LoopbackConfig());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<NetworkStage> stage = std::move(created).value();

  constexpr int kPages = 12;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> reported;  // guarded by mu
  const std::string base =
      "http://127.0.0.1:" + std::to_string(server.port()) + "/p";
  for (int i = 0; i < kPages; ++i) {
    fetch::CrawlRequest req;
    req.url = base + std::to_string(i);
    stage->Fetch(std::move(req), [&](fetch::FetchResult r, double) {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(r.status, 200) << r.url << ": " << r.detail;
      reported.push_back(r.url);
      cv.notify_all();
    });
  }
  // Made before the network thread runs: one hand-off for all of them.
  EXPECT_EQ(stage->request_batches(), 1u);
  EXPECT_EQ(stage->pending(), static_cast<uint64_t>(kPages));
  stage->Start();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20),
                            [&] { return reported.size() == kPages; }));
  }
  EXPECT_EQ(stage->pending(), 0u);
  // The server saw them in the order they were made (one in flight).
  std::vector<std::string> pages;
  for (const ServerRequest& r : server.requests()) {
    if (r.target != "/robots.txt") pages.push_back(r.target);
  }
  ASSERT_EQ(pages.size(), static_cast<size_t>(kPages));
  for (int i = 0; i < kPages; ++i) {
    EXPECT_EQ(pages[i], "/p" + std::to_string(i));
  }

  // A request made while the thread idles is a batch of its own.
  fetch::CrawlRequest one;
  one.url = base + "-late";
  std::promise<void> late;
  stage->Fetch(std::move(one),
               [&](fetch::FetchResult, double) { late.set_value(); });
  ASSERT_EQ(late.get_future().wait_for(std::chrono::seconds(20)),
            std::future_status::ready);
  EXPECT_EQ(stage->request_batches(), 2u);

  // After Stop: nothing starts, nothing is reported.
  stage->Stop();
  bool called = false;
  fetch::CrawlRequest after;
  after.url = base + "-after";
  stage->Fetch(std::move(after),
               [&](fetch::FetchResult, double) { called = true; });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(called);
  EXPECT_EQ(stage->request_batches(), 2u);
}

}  // namespace
}  // namespace freshd::daemon
