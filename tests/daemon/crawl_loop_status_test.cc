// CrawlLoop's status endpoint end to end: /status, /metrics and /page of a
// crawl of the simulated web, answers while a parse or the scheduler's
// thread is held, each thread's lag, a large frontier's sliced passes.

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

TEST_F(CrawlLoopTest, CrawlsTheWebWithinBudgetAndServesStatus) {
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 1).ok());
  ASSERT_TRUE(loop.value()->AddSeed(Seed(1), 1).ok());
  EXPECT_FALSE(loop.value()->AddSeed("ftp://h0.test/", 1).ok());

  // The status endpoint on the loop's own thread, queried from another.
  auto status_server =
      HttpServer::Listen(io, "127.0.0.1:0", [&](const HttpRequest& r) {
        return RouteStatusRequest(*loop.value(), r);
      });
  ASSERT_TRUE(status_server.ok());
  uint16_t status_port = status_server.value()->port();
  std::map<std::string, std::string> replies;
  std::thread client([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    replies["status"] = Ask(status_port, http::verb::get, "/status", "");
    replies["metrics"] = Ask(status_port, http::verb::get, "/metrics", "");
    std::string page =
        "http://h0.test:" + std::to_string(server_->port()) + "/p/3";
    replies["page"] =
        Ask(status_port, http::verb::get, "/page?url=" + page, "");
    replies["signal"] = Ask(status_port, http::verb::post, "/signal",
                            "{\"urls\": [\"" + page + "\", \"bad url\"]}");
    replies["stale"] =
        Ask(status_port, http::verb::post, "/signal",
            "{\"url\": \"" + page + "\", \"lastmod\": \"2000-01-01\"}");
    replies["status_after_stale"] =
        Ask(status_port, http::verb::get, "/status", "");
    replies["metrics_after_stale"] =
        Ask(status_port, http::verb::get, "/metrics", "");
    replies["bad_lastmod"] = Ask(status_port, http::verb::post, "/signal",
                                 "{\"url\": \"" + page + "\", \"lastmod\": 5}");
    // Probe: lastmod 9999-12-31 was accepted; more than a day ahead is 400.
    replies["future_lastmod"] =
        Ask(status_port, http::verb::post, "/signal",
            "{\"url\": \"" + page + "\", \"lastmod\": \"9999-12-31\"}");
    replies["bad"] = Ask(status_port, http::verb::post, "/signal", "not json");
    replies["missing"] = Ask(status_port, http::verb::get, "/nope", "");
  });
  double start = UnixNow();
  RunFor(io, *loop.value(), 3.0);
  double elapsed = UnixNow() - start;
  client.join();

  CrawlLoop& crawl = *loop.value();
  nlohmann::json s = crawl.StatusJson();
  // Every page was discovered (index + links), plus the two host roots.
  EXPECT_EQ(s["pages_known"], 32);
  EXPECT_EQ(s["hosts"], 2);
  // The budget: 20 pages/s with a burst of 5, never more.
  uint64_t fetched = s["pages_fetched_total"];
  EXPECT_LE(fetched, 20 * elapsed + 5 + 1);
  EXPECT_GE(fetched, 20 * 2.0);  // robots.txt first, then at full rate
  // Pages change every ~0.25-1 s: most refetches found new content; the
  // unchanged ones were 304s (the web honours If-None-Match).
  EXPECT_GT(s["signals_total"].get<int>(), 0);  // sitemap lastmod signals
  EXPECT_TRUE(s["errors"].empty()) << s.dump();
  for (const char* key :
       {"version", "uptime_s", "pages_known", "pages_fetched_total",
        "rate_target", "rate_actual", "hosts", "estimated_freshness", "queue",
        "errors", "robots_denied_total", "signals_total", "signals_stale_total",
        "loop_lag_ms", "host_rate_spread", "host_rate_weight"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }

  ASSERT_EQ(replies["status"].substr(0, 4), "200 ");
  auto js = nlohmann::json::parse(replies["status"].substr(4));
  EXPECT_EQ(js["rate_target"], 20.0);
  EXPECT_NE(replies["metrics"].find("\nfreshd_pages_fetched_total "),
            std::string::npos);
  // The host pull is a weight within its bounds (sched::HostPoolOptions).
  EXPECT_GE(js["host_rate_weight"].get<double>(), 2.0);
  EXPECT_LE(js["host_rate_weight"].get<double>(), 50.0);
  EXPECT_NE(replies["metrics"].find("\nfreshd_host_rate_weight "),
            std::string::npos);
  EXPECT_NE(
      replies["metrics"].find("freshd_fetch_outcomes_total{class=\"ok\"}"),
      std::string::npos);
  ASSERT_EQ(replies["page"].substr(0, 4), "200 ") << replies["page"];
  auto jp = nlohmann::json::parse(replies["page"].substr(4));
  EXPECT_GT(jp["fetches"].get<int>(), 0);
  EXPECT_GT(jp["change_rate_per_day"].get<double>(), 0);
  ASSERT_EQ(replies["signal"].substr(0, 4), "200 ") << replies["signal"];
  auto jsig = nlohmann::json::parse(replies["signal"].substr(4));
  EXPECT_EQ(jsig["signals"], 1);
  EXPECT_EQ(jsig["ignored"], 1);
  // A hint about a change before the page's last fetch is stale.
  ASSERT_EQ(replies["stale"].substr(0, 4), "200 ") << replies["stale"];
  auto jstale = nlohmann::json::parse(replies["stale"].substr(4));
  EXPECT_EQ(jstale["signals"], 0);
  EXPECT_EQ(jstale["stale"], 1);
  // ... and counted in /status and /metrics (>=: sitemap lastmods read in
  // the meantime may be stale too).
  ASSERT_EQ(replies["status_after_stale"].substr(0, 4), "200 ");
  auto jafter = nlohmann::json::parse(replies["status_after_stale"].substr(4));
  const uint64_t stale_before = js["signals_stale_total"];
  EXPECT_GE(jafter["signals_stale_total"].get<uint64_t>(), stale_before + 1);
  const std::string& metrics = replies["metrics_after_stale"];
  EXPECT_NE(metrics.find("# TYPE freshd_signals_stale_total counter\n"),
            std::string::npos);
  EXPECT_GE(MetricValue(metrics, "freshd_signals_stale_total"),
            stale_before + 1.0)
      << metrics;
  EXPECT_GE(s["signals_stale_total"].get<uint64_t>(), stale_before + 1);
  EXPECT_EQ(replies["bad_lastmod"].substr(0, 4), "400 ");
  EXPECT_NE(replies["bad_lastmod"].find("lastmod"), std::string::npos);
  EXPECT_EQ(replies["future_lastmod"].substr(0, 4), "400 ")
      << replies["future_lastmod"];
  EXPECT_NE(replies["future_lastmod"].find("future"), std::string::npos);
  EXPECT_EQ(replies["bad"].substr(0, 4), "400 ");
  EXPECT_EQ(replies["missing"].substr(0, 4), "404 ");

  // WARC output was written and closed (no .open file left), each file
  // with its CDXJ index beside it.
  int warcs = 0, indexes = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_ / "warc")) {
    const std::string ext = f.path().extension().string();
    EXPECT_TRUE(ext == ".gz" || ext == ".cdxj") << f.path();
    (ext == ".gz" ? warcs : indexes) += 1;
  }
  EXPECT_GE(warcs, 1);
  EXPECT_EQ(indexes, warcs);
}

