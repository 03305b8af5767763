// PageObserver alone: a real Scheduler, PageBook, Frontier, SignalIntake
// and GroupCommitter over a StoreWriter on a temporary LevelDB; fetch
// results made by the test, parsed by the real fingerprinter. No network,
// no loop.

#include "daemon/page_observer.h"

#include <gtest/gtest.h>

#include <chrono>

#include "base/clock.h"
#include "parse/url.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

// Now: the writer prunes change-feed events older than [feed] max_age.
const double kT0 = UnixNow();

class PageObserverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreConfig c;
    c.path = dir_.path() + "/db";
    auto store = store::PageStore::Open(c);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    writer_ =
        std::make_unique<StoreWriter>(store_.get(), nullptr, 1.0, FeedConfig{});
    writer_->Start();
    auto s = sched::Scheduler::Create(sched::SchedulerOptions{});
    ASSERT_TRUE(s.ok());
    sched_ = std::move(s).value();
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path());
    auto scope = UrlScope::Create(CrawlerConfig{});
    ASSERT_TRUE(scope.ok());
    frontier_ = std::make_unique<Frontier>(std::move(scope).value(), 1000,
                                           book_.get(), sched_.get());
    frontier_->AddScope("http://a.test/");
    parse_ = std::make_unique<ParseQueue>(io_, 1);
    SignalIntake::Hooks h;
    h.fetch = [](fetch::CrawlRequest, SignalIntake::FetchDone) {};
    h.commit = [] {};
    h.dispatch = [] {};
    intake_ = std::make_unique<SignalIntake>(
        io_, SignalIntake::Options{}, book_.get(), sched_.get(),
        frontier_.get(), parse_.get(), std::move(h));
    committer_ = std::make_unique<GroupCommitter>(
        io_, writer_.get(),
        RecordSource{[this] { return book_->marked(); },
                     [this](store::StoreBatch* b, uint64_t* f) {
                       book_->TakeBatch(b, f);
                     },
                     [this](bool ok) { book_->Committed(ok); }},
        /*archive=*/false);
    observer_ = std::make_unique<PageObserver>(
        PageObserver::Options{}, book_.get(), sched_.get(), frontier_.get(),
        intake_.get(), committer_.get(), nullptr);
  }
  void TearDown() override { ASSERT_TRUE(writer_->Stop().ok()); }

  fetch::FetchResult Html(const std::string& url, const std::string& body) {
    fetch::FetchResult r;
    r.url = r.final_url = url;
    r.outcome = fetch::OutcomeClass::kOk;
    r.status = 200;
    r.content_type = "text/html";
    r.body = body;
    r.etag = "\"v1\"";
    return r;
  }
  PageObserver::Parsed Parse(const fetch::FetchResult& r) {
    PageObserver::Parsed p;
    p.fingerprint =
        parse::FingerprintHtml(r.body, r.content_type, r.final_url, {});
    EXPECT_TRUE(p.fingerprint->ok());
    p.text_hash = p.fingerprint->value().text.text_hash;
    return p;
  }
  // Commits what was queued and returns the change feed's kinds so far.
  std::vector<std::string> FeedKinds() {
    bool done = false;
    committer_->Request([&](Status s) {
      EXPECT_TRUE(s.ok());
      done = true;
    });
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(done);
    std::vector<std::string> kinds;
    EXPECT_TRUE(store_
                    ->ForEachFeedEvent(0, 100,
                                       [&](const store::FeedEvent& e) {
                                         kinds.push_back(e.kind);
                                         return true;
                                       })
                    .ok());
    return kinds;
  }

  store::TempDir dir_;
  boost::asio::io_context io_;
  std::unique_ptr<store::PageStore> store_;
  std::unique_ptr<StoreWriter> writer_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  std::unique_ptr<Frontier> frontier_;
  std::unique_ptr<ParseQueue> parse_;
  std::unique_ptr<SignalIntake> intake_;
  std::unique_ptr<GroupCommitter> committer_;
  std::unique_ptr<PageObserver> observer_;
};

TEST_F(PageObserverTest, AFetchUpdatesTheBookFeedsTheFrontierAndCounts) {
  const sched::PageId page = *frontier_->AddUrl("http://a.test/", 1, true, kT0);
  const std::string body =
      "<html><head><link rel=alternate type=application/rss+xml "
      "href=/feed.xml></head><body><p>hello world, some words here</p>"
      "<a href=/a>a</a> <a href=http://other.test/b>b</a></body></html>";
  fetch::FetchResult r = Html("http://a.test/", body);
  observer_->Observe(page, r, Parse(r), kT0, kT0 + 1);
  EXPECT_EQ(book_->cold_fields(page).etag, "\"v1\"");
  EXPECT_EQ(book_->last_fetch_time(page), kT0 + 1);
  EXPECT_TRUE(sched_->page(page).fetched());
  EXPECT_TRUE(book_->Find("http://a.test/a"));       // in scope
  EXPECT_FALSE(book_->Find("http://other.test/b"));  // not
  EXPECT_EQ(intake_->site_feeds(), 1u);              // the feed link
  EXPECT_EQ(observer_->fetched_total(), 1u);
  EXPECT_EQ(observer_->outcomes().at("ok"), 1u);
  EXPECT_EQ(observer_->outcomes().at("4xx"), 0u);  // every class from zero
  EXPECT_EQ(observer_->FetchesInLastMinute(kT0 + 2), 1u);
  EXPECT_EQ(observer_->FetchesInLastMinute(kT0 + 62), 0u);
  EXPECT_EQ(FeedKinds(), (std::vector<std::string>{"new"}));
}

TEST_F(PageObserverTest, ChangedSameAndGoneAreTheFeedsEvents) {
  const sched::PageId page =
      *frontier_->AddUrl("http://a.test/p", 1, true, kT0);
  fetch::FetchResult v1 = Html("http://a.test/p", "<p>first version</p>");
  observer_->Observe(page, v1, Parse(v1), kT0, kT0 + 100);
  fetch::FetchResult same = v1;
  observer_->Observe(page, same, Parse(same), kT0, kT0 + 200);  // no event
  fetch::FetchResult v2 = Html("http://a.test/p", "<p>second version</p>");
  observer_->Observe(page, v2, Parse(v2), kT0, kT0 + 300);
  fetch::FetchResult gone;
  gone.url = gone.final_url = "http://a.test/p";
  gone.outcome = fetch::OutcomeClass::kHttp4xx;
  gone.status = 404;
  observer_->Observe(page, gone, {}, kT0, kT0 + 400);
  EXPECT_EQ(FeedKinds(), (std::vector<std::string>{"new", "changed", "gone"}));
  EXPECT_EQ(observer_->fetched_total(), 3u);
  EXPECT_EQ(observer_->outcomes().at("4xx"), 1u);
  EXPECT_EQ(book_->meta(page).last_status, 404);
}

}  // namespace
}  // namespace freshd::daemon
