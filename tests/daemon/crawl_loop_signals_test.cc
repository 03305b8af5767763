// CrawlLoop's change signals end to end: sitemap lastmods (stale ones
// counted, long sitemaps applied whole, hosts not crawled still read),
// the robots.txt refresh sweep, pushed hints and the freshness estimate.

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

// A sitemap lastmod not after the page's last fetch is a stale signal:
// dropped (no signal taken) and counted once in signals_stale_total, like a
// stale POST /signal hint. The site here is a loopback HttpServer whose sitemap
// dates its only page to 2000; nothing posts hints.
TEST_F(CrawlLoopTest, StaleSitemapLastmodIsCountedNotTaken) {
  asio::io_context io;
  std::unique_ptr<HttpServer> site;
  std::string root;
  auto loop = OnePageLoop(
      io, &config_, [] { return std::string("2000-01-01"); }, &site, &root);
  ASSERT_NE(loop, nullptr);
  // The sitemap comes with robots.txt (again each robots_cache_s = 1 s);
  // its lastmod counts once the page has been fetched, and only once
  // however often the sitemap is read again.
  RunUntil(io, *loop, 0, 10, [&] {
    nlohmann::json s = loop->StatusJson();
    return s["signals_stale_total"] > 0 && s["sitemaps_fetched_total"] >= 3;
  });
  nlohmann::json s = loop->StatusJson();
  EXPECT_GE(s["sitemaps_fetched_total"].get<int>(), 3) << s.dump();
  EXPECT_EQ(s["signals_stale_total"].get<int>(), 1) << s.dump();
  EXPECT_EQ(s["signals_total"], 0) << s.dump();
}

// Sitemap lastmod sanity (issue 44 item 4), end to end: a loopback site
// whose sitemap dates its only page three days ahead (a broken CMS clock)
// never signals a change, however often the sitemap is read; each read is
// counted as a future date dropped, per host, in /status and /metrics,
// and the date is not remembered as the page's newest (PageMeta).
TEST_F(CrawlLoopTest, FutureSitemapLastmodsAreDroppedAndCounted) {
  asio::io_context io;
  std::unique_ptr<HttpServer> site;
  std::string root;
  config_.sched.min_interval_s = 3600;
  config_.sched.max_interval_s = 7200;
  auto loop = OnePageLoop(
      io, &config_,
      [] {
        return FormatIso8601Utc(static_cast<int64_t>(UnixNow() + 3 * 86400));
      },
      &site, &root);
  ASSERT_NE(loop, nullptr);
  RunUntil(io, *loop, 0, 10, [&] {
    nlohmann::json s = loop->StatusJson();
    return s["pages_fetched_total"] == 1 &&
           s["signal_sources"]["lastmod_dropped"]["future_total"] >= 2;
  });
  nlohmann::json s = loop->StatusJson();
  const nlohmann::json& dropped = s["signal_sources"]["lastmod_dropped"];
  EXPECT_GE(dropped["future_total"].get<int>(), 2) << s.dump();
  EXPECT_EQ(dropped["too_old_total"], 0) << s.dump();
  EXPECT_EQ(dropped["before_history_total"], 0) << s.dump();
  EXPECT_EQ(dropped["hosts_total"], 1) << s.dump();
  ASSERT_EQ(dropped["hosts"].size(), 1u) << s.dump();
  EXPECT_EQ(dropped["hosts"][0]["future"], dropped["future_total"]);
  // The site's host (a name the fixture resolves to 127.0.0.1).
  EXPECT_EQ(dropped["hosts"][0]["host"].get<std::string>().rfind("s.test:", 0),
            0u)
      << s.dump();
  // Never a signal, nor stale: dropped before either.
  EXPECT_EQ(s["signals_total"], 0) << s.dump();
  EXPECT_EQ(s["signals_stale_total"], 0) << s.dump();
  EXPECT_EQ(s["signal_sources"]["sources"]["sitemap"]["signals_total"], 0);
  const std::string metrics = loop->MetricsText();
  EXPECT_NE(metrics.find(
                "freshd_signal_source_dated_dropped_total{reason=\"future\"}"),
            std::string::npos);
  EXPECT_GE(MetricValue(metrics, "freshd_signal_source_dated_dropped_hosts"),
            1);
  EXPECT_NE(
      metrics.find("freshd_signal_source_signals_total{source=\"indexnow\"} 0"),
      std::string::npos);
}

