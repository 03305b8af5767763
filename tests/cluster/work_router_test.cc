// WorkRouter's publish queues while NATS is unreachable: bounded by items
// and by bytes, the oldest dropped and counted, a dropped item's callback
// told so, the newest kept. The router runs against a loopback port with
// no server behind it.
#include "cluster/work_router.h"

#include <gtest/gtest.h>

#include <string>

namespace freshd::cluster {
namespace {

std::unique_ptr<WorkRouter> RouterWithNoServer() {
  WorkRouterOptions options;
  options.nats_url = "nats://127.0.0.1:1";  // refused: NATS is down
  options.node = "test";
  options.shards = 4;
  // Filling a queue takes seconds under ASan; no callback may be answered
  // late while it fills.
  options.publish_wait_s = 600;
  auto router = WorkRouter::Create(
      options, [](std::vector<DeliveredWork>) {},
      [](std::vector<uint32_t>, std::vector<PageState>, bool) {});
  EXPECT_TRUE(router.ok()) << router.status().ToString();
  (*router)->Start();
  return std::move(router).value();
}

TEST(WorkRouterTest, AFullWorkQueueDropsTheOldestAndSaysSo) {
  auto router = RouterWithNoServer();
  bool first_done = false;
  Status first_status;
  router->Publish(0, {WorkItem::Kind::kSitemap, "http://h.test/0", 1, ""},
                  [&](Status s) {
                    first_done = true;
                    first_status = s;
                  });
  for (size_t i = 1; i < kPublishQueueItems; ++i) {
    router->Publish(i % 4, {WorkItem::Kind::kSitemap,
                            "http://h.test/" + std::to_string(i), 1, ""});
  }
  EXPECT_EQ(router->stats().dropped, 0u);
  EXPECT_FALSE(first_done);
  router->Publish(1, {WorkItem::Kind::kSitemap, "http://h.test/last", 1, ""});
  const WorkRouterStats stats = router->stats();
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(stats.queued, kPublishQueueItems);
  EXPECT_EQ(stats.published, 0u);
  ASSERT_TRUE(first_done);
  EXPECT_FALSE(first_status.ok());
}

TEST(WorkRouterTest, TheWorkQueueIsBoundedInBytesToo) {
  auto router = RouterWithNoServer();
  const std::string long_url = "http://h.test/" + std::string(8000, 'a');
  const size_t items = 2 * kPublishQueueBytes / long_url.size();
  for (size_t i = 0; i < items; ++i) {
    router->Publish(
        0, {WorkItem::Kind::kSitemap, long_url + std::to_string(i), 1, ""});
  }
  const WorkRouterStats stats = router->stats();
  EXPECT_GT(stats.dropped, items / 3);
  EXPECT_EQ(stats.dropped + stats.queued, items);
  EXPECT_LE(stats.queued * long_url.size(), kPublishQueueBytes);
}

TEST(WorkRouterTest, AFullPageQueueDropsTheOldest) {
  auto router = RouterWithNoServer();
  const std::string record(1000, 'r');
  const size_t items = kPageQueueBytes / record.size() + 100;
  for (size_t i = 0; i < items; ++i) {
    router->PublishPage(i % 4, i, "http://h.test/" + std::to_string(i), record);
  }
  const WorkRouterStats stats = router->stats();
  EXPECT_GT(stats.pages_dropped, 0u);
  EXPECT_EQ(stats.pages_dropped + stats.pages_queued, items);
  EXPECT_LE(stats.pages_queued * record.size(), kPageQueueBytes);
}

}  // namespace
}  // namespace freshd::cluster
