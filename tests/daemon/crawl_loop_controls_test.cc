// Operator controls with real parts on 127.0.0.1: a CrawlLoop (real
// fetcher, real LevelDB) and its StatusService, two sites served by
// HttpServer that count the page fetches they answer, and a client
// speaking HTTP to POST /control from another thread while the loop runs.
// Pausing a host stops its fetches (counted at its server) while the other
// site's go on; resuming restarts them; a paused URL pattern stops its
// pages only; a block keeps a host's new URLs out of the frontier (counted
// as turned away); the controls survive a restart on the same store; a
// control with a foreign Origin, a bad pattern or an unknown action is
// refused; a pattern that holds a sitemap's URL keeps it from being fetched.

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

constexpr int kPages = 20;

// A site on 127.0.0.1: robots.txt allows all, "/" links to /p/0../p/19 and
// to `links` (other sites' URLs), each /p/N is a page that changes at every
// fetch. Counts the fetches of "/" and of /p/ pages (atomics: read from the
// client thread).
struct Site {
  std::unique_ptr<HttpServer> server;
  std::string root;  // http://NAME:PORT/
  std::vector<std::string> links;
  std::atomic<int> roots{0};
  std::atomic<int> pages{0};
  std::atomic<int> sitemaps{0};  // fetches of /sitemap.xml, which robots.txt
                                 // names
  int fetches() const { return roots.load() + pages.load(); }
};

std::unique_ptr<Site> StartSite(asio::io_context& io, const std::string& name,
                                Config* config) {
  auto site = std::make_unique<Site>();
  Site* raw = site.get();
  if (!ListenAsSite(
          io, name, config,
          [raw](const HttpRequest& r) {
            if (r.target == "/robots.txt") {
              return HttpReply{200, "text/plain",
                               "User-agent: *\nAllow: /\nSitemap: " +
                                   raw->root + "sitemap.xml\n"};
            }
            if (r.target == "/sitemap.xml") {
              raw->sitemaps.fetch_add(1);
              return HttpReply{
                  200, "application/xml",
                  "<?xml version=\"1.0\"?><urlset xmlns=\"http://"
                  "www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>" +
                      raw->root +
                      "p/0</loc><lastmod>2026-01-01</lastmod></url>"
                      "</urlset>"};
            }
            std::string html = "<html><body>";
            if (r.target == "/") {
              raw->roots.fetch_add(1);
              for (int i = 0; i < kPages; ++i) {
                html += "<a href=\"/p/" + std::to_string(i) + "\">p</a> ";
              }
              for (const std::string& l : raw->links) {
                html += "<a href=\"" + l + "\">x</a> ";
              }
            } else {
              html += "page " + r.target + " version " +
                      std::to_string(raw->pages.fetch_add(1));
            }
            return HttpReply{200, "text/html", html + "</body></html>"};
          },
          &site->server, &site->root)) {
    return nullptr;
  }
  return site;
}

