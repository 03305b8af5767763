// CrawlLoop's dispatch end to end on a many-page web: the token bucket,
// per-host limits, a very low rate, backpressure from a held parse pool,
// limited_by naming a busy scheduler thread, the overview's new pages.

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

// Engine: a many-page web for the throughput tests (static pages).
constexpr char kBigWeb[] = R"(
hosts = 4
pages_per_host = 150
[[class]]
name = "page"
share = 1.0
static_words = 40
)";

class EngineTest : public CrawlLoopTest {
 protected:
  void SetUp() override {
    CrawlLoopTest::SetUp();
    auto spec = sim::ParseWebSpec(kBigWeb, "big.toml");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    sim::TestWebOptions o;
    o.day_seconds = 86400;
    o.start_unix = UnixNow();
    big_ = std::make_shared<const sim::TestWeb>(
        sim::WebModel::Build(spec.value(), 5), o);
    auto server = sim::TestWebServer::Start(big_, "127.0.0.1", 0);
    ASSERT_TRUE(server.ok());
    big_server_ = std::move(server).value();
    config_.store.warc_dir.clear();
    config_.fetch.resolve.clear();
    for (int h = 0; h < 4; ++h) {
      config_.fetch.resolve["h" + std::to_string(h) + ".test"] = "127.0.0.1";
    }
    config_.politeness.min_delay_s = 0;
    config_.fetch.max_connections = 16;
    config_.sched.min_interval_s = 3600;
    config_.sched.max_interval_s = 7200;
  }
  std::string BigSeed(int host) const {
    return "http://h" + std::to_string(host) +
           ".test:" + std::to_string(big_server_->port()) + "/";
  }
  // Seeds every host and signals 100 more pages on each, so that dispatch
  // has 400 pages to choose from at the start.
  void SeedWithKnownPages(CrawlLoop& loop) {
    std::vector<std::string> known;
    for (int h = 0; h < 4; ++h) {
      ASSERT_TRUE(loop.AddSeed(BigSeed(h), 1).ok());
      for (int p = 0; p < 100; ++p) {
        known.push_back(BigSeed(h) + "p/" + std::to_string(p));
      }
    }
    ASSERT_EQ(loop.Signal(known)["added"], 400);
  }
  // Seeds every host, runs until every page is fetched once (or 60 s), and
  // samples /status every 5 ms on the loop's thread into `max_network`.
  double CrawlOnce(asio::io_context& io, CrawlLoop& loop, int* max_network) {
    for (int h = 0; h < 4; ++h) EXPECT_TRUE(loop.AddSeed(BigSeed(h), 1).ok());
    asio::steady_timer sample(io);
    std::function<void()> tick = [&] {
      sample.expires_after(std::chrono::milliseconds(5));
      sample.async_wait([&](boost::system::error_code ec) {
        if (ec) return;
        *max_network = std::max(
            *max_network, loop.StatusJson()["in_flight"]["network"].get<int>());
        tick();
      });
    };
    tick();
    const double start = UnixNow();
    RunUntil(io, loop, 0, 60, [&] {
      nlohmann::json s = loop.StatusJson();
      return s["pages_known"].get<int>() >= 600 &&
             s["queue"]["new"].get<int>() == 0 &&
             s["in_flight"]["total"].get<int>() == 0;
    });
    sample.cancel();
    return UnixNow() - start;
  }
  std::shared_ptr<const sim::TestWeb> big_;
  std::unique_ptr<sim::TestWebServer> big_server_;
};

