// StatusViews alone (no network, no CrawlLoop): a hand-built page book and
// scheduler, and the other parts' figures handed in as plain values; the
// JSON of /status, /page, /hosts, /overview, /history and the /metrics text
// it makes of them, the snapshot, and the summary passes in slices of a
// frontier past kStatusSlicedPages.

#include "daemon/status_views.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "base/clock.h"
#include "sched/scheduler.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

class StatusViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sched::SchedulerOptions o;
    o.policy = "freshness";
    auto created = sched::Scheduler::Create(o);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    sched_ = std::move(created).value();
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path());
    a_ = book_->InternHost("a.test").value();
    b_ = book_->InternHost("b.test").value();
    ASSERT_TRUE(book_->Add("http://a.test/1", a_, 1.0, 100).ok());
    ASSERT_TRUE(book_->Add("http://a.test/2", a_, 1.0, 100).ok());
    ASSERT_TRUE(book_->Add("http://b.test/1", b_, 1.0, 100).ok());
    // One page fetched, as the observer records it.
    fetch::FetchResult ok;
    ok.outcome = fetch::OutcomeClass::kOk;
    ok.status = 200;
    PageBook::Fetched f = book_->RecordFetch(0, ok, nullptr, 7, kT0);
    book_->Observe(f.observation);

    recovery_.pages = 11;
    recovery_.pages_reset = 2;
    recovery_.corrupt = 1;

    fetches_.fetched_total = 1;
    fetches_.robots_denied_total = 2;
    fetches_.last_minute = 30;
    fetches_.outcomes = {
        {"ok", 1}, {"not-modified", 5}, {"timeout", 3}, {"dns", 0}};
    stages_.in_flight = 5;
    stages_.on_network = 3;
    stages_.fair_share_cap = 7;
    stages_.fair_share_hosts = 9;
    stages_.fair_share_contended = true;
    stages_.fair_share_low_yield = 1;
    stages_.parse_hosts_over_share = 2;
    stages_.parse_share_max = 0.5;
    stages_.parse_seconds = 12.5;
    stages_.limit_seconds[static_cast<int>(Limit::kNetwork)] = 1;
    stages_.limit_seconds[static_cast<int>(Limit::kBudget)] = 3;
    stages_.parse_jobs = 7;
    stages_.parse_bytes = 700;
    stages_.committing = true;
    stages_.commit_pending_bytes = 10;
    stages_.commit_errors = 1;
    stages_.writer.queued = 2;
    stages_.writer.queued_bytes = 20;
    stages_.writer.errors = 2;
    stages_.writer.commits = 9;
    stages_.network_lag.max_s = 0.004;
    stages_.scheduler_lag.p99_s = 0.002;
  }

  // Views over the book, reading the figures of this fixture.
  std::unique_ptr<StatusViews> Views(double slice_cpu_s = kStatusSliceCpuS) {
    StatusViews::Options o;
    o.slice_cpu_s = slice_cpu_s;
    o.policy = "freshness";
    o.max_interval_s = 86400;
    o.store_path = dir_.path();
    o.started_unix = UnixNow() - 120;
    StatusViews::Sources s;
    s.fetches = [this](double) { return fetches_; };
    s.signals = [] { return StatusViews::SignalCounts{4, 1, 2}; };
    s.stages = [this] { return stages_; };
    s.host_gate = [this](sched::HostId h) {
      return h == b_ ? StatusViews::HostGate{SteadyNow() + 100, 1}
                     : StatusViews::HostGate{};
    };
    s.rate_target = [] { return 5.0; };
    s.stopping = [this] { return stopping_; };
    s.cluster_metrics = [](const nlohmann::json& status, std::string* out) {
      *out += "cluster_hook_pages " +
              std::to_string(status["pages_known"].get<int>()) + "\n";
    };
    return std::make_unique<StatusViews>(std::move(o), sched_.get(),
                                         book_.get(), &rules_, &recovery_,
                                         std::move(s));
  }

  static constexpr double kT0 = 1.79e9;
  store::TempDir dir_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  sched::HostId a_ = 0, b_ = 0;
  RuleMatcher rules_;
  RecoveryReport recovery_;
  StatusViews::FetchCounts fetches_;
  StatusViews::StageFigures stages_;
  bool stopping_ = false;
};

