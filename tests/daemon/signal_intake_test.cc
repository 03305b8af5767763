// SignalIntake alone: a real Scheduler, PageBook, Frontier and ParseQueue;
// the network hand-off is a function answering from canned responses on
// the test's thread. No network, no loop.

#include "daemon/signal_intake.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <future>
#include <map>

#include "fetch/crawler.h"
#include "store/warc_format.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

// One gzip member, as the WARC writer makes them.
std::string Gzip(std::string_view in) {
  Result<std::string> gz = store::GzipMember(in);
  EXPECT_TRUE(gz.ok());
  return gz.ok() ? *gz : std::string();
}

fetch::FetchResult Response(const std::string& url, std::string body,
                            std::string encoding = "") {
  fetch::FetchResult r;
  r.url = r.final_url = url;
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.body = std::move(body);
  r.content_encoding = std::move(encoding);
  return r;
}

class SignalIntakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = sched::Scheduler::Create(sched::SchedulerOptions{});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(s).value();
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path());
    auto scope = UrlScope::Create(CrawlerConfig{});
    ASSERT_TRUE(scope.ok());
    frontier_ = std::make_unique<Frontier>(std::move(scope).value(), 100000,
                                           book_.get(), sched_.get());
    frontier_->AddScope("http://a.test/");
    parse_ = std::make_unique<ParseQueue>(io_, 1);
  }

  std::unique_ptr<SignalIntake> Make(SiteFeedsConfig feeds = {}) {
    SignalIntake::Options o;
    o.site_feeds = feeds;
    o.max_decompressed_bytes = 64 << 20;
    o.robots_cache_s = 400;
    SignalIntake::Hooks h;
    h.fetch = [this](fetch::CrawlRequest req, SignalIntake::FetchDone done) {
      requests_.push_back(req);
      auto it = responses_.find(req.url);
      fetch::FetchResult r;
      if (it == responses_.end()) {
        r.url = r.final_url = req.url;
        r.outcome = fetch::OutcomeClass::kHttp4xx;
        r.status = 404;
      } else {
        r = it->second;
      }
      done(std::move(r), 0);
    };
    h.refresh_robots = [this](std::vector<std::string> origins) {
      refreshed_.push_back(std::move(origins));
    };
    h.archive = [](fetch::FetchResult, double) {};
    h.owned = [this](sched::HostId host) { return host != not_owned_; };
    h.commit = [this] { ++commits_; };
    h.dispatch = [] {};
    return std::make_unique<SignalIntake>(io_, o, book_.get(), sched_.get(),
                                          frontier_.get(), parse_.get(),
                                          std::move(h));
  }

  // Runs io until `done` holds (the parse pool posts from its thread).
  void RunUntil(const std::function<bool()>& done) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(done());
  }

  sched::PageId FetchedPage(const std::string& url, double at) {
    auto page = frontier_->AddUrl(url, 1, false, at);
    EXPECT_TRUE(page.has_value());
    book_->Observe({*page, at, sched::FetchedObs{}});
    return *page;
  }

  store::TempDir dir_;
  boost::asio::io_context io_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  std::unique_ptr<Frontier> frontier_;
  std::unique_ptr<ParseQueue> parse_;
  std::map<std::string, fetch::FetchResult> responses_;
  std::vector<fetch::CrawlRequest> requests_;
  std::vector<std::vector<std::string>> refreshed_;
  sched::HostId not_owned_ = UINT32_MAX;
  int commits_ = 0;
};

