// The WebSub subscriber end to end on loopback, every part real: a site
// whose Atom feed names its hub in a Link header, a hub written here (a real
// HTTP server that takes the subscribe POST, verifies intent with a GET to
// freshd's push listener from its own thread, then POSTs signed feed
// bodies), CrawlLoop (real fetcher, real LevelDB) and its PushListener.
// Deliveries become fetches; wrong signatures, unknown callbacks, oversized
// and malformed bodies are refused or counted; a hub granting 1-second
// leases gets renewals at the configured bound, not a loop; a feed that is
// forgotten is unsubscribed; a restart keeps the subscription.

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/iso8601.h"
#include "daemon/crawl_loop.h"
#include "daemon/push_listener.h"
#include "tests/cli/free_port.h"
#include "tests/daemon/loop_runner.h"
#include "tests/daemon/websub_fixture.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

using testing::Call;
using testing::FeedSite;
using testing::Now;
using testing::TestHub;

class WebSubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("websub_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_.store.path = (dir_ / "db").string();
    config_.budget.rate = 20;
    config_.budget.burst = 5;
    config_.sched.min_interval_s = 0.05;
    config_.sched.max_interval_s = 30;
    config_.politeness.min_delay_s = 0.02;
    config_.fetch.allow_private_networks = true;
    config_.fetch.resolve = {{"s.test", "127.0.0.1"},
                             {"hub.test", "127.0.0.1"}};
    config_.site_feeds.poll_interval_s = 0.3;
    const uint16_t port = freshd::testing::FreePort();
    config_.push.listen = "127.0.0.1:" + std::to_string(port);
    config_.push.public_url = "http://127.0.0.1:" + std::to_string(port);
    config_.push.client_requests_per_minute = 100000;
    config_.push.max_body_bytes = 64 * 1024;
    config_.push.websub_poll_slowdown = 10;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A loop on `io`, seeded with `root`, its listener in *push (destroy it
  // first).
  std::unique_ptr<CrawlLoop> Loop(asio::io_context& io, const std::string& root,
                                  std::unique_ptr<PushListener>* push) {
    auto loop = CrawlLoop::Create(io, config_);
    EXPECT_TRUE(loop.ok()) << loop.status().ToString();
    if (!loop.ok()) return nullptr;
    if (!root.empty()) {
      EXPECT_TRUE(loop.value()->AddSeed(root, 1).ok());
    }
    EXPECT_NE(loop.value()->websub(), nullptr);
    auto listening = PushListener::Start(
        io, loop.value()->indexnow(),
        PushListener::OptionsFromConfig(config_.push), loop.value()->websub());
    EXPECT_TRUE(listening.ok()) << listening.status().ToString();
    if (!listening.ok()) return nullptr;
    *push = std::move(listening).value();
    return std::move(loop).value();
  }
  uint16_t PushPort() const {
    return static_cast<uint16_t>(std::stoi(
        config_.push.listen.substr(config_.push.listen.rfind(':') + 1)));
  }
  static nlohmann::json WebSub(CrawlLoop& loop) {
    return loop.websub()->Json();  // atomics: any thread
  }
  // Waits (another thread) until `done()`, at most `seconds`.
  static bool WaitFor(double seconds, const std::function<bool()>& done) {
    const double until = Now() + seconds;
    while (Now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }

  std::filesystem::path dir_;
  Config config_;
};

// Subscribed through the hub named in the feed's Link header; deliveries
// signed with the secret become fetches of their entries; a wrong or
// missing signature is ignored and counted; unknown callbacks, oversized
// and malformed bodies are refused or counted; while the subscription is
// active the feed is polled 10 times less often.
TEST_F(WebSubTest, SubscribesAndSignedDeliveriesBecomeFetches) {
  asio::io_context io;
  TestHub hub(io);
  FeedSite site(io, hub.Url());
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, site.root(), &push);
  ASSERT_NE(loop, nullptr);
  std::atomic<bool> done{false};
  std::vector<int> codes;
  int polls_while_pushed = -1;
  double pushed_window = 0;
  std::thread driver([&] {
    if (!WaitFor(20, [&] { return WebSub(*loop)["active"] == 1; })) {
      done = true;
      return;
    }
    const int polls_at_start = site.Gets("/feed.xml");
    const double start = Now();
    const std::string secret = hub.Secret();
    // Dates have whole seconds: a second on, the date is after /a's fetch
    // (an older one would be a stale signal).
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const std::string fresh = FormatIso8601Utc(static_cast<int64_t>(Now()));
    // A new page, and a newer date for the known page /a: a signal.
    codes.push_back(hub.Publish(site.Feed({"new-good", "a"}, fresh), secret));
    codes.push_back(hub.Publish(site.Feed({"evil-bad"}, fresh), "wrong"));
    codes.push_back(hub.Publish(site.Feed({"evil-unsigned"}, fresh), ""));
    codes.push_back(hub.Publish("this is not a feed <<<", secret));
    codes.push_back(hub.Publish(std::string(100 * 1024, 'x'), secret));
    // Unknown and malformed callback ids.
    codes.push_back(Call(PushPort(), http::verb::post,
                         "/websub/" + std::string(32, '0'), "x")
                        .status);
    codes.push_back(Call(PushPort(), http::verb::get,
                         "/websub/../status?hub.mode=subscribe&hub.challenge=x")
                        .status);
    WaitFor(10, [&] { return site.Gets("/new-good") > 0; });
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    polls_while_pushed = site.Gets("/feed.xml") - polls_at_start;
    pushed_window = Now() - start;
    done = true;
  });
  testing::RunLoopUntil(io, *loop, 0, 40, [&] { return done.load(); });
  driver.join();
  nlohmann::json w = loop->StatusJson()["websub"];
  ASSERT_EQ(codes.size(), 7u)
      << w.dump() << loop->StatusJson()["site_feeds"].dump() << " feed polls "
      << site.Gets("/feed.xml") << " root " << site.Gets("/")
      << " hub requests " << hub.requests().size();
  EXPECT_EQ(codes[0], 202);
  EXPECT_EQ(codes[1], 202);  // wrong signature: acknowledged, ignored
  EXPECT_EQ(codes[2], 202);  // none: the same
  EXPECT_EQ(codes[3], 202);  // signed, not a feed: taken, fails to parse
  EXPECT_EQ(codes[4], 413);  // over [push] max_body_bytes
  EXPECT_EQ(codes[5], 410);  // unknown callback
  EXPECT_EQ(codes[6], 404);  // not a callback id
  EXPECT_EQ(hub.Count("subscribe"), 1);
  EXPECT_EQ(hub.verified, 1);
  const std::vector<TestHub::Request> reqs = hub.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs[0].topic, site.root() + "feed.xml");  // rel="self"
  EXPECT_EQ(reqs[0].secret.size(), 64u);
  EXPECT_EQ(reqs[0].callback.rfind(config_.push.public_url + "/websub/", 0),
            0u);
  EXPECT_GE(site.Gets("/new-good"), 1);  // the signal's fetch
  EXPECT_EQ(site.Gets("/evil-bad"), 0);
  EXPECT_EQ(site.Gets("/evil-unsigned"), 0);
  EXPECT_EQ(w["active"], 1) << w.dump();
  EXPECT_EQ(w["deliveries_accepted_total"], 2) << w.dump();
  EXPECT_EQ(w["signature_failures_total"], 2) << w.dump();
  EXPECT_GE(w["unknown_callbacks_total"].get<int>(), 2) << w.dump();
  EXPECT_GE(loop->StatusJson()["site_feeds"]["errors_total"].get<int>(), 1);
  // /a's newer date was considered as a signal (its poll's date once, the
  // delivery's once); /a was fetched a moment before, so the scheduler may
  // count it stale rather than take it.
  const nlohmann::json st = loop->StatusJson();
  EXPECT_GE(
      st["signals_total"].get<int>() + st["signals_stale_total"].get<int>(), 2)
      << st["signal_sources"].dump();
  // Polled every 0.3 s x 10 while pushed: at most a poll or two in the
  // window (unslowed it would be pushed_window / 0.3).
  EXPECT_LE(polls_while_pushed, 1 + static_cast<int>(pushed_window / 3.0))
      << pushed_window;
  const std::string metrics = loop->MetricsText();
  EXPECT_EQ(
      testing::MetricValue(metrics, "freshd_websub_deliveries_accepted_total"),
      2);
  EXPECT_EQ(
      testing::MetricValue(metrics, "freshd_websub_signature_failures_total"),
      2);
  push.reset();
}

