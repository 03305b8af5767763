// CrawlLoop restarted from its store: every page rebuilt, the fetch state
// saved within the sync window, a raised seed importance kept.

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

// Signals too: the count since each page's last fetch (sitemap lastmods and
// pushed hints alike) and the newest lastmod considered (taken or stale), so
// a sitemap read after the restart does not consider the same lastmod again.
TEST_F(CrawlLoopTest, RestartRebuildsEveryPageFromTheStore) {
  std::map<std::string, int> fetches_before, signals_before;
  std::map<std::string, double> lastmod_before;
  int with_lastmod = 0;
  {
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 2).ok());
    const CrawlLoop& c = *loop.value();
    // 1.5 s, and on until a sitemap lastmod was taken (slow under ASan).
    RunUntil(io, *loop.value(), 1.5, 30, [&] {
      for (sched::PageId id = 0; id < c.urls().size(); ++id) {
        if (c.signal_lastmod(id) > 0) return true;
      }
      return false;
    });
    for (sched::PageId id = 0; id < c.urls().size(); ++id) {
      const std::string url(c.urls()[id]);
      fetches_before[url] = c.scheduler().page(id).fetches;
      signals_before[url] = c.scheduler().page(id).signals;
      lastmod_before[url] = c.signal_lastmod(id);
      with_lastmod += c.signal_lastmod(id) > 0;
    }
  }
  ASSERT_GT(fetches_before.size(), 10u);
  // Pages change ~1-4 times a second and the sitemap says so (else the
  // lastmod comparison below shows nothing).
  EXPECT_GT(with_lastmod, 0);
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const CrawlLoop& c = *loop.value();
  EXPECT_EQ(c.recovery().corrupt, 0u);
  // robots.txt and the gate state came back too: no early robots refetch.
  EXPECT_GE(c.fetch_state_restored().robots, 1u);
  EXPECT_GE(c.fetch_state_restored().hosts, 1u);
  ASSERT_EQ(c.urls().size(), fetches_before.size());
  for (sched::PageId id = 0; id < c.urls().size(); ++id) {
    const std::string url(c.urls()[id]);
    EXPECT_EQ(c.scheduler().page(id).fetches, fetches_before[url]) << url;
    EXPECT_EQ(c.scheduler().page(id).signals, signals_before[url]) << url;
    EXPECT_EQ(c.signal_lastmod(id), lastmod_before[url]) << url;
  }
  // The seed's host stays in scope after a restart without seeds: new links
  // found on it are still followed.
  const std::string hinted = Seed(0) + "p/1";
  auto hinted_id = std::find(c.urls().begin(), c.urls().end(), hinted);
  ASSERT_NE(hinted_id, c.urls().end());
  const int hinted_signals =
      c.scheduler().page(hinted_id - c.urls().begin()).signals;
  EXPECT_TRUE(loop.value()->Signal({hinted})["signals"] == 1);
  loop.value().reset();  // closes the store
  // A pushed hint is kept as soon as it is answered, with no fetch after it.
  auto again = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  const CrawlLoop& d = *again.value();
  auto id = std::find(d.urls().begin(), d.urls().end(), hinted);
  ASSERT_NE(id, d.urls().end());
  EXPECT_EQ(d.scheduler().page(id - d.urls().begin()).signals,
            hinted_signals + 1);
}

// #26 item 5: the robots cache and back-off are saved within the sync
// window, like page records: a loop that dies without Stop (its io_context
// simply stopped, as a crash would) has them in the store after ~1 s.
TEST_F(CrawlLoopTest, FetchStateIsSavedWithinTheSyncWindow) {
  config_.store.sync_interval_s = 0.5;
  {
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 1).ok());
    asio::steady_timer crash(io);
    crash.expires_after(std::chrono::milliseconds(2000));
    crash.async_wait([&](boost::system::error_code) { io.stop(); });
    loop.value()->Start();
    io.run();
    // No Stop: the fetch state's last export is not taken.
  }
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  EXPECT_GE(loop.value()->fetch_state_restored().robots, 1u);
  EXPECT_GE(loop.value()->fetch_state_restored().hosts, 1u);
}

