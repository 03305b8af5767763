// Push signals in a cluster, every part real: a nats-server with JetStream
// on loopback (tests/cluster/nats_server.h), two CrawlLoops as nodes "a"
// and "b" (each on its own thread, with its store, push listener and
// callback URL), and the hub and sites of tests/daemon/websub_fixture.h.
//   * A WebSub subscription moves with its feed's shard: "a", alone, owns
//     the feed's host and subscribes; "b" joins and the rendezvous gives it
//     the host, so "a" unsubscribes (the hub verifies it at a's callback)
//     and "b", once it polls the feed, subscribes with its own callback and
//     secret; a signed delivery to b's callback makes b fetch the new
//     entry, one to a's old callback is answered 410.
//   * An IndexNow ping to "a" for a host "b" owns is routed to "b" and
//     counted there under `indexnow`, not `signal`.
// Short heartbeat and ttl (0.2 s, 1 s), as the other cluster tests; every
// wait is bounded, and the nodes stop themselves.

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/iso8601.h"
#include "cluster/shard_map.h"
#include "daemon/crawl_loop.h"
#include "daemon/push_listener.h"
#include "tests/cli/free_port.h"
#include "tests/cluster/nats_server.h"
#include "tests/daemon/websub_fixture.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

using testing::FeedSite;
using testing::Now;
using testing::TestHub;

constexpr int kShards = 16;
constexpr char kIndexNowKey[] = "0123456789abcdef";