// Waits up to `seconds` for `done`, polling every 50 ms.
bool WaitFor(double seconds, const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

class ControlsTest : public CrawlLoopTest {
 protected:
  void SetUp() override {
    CrawlLoopTest::SetUp();
    config_.budget.rate = 40;
    config_.budget.burst = 5;
    config_.sched.min_interval_s = 0.2;
    config_.sched.max_interval_s = 1;
  }
};

TEST_F(ControlsTest, PauseResumeAndPatternOverHttpWhileCrawling) {
  asio::io_context io;
  auto a = StartSite(io, "a.test", &config_);
  auto b = StartSite(io, "b.test", &config_);
  ASSERT_TRUE(a && b);
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(a->root, 1).ok());
  ASSERT_TRUE(loop.value()->AddSeed(b->root, 1).ok());
  auto service = StatusService::Start(*loop.value(), "127.0.0.1:0");
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  const uint16_t port = service.value()->port();
  auto post = [&](const std::string& body) {
    return Ask(port, http::verb::post, "/control", body);
  };

  struct Seen {
    bool both_started = false;
    std::string paused, resumed, pattern, unpattern;
    int a_during_pause = -1, b_during_pause = -1;
    bool a_restarted = false;
    int b_pages_during_pattern = -1, b_roots_during_pattern = -1;
    int a_during_pattern = -1;
    std::string foreign, bad, unknown, missing, list, status, metrics;
  } seen;
  std::atomic<bool> client_done{false};
  std::thread client([&] {
    seen.both_started = WaitFor(
        8, [&] { return a->pages.load() >= 3 && b->pages.load() >= 3; });
    seen.paused = post(R"({"action": "pause", "host": "a.test"})");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // in flight
    int a0 = a->fetches(), b0 = b->fetches();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    seen.a_during_pause = a->fetches() - a0;
    seen.b_during_pause = b->fetches() - b0;
    seen.resumed = post(R"({"action": "resume", "host": "a.test"})");
    a0 = a->fetches();
    seen.a_restarted = WaitFor(5, [&] { return a->fetches() >= a0 + 3; });

    // A pattern: b's /p/ pages stop, b's root and a go on.
    seen.pattern =
        post(R"({"action": "pause", "pattern": "//b\\.test:\\d+/p/"})");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int bp = b->pages.load(), br = b->roots.load();
    a0 = a->fetches();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    seen.b_pages_during_pattern = b->pages.load() - bp;
    seen.b_roots_during_pattern = b->roots.load() - br;
    seen.a_during_pattern = a->fetches() - a0;
    seen.status = Ask(port, http::verb::get, "/status", "");
    seen.metrics = Ask(port, http::verb::get, "/metrics", "");
    seen.unpattern =
        post(R"({"action": "resume", "pattern": "//b\\.test:\\d+/p/"})");

    seen.foreign = AskWith(port, http::verb::post, "/control",
                           R"({"action": "pause", "host": "b.test"})",
                           {{"Origin", "http://evil.example"}});
    seen.bad = post(R"({"action": "pause", "pattern": "(unclosed"})");
    seen.unknown = post(R"({"action": "explode", "host": "b.test"})");
    seen.missing = post(R"({"action": "unblock", "host": "b.test"})");
    seen.list = Ask(port, http::verb::get, "/control", "");
    client_done = true;
  });
  RunUntil(io, *loop.value(), 1, 40, [&] { return client_done.load(); });
  client.join();
  service.value().reset();

  ASSERT_TRUE(seen.both_started);
  EXPECT_EQ(seen.paused.substr(0, 4), "200 ") << seen.paused;
  EXPECT_NE(seen.paused.find("\"a.test\""), std::string::npos);
  EXPECT_EQ(seen.a_during_pause, 0) << "a paused, still fetched";
  EXPECT_GE(seen.b_during_pause, 5) << "b stopped too";
  EXPECT_EQ(seen.resumed.substr(0, 4), "200 ") << seen.resumed;
  EXPECT_TRUE(seen.a_restarted);

  EXPECT_EQ(seen.pattern.substr(0, 4), "200 ") << seen.pattern;
  EXPECT_EQ(seen.b_pages_during_pattern, 0);
  EXPECT_GE(seen.b_roots_during_pattern, 1);
  EXPECT_GE(seen.a_during_pattern, 5);
  EXPECT_EQ(seen.unpattern.substr(0, 4), "200 ") << seen.unpattern;
  ASSERT_EQ(seen.status.substr(0, 4), "200 ");
  const nlohmann::json status = nlohmann::json::parse(seen.status.substr(4));
  EXPECT_EQ(status["controls"]["count"], 1);
  EXPECT_EQ(status["controls"]["patterns_paused"], 1);
  EXPECT_EQ(status["controls"]["held_pages"], kPages);
  EXPECT_EQ(status["controls"]["list"][0]["kind"], "pattern");
  EXPECT_NE(
      seen.metrics.find("freshd_controls{kind=\"pattern\",action=\"pause\"} 1"),
      std::string::npos);
  EXPECT_EQ(MetricValue(seen.metrics, "freshd_controls_held_pages"), kPages);

  EXPECT_EQ(seen.foreign.substr(0, 4), "403 ") << seen.foreign;
  EXPECT_EQ(seen.bad.substr(0, 4), "400 ") << seen.bad;
  EXPECT_NE(seen.bad.find("missing )"), std::string::npos) << seen.bad;
  EXPECT_EQ(seen.unknown.substr(0, 4), "400 ") << seen.unknown;
  EXPECT_EQ(seen.missing.substr(0, 4), "404 ") << seen.missing;
  ASSERT_EQ(seen.list.substr(0, 4), "200 ");
  const nlohmann::json list = nlohmann::json::parse(seen.list.substr(4));
  EXPECT_EQ(list["count"], 0);  // the foreign pause never landed
  EXPECT_EQ(loop.value()->controls().size(), 0u);
}

TEST_F(ControlsTest, BlockKeepsNewUrlsOutAndControlsSurviveARestart) {
  asio::io_context io;
  auto a = StartSite(io, "a.test", &config_);
  auto b = StartSite(io, "b.test", &config_);
  ASSERT_TRUE(a && b);
  // b's root links to a's pages; only b is seeded, every host in scope.
  config_.crawler.scope = "any";
  for (int i = 0; i < kPages; ++i) {
    b->links.push_back(a->root + "p/" + std::to_string(i));
  }
  {
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(
        loop.value()->Control(R"({"action": "block", "host": "a.test"})").ok());
    ASSERT_TRUE(loop.value()
                    ->Control(R"({"action": "pause", "pattern": "/p/1\\d$"})")
                    .ok());
    ASSERT_TRUE(loop.value()->AddSeed(b->root, 1).ok());
    RunUntil(io, *loop.value(), 1.5, 10,
             [&] { return b->pages.load() >= kPages / 2; });
    EXPECT_EQ(a->fetches(), 0);
    EXPECT_FALSE(loop.value()->PageJson(a->root + "p/3").ok());
    EXPECT_TRUE(loop.value()->PageJson(b->root + "p/3").ok());
    const nlohmann::json c = loop.value()->StatusJson()["controls"];
    EXPECT_GE(c["turned_away_total"], kPages);  // each fetch of b's root
    EXPECT_EQ(c["held_pages"], 10);             // b's /p/10 .. /p/19
    EXPECT_EQ(c["hosts_blocked"], 1);
  }
  // The same store: the block and the pattern are back before dispatch, and
  // the pattern's pages are held again.
  {
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    const nlohmann::json c = loop.value()->ControlsJson();
    EXPECT_EQ(c["count"], 2);
    EXPECT_EQ(c["hosts_blocked"], 1);
    EXPECT_EQ(c["patterns_paused"], 1);
    EXPECT_EQ(c["held_pages"], 10);
    const int b_pages = b->pages.load();
    ASSERT_TRUE(loop.value()
                    ->Control(R"({"action": "unblock", "host": "a.test"})")
                    .ok());
    RunUntil(io, *loop.value(), 1, 10, [&] { return a->pages.load() >= 5; });
    // Unblocked: b's root, fetched again, brings a's pages in.
    EXPECT_GE(a->pages.load(), 5);
    EXPECT_GT(b->pages.load(), b_pages);
  }
  {
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok());
    EXPECT_EQ(loop.value()->ControlsJson()["count"], 1);  // the unblock too
  }
}

// A paused pattern holds every URL it matches, not only pages: here b's
// sitemap (named by its robots.txt) is never fetched while a's, the same
// but unpaused, is; b's pages, which the pattern does not match, go on.
TEST_F(ControlsTest, APausedPatternKeepsASitemapUnfetched) {
  asio::io_context io;
  auto a = StartSite(io, "a.test", &config_);
  auto b = StartSite(io, "b.test", &config_);
  ASSERT_TRUE(a && b);
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  auto paused = loop.value()->Control(
      R"({"action": "pause", "pattern": "//b\\.test:\\d+/sitemap"})");
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(a->root, 1).ok());
  ASSERT_TRUE(loop.value()->AddSeed(b->root, 1).ok());
  RunUntil(io, *loop.value(), 1, 20,
           [&] { return a->sitemaps.load() >= 1 && b->pages.load() >= 3; });
  EXPECT_GE(a->sitemaps.load(), 1) << "the unpaused sitemap was not fetched";
  EXPECT_GE(b->pages.load(), 3);
  EXPECT_EQ(b->sitemaps.load(), 0) << "a paused sitemap was fetched";
}

}  // namespace
}  // namespace freshd::daemon