// docs/DESIGN.md: parsing runs on a worker pool, so a parse that takes long
// (here: held until the status reply arrives) does not stall the io thread
// that serves /status; the held page completes once released.
// A page that answers 404 leaves queue.new for queue.failed, so new == 0
// says the frontier has been covered (issue #27).
TEST_F(CrawlLoopTest, AFailedPageIsCountedAsFailedNotNew) {
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(Seed(0) + "no-such-page", 1).ok());
  RunUntil(io, *loop.value(), 0, 10, [&] {
    return loop.value()->StatusJson()["queue"]["failed"].get<int>() >= 1;
  });
  nlohmann::json s = loop.value()->StatusJson();
  EXPECT_EQ(s["queue"]["failed"], 1) << s.dump();
  EXPECT_GE(s["errors"]["4xx"].get<int>(), 1) << s.dump();
  // Every other page exists: it is new, in flight or fetched, never failed.
  EXPECT_LE(s["queue"]["new"].get<int>() + 1, s["pages_known"].get<int>());
  const std::string metrics = loop.value()->MetricsText();
  EXPECT_EQ(MetricValue(metrics, "freshd_queue_failed"), 1.0) << metrics;
}

TEST_F(CrawlLoopTest, MetricsCountResponsesArchivedAsRevisits) {
  // robots.txt is fetched again every second with the same body: from its
  // second fetch on, its response is archived as a revisit of the first.
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 1).ok());
  RunUntil(io, *loop.value(), 0, 60, [&] {
    return MetricValue(loop.value()->MetricsText(),
                       "freshd_warc_deduplicated_total") >= 2;
  });
  const std::string metrics = loop.value()->MetricsText();
  const double deduped = MetricValue(metrics, "freshd_warc_deduplicated_total");
  EXPECT_GE(deduped, 2) << metrics;
  EXPECT_LT(deduped, MetricValue(metrics, "freshd_warc_records_total"));
}

