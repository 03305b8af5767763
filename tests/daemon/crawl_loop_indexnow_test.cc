// IndexNow with real parts on 127.0.0.1: a CrawlLoop (real fetcher, real
// LevelDB) with the push listener on, sites served by HttpServer that
// record every request, and a pinging client speaking HTTP over a socket
// from another thread. A correct ping's URL gets fetched; a wrong key gets
// 403 and no signal; a host out of scope is refused with no request to it
// at all; a flood gets 429 and no fetch.

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "daemon/indexnow_receiver.h"
#include "daemon/push_listener.h"
#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

constexpr char kKey[] = "f1e2d3c4-b5a6-key";

// A site on 127.0.0.1 that serves robots.txt (allowing all), its key file
// /<key>.txt and a page at any other path; every request's target is
// recorded (read on the io's thread, where the handler runs).
struct Site {
  std::unique_ptr<HttpServer> server;
  std::vector<std::string> seen;
  std::string root;  // http://NAME:PORT/

  int Saw(const std::string& target) const {
    return static_cast<int>(std::count(seen.begin(), seen.end(), target));
  }
};

std::unique_ptr<Site> StartSite(asio::io_context& io, const std::string& name,
                                const std::string& key, Config* config) {
  auto site = std::make_unique<Site>();
  Site* raw = site.get();
  if (!ListenAsSite(
          io, name, config,
          [raw, key](const HttpRequest& r) {
            raw->seen.push_back(r.target);
            if (r.target == "/robots.txt") {
              return HttpReply{200, "text/plain", "User-agent: *\nAllow: /\n"};
            }
            if (r.target == "/" + key + ".txt") {
              return HttpReply{200, "text/plain", key + "\n"};
            }
            return HttpReply{200, "text/html",
                             "<html><body>page " + r.target + "</body></html>"};
          },
          &site->server, &site->root)) {
    return nullptr;
  }
  return site;
}

std::string Encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string Ping(uint16_t port, const std::string& url,
                 const std::string& key) {
  return Ask(port, http::verb::get,
             "/indexnow?url=" + Encode(url) + "&key=" + Encode(key), "");
}

int Code(const std::string& reply) { return std::atoi(reply.c_str()); }

class CrawlLoopIndexNowTest : public CrawlLoopTest {
 protected:
  void SetUp() override {
    CrawlLoopTest::SetUp();
    config_.push.listen = "127.0.0.1:0";
    config_.push.client_requests_per_minute = 1000;
  }

  // The loop seeded with `site`'s root, its push listener started in
  // *push (declared after the loop: destroyed before it).
  std::unique_ptr<CrawlLoop> Loop(asio::io_context& io, const Site& site,
                                  std::unique_ptr<PushListener>* push) {
    auto loop = testing::SeededLoop(io, config_, site.root);
    if (loop == nullptr) return nullptr;
    EXPECT_NE(loop->indexnow(), nullptr);
    auto listening = PushListener::Start(
        io, loop->indexnow(), PushListener::OptionsFromConfig(config_.push));
    EXPECT_TRUE(listening.ok()) << listening.status().ToString();
    if (!listening.ok()) return nullptr;
    *push = std::move(listening).value();
    return loop;
  }
};