// AddSeed on a known URL raises its importance and writes the page record
// at once: a restart before the page's next fetch keeps the raise, and the
// record's fetch metadata is kept. Seed(0) is fetched in the first run;
// Seed(1) is added and raised in the second, which never starts (no fetch).
TEST_F(CrawlLoopTest, RaisedSeedImportanceSurvivesARestart) {
  const std::string fetched = Seed(0), unfetched = Seed(1);
  {
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(loop.value()->AddSeed(fetched, 1).ok());
    const CrawlLoop& c = *loop.value();
    RunUntil(io, *loop.value(), 0, 10,
             [&] { return c.scheduler().page(0).fetched(); });
    ASSERT_TRUE(c.scheduler().page(0).fetched());
  }
  auto stored_record = [&](const std::string& url) {
    auto store = store::PageStore::Open(config_.store);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return store::PageRecord{};
    auto record = store.value()->GetPage(parse::UrlKey(url), url);
    EXPECT_TRUE(record.ok()) << url << ": " << record.status().ToString();
    if (!record.ok()) return store::PageRecord{};
    store::PageRecord r = std::move(record).value();
    r.sched_state.clear();  // the fetch metadata only
    return r;
  };
  const store::PageRecord fetched_before = stored_record(fetched);
  EXPECT_GT(fetched_before.last_fetch_time, 0);

  auto importance = [](const CrawlLoop& c, const std::string& url) {
    auto it = std::find(c.urls().begin(), c.urls().end(), url);
    EXPECT_NE(it, c.urls().end()) << url;
    if (it == c.urls().end()) return -1.0;
    return static_cast<double>(
        c.scheduler().page(it - c.urls().begin()).importance);
  };
  {
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    CrawlLoop& c = *loop.value();
    ASSERT_TRUE(c.AddSeed(fetched, 4).ok());
    ASSERT_TRUE(c.AddSeed(unfetched, 1).ok());
    ASSERT_TRUE(c.AddSeed(unfetched, 3).ok());
    ASSERT_TRUE(c.AddSeed(unfetched, 2).ok());  // never lowered
    EXPECT_EQ(importance(c, fetched), 4);
    EXPECT_EQ(importance(c, unfetched), 3);
  }  // closed without Start: no fetch since the raises
  store::PageRecord fetched_after = stored_record(fetched);
  EXPECT_EQ(fetched_after, fetched_before);

  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  EXPECT_EQ(importance(*loop.value(), fetched), 4);
  EXPECT_EQ(importance(*loop.value(), unfetched), 3);
}

// A site on 127.0.0.1 for the politeness restart below: robots.txt with a
// Crawl-delay (0: none), "/" linking to /p/0../p/19; counts page fetches.
struct DelayedSite {
  std::unique_ptr<HttpServer> server;
  std::string root;
  std::atomic<int> pages{0};
};

std::unique_ptr<DelayedSite> StartDelayedSite(asio::io_context& io,
                                              const std::string& name,
                                              int crawl_delay_s,
                                              Config* config) {
  auto site = std::make_unique<DelayedSite>();
  DelayedSite* raw = site.get();
  if (!ListenAsSite(
          io, name, config,
          [raw, crawl_delay_s](const HttpRequest& r) {
            if (r.target == "/robots.txt") {
              std::string robots = "User-agent: *\nAllow: /\n";
              if (crawl_delay_s > 0) {
                robots +=
                    "Crawl-delay: " + std::to_string(crawl_delay_s) + "\n";
              }
              return HttpReply{200, "text/plain", robots};
            }
            std::string html = "<html><body>";
            if (r.target == "/") {
              for (int i = 0; i < 20; ++i) {
                html += "<a href=\"/p/" + std::to_string(i) + "\">p</a> ";
              }
            } else {
              html += "page " + r.target;
            }
            raw->pages.fetch_add(1);
            return HttpReply{200, "text/html", html + "</body></html>"};
          },
          &site->server, &site->root)) {
    return nullptr;
  }
  return site;
}

// After a restart, a host still under its Crawl-delay (restored with the
// fetch state) holds no connection: with two connections and three such
// hosts whose never-fetched pages are worth the most, the fourth host,
// free to go, is crawled at once. (Before the dispatcher mirrored the
// restored times, the three hosts' pages took both connections to wait out
// their delay in the fetcher, and the free host got nothing for 30 s.)
TEST_F(CrawlLoopTest, HostsUnderARestoredDelayHoldNoConnection) {
  config_.fetch.max_connections = 2;
  config_.politeness.max_in_flight_per_host = 1;
  config_.politeness.max_crawl_delay_s = 30;
  config_.politeness.robots_cache_s = 3600;
  config_.budget.rate = 50;
  asio::io_context io;
  std::vector<std::unique_ptr<DelayedSite>> slow;
  for (const char* name : {"s1.test", "s2.test", "s3.test"}) {
    slow.push_back(StartDelayedSite(io, name, 30, &config_));
    ASSERT_TRUE(slow.back());
  }
  auto fast = StartDelayedSite(io, "f.test", 0, &config_);
  ASSERT_TRUE(fast);
  {
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    for (const auto& s : slow)
      ASSERT_TRUE(loop.value()->AddSeed(s->root, 1).ok());
    ASSERT_TRUE(loop.value()->AddSeed(fast->root, 1).ok());
    // Each slow host fetched its root (then waits 30 s); the fast one more.
    RunUntil(io, *loop.value(), 1, 20, [&] {
      for (const auto& s : slow) {
        if (s->pages.load() < 1) return false;
      }
      return fast->pages.load() >= 5;
    });
    io.restart();
  }
  for (const auto& s : slow) ASSERT_EQ(s->pages.load(), 1);
  const int fast_before = fast->pages.load();
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  EXPECT_GE(loop.value()->fetch_state_restored().hosts, 4u);
  nlohmann::json status;
  RunUntil(io, *loop.value(), 2, 2, [&] {
    status = loop.value()->StatusJson();
    return true;
  });
  // The fast host's 20 pages (and its root again) were free to go.
  EXPECT_GE(fast->pages.load() - fast_before, 10) << status.dump();
  for (const auto& s : slow) EXPECT_EQ(s->pages.load(), 1);
}

}  // namespace
}  // namespace freshd::daemon