// The robots.txt refresh sweeps the known hosts a slice a housekeeping turn
// (kMinRobotsRefreshSlice at this budget), not all at once (a 10M-page
// store's 100k hosts were once 100k robots.txt fetches ahead of every page).
// A first run fetches a page of each of 100 hosts (and so their robots.txt,
// cached for 1 s); restarted from its store with robots cached for an hour
// and a budget of one page, the loop re-reads the expired copies over
// several turns, every host's once.
TEST_F(CrawlLoopTest, RobotsRefreshSweepsTheHostsASliceATurn) {
  constexpr int kHosts = 100;
  asio::io_context io;
  auto robots = std::make_shared<std::atomic<int>>(0);
  HttpServerOptions site_options;
  for (int h = 0; h < kHosts; ++h) {
    site_options.allowed_hosts.push_back("r" + std::to_string(h) + ".test");
  }
  auto site = HttpServer::Listen(
      io, "127.0.0.1:0",
      [robots](const HttpRequest& r) {
        if (r.target == "/robots.txt") {
          ++*robots;
          return HttpReply{200, "text/plain", "User-agent: *\nAllow: /\n"};
        }
        return HttpReply{200, "text/html", "<html><body>p</body></html>"};
      },
      site_options);
  ASSERT_TRUE(site.ok()) << site.status().ToString();
  for (int h = 0; h < kHosts; ++h) {
    config_.fetch.resolve["r" + std::to_string(h) + ".test"] = "127.0.0.1";
  }
  config_.budget.rate = 100;
  config_.budget.burst = 20;
  config_.fetch.max_connections = 8;
  {
    auto first = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    for (int h = 0; h < kHosts; ++h) {
      ASSERT_TRUE(first.value()
                      ->AddSeed("http://r" + std::to_string(h) + ".test:" +
                                    std::to_string(site.value()->port()) + "/",
                                1)
                      .ok());
    }
    auto all_fetched = [&] {  // every page's last fetch a success
      nlohmann::json s = first.value()->StatusJson();
      return s["queue"]["new"] == 0 && s["queue"]["failed"] == 0;
    };
    RunUntil(io, *first.value(), 1, 20, all_fetched);
    ASSERT_TRUE(all_fetched()) << first.value()->StatusJson().dump();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // expired
  robots->store(0);
  config_.budget.rate = 0.01;
  config_.budget.burst = 1;
  config_.politeness.robots_cache_s = 3600;
  io.restart();
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  int early = -1;  // robots.txt requests after the first turn or two
  RunUntil(io, *loop.value(), 0, 15, [&] {
    if (early < 0 && std::chrono::steady_clock::now() - start >=
                         std::chrono::milliseconds(300)) {
      early = robots->load();
    }
    return robots->load() >= kHosts;
  });
  // -1: every request came within 300 ms (all the hosts at once).
  EXPECT_GE(early, 1);
  // Two turns' slices and the page the budget allows, at most.
  EXPECT_LE(early, 2 * static_cast<int>(kMinRobotsRefreshSlice) + 1);
  EXPECT_EQ(robots->load(), kHosts)  // each host once
      << loop.value()->StatusJson().dump();
}

// A sitemap longer than kSitemapSlice entries is applied whole, one slice
// per turn of the io thread: every URL it names becomes known.
TEST_F(CrawlLoopTest, LongSitemapsAreAppliedWhole) {
  asio::io_context io;
  std::unique_ptr<HttpServer> site;
  std::string root;
  const int extra = 2 * static_cast<int>(kSitemapSlice) + 5;
  auto loop = OnePageLoop(
      io, &config_, [] { return std::string("2000-01-01"); }, &site, &root,
      extra);
  ASSERT_NE(loop, nullptr);
  RunUntil(io, *loop, 0, 30, [&] {
    return loop->StatusJson()["pages_known"].get<int>() >= extra + 1;
  });
  nlohmann::json s = loop->StatusJson();
  EXPECT_EQ(s["pages_known"].get<int>(), extra + 1) << s.dump();
  EXPECT_GE(s["sitemaps_fetched_total"].get<int>(), 1) << s.dump();
  EXPECT_EQ(s["store_errors_total"], 0) << s.dump();
}

// A host the scheduler leaves alone still has its robots.txt and sitemaps
// re-read each robots cache period (1 s here), so its lastmod signals keep
// arriving: the site's only page is fetched once (min_interval 1 h), while
// its sitemap, dating the page to "now", is read again and again.
TEST_F(CrawlLoopTest, SitemapsAreReadOnHostsNotBeingCrawled) {
  asio::io_context io;
  std::unique_ptr<HttpServer> site;
  std::string root;
  config_.sched.min_interval_s = 3600;
  config_.sched.max_interval_s = 7200;
  auto loop = OnePageLoop(
      io, &config_,
      [] { return FormatIso8601Utc(static_cast<int64_t>(UnixNow())); }, &site,
      &root);
  ASSERT_NE(loop, nullptr);
  RunUntil(io, *loop, 0, 10,
           [&] { return loop->StatusJson()["sitemaps_fetched_total"] >= 4; });
  nlohmann::json s = loop->StatusJson();
  EXPECT_EQ(s["pages_fetched_total"], 1) << s.dump();
  EXPECT_GE(s["sitemaps_fetched_total"].get<int>(), 4) << s.dump();
  EXPECT_GE(s["signals_total"].get<int>(), 2) << s.dump();
  EXPECT_TRUE(s["errors"].empty()) << s.dump();
}

// /status's estimated_freshness counts the signals each page received
// since its fetch (sched::Scheduler::FreshProbability), for a policy that
// models them: the one page, fetched once (min_interval 1 h) seconds ago
// with a prior change interval of a day, is believed fresh until a hint
// comes. Nothing has shown a false signal yet (ν̂ = 0), so the hint means a
// change. `freshness`, which does not model signals, keeps e^{−Δ̂τ}. GET
// /page shows the page's own P(fresh).
TEST_F(CrawlLoopTest, HintsLowerTheEstimatedFreshness) {
  config_.sched.min_interval_s = 3600;
  config_.sched.max_interval_s = 7200;
  for (const char* policy : {"ncis", "freshness"}) {
    SCOPED_TRACE(policy);
    config_.sched.policy = policy;
    std::filesystem::remove_all(config_.store.path);
    asio::io_context io;
    std::unique_ptr<HttpServer> site;
    std::string root;
    auto loop = OnePageLoop(
        io, &config_, [] { return std::string("2000-01-01"); }, &site, &root);
    ASSERT_NE(loop, nullptr);
    CrawlLoop& c = *loop;
    RunUntil(io, c, 0, 10, [&] { return c.scheduler().page(0).fetched(); });
    ASSERT_TRUE(c.scheduler().page(0).fetched());
    const double before = c.StatusJson()["estimated_freshness"];
    EXPECT_GT(before, 0.99);
    EXPECT_EQ(c.Signal({root})["signals"], 1);
    const double after = c.StatusJson()["estimated_freshness"];
    auto page = c.PageJson(root);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    const double page_after = page.value()["fresh_probability"];
    if (std::string(policy) == "ncis") {
      EXPECT_LT(after, 0.01);
      EXPECT_LT(page_after, 0.01);
      // /page shows the hint under its source (POST /signal: "signal"),
      // with the host's estimate of that source; an IndexNow hint (the
      // receiver's) is counted under its own.
      const nlohmann::json& by_source = page.value()["signal_sources"];
      EXPECT_EQ(by_source["signal"]["signals_since_fetch"], 1) << page->dump();
      EXPECT_TRUE(by_source["signal"]["host_recall"].is_number());
      EXPECT_EQ(by_source["signal"]["weight"], 1.0);  // one source in play
      EXPECT_EQ(c.Signal({root}, -std::numeric_limits<double>::infinity(),
                         nullptr, sched::SignalSource::kIndexNow)["signals"],
                1);
      const nlohmann::json sources = c.StatusJson()["signal_sources"];
      EXPECT_EQ(sources["sources"]["signal"]["signals_total"], 1);
      EXPECT_EQ(sources["sources"]["indexnow"]["signals_total"], 1);
      EXPECT_EQ(sources["sources"]["indexnow"]["hosts"], 1);
      EXPECT_EQ(c.PageJson(root).value()["signal_sources"]["indexnow"]
                                        ["signals_since_fetch"],
                1);
    } else {
      EXPECT_TRUE(page.value()["signal_sources"].is_null());
      EXPECT_NEAR(after, before, 1e-3);
      EXPECT_NEAR(page_after, before, 1e-3);
    }
  }
}

}  // namespace
}  // namespace freshd::daemon