TEST_F(CrawlLoopIndexNowTest, ACorrectPingsUrlIsFetched) {
  asio::io_context io;
  auto site = StartSite(io, "s.test", kKey, &config_);
  ASSERT_NE(site, nullptr);
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, *site, &push);
  ASSERT_NE(loop, nullptr);
  std::unique_ptr<PushListener> listener = std::move(push);
  const uint16_t port = listener->port();
  const std::string fresh = site->root + "fresh-page";
  std::atomic<bool> second_done{false};
  std::string first, second;
  std::thread pinger([&] {
    first = Ping(port, fresh, kKey);
    // Once the key is proven (the first ping's URL accepted), a second
    // ping is answered 200 at once.
    for (int i = 0; i < 100; ++i) {
      if (loop->indexnow()->Json()["accepted"].get<uint64_t>() >= 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    second = Ping(port, site->root + "another", kKey);
    second_done = true;
  });
  RunUntil(io, *loop, 0.5, 20, [&] {
    return second_done && site->Saw("/fresh-page") >= 1 &&
           site->Saw("/another") >= 1;
  });
  pinger.join();
  EXPECT_EQ(Code(first), 202) << first;
  EXPECT_EQ(Code(second), 200) << second;
  EXPECT_GE(site->Saw("/fresh-page"), 1);
  EXPECT_GE(site->Saw("/another"), 1);
  EXPECT_EQ(site->Saw(std::string("/") + kKey + ".txt"), 1);  // cached
  const nlohmann::json j = loop->StatusJson()["indexnow"];
  EXPECT_EQ(j["received"], 2);
  EXPECT_EQ(j["accepted"], 2);
  EXPECT_EQ(j["pending"], 0);
  EXPECT_EQ(j["key_fetches"], 1);
  EXPECT_NE(loop->MetricsText().find("freshd_indexnow_accepted_total 2"),
            std::string::npos);
  listener.reset();
}

TEST_F(CrawlLoopIndexNowTest, AWrongKeyIs403AndNoSignal) {
  asio::io_context io;
  auto site = StartSite(io, "s.test", kKey, &config_);
  ASSERT_NE(site, nullptr);
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, *site, &push);
  ASSERT_NE(loop, nullptr);
  std::unique_ptr<PushListener> listener = std::move(push);
  const uint16_t port = listener->port();
  std::atomic<bool> done{false};
  std::string first, second;
  std::thread pinger([&] {
    first = Ping(port, site->root + "never", "wrong-key-123");
    for (int i = 0; i < 100; ++i) {
      if (loop->indexnow()->Json()["dropped"].get<uint64_t>() >= 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    second = Ping(port, site->root + "never", "wrong-key-123");
    done = true;
  });
  RunUntil(io, *loop, 1.5, 20, [&] { return done.load(); });
  pinger.join();
  EXPECT_EQ(Code(first), 202) << first;
  EXPECT_EQ(Code(second), 403) << second;
  EXPECT_EQ(site->Saw("/wrong-key-123.txt"), 1);
  EXPECT_EQ(site->Saw("/never"), 0);
  const nlohmann::json j = loop->StatusJson()["indexnow"];
  EXPECT_EQ(j["accepted"], 0);
  EXPECT_EQ(j["dropped"], 1);
  EXPECT_EQ(j["refused"]["wrong_key"], 1);
  EXPECT_FALSE(loop->PageJson(site->root + "never").ok());  // never added
  listener.reset();
}

TEST_F(CrawlLoopIndexNowTest, AHostOutOfScopeIsRefusedWithoutAFetch) {
  asio::io_context io;
  auto site = StartSite(io, "s.test", kKey, &config_);
  auto stranger = StartSite(io, "stranger.test", kKey, &config_);
  ASSERT_NE(site, nullptr);
  ASSERT_NE(stranger, nullptr);
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, *site, &push);
  ASSERT_NE(loop, nullptr);
  std::unique_ptr<PushListener> listener = std::move(push);
  const uint16_t port = listener->port();
  std::atomic<bool> done{false};
  std::string get, post;
  std::thread pinger([&] {
    get = Ping(port, stranger->root + "x", kKey);
    const std::string host = "stranger.test";
    post = Ask(port, http::verb::post, "/indexnow",
               nlohmann::json{
                   {"host", host},
                   {"key", kKey},
                   {"urlList", {stranger->root + "a", stranger->root + "b"}}}
                   .dump());
    done = true;
  });
  // Long enough for the seed's crawl to have run: the stranger still saw
  // nothing.
  RunUntil(io, *loop, 1.5, 20, [&] { return done && site->Saw("/") >= 1; });
  pinger.join();
  EXPECT_EQ(Code(get), 403) << get;
  EXPECT_EQ(Code(post), 403) << post;
  EXPECT_TRUE(stranger->seen.empty()) << stranger->seen.front();
  const nlohmann::json j = loop->StatusJson()["indexnow"];
  EXPECT_EQ(j["refused"]["out_of_scope"], 2);
  EXPECT_EQ(j["key_fetches"], 0);
  listener.reset();
}

TEST_F(CrawlLoopIndexNowTest, AFloodIs429AndCostsNoFetch) {
  config_.push.client_requests_per_minute = 5;
  asio::io_context io;
  auto site = StartSite(io, "s.test", kKey, &config_);
  ASSERT_NE(site, nullptr);
  std::unique_ptr<PushListener> push;
  auto loop = Loop(io, *site, &push);
  ASSERT_NE(loop, nullptr);
  std::unique_ptr<PushListener> listener = std::move(push);
  const uint16_t port = listener->port();
  std::atomic<bool> done{false};
  std::vector<int> codes;
  std::thread pinger([&] {
    // Each ping names a new key: without the limit, each would cost a
    // fetch of a key file.
    for (int i = 0; i < 30; ++i) {
      codes.push_back(Code(Ping(port, site->root + "p" + std::to_string(i),
                                "flood-key-" + std::to_string(1000 + i))));
    }
    done = true;
  });
  RunUntil(io, *loop, 1.0, 30, [&] { return done.load(); });
  pinger.join();
  ASSERT_EQ(codes.size(), 30u);
  const int refused =
      static_cast<int>(std::count(codes.begin(), codes.end(), 429));
  EXPECT_GE(refused, 24);  // 5 a minute (a minute's worth at once)
  int key_files = 0;
  for (const std::string& t : site->seen) {
    if (t.starts_with("/flood-key-")) ++key_files;
  }
  EXPECT_LE(key_files, 30 - refused);
  const nlohmann::json j = loop->StatusJson()["indexnow"];
  // 5 a minute, a minute's worth at once: 25 refused at the door. Each of
  // the 5 let in costs one key file, or waits for nothing (429: more than
  // kMaxKeyChecksPerHost checks of the host under way).
  EXPECT_EQ(j["refused"]["client_rate"], 25);
  EXPECT_EQ(
      j["key_fetches"].get<int>() + j["refused"]["pending_full"].get<int>(), 5);
  listener.reset();
}

}  // namespace
}  // namespace freshd::daemon