TEST_F(SignalIntakeTest, GzipSitemapIsAParseJobAndAppliesInSlices) {
  constexpr int kEntries = 3 * kSitemapSlice + 100;
  std::string doc =
      "<?xml version=\"1.0\"?>\n<urlset "
      "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (int i = 0; i < kEntries; ++i) {
    doc +=
        "<url><loc>http://a.test/item/" + std::to_string(i) + "</loc></url>\n";
  }
  doc += "<url><loc>http://elsewhere.test/x</loc></url>\n</urlset>\n";
  const std::string gz = Gzip(doc);
  responses_["http://a.test/sitemap.xml.gz"] =
      Response("http://a.test/sitemap.xml.gz", gz, "gzip");
  auto intake = Make();

  // The only parse worker is held, so the sitemap's job waits, counted.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  parse_->Submit(
      Response("http://a.test/hold", "x"), 1 << 20,
      [released](fetch::FetchResult&) {
        released.wait();
        return 0;
      },
      [](fetch::FetchResult, int) {});
  intake->OnSitemaps("http://a.test", {"http://a.test/sitemap.xml.gz"});
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_TRUE(requests_[0].defer_decoding);  // decoded on the pool
  EXPECT_EQ(parse_->jobs(), 2u);
  EXPECT_EQ(parse_->bytes(), gz.size() + 1);
  release.set_value();

  RunUntil([&] { return intake->sitemaps_fetched() == 1; });
  EXPECT_EQ(parse_->jobs(), 0u);
  EXPECT_EQ(parse_->bytes(), 0u);
  // The first slice is applied; the rest follow a slice a turn.
  EXPECT_EQ(book_->size(), kSitemapSlice);
  RunUntil([&] { return book_->size() == static_cast<size_t>(kEntries); });
  EXPECT_GE(commits_, 4);
  EXPECT_FALSE(book_->Find("http://elsewhere.test/x"));  // out of scope
}

TEST_F(SignalIntakeTest, ADateIsConsideredOnce) {
  auto intake = Make();
  const double t0 = 1.7e9;
  const sched::PageId page = FetchedPage("http://a.test/p", t0);
  const auto lastmod = sched::SignalSource::kSitemapLastmod;
  // Older than the copy: considered, stale.
  EXPECT_FALSE(intake->ConsiderDatedSignal(page, t0 - 100, t0 + 10, lastmod));
  EXPECT_EQ(intake->signals_stale_total(), 1u);
  EXPECT_TRUE(intake->ConsiderDatedSignal(page, t0 + 5, t0 + 10, lastmod));
  EXPECT_EQ(book_->meta(page).last_signal_lastmod, t0 + 5);
  EXPECT_TRUE(book_->marked());
  // The same date from a feed: not considered again.
  EXPECT_FALSE(intake->ConsiderDatedSignal(page, t0 + 5, t0 + 20,
                                           sched::SignalSource::kFeedEntry));
  EXPECT_EQ(intake->signals_total(), 1u);
  EXPECT_EQ(intake->signals_stale_total(), 1u);
  // A page never fetched has no copy to be stale.
  auto fresh = frontier_->AddUrl("http://a.test/new", 1, false, t0);
  EXPECT_FALSE(intake->ConsiderDatedSignal(*fresh, t0 + 5, t0 + 20, lastmod));
}