// Waits (this thread) until `done()`, at most `seconds`.
bool WaitFor(double seconds, const std::function<bool()>& done) {
  const double until = Now() + seconds;
  while (Now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// One node: a CrawlLoop and its push listener on an io_context run by the
// node's own thread from Start to Stop.
class Node {
 public:
  explicit Node(Config config) : config_(std::move(config)) {}
  ~Node() { Stop(); }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Creates the loop (seeded with `seeds`) and its listener, then runs
  // them; false (and a test failure) when either does not start.
  bool Start(const std::vector<std::string>& seeds) {
    auto loop = CrawlLoop::Create(io_, config_);
    EXPECT_TRUE(loop.ok()) << loop.status().ToString();
    if (!loop.ok()) return false;
    loop_ = std::move(loop).value();
    for (const std::string& seed : seeds) {
      Status s = loop_->AddSeed(seed, 1);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    auto push = PushListener::Start(
        io_, loop_->indexnow(), PushListener::OptionsFromConfig(config_.push),
        loop_->websub());
    EXPECT_TRUE(push.ok()) << push.status().ToString();
    if (!push.ok()) return false;
    push_ = std::move(push).value();
    thread_ = std::thread([this] {
      loop_->Start();
      io_.run();
    });
    return true;
  }
  // Runs `f` on the node's thread; its result (`fallback` after 10 s).
  template <typename T>
  T On(std::function<T()> f, T fallback = T()) {
    auto result = std::make_shared<std::promise<T>>();
    std::future<T> future = result->get_future();
    asio::post(io_, [result, f = std::move(f)] { result->set_value(f()); });
    if (future.wait_for(std::chrono::seconds(10)) !=
        std::future_status::ready) {
      ADD_FAILURE() << config_.cluster.node << " did not answer";
      return fallback;
    }
    return future.get();
  }
  nlohmann::json StatusJson() {
    return On<nlohmann::json>([this] { return loop_->StatusJson(); });
  }
  nlohmann::json WebSub() { return loop_->websub()->Json(); }  // atomics
  bool Knows(const std::string& url) {
    return On<bool>([this, url] { return loop_->PageJson(url).ok(); });
  }
  // /page's view of `url` (a string saying why when there is none).
  nlohmann::json Page(const std::string& url) {
    return On<nlohmann::json>([this, url] {
      auto page = loop_->PageJson(url);
      return page.ok() ? page.value()
                       : nlohmann::json(page.status().ToString());
    });
  }
  // Stops the loop (leaving the cluster) and the thread. Idempotent.
  void Stop() {
    if (thread_.joinable()) {
      asio::post(io_, [this] {
        loop_->Stop(5, [this](freshd::Status s) {
          EXPECT_TRUE(s.ok()) << s.ToString();
          io_.stop();
        });
      });
      thread_.join();
    }
    push_.reset();
    loop_.reset();
  }
  const Config& config() const { return config_; }

 private:
  const Config config_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ =
      asio::make_work_guard(io_);
  std::unique_ptr<CrawlLoop> loop_;
  std::unique_ptr<PushListener> push_;
  std::thread thread_;
};

class PushClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("push_cluster_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    nats_ = std::make_unique<freshd::testing::NatsServer>(dir_);
    ASSERT_TRUE(nats_->ok());
  }
  // The nodes first, then the servers' thread, then the servers.
  void TearDown() override {
    a_.reset();
    b_.reset();
    web_io_.stop();
    if (web_thread_.joinable()) web_thread_.join();
    hub_.reset();
    site_.reset();
    key_site_.reset();
    nats_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Runs the hub's and the sites' servers (made before) on their thread.
  void StartWeb() {
    web_thread_ = std::thread([this] { web_io_.run(); });
  }

  // Node `name`'s config: its store, push listener and callback URL, the
  // cluster on the test's server, the sites resolved to 127.0.0.1.
  Config NodeConfig(const std::string& name) {
    Config c;
    c.crawler.user_agent = "freshd-" + name;
    c.store.path = (dir_ / (name + "-db")).string();
    c.budget.rate = 20;
    c.budget.burst = 5;
    c.sched.min_interval_s = 0.05;
    c.sched.max_interval_s = 2;
    c.politeness.min_delay_s = 0.02;
    c.fetch.allow_private_networks = true;
    c.fetch.resolve = resolve_;
    c.site_feeds.poll_interval_s = 0.3;
    const uint16_t port = freshd::testing::FreePort();
    c.push.listen = "127.0.0.1:" + std::to_string(port);
    c.push.public_url = "http://127.0.0.1:" + std::to_string(port);
    c.push.client_requests_per_minute = 100000;
    c.push.websub_poll_slowdown = 10;
    c.cluster.nats_url = nats_->url();
    c.cluster.node = name;
    c.cluster.shards = kShards;
    c.cluster.heartbeat_s = 0.2;
    c.cluster.ttl_s = 1;
    return c;
  }
  std::unique_ptr<Node> StartNode(const std::string& name,
                                  const std::vector<std::string>& seeds) {
    auto node = std::make_unique<Node>(NodeConfig(name));
    if (!node->Start(seeds)) return nullptr;
    return node;
  }
  // A name for a site at `port` whose shard "b" owns once "a" and "b" are
  // both live (the rendezvous, cluster/shard_map.h).
  static std::string NameOwnedByB(const std::string& prefix, uint16_t port) {
    const std::vector<std::string> members = {"a", "b"};
    const std::vector<bool> b = cluster::OwnedShards("b", members, kShards);
    for (int i = 0; i < 1000; ++i) {
      const std::string name = prefix + std::to_string(i) + ".test";
      if (b[cluster::ShardOf(name + ":" + std::to_string(port), kShards)]) {
        return name;
      }
    }
    ADD_FAILURE() << "no name of b's shards";
    return prefix + ".test";
  }

  std::filesystem::path dir_;
  std::unique_ptr<freshd::testing::NatsServer> nats_;
  asio::io_context web_io_;  // the hub's and the sites' servers
  asio::executor_work_guard<asio::io_context::executor_type> web_work_ =
      asio::make_work_guard(web_io_);
  std::thread web_thread_;
  std::map<std::string, std::string> resolve_ = {{"hub.test", "127.0.0.1"}};
  std::unique_ptr<TestHub> hub_;
  std::unique_ptr<FeedSite> site_;
  std::unique_ptr<HttpServer> key_site_;
  std::unique_ptr<Node> a_, b_;
};

TEST_F(PushClusterTest, AWebSubSubscriptionMovesWithItsFeedsShard) {
  hub_ = std::make_unique<TestHub>(web_io_);
  site_ = std::make_unique<FeedSite>(web_io_, hub_->Url(), [](uint16_t port) {
    return NameOwnedByB("s", port);
  });
  StartWeb();
  TestHub& hub = *hub_;
  FeedSite& site = *site_;
  resolve_[site.name()] = "127.0.0.1";
  const std::string feed = site.root() + "feed.xml";

  // "a" alone owns every shard, crawls the site and subscribes.
  a_ = StartNode("a", {site.root()});
  ASSERT_NE(a_, nullptr);
  const std::string a_url = a_->config().push.public_url + "/websub/";
  TestHub::Request a_sub;
  ASSERT_TRUE(WaitFor(30,
                      [&] {
                        return hub.Verified("subscribe", a_url, &a_sub) &&
                               a_->WebSub()["active"] == 1;
                      }))
      << a_->WebSub().dump() << a_->StatusJson()["site_feeds"].dump();
  EXPECT_EQ(a_sub.topic, feed);

  // "b" joins: the rendezvous gives it the site's host. "a" lets go at
  // once (unsubscribe, verified at its callback); "b" acquires the shard a
  // ttl later, crawls the site and subscribes with its own callback.
  const double joined = Now();
  b_ = StartNode("b", {site.root()});  // every node has the seeds (scope)
  ASSERT_NE(b_, nullptr);
  const std::string b_url = b_->config().push.public_url + "/websub/";
  TestHub::Request a_unsub, b_sub;
  ASSERT_TRUE(WaitFor(30,
                      [&] {
                        return hub.Verified("unsubscribe", a_url, &a_unsub) &&
                               hub.Verified("subscribe", b_url, &b_sub) &&
                               b_->WebSub()["active"] == 1 &&
                               a_->WebSub()["subscriptions"] == 0;
                      }))
      << "a " << a_->WebSub().dump() << "\nb " << b_->WebSub().dump()
      << "\nb cluster " << b_->StatusJson()["cluster"].dump();
  std::printf("subscription moved %.2f s after b started\n", Now() - joined);
  EXPECT_EQ(a_unsub.callback, a_sub.callback);
  EXPECT_EQ(b_sub.topic, feed);
  EXPECT_NE(b_sub.callback, a_sub.callback);
  EXPECT_NE(b_sub.secret, a_sub.secret);
  EXPECT_EQ(b_sub.secret.size(), 64u);
  EXPECT_EQ(hub.Count("subscribe"), 2) << "one each";
  EXPECT_EQ(hub.Count("unsubscribe"), 1);
  EXPECT_EQ(hub.refused_verify, 0);

  // A delivery to a's old callback: gone. One to b's, signed with b's
  // secret: b fetches the new entry.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string body =
      site.Feed({"after-move"}, FormatIso8601Utc(static_cast<int64_t>(Now())));
  EXPECT_EQ(TestHub::PublishTo(a_sub.callback, body, a_sub.secret), 410);
  EXPECT_EQ(TestHub::PublishTo(b_sub.callback, body, b_sub.secret), 202);
  EXPECT_TRUE(WaitFor(15, [&] { return site.Gets("/after-move") > 0; }))
      << b_->WebSub().dump() << "\n"
      << b_->Page(site.root() + "after-move").dump() << "\n"
      << b_->Page(site.root()).dump() << "\n"
      << b_->StatusJson().dump().substr(0, 6000);
  EXPECT_EQ(b_->WebSub()["deliveries_accepted_total"], 1);
  EXPECT_EQ(a_->WebSub()["deliveries_accepted_total"], 0);
  EXPECT_EQ(a_->WebSub()["unknown_callbacks_total"], 1);
  EXPECT_TRUE(b_->Knows(site.root() + "after-move"));
  EXPECT_FALSE(a_->Knows(site.root() + "after-move"));
}

TEST_F(PushClusterTest, ARoutedIndexNowPingKeepsItsSource) {
  std::string root;
  {
    // The site: its key file, and pages; `name` is chosen once its port is
    // known.
    HttpServerOptions o;
    o.public_listener = true;
    auto listening = HttpServer::Listen(
        web_io_, "127.0.0.1:0",
        [](const HttpRequest& r) {
          if (r.target == std::string("/") + kIndexNowKey + ".txt") {
            return HttpReply{200, "text/plain", kIndexNowKey};
          }
          return HttpReply{200, "text/html", "<html><body>p</body></html>"};
        },
        o);
    ASSERT_TRUE(listening.ok()) << listening.status().ToString();
    key_site_ = std::move(listening).value();
    const std::string name = NameOwnedByB("i", key_site_->port());
    resolve_[name] = "127.0.0.1";
    root = "http://" + name + ":" + std::to_string(key_site_->port()) + "/";
  }
  StartWeb();
  const std::string page = root + "news";
  // Both given the seeds; only "b" keeps the page.
  a_ = StartNode("a", {root, page});
  b_ = StartNode("b", {root, page});
  ASSERT_TRUE(a_ && b_);
  ASSERT_TRUE(WaitFor(30, [&] {
    return b_->Knows(page) && a_->StatusJson()["cluster"]["nodes"] == 2;
  })) << b_->StatusJson()["cluster"].dump();
  EXPECT_FALSE(a_->Knows(page));

  // The ping goes to "a", which checks the key and routes the URL.
  const uint16_t a_port =
      static_cast<uint16_t>(std::stoi(a_->config().push.listen.substr(
          a_->config().push.listen.rfind(':') + 1)));
  const std::string ping =
      "/indexnow?url=" + testing::Encode(page) + "&key=" + kIndexNowKey;
  const testing::Answer first = testing::Call(a_port, http::verb::get, ping);
  EXPECT_TRUE(first.status == 200 || first.status == 202) << first.status;
  const auto sources = [&](Node& n) {
    return n.StatusJson()["signal_sources"]["sources"];
  };
  const bool arrived = WaitFor(20, [&] {
    return sources(*b_)["indexnow"]["signals_total"].get<int>() >= 1;
  });
  EXPECT_TRUE(arrived) << "b " << sources(*b_).dump() << "\na "
                       << a_->StatusJson()["indexnow"].dump();
  EXPECT_EQ(sources(*b_)["signal"]["signals_total"], 0) << sources(*b_).dump();
  EXPECT_EQ(sources(*a_)["indexnow"]["signals_total"], 0);  // routed away
  EXPECT_GE(a_->StatusJson()["cluster"]["work"]["routed"].get<int>(), 1);
}

}  // namespace
}  // namespace freshd::daemon