// Token bucket semantics (issue #25 item 5): `burst` never caps the
// sustained rate. With burst = 1 a tick-paced loop (one token per ≤ 10 ms
// tick) was held near 100 pages/s; event-driven dispatch with the bucket's
// refill window crawls at what the network allows.
TEST_F(EngineTest, BurstOfOneDoesNotCapTheRate) {
  config_.budget.rate = 50000;
  config_.budget.burst = 1;
  config_.politeness.max_in_flight_per_host = 4;
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  int max_network = 0;
  const double elapsed = CrawlOnce(io, *loop.value(), &max_network);
  nlohmann::json s = loop.value()->StatusJson();
  const double fetched = s["pages_fetched_total"].get<double>();
  EXPECT_GE(fetched, 600) << s.dump();
  EXPECT_TRUE(s["errors"].empty()) << s.dump();
  // 604 pages; the old ceiling was 100 pages/s (over 6 s).
  EXPECT_GT(fetched / elapsed, 200)
      << fetched << " pages in " << elapsed << " s; " << s.dump();
  // The per-host limit held at the scheduler: never more than 4 hosts × 4
  // fetches handed to the network thread.
  EXPECT_LE(max_network, 16);
  EXPECT_GT(max_network, 1);
}

// The per-host in-flight limit holds at the scheduler, not only on the
// wire: with max_in_flight_per_host = 1 at most one fetch per host is ever
// handed to the fetcher (it queued up to 64 per host before).
TEST_F(EngineTest, PerHostLimitHoldsAtTheScheduler) {
  config_.budget.rate = 50000;
  config_.budget.burst = 1000;
  config_.politeness.max_in_flight_per_host = 1;
  config_.fetch.max_connections = 64;
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  int max_network = 0;
  CrawlOnce(io, *loop.value(), &max_network);
  nlohmann::json s = loop.value()->StatusJson();
  EXPECT_GE(s["pages_fetched_total"].get<int>(), 600) << s.dump();
  EXPECT_LE(max_network, 4);  // 4 hosts × 1
  EXPECT_GE(max_network, 2);
}

// The low end of the budget: at 0.01 pages/s the first token is the only
// one in the first 100 s, so exactly one page is fetched.
TEST_F(EngineTest, AVeryLowRateIsHeld) {
  config_.budget.rate = 0.01;
  config_.budget.burst = 1;
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_TRUE(loop.value()->AddSeed(BigSeed(0), 1).ok());
  RunFor(io, *loop.value(), 2.0);
  nlohmann::json s = loop.value()->StatusJson();
  EXPECT_EQ(s["pages_fetched_total"].get<int>(), 1) << s.dump();
  EXPECT_EQ(s["limited_by"], "budget") << s.dump();
}

// Issue #40: the status page listed never-fetched pages with their value,
// the new-page value (86,400). /overview's due_next marks them "new" (the
// page shows that word instead), and only them.
TEST_F(EngineTest, OverviewMarksNeverFetchedPagesNew) {
  config_.budget.rate = 0.01;  // one page fetched in the first 100 s
  config_.budget.burst = 1;
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_NO_FATAL_FAILURE(SeedWithKnownPages(*loop.value()));
  RunFor(io, *loop.value(), 2.0);
  ASSERT_EQ(loop.value()->StatusJson()["pages_fetched_total"], 1);
  const nlohmann::json due = loop.value()->OverviewJson()["due_next"];
  ASSERT_FALSE(due.empty());
  int fresh = 0;
  for (const nlohmann::json& row : due) {
    ASSERT_TRUE(row.contains("new")) << row.dump();
    EXPECT_EQ(row["new"].get<bool>(), row["last_fetch_unix"].is_null())
        << row.dump();
    fresh += row["new"].get<bool>() ? 1 : 0;
  }
  // 404 pages known, one fetched: the pages due next are new ones.
  EXPECT_GE(fresh, static_cast<int>(due.size()) - 1) << due.dump();
  EXPECT_GT(fresh, 0);
}