// Dates that cannot be true (issue 44 item 4): more than a day ahead,
// before 1994, before the Last-Modified of our copy. Dropped before they
// are considered (so not remembered: a later sane date is still newer),
// counted by reason and host, never a signal nor stale.
TEST_F(SignalIntakeTest, ImpossibleDatesAreDroppedAndCounted) {
  auto intake = Make();
  // The copy: fetched at t0 with Last-Modified 1.7e9 (Tue, 14 Nov 2023
  // 22:13:20 GMT).
  const double lm = 1.7e9, t0 = lm + 500, now = t0 + 100;
  auto page = frontier_->AddUrl("http://a.test/p", 1, false, t0);
  ASSERT_TRUE(page.has_value());
  fetch::FetchResult r = Response("http://a.test/p", "<html>hi</html>");
  r.last_modified = "Tue, 14 Nov 2023 22:13:20 GMT";
  book_->Observe(book_->RecordFetch(*page, r, nullptr, 42, t0).observation);
  ASSERT_EQ(book_->cold_fields(*page).last_modified, r.last_modified);
  const auto sitemap = sched::SignalSource::kSitemapLastmod;
  const auto feed = sched::SignalSource::kFeedEntry;

  // Two days ahead: a clock or a CMS wrong, not a time zone.
  EXPECT_FALSE(
      intake->ConsiderDatedSignal(*page, now + 2 * 86400, now, sitemap));
  // 1990 (and 1970, the epoch placeholder): before any sitemap.
  EXPECT_FALSE(intake->ConsiderDatedSignal(*page, 631152000, now, feed));
  EXPECT_FALSE(intake->ConsiderDatedSignal(*page, 0, now, sitemap));
  // Three days before the copy's Last-Modified: the server says later.
  EXPECT_FALSE(
      intake->ConsiderDatedSignal(*page, lm - 3 * 86400, now, sitemap));
  EXPECT_EQ(intake->dated_dropped(DatedSignalCheck::kFuture), 1u);
  EXPECT_EQ(intake->dated_dropped(DatedSignalCheck::kTooOld), 2u);
  EXPECT_EQ(intake->dated_dropped(DatedSignalCheck::kBeforeHistory), 1u);
  EXPECT_EQ(intake->signals_total(), 0u);
  EXPECT_EQ(intake->signals_stale_total(), 0u);
  EXPECT_EQ(book_->meta(*page).last_signal_lastmod, 0);  // none remembered

  // The Last-Modified's own day, date only: its claim holds the
  // Last-Modified and ends after our fetch, so it is a signal.
  EXPECT_TRUE(intake->ConsiderDatedSignal(*page, 1699920000, now, sitemap));
  EXPECT_EQ(intake->dated_dropped(DatedSignalCheck::kBeforeHistory), 1u);
  // Twelve hours ahead (a site a time zone ahead): taken.
  EXPECT_TRUE(intake->ConsiderDatedSignal(*page, now + 12 * 3600, now, feed));
  EXPECT_EQ(intake->signals_total(), 2u);
  EXPECT_EQ(intake->signals_stale_total(), 0u);
  EXPECT_EQ(intake->signals_by_source(feed), 1u);
  EXPECT_EQ(intake->signals_by_source(sitemap), 1u);

  const nlohmann::json j = intake->SignalSourcesJson();
  const nlohmann::json& dropped = j["lastmod_dropped"];
  EXPECT_EQ(dropped["future_total"], 1);
  EXPECT_EQ(dropped["too_old_total"], 2);
  EXPECT_EQ(dropped["before_history_total"], 1);
  EXPECT_EQ(dropped["hosts_total"], 1);
  ASSERT_EQ(dropped["hosts"].size(), 1u);
  EXPECT_EQ(dropped["hosts"][0]["host"], "a.test");
  EXPECT_EQ(dropped["hosts"][0]["too_old"], 2);
  EXPECT_EQ(j["sources"]["feed"]["signals_total"], 1);
  EXPECT_EQ(j["sources"]["sitemap"]["signals_total"], 1);
  // The default policy (ncis) models signals: the feed is now a source of
  // the host, with its own estimate.
  EXPECT_EQ(j["sources"]["feed"]["hosts"], 1);
  EXPECT_TRUE(j["sources"]["feed"]["median_recall"].is_number());
  EXPECT_EQ(j["sources"]["websub"]["hosts"], 0);
  EXPECT_TRUE(j["sources"]["websub"]["median_recall"].is_null());
}

TEST(DatedSignalCheckTest, Bounds) {
  const double now = 1.8e9;
  EXPECT_EQ(CheckDatedSignal(now + kDatedSignalFutureS, now, -1),
            DatedSignalCheck::kOk);
  EXPECT_EQ(CheckDatedSignal(now + kDatedSignalFutureS + 1, now, -1),
            DatedSignalCheck::kFuture);
  EXPECT_EQ(CheckDatedSignal(kDatedSignalFloorUnix, now, -1),
            DatedSignalCheck::kOk);
  EXPECT_EQ(CheckDatedSignal(kDatedSignalFloorUnix - 1, now, -1),
            DatedSignalCheck::kTooOld);
  EXPECT_EQ(CheckDatedSignal(std::nan(""), now, -1), DatedSignalCheck::kTooOld);
  EXPECT_EQ(CheckDatedSignal(now - 10, now, now - 5),
            DatedSignalCheck::kBeforeHistory);
  EXPECT_EQ(CheckDatedSignal(now - 5, now, now - 5), DatedSignalCheck::kOk);
  EXPECT_STREQ(DatedSignalCheckName(DatedSignalCheck::kBeforeHistory),
               "before_history");
}

