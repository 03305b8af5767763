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

}  // namespace
}  // namespace freshd::daemon