TEST_F(CrawlLoopTest, StatusAnswersWhileAParseIsHeld) {
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 1).ok());
  auto status_server =
      HttpServer::Listen(io, "127.0.0.1:0", [&](const HttpRequest& r) {
        return RouteStatusRequest(*loop.value(), r);
      });
  ASSERT_TRUE(status_server.ok());
  const uint16_t status_port = status_server.value()->port();

  std::atomic<bool> first{true};
  std::promise<void> held, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> hold_timed_out{false};
  loop.value()->set_parse_hook_for_testing([&] {
    if (!first.exchange(false)) return;
    held.set_value();
    // A stalled io thread would never reply; give up after 10 s.
    if (released.wait_for(std::chrono::seconds(10)) !=
        std::future_status::ready) {
      hold_timed_out = true;
    }
  });
  std::string reply;
  bool saw_hold = false;
  std::thread client([&] {
    saw_hold = held.get_future().wait_for(std::chrono::seconds(20)) ==
               std::future_status::ready;
    if (saw_hold) reply = Ask(status_port, http::verb::get, "/status", "");
    release.set_value();
  });
  RunFor(io, *loop.value(), 3.0);
  client.join();

  ASSERT_TRUE(saw_hold) << "no HTML page was parsed";
  EXPECT_FALSE(hold_timed_out) << "the status reply waited for the parse";
  ASSERT_EQ(reply.substr(0, 4), "200 ") << reply;
  // Crawling went on after the release.
  nlohmann::json s = loop.value()->StatusJson();
  EXPECT_GE(s["pages_fetched_total"].get<int>(), 10) << s.dump();
  EXPECT_TRUE(s["errors"].empty()) << s.dump();
}