// A hub granting 1-second leases: renewed once per
// websub_min_renew_interval (1 s here), not in a loop.
TEST_F(WebSubTest, ShortLeasesAreRenewedWithinTheBound) {
  config_.push.websub_min_renew_interval_s = 1;
  asio::io_context io;
  TestHub hub(io);
  hub.lease_granted = 1;
  FeedSite site(io, hub.Url());
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, site.root(), &push);
  ASSERT_NE(loop, nullptr);
  double first = 0;
  testing::RunLoopUntil(io, *loop, 0, 30, [&] {
    if (first == 0 && hub.verified >= 1) first = Now();
    return first > 0 && Now() - first >= 6;
  });
  const int subscribes = hub.Count("subscribe");
  // About one a second over 6 s (the first included); never a storm.
  EXPECT_GE(subscribes, 4);
  EXPECT_LE(subscribes, 9);
  nlohmann::json w = loop->StatusJson()["websub"];
  EXPECT_GE(
      w["renewals_total"].get<int>() + w["verifications_total"].get<int>(), 4)
      << w.dump();
  EXPECT_EQ(w["subscriptions"], 1) << w.dump();
  push.reset();
}

// The feed fails until it is forgotten: freshd unsubscribes, the hub
// verifies it, the subscription is gone.
TEST_F(WebSubTest, ForgottenFeedIsUnsubscribed) {
  config_.push.websub_poll_slowdown = 1;
  config_.site_feeds.poll_interval_s = 0.2;
  asio::io_context io;
  TestHub hub(io);
  FeedSite site(io, hub.Url());
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, site.root(), &push);
  ASSERT_NE(loop, nullptr);
  testing::RunLoopUntil(io, *loop, 0, 30, [&] {
    if (hub.verified >= 1) site.feed_fails = true;
    return hub.unsubscribed >= 1 && WebSub(*loop)["subscriptions"] == 0;
  });
  EXPECT_EQ(hub.Count("unsubscribe"), 1)
      << loop->StatusJson()["site_feeds"].dump() << WebSub(*loop).dump()
      << " feed polls " << site.Gets("/feed.xml");
  EXPECT_EQ(hub.unsubscribed, 1);
  std::vector<TestHub::Request> r = hub.requests();
  ASSERT_GE(r.size(), 2u);
  EXPECT_EQ(r.back().callback, r.front().callback);
  EXPECT_EQ(WebSub(*loop)["subscriptions"], 0);
  push.reset();
}