TEST_F(SignalIntakeTest, SiteFeedsArePolledUnderTheirCaps) {
  SiteFeedsConfig feeds;
  feeds.max_per_host = 1;
  auto intake = Make(feeds);
  const std::string rss =
      "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>"
      "<item><link>http://a.test/news/1</link></item>"
      "<item><link>http://a.test/news/2</link></item>"
      "</channel></rss>";
  responses_["http://a.test/feed.xml"] =
      Response("http://a.test/feed.xml", rss);
  intake->NoteSiteFeed("http://b.test/feed.xml", 0);  // out of scope
  intake->NoteSiteFeed("http://a.test/feed.xml", 0);
  intake->NoteSiteFeed("http://a.test/other.xml", 0);  // over max_per_host
  EXPECT_EQ(intake->site_feeds(), 1u);
  intake->PollSiteFeeds(1.7e9);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].url, "http://a.test/feed.xml");
  RunUntil([&] { return intake->SiteFeedsJson()["polled_total"] == 1; });
  const nlohmann::json j = intake->SiteFeedsJson();
  EXPECT_EQ(j["entries_total"], 2);
  EXPECT_EQ(j["errors_total"], 0);
  EXPECT_TRUE(book_->Find("http://a.test/news/1"));
  EXPECT_TRUE(book_->Find("http://a.test/news/2"));
  // Not due again before poll_interval.
  intake->PollSiteFeeds(1.7e9);
  EXPECT_EQ(requests_.size(), 1u);
}

TEST_F(SignalIntakeTest, AFeedFailingFiveTimesIsForgotten) {
  SiteFeedsConfig feeds;
  feeds.poll_interval_s = 0;  // due at once after each poll
  auto intake = Make(feeds);
  intake->NoteSiteFeed("http://a.test/gone.xml", 0);  // answers 404
  for (int i = 1; i <= kMaxSiteFeedFailures; ++i) {
    intake->PollSiteFeeds(4e9);
    RunUntil([&] { return intake->SiteFeedsJson()["polled_total"] == i; });
  }
  EXPECT_EQ(intake->site_feeds(), 0u);
  EXPECT_EQ(intake->SiteFeedsJson()["errors_total"], kMaxSiteFeedFailures);
}

TEST_F(SignalIntakeTest, RobotsRefreshSweepsOwnedHostsOncePerPeriod) {
  auto intake = Make();
  frontier_->AddScope("http://b.test/");
  frontier_->AddScope("http://c.test/");
  for (const char* url :
       {"http://a.test/1", "http://b.test/1", "http://c.test/1"}) {
    auto page = frontier_->AddUrl(url, 1, false, 0);
    ASSERT_TRUE(page.has_value());
    intake->NoteOrigin(*page, url);
  }
  not_owned_ = sched_->page(*book_->Find("http://b.test/1")).host;
  intake->RefreshRobots(1000, 10, 0.25);
  ASSERT_EQ(refreshed_.size(), 1u);
  EXPECT_EQ(refreshed_[0],
            (std::vector<std::string>{"http://a.test", "http://c.test"}));
  intake->RefreshRobots(1050, 10, 0.25);  // within robots_cache / 4
  EXPECT_EQ(refreshed_.size(), 1u);
  intake->RefreshRobots(1100, 10, 0.25);
  EXPECT_EQ(refreshed_.size(), 2u);
}

}  // namespace
}  // namespace freshd::daemon