TEST_F(StatusViewsTest, StatusJsonReadsTheBookTheSchedulerAndTheFigures) {
  auto views = Views();
  const nlohmann::json s = views->StatusJson();
  EXPECT_EQ(s["state"], "running");
  EXPECT_EQ(s["pages_known"], 3);
  EXPECT_EQ(s["hosts"], 2);
  EXPECT_EQ(s["pages_fetched_total"], 1);
  EXPECT_EQ(s["robots_denied_total"], 2);
  EXPECT_GE(s["uptime_s"].get<double>(), 120);
  EXPECT_DOUBLE_EQ(s["rate_actual"].get<double>(), 0.5);  // 30 in 60 s
  EXPECT_EQ(s["rate_target"], 5.0);
  // Errors: every class but ok and not-modified with a count.
  EXPECT_EQ(s["errors"], nlohmann::json({{"timeout", 3}})) << s.dump();
  EXPECT_EQ(s["queue"]["new"], 2);  // two pages never fetched
  EXPECT_EQ(s["summary_pass"],
            nlohmann::json(
                {{"sliced", false}, {"complete", true}, {"pages_covered", 3}}));
  EXPECT_EQ(s["signals_total"], 4);
  EXPECT_EQ(s["signals_stale_total"], 1);
  EXPECT_EQ(s["sitemaps_fetched_total"], 2);
  EXPECT_TRUE(s["site_feeds"].is_null());  // no reader: null
  EXPECT_EQ(s["store_errors_total"], 3);   // committer's + writer's
  EXPECT_EQ(s["policy"], "freshness");
  EXPECT_DOUBLE_EQ(s["loop_lag_ms"]["max"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(s["scheduler_lag_ms"]["p99"].get<double>(), 2);
  EXPECT_EQ(s["in_flight"], nlohmann::json({{"network", 3},
                                            {"parse", 2},
                                            {"total", 5},
                                            {"per_host_cap", 7},
                                            {"hosts_active", 9},
                                            {"contended", true},
                                            {"hosts_low_yield", 1},
                                            {"hosts_over_parse_share", 2},
                                            {"parse_share_max", 0.5}}));
  EXPECT_DOUBLE_EQ(s["stages"]["parse_seconds_total"].get<double>(), 12.5);
  EXPECT_EQ(s["stages"]["parse_queue"], 7);
  EXPECT_EQ(s["stages"]["parse_queue_bytes"], 700);
  EXPECT_EQ(s["stages"]["write_queue"], 3);  // 2 queued + 1 committing
  EXPECT_EQ(s["stages"]["write_queue_bytes"], 30);
  EXPECT_EQ(s["stages"]["write_pending_pages"], book_->marked_pages());
  EXPECT_EQ(s["stages"]["commits_total"], 9);
  EXPECT_DOUBLE_EQ(s["limits"]["network"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(s["limits"]["budget"].get<double>(), 0.75);
  EXPECT_EQ(s["limited_by"],
            LimitName(LimitedBy(stages_.limit_seconds, 0.5, 5.0)));
  EXPECT_EQ(
      s["recovered"],
      nlohmann::json({{"pages", 11}, {"pages_reset", 2}, {"corrupt", 1}}));
  EXPECT_TRUE(s["cluster"].is_null());
  EXPECT_EQ(s["rules"], nlohmann::json::array());

  stopping_ = true;
  EXPECT_EQ(views->StatusJson()["state"], "stopping");
}

TEST_F(StatusViewsTest, MetricsTextFollowsTheStatusJson) {
  auto views = Views();
  const std::string m = views->MetricsText();
  EXPECT_NE(m.find("\nfreshd_pages_known 3\n"), std::string::npos) << m;
  EXPECT_NE(m.find("\nfreshd_in_flight_fetches 5\n"), std::string::npos);
  EXPECT_NE(m.find("\nfreshd_in_flight_per_host_cap 7\n"), std::string::npos);
  EXPECT_NE(m.find("\nfreshd_in_flight_hosts_over_parse_share 2\n"),
            std::string::npos);
  EXPECT_NE(m.find("\nfreshd_parse_cpu_seconds_total 12.5\n"),
            std::string::npos);
  EXPECT_NE(m.find("freshd_fetch_outcomes_total{class=\"timeout\"} 3\n"),
            std::string::npos);
  EXPECT_NE(m.find("freshd_fetch_outcomes_total{class=\"dns\"} 0\n"),
            std::string::npos);
  EXPECT_NE(m.find("\nfreshd_parse_queue_bytes 700\n"), std::string::npos);
  EXPECT_NE(m.find("\nfreshd_write_queue 3\n"), std::string::npos);
  EXPECT_NE(m.find("\nfreshd_sitemaps_fetched_total 2\n"), std::string::npos);
  // The cluster's families come after the outcomes, before the operator's.
  const size_t hook = m.find("\ncluster_hook_pages 3\n");
  ASSERT_NE(hook, std::string::npos) << m;
  EXPECT_LT(m.find("freshd_fetch_outcomes_total{"), hook);
  EXPECT_GT(m.find("freshd_hosts_backoff"), hook);
}

TEST_F(StatusViewsTest, PageJsonOfAKnownPageOnly) {
  auto views = Views();
  EXPECT_EQ(views->PageJson("http://a.test/9").status().code(),
            Status::Code::kNotFound);
  EXPECT_FALSE(views->PageJson("not a url").ok());
  auto page = views->PageJson("http://a.test/1");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  const nlohmann::json& p = page.value();
  EXPECT_EQ(p["url"], "http://a.test/1");
  EXPECT_EQ(p["host"], "a.test");
  EXPECT_EQ(p["fetches"], 1);
  EXPECT_EQ(p["last_fetch_unix"], kT0);
  EXPECT_FALSE(p["in_flight"].get<bool>());
  EXPECT_TRUE(p["rule"].is_null());
  // Due by the max_interval floor at the latest.
  ASSERT_TRUE(p["next_expected_fetch_unix"].is_number()) << p.dump();
  EXPECT_LE(p["next_expected_fetch_unix"].get<double>(),
            std::max(UnixNow() + 1, kT0 + 86400));
  auto fresh = views->PageJson("http://b.test/1");
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh.value()["last_fetch_unix"].is_null());
  EXPECT_TRUE(fresh.value()["next_expected_fetch_unix"].is_null());
}

TEST_F(StatusViewsTest, HostsJsonSortsAndShowsTheGate) {
  auto views = Views();
  const nlohmann::json by_pages = views->HostsJson(0, 10, "pages");
  EXPECT_EQ(by_pages["total"], 2);
  ASSERT_EQ(by_pages["hosts"].size(), 2u) << by_pages.dump();
  EXPECT_EQ(by_pages["hosts"][0]["host"], "a.test");  // 2 pages
  EXPECT_EQ(by_pages["hosts"][0]["pages"], 2);
  EXPECT_TRUE(by_pages["hosts"][0]["next_allowed_unix"].is_null());
  const nlohmann::json& b = by_pages["hosts"][1];
  EXPECT_EQ(b["host"], "b.test");
  EXPECT_EQ(b["in_flight"], 1);
  ASSERT_TRUE(b["next_allowed_unix"].is_number());
  EXPECT_NEAR(b["next_allowed_unix"].get<double>(), UnixNow() + 100, 5);
  EXPECT_FALSE(b["backoff"].get<bool>());  // no host error recorded

  // A host error noted on b.test with its gate closed: back-off.
  fetch::FetchResult err;
  err.url = "http://b.test/1";
  err.outcome = fetch::OutcomeClass::kHttp5xx;
  err.status = 503;
  views->NoteFetch(2, err, UnixNow());
  const nlohmann::json by_errors = views->HostsJson(0, 1, "errors");
  ASSERT_EQ(by_errors["hosts"].size(), 1u);
  EXPECT_EQ(by_errors["hosts"][0]["host"], "b.test");
  EXPECT_EQ(by_errors["hosts"][0]["errors"], 1);
  EXPECT_TRUE(by_errors["hosts"][0]["backoff"].get<bool>());
  EXPECT_EQ(views->HostsJson(1, 5, "host")["hosts"][0]["host"], "b.test");
}

TEST_F(StatusViewsTest, OverviewListsDuePagesAndRecentFetches) {
  auto views = Views();
  fetch::FetchResult r;
  r.url = "http://a.test/1";
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.bytes = 123;
  views->NoteFetch(0, r, UnixNow());
  const nlohmann::json o = views->OverviewJson();
  EXPECT_EQ(o["errors"], nlohmann::json({{"timeout", 3}, {"dns", 0}}));
  ASSERT_EQ(o["due_next"].size(), 3u) << o.dump();
  size_t fresh = 0;
  for (const auto& row : o["due_next"]) fresh += row["new"].get<bool>();
  EXPECT_EQ(fresh, 2u);
  ASSERT_EQ(o["recent_fetches"].size(), 1u);
  EXPECT_EQ(o["recent_fetches"][0]["url"], "http://a.test/1");
  EXPECT_EQ(o["recent_fetches"][0]["bytes"], 123);
}

TEST_F(StatusViewsTest, SnapshotAndHistoryComeWithTheTick) {
  auto views = Views();
  EXPECT_EQ(views->snapshot(), nullptr);
  const double now = UnixNow();
  views->Tick(now);
  auto snapshot = views->snapshot();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ((*snapshot)["pages_known"], 3);
  EXPECT_GE((*snapshot)["snapshot_unix"].get<double>(), now);
  const nlohmann::json h = views->HistoryJson();
  EXPECT_FALSE(h.empty()) << h.dump();
}

TEST_F(StatusViewsTest, ALargeFrontiersFiguresComeFromPassesInSlices) {
  const size_t extra = kStatusSlicedPages + 4000;
  for (size_t i = 0; i < extra; ++i) {
    ASSERT_TRUE(book_
                    ->Add("http://a.test/bulk/" + std::to_string(i), a_, 1.0,
                          UINT32_MAX)
                    .ok());
  }
  const size_t pages = book_->size();
  // One slice of each pass a turn, whatever the machine's speed.
  auto views = Views(/*slice_cpu_s=*/0);
  const nlohmann::json before = views->StatusJson();
  EXPECT_TRUE(before["summary_pass"]["sliced"].get<bool>());
  EXPECT_FALSE(before["summary_pass"]["complete"].get<bool>());
  EXPECT_LT(before["summary_pass"]["pages_covered"].get<size_t>(), pages);
  // The overview asks for its pass; turns of ≤ kStatusSliceCpuS finish
  // both.
  EXPECT_TRUE(views->OverviewJson()["due_next"].empty());
  int turns = 0;
  for (; turns < 100000; ++turns) {
    views->Tick(UnixNow());
    const nlohmann::json s = views->StatusJson();
    if (s["summary_pass"]["complete"].get<bool>() &&
        !views->OverviewJson()["due_next"].empty()) {
      break;
    }
  }
  // 4,096 pages a slice, one of each pass a turn: the summary completes in
  // its ceil(pages / 4096)-th turn, the due pass beside it (a summary that
  // took whole turns once starved the due pass: it never completed).
  const int slices = static_cast<int>((pages + 4095) / 4096);
  EXPECT_EQ(turns, slices - 1);
  const nlohmann::json s = views->StatusJson();
  EXPECT_EQ(s["summary_pass"]["pages_covered"].get<size_t>(), pages);
  EXPECT_EQ(s["queue"]["new"].get<size_t>(), pages - 1);
  EXPECT_EQ(views->OverviewJson()["due_next"].size(), kDueNext);
}

}  // namespace
}  // namespace freshd::daemon