// Stored: after a restart the subscription is there before the listener
// serves, and the hub's deliveries to the same callback still count.
TEST_F(WebSubTest, RestartKeepsTheSubscription) {
  asio::io_context io;
  TestHub hub(io);
  FeedSite site(io, hub.Url());
  {
    std::unique_ptr<PushListener> push;
    auto loop = Loop(io, site.root(), &push);
    ASSERT_NE(loop, nullptr);
    testing::RunLoopUntil(io, *loop, 0, 20,
                          [&] { return WebSub(*loop)["active"] == 1; });
    ASSERT_EQ(WebSub(*loop)["active"], 1);
    push.reset();
  }
  std::unique_ptr<PushListener> push;
  config_.site_feeds.enabled = false;  // nothing rediscovered: restored only
  auto loop = Loop(io, "", &push);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(WebSub(*loop)["active"], 1) << WebSub(*loop).dump();
  std::atomic<int> code{0};
  std::thread driver([&] {
    code = hub.Publish(site.Feed({"after-restart"},
                                 FormatIso8601Utc(static_cast<int64_t>(Now()))),
                       hub.Secret());
  });
  testing::RunLoopUntil(io, *loop, 0, 20,
                        [&] { return site.Gets("/after-restart") > 0; });
  driver.join();
  EXPECT_EQ(code, 202);
  EXPECT_GE(site.Gets("/after-restart"), 1);
  EXPECT_EQ(WebSub(*loop)["deliveries_accepted_total"], 1);
  EXPECT_EQ(hub.Count("subscribe"), 1);  // not subscribed again
  push.reset();
}

}  // namespace
}  // namespace freshd::daemon
