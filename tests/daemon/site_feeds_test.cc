// The daemon's site feeds ([site_feeds]) end to end on loopback: the test web
// with a feed per host (sim::TestWebOptions::feeds) crawled by CrawlLoop
// (real fetcher, real LevelDB); its sitemap carries no dates here, so every
// dated change signal comes from a feed. Then a hand-made site for the caps,
// the discovery of entries no page links, and [site_feeds] enabled = false.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"
#include "sim/test_web.h"
#include "sim/test_web_server.h"
#include "sim/web_model.h"
#include "tests/daemon/loop_runner.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;

// One host; pages change `rate` times a virtual day; no sitemap signals.
std::string Web(double rate) {
  return R"(
hosts = 1
pages_per_host = 12
[[class]]
name = "page"
share = 1.0
static_words = 40
[class.churn]
words = 20
rate = )" +
         std::to_string(rate) +
         R"(
[class.signals]
recall = 0.0
false_rate = 0.0
)";
}

using testing::MetricValue;

class SiteFeedsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("site_feeds_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_.store.path = (dir_ / "db").string();
    config_.budget.rate = 20;
    config_.budget.burst = 5;
    config_.sched.min_interval_s = 0.05;
    config_.sched.max_interval_s = 5;
    config_.politeness.min_delay_s = 0.02;
    config_.politeness.robots_cache_s = 1;
    config_.fetch.allow_private_networks = true;
    config_.fetch.resolve = {{"h0.test", "127.0.0.1"}};
    config_.site_feeds.poll_interval_s = 0.5;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Serves a test web with feeds of `entries` pages; false: no server.
  bool ServeWeb(double rate, uint32_t entries) {
    auto spec = sim::ParseWebSpec(Web(rate), "web.toml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    if (!spec.ok()) return false;
    sim::TestWebOptions o;
    o.day_seconds = 2;
    o.start_unix = UnixNow() - 20;  // ten virtual days of history
    o.feeds = true;
    o.feed_entries = entries;
    web_ = std::make_shared<const sim::TestWeb>(
        sim::WebModel::Build(spec.value(), 5), o);
    auto server = sim::TestWebServer::Start(web_, "127.0.0.1", 0);
    EXPECT_TRUE(server.ok());
    if (!server.ok()) return false;
    server_ = std::move(server).value();
    return true;
  }
  std::string Root() const {
    return "http://h0.test:" + std::to_string(server_->port()) + "/";
  }

  void RunUntil(asio::io_context& io, CrawlLoop& loop, double max_seconds,
                const std::function<bool()>& done) {
    testing::RunLoopUntil(io, loop, 0, max_seconds, done);
  }

  // A loop seeded with the root of a new test web (ServeWeb(rate, 6));
  // nullptr, with a test failure, when either does not start.
  std::unique_ptr<CrawlLoop> WebLoop(asio::io_context& io, double rate) {
    if (!ServeWeb(rate, 6)) return nullptr;
    return testing::SeededLoop(io, config_, Root());
  }

  std::shared_ptr<const sim::TestWeb> web_;
  std::unique_ptr<sim::TestWebServer> server_;
  std::filesystem::path dir_;
  Config config_;
};

// Pages changing ~5 times a virtual day (2 s): the feed every page links is
// found, polled every 0.5 s, and its entries' dates become change signals,
// the only dated ones (the sitemap has none); /metrics counts them.
TEST_F(SiteFeedsTest, FeedEntryDatesBecomeSignals) {
  asio::io_context io;
  auto created = WebLoop(io, 5.0);
  ASSERT_NE(created, nullptr);
  CrawlLoop& loop = *created;
  RunUntil(io, loop, 20, [&] {
    nlohmann::json f = loop.StatusJson()["site_feeds"];
    return f["polled_total"] >= 4 && f["signals_total"] >= 3;
  });
  nlohmann::json s = loop.StatusJson();
  nlohmann::json f = s["site_feeds"];
  EXPECT_EQ(f["known"], 1) << s.dump();
  EXPECT_GE(f["polled_total"].get<int>(), 4) << s.dump();
  EXPECT_GE(f["entries_total"].get<int>(), 6) << s.dump();
  EXPECT_GE(f["signals_total"].get<int>(), 3) << s.dump();
  EXPECT_EQ(f["errors_total"], 0) << s.dump();
  // Every signal taken came from the feed.
  EXPECT_EQ(s["signals_total"], f["signals_total"]) << s.dump();
  const std::string metrics = loop.MetricsText();
  EXPECT_EQ(MetricValue(metrics, "freshd_site_feeds"), 1);
  EXPECT_GE(MetricValue(metrics, "freshd_site_feed_signals_total"), 3);
  EXPECT_GE(MetricValue(metrics, "freshd_site_feed_polls_total"), 4);
}

// Pages that hardly change: the feed's ETag stays, so every poll after the
// first is a conditional GET answered 304, and no signal comes of it.
TEST_F(SiteFeedsTest, UnchangedFeedIsAConditionalGet304) {
  asio::io_context io;
  auto created = WebLoop(io, 0.001);
  ASSERT_NE(created, nullptr);
  CrawlLoop& loop = *created;
  RunUntil(io, loop, 20, [&] {
    return loop.StatusJson()["site_feeds"]["not_modified_total"] >= 3;
  });
  nlohmann::json f = loop.StatusJson()["site_feeds"];
  EXPECT_GE(f["not_modified_total"].get<int>(), 3) << f.dump();
  EXPECT_EQ(f["polled_total"].get<int>(),
            f["not_modified_total"].get<int>() + 1)
      << f.dump();
  EXPECT_EQ(f["signals_total"], 0) << f.dump();
}

// A page naming six feeds on its host and one on a host out of scope: only
// max_per_host (2) in-scope feeds are kept; an entry no page links becomes a
// page; with [site_feeds] enabled = false nothing of it happens.
TEST_F(SiteFeedsTest, CapsScopeDiscoveryAndOff) {
  for (bool enabled : {true, false}) {
    SCOPED_TRACE(enabled ? "enabled" : "disabled");
    std::filesystem::remove_all(dir_ / "db");
    asio::io_context io;
    auto root = std::make_shared<std::string>();
    HttpServerOptions site_options;
    site_options.allowed_hosts = {"s.test"};
    auto site = HttpServer::Listen(
        io, "127.0.0.1:0",
        [root](const HttpRequest& r) {
          if (r.target == "/") {
            std::string head = "<html><head>";
            for (int i = 0; i < 6; ++i) {
              head += "<link rel=alternate type=application/rss+xml href=/f" +
                      std::to_string(i) + ".xml>";
            }
            head +=
                "<link rel=alternate type=application/atom+xml "
                "href=http://other.test/feed>";
            return HttpReply{200, "text/html",
                             head + "</head><body>home</body></html>"};
          }
          if (r.target.rfind("/f", 0) == 0) {
            return HttpReply{
                200, "application/rss+xml",
                "<rss version=\"2.0\"><channel><item><link>" + *root +
                    "hidden</link><pubDate>Tue, 24 Nov 2026 08:30:00 GMT"
                    "</pubDate></item></channel></rss>"};
          }
          return HttpReply{200, "text/html", "<html><body>x</body></html>"};
        },
        site_options);
    ASSERT_TRUE(site.ok());
    *root = "http://s.test:" + std::to_string(site.value()->port()) + "/";
    Config config = config_;
    config.fetch.resolve = {{"s.test", "127.0.0.1"}};
    config.site_feeds.enabled = enabled;
    config.site_feeds.max_per_host = 2;
    auto created = CrawlLoop::Create(io, config);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    CrawlLoop& loop = *created.value();
    ASSERT_TRUE(loop.AddSeed(*root, 1).ok());
    RunUntil(io, loop, enabled ? 10 : 2, [&] {
      return loop.StatusJson()["site_feeds"]["polled_total"] >= 4;
    });
    nlohmann::json s = loop.StatusJson();
    nlohmann::json f = s["site_feeds"];
    if (enabled) {
      EXPECT_EQ(f["known"], 2) << s.dump();
      EXPECT_GE(f["polled_total"].get<int>(), 4) << s.dump();
      EXPECT_EQ(f["errors_total"], 0) << s.dump();
      EXPECT_EQ(s["pages_known"], 2) << s.dump();  // "/" and "/hidden"
    } else {
      EXPECT_EQ(f["known"], 0) << s.dump();
      EXPECT_EQ(f["polled_total"], 0) << s.dump();
      EXPECT_EQ(s["pages_known"], 1) << s.dump();
    }
  }
}

}  // namespace
}  // namespace freshd::daemon