// Backpressure: while the parse pool is held, bodies waiting for it stop
// dispatch at [engine] queue_bytes / 2 instead of piling up, and /status
// names the parse stage as the limit.
TEST_F(EngineTest, AHeldParsePoolStopsDispatch) {
  config_.budget.rate = 50000;
  config_.budget.burst = 1000;
  config_.politeness.max_in_flight_per_host = 4;
  config_.engine.queue_bytes = 8192;  // below the file's minimum, for a test
  config_.engine.parse_threads = 1;
  config_.fetch.max_connections = 8;
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  loop.value()->set_parse_hook_for_testing(
      [released] { released.wait_for(std::chrono::seconds(10)); });
  // 400 pages known at the start, so dispatch has work when it stops.
  ASSERT_NO_FATAL_FAILURE(SeedWithKnownPages(*loop.value()));
  nlohmann::json held;
  asio::steady_timer look(io);
  look.expires_after(std::chrono::milliseconds(1500));
  look.async_wait([&](boost::system::error_code) {
    held = loop.value()->StatusJson();
    release.set_value();
  });
  RunFor(io, *loop.value(), 3.0);
  ASSERT_FALSE(held.is_null());
  // The first bodies filled the parse queue past its bound (4 KiB): no more
  // was dispatched, though 400 pages were due and connections were free.
  EXPECT_EQ(held["limited_by"], "parse") << held.dump();
  EXPECT_EQ(held["pages_fetched_total"], 0) << held.dump();
  EXPECT_EQ(held["in_flight"]["network"], 0) << held.dump();
  EXPECT_LE(held["in_flight"]["parse"].get<int>(), 8) << held.dump();
  EXPECT_GE(held["pages_known"].get<int>(), 404) << held.dump();
  // Released, the crawl went on.
  nlohmann::json s = loop.value()->StatusJson();
  EXPECT_GT(s["pages_fetched_total"].get<int>(),
            held["pages_fetched_total"].get<int>())
      << s.dump();
}

// /status names the scheduler's thread when it, not the network, holds the
// connection slots: a fetch frees its slot only once this thread takes its
// result. Here the thread is kept busy 10 ms of every ~11 (as a selection
// at 10M pages did), the test web answers in about a millisecond, and the
// slots are full of fetches that have ended. Without the busy thread the
// same crawl is held by the network too.
TEST_F(EngineTest, ABusySchedulerThreadIsNamedNotTheNetwork) {
  config_.budget.rate = 50000;
  config_.budget.burst = 1000;
  config_.politeness.max_in_flight_per_host = 4;
  config_.fetch.max_connections = 4;
  for (bool busy : {false, true}) {
    SCOPED_TRACE(busy ? "busy" : "not busy");
    config_.store.path = (dir_ / (busy ? "busy" : "quiet")).string();
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_NO_FATAL_FAILURE(SeedWithKnownPages(*loop.value()));
    asio::steady_timer burn(io);
    std::function<void()> again = [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      burn.expires_after(std::chrono::milliseconds(1));
      burn.async_wait([&](boost::system::error_code ec) {
        if (!ec) again();
      });
    };
    if (busy) again();
    nlohmann::json s;
    asio::steady_timer look(io);
    look.expires_after(std::chrono::milliseconds(500));
    look.async_wait([&](boost::system::error_code) {
      s = loop.value()->StatusJson();
      burn.cancel();
    });
    RunFor(io, *loop.value(), 0.6);
    ASSERT_FALSE(s.is_null());
    EXPECT_GT(s["pages_fetched_total"].get<int>(), 20) << s.dump();
    const double scheduler = s["limits"]["scheduler"].get<double>();
    const double network = s["limits"]["network"].get<double>();
    if (busy) {
      EXPECT_GT(s["queue"]["new"].get<int>(), 0) << s.dump();  // not done
      EXPECT_EQ(s["limited_by"], "scheduler") << s.dump();
      // Measured idle: scheduler ~0.9 of the time, network ~0.1; at load 5
      // on 2 cores 0.66 / 0.34 (the test web's replies wait for a core
      // too), so the margin asked is "more than the network", not 2x.
      EXPECT_GT(scheduler, network) << s.dump();
    } else {
      // It may be done by now; while it ran, the network held it part of
      // the time (under ASan on a loaded machine the scheduler's thread is
      // slow enough to hold it too: about a third).
      EXPECT_GT(network, 0.1) << s.dump();
    }
  }
}

}  // namespace
}  // namespace freshd::daemon