// /status and /metrics report how long the loop's thread was held: a
// handler that blocks it for 300 ms shows as a lag of at least 200 ms (the
// probe fires every 100 ms).
// The scheduler's thread and the network thread are apart: holding the
// scheduler's thread shows in scheduler_lag_ms, not in the network thread's
// loop_lag_ms.
TEST_F(CrawlLoopTest, StatusReportsEachThreadsLag) {
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  CrawlLoop& c = *loop.value();
  asio::steady_timer hold(io);
  hold.expires_after(std::chrono::milliseconds(500));
  hold.async_wait([](boost::system::error_code) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  RunUntil(io, c, 0.8, 10, [&] {
    return c.StatusJson()["scheduler_lag_ms"]["max"].get<double>() >= 200;
  });
  nlohmann::json s = c.StatusJson();
  EXPECT_GE(s["scheduler_lag_ms"]["max"].get<double>(), 200) << s.dump();
  EXPECT_LE(s["scheduler_lag_ms"]["p99"].get<double>(),
            s["scheduler_lag_ms"]["max"].get<double>());
  EXPECT_LT(s["loop_lag_ms"]["max"].get<double>(), 200) << s.dump();
  EXPECT_GE(MetricValue(c.MetricsText(), "freshd_scheduler_lag_max_seconds"),
            0.2);
}

// Beyond kStatusSlicedPages pages the status figures and the overview's
// pages due next come from passes spread over housekeeping turns (none
// holds the thread more than ~2.5 ms): they still cover every page.
TEST_F(CrawlLoopTest, ALargeFrontiersStatusComesFromPassesInSlices) {
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const int extra = static_cast<int>(kStatusSlicedPages) + 4000;
  for (int i = 0; i < extra; ++i) {
    ASSERT_TRUE(
        loop.value()->AddSeed(Seed(0) + "bulk/" + std::to_string(i), 1).ok());
  }
  CrawlLoop& c = *loop.value();
  const nlohmann::json before = c.StatusJson();
  ASSERT_EQ(before["pages_known"].get<int>(), extra);
  // No pass has run yet: the figures say they are partial.
  EXPECT_TRUE(before["summary_pass"]["sliced"].get<bool>()) << before.dump();
  EXPECT_FALSE(before["summary_pass"]["complete"].get<bool>());
  EXPECT_LT(before["summary_pass"]["pages_covered"].get<int>(), extra);
  RunUntil(io, c, 0, 60, [&] {
    const nlohmann::json s = c.StatusJson();
    return s["summary_pass"]["complete"].get<bool>() &&
           s["queue"]["new"].get<int>() + s["queue"]["failed"].get<int>() +
                   200 >=
               extra &&
           !c.OverviewJson()["due_next"].empty();
  });
  const nlohmann::json s = c.StatusJson();
  EXPECT_GE(s["summary_pass"]["pages_covered"].get<int>(), extra) << s.dump();
  // At 20 pages/s most pages are still new; every page was counted.
  EXPECT_GE(
      s["queue"]["new"].get<int>() + s["queue"]["failed"].get<int>() + 200,
      extra)
      << s.dump();
  EXPECT_LE(s["queue"]["new"].get<int>(), s["pages_known"].get<int>());
  EXPECT_GE(s["estimated_freshness"].get<double>(), 0);
  EXPECT_LE(s["estimated_freshness"].get<double>(), 1);
  const nlohmann::json due = c.OverviewJson()["due_next"];
  EXPECT_EQ(due.size(), kDueNext) << due.dump();
}

// The status endpoint on its own thread (daemon/status_service.h): while
// the scheduler's thread is held for 1 s, /status still answers within
// milliseconds, from the loop's last snapshot; once the thread is free the
// answers are live again, and POST /signal is answered after its commit.
TEST_F(CrawlLoopTest, StatusServiceAnswersWhileTheSchedulerIsBusy) {
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 1).ok());
  auto service = StatusService::Start(*loop.value(), "127.0.0.1:0");
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  const uint16_t port = service.value()->port();
  asio::steady_timer hold(io);
  std::promise<void> holding;
  hold.expires_after(std::chrono::milliseconds(700));
  hold.async_wait([&](boost::system::error_code) {
    holding.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  });
  std::string busy, live, signal;
  double busy_s = 0;
  std::thread client([&] {
    holding.get_future().wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto t0 = std::chrono::steady_clock::now();
    busy = Ask(port, http::verb::get, "/status", "");
    busy_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    live = Ask(port, http::verb::get, "/status", "");
    signal = Ask(port, http::verb::post, "/signal",
                 "{\"urls\": [\"" + Seed(0) + "\"]}");
  });
  RunFor(io, *loop.value(), 3.0);
  client.join();
  service.value().reset();
  ASSERT_EQ(busy.substr(0, 4), "200 ") << busy;
  EXPECT_LT(busy_s, 0.5);  // not the 1 s hold
  auto jb = nlohmann::json::parse(busy.substr(4));
  EXPECT_TRUE(jb.contains("snapshot_age_s")) << busy;
  EXPECT_TRUE(jb.contains("pages_known")) << busy;
  ASSERT_EQ(live.substr(0, 4), "200 ") << live;
  EXPECT_FALSE(
      nlohmann::json::parse(live.substr(4)).contains("snapshot_age_s"));
  EXPECT_EQ(signal.substr(0, 4), "200 ") << signal;
}

}  // namespace
}  // namespace freshd::daemon
