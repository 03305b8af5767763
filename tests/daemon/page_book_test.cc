// The page book alone (no network, no CrawlLoop): a recorded fetch gives
// the scheduler's observation, the change feed's item and the links, and
// its record is written once per group commit; a dated signal is
// considered once; the record codec round-trips every field; and a book
// written to a real LevelDB store comes back the same after a restart.

#include "daemon/page_book.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/sketch.h"
#include "daemon/page_codec.h"
#include "fetch/crawler.h"
#include "parse/html_fingerprint.h"
#include "parse/url.h"
#include "sched/scheduler.h"
#include "store/page_store.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

constexpr double kT0 = 1.79e9;

std::unique_ptr<sched::Scheduler> NewScheduler() {
  sched::SchedulerOptions o;
  o.policy = "freshness";
  auto created = sched::Scheduler::Create(o);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  return created.ok() ? std::move(created).value() : nullptr;
}

StoreConfig Config(const std::string& path) {
  StoreConfig c;
  c.path = path;
  c.sync_interval_s = 1e9;
  c.block_cache_bytes = 1 << 20;
  return c;
}

fetch::FetchResult Ok(std::string etag, std::string last_modified = {}) {
  fetch::FetchResult r;
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.etag = std::move(etag);
  r.last_modified = std::move(last_modified);
  return r;
}

fetch::FetchResult Outcome(fetch::OutcomeClass outcome, int status) {
  fetch::FetchResult r;
  r.outcome = outcome;
  r.status = status;
  return r;
}

parse::PageFingerprint Fingerprint(const std::string& url,
                                   const std::string& words) {
  const std::string html = "<html><body><p>" + words +
                           "</p><a href=\"/next\">next</a>"
                           "<a rel=nofollow href=\"/no\">no</a></body></html>";
  auto fp = parse::FingerprintHtml(html, "text/html", url, {});
  EXPECT_TRUE(fp.ok()) << fp.status().ToString();
  return fp.ok() ? std::move(fp).value() : parse::PageFingerprint{};
}

class PageBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sched_ = NewScheduler();
    ASSERT_NE(sched_, nullptr);
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path());
    auto host = book_->InternHost("h.test");
    ASSERT_TRUE(host.ok());
    host_ = host.value();
    auto page = book_->Add(kUrl, host_, 1.0, 100);
    ASSERT_TRUE(page.ok());
    page_ = page.value();
  }

  // Records and observes a fetch as the loop does.
  PageBook::Fetched Fetch(const fetch::FetchResult& r,
                          const parse::PageFingerprint* fp, uint64_t hash,
                          double now) {
    PageBook::Fetched f = book_->RecordFetch(page_, r, fp, hash, now);
    book_->Observe(f.observation);
    return f;
  }

  static constexpr const char* kUrl = "http://h.test/a";
  store::TempDir dir_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  sched::HostId host_ = 0;
  sched::PageId page_ = 0;
};

TEST_F(PageBookTest, AFetchGivesTheObservationTheFeedItemAndTheLinks) {
  store::StoreBatch added;
  book_->TakeBatch(&added);  // the Add
  EXPECT_EQ(book_->last_fetch_time(page_), 0);

  const parse::PageFingerprint fp = Fingerprint(kUrl, "one two three four");
  PageBook::Fetched first = Fetch(Ok("\"e1\""), &fp, 11, kT0);
  const auto* obs = std::get_if<sched::FetchedObs>(&first.observation.event);
  ASSERT_NE(obs, nullptr);
  EXPECT_EQ(first.observation.page, page_);
  EXPECT_EQ(first.observation.time, kT0);
  EXPECT_FALSE(obs->changed);  // a first fetch changes nothing
  EXPECT_FALSE(fp.text.sketch.hashes.empty());
  EXPECT_EQ(obs->sketch, fp.text.sketch);
  ASSERT_TRUE(first.feed.has_value());
  EXPECT_EQ(first.feed->event.kind, "new");
  EXPECT_EQ(first.feed->event.url, kUrl);
  EXPECT_EQ(first.feed->event.text_hash, 11u);
  EXPECT_EQ(first.feed->url_key, parse::UrlKey(kUrl));
  ASSERT_NE(first.links, nullptr);
  EXPECT_EQ(first.links, &fp.page.links);
  EXPECT_EQ(book_->cold_fields(page_).etag, "\"e1\"");
  EXPECT_EQ(book_->meta(page_).last_outcome(), "ok");
  EXPECT_EQ(book_->meta(page_).content_hash, 11u);
  EXPECT_EQ(book_->last_fetch_time(page_), kT0);  // the scheduler's

  // The page's record once, with its host and the globals, however many
  // times it was marked; then nothing.
  EXPECT_EQ(book_->marked_pages(), 1u);
  store::StoreBatch batch;
  uint64_t failures = 0;
  book_->TakeBatch(&batch, &failures);
  EXPECT_EQ(failures, 0u);
  EXPECT_EQ(batch.operations(), 3u);  // page, host, globals
  EXPECT_FALSE(book_->marked());

  // Same text: no event (no signal came); the validators move on.
  PageBook::Fetched same = Fetch(Ok("\"e2\""), &fp, 11, kT0 + 60);
  EXPECT_FALSE(same.feed.has_value());
  EXPECT_FALSE(std::get<sched::FetchedObs>(same.observation.event).changed);
  EXPECT_EQ(book_->cold_fields(page_).etag, "\"e2\"");

  // New text: "changed".
  PageBook::Fetched changed = Fetch(Ok("\"e3\""), nullptr, 12, kT0 + 120);
  EXPECT_TRUE(std::get<sched::FetchedObs>(changed.observation.event).changed);
  ASSERT_TRUE(changed.feed.has_value());
  EXPECT_EQ(changed.feed->event.kind, "changed");
  EXPECT_LT(changed.feed->event.staleness, 0);  // no HTML: no sketch
  EXPECT_EQ(changed.links, nullptr);

  // 304 without validators keeps them and the hash.
  PageBook::Fetched not_modified = Fetch(
      Outcome(fetch::OutcomeClass::kNotModified, 304), nullptr, 0, kT0 + 180);
  EXPECT_TRUE(std::holds_alternative<sched::NotModifiedObs>(
      not_modified.observation.event));
  EXPECT_FALSE(not_modified.feed.has_value());
  EXPECT_EQ(book_->cold_fields(page_).etag, "\"e3\"");
  EXPECT_EQ(book_->meta(page_).content_hash, 12u);
  EXPECT_EQ(book_->last_fetch_time(page_), kT0 + 180);

  // 404 after content: "gone", once; a failure does not move the fetch time.
  PageBook::Fetched gone =
      Fetch(Outcome(fetch::OutcomeClass::kHttp4xx, 404), nullptr, 0, kT0 + 240);
  const auto* failed = std::get_if<sched::FailedObs>(&gone.observation.event);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->failure, sched::FailureClass::kHttp4xx);
  ASSERT_TRUE(gone.feed.has_value());
  EXPECT_EQ(gone.feed->event.kind, "gone");
  EXPECT_EQ(gone.feed->event.text_hash, 12u);
  EXPECT_FALSE(
      Fetch(Outcome(fetch::OutcomeClass::kHttp4xx, 404), nullptr, 0, kT0 + 300)
          .feed.has_value());
  EXPECT_EQ(book_->last_fetch_time(page_), kT0 + 180);
  // Back: "new" again.
  PageBook::Fetched back = Fetch(Ok(""), nullptr, 12, kT0 + 360);
  ASSERT_TRUE(back.feed.has_value());
  EXPECT_EQ(back.feed->event.kind, "new");
}

// The sketch's one reader and writer: a changed version's staleness is the
// divergence from the previous sketch, whether that one is still in memory
// (recorded since the last batch, or in the batch being committed) or in the
// store; TakeBatch writes each new sketch to the store's sketch key once.
TEST(PageBookSketchTest, StalenessComesFromThePreviousSketchWhereverItIs) {
  store::TempDir dir;
  auto opened = store::PageStore::Open(Config(dir.path() + "/db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<store::PageStore> store = std::move(opened).value();
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  PageBook book(sched.get(), dir.path());
  book.set_sketch_store(store.get());
  auto host = book.InternHost("h.test");
  ASSERT_TRUE(host.ok());
  const std::string url = "http://h.test/a";
  auto added = book.Add(url, *host, 1.0, 100);
  ASSERT_TRUE(added.ok());
  const sched::PageId page = *added;
  auto commit = [&] {
    store::StoreBatch batch;
    book.TakeBatch(&batch);
    ASSERT_TRUE(store->Commit(batch, kT0).ok());
  };
  double now = kT0;
  auto fetch = [&](const std::string& words, uint64_t hash) {
    const parse::PageFingerprint fp = Fingerprint(url, words);
    PageBook::Fetched f = book.RecordFetch(page, Ok("e"), &fp, hash, now);
    book.Observe(f.observation);
    now += 3600;
    return f.feed;
  };
  const std::string v1 = "alpha beta gamma delta epsilon zeta eta theta";
  const std::string v2 = "alpha beta gamma delta epsilon zeta eta iota";
  const std::string v3 = "kappa lambda mu nu xi omicron pi rho sigma";

  auto first = fetch(v1, 1);  // no previous version: unknown
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->event.kind, "new");
  EXPECT_LT(first->event.staleness, 0);
  EXPECT_FALSE(store->GetSketch(parse::UrlKey(url), url).ok());
  // Against v1, not yet taken into a batch: in memory.
  auto second = fetch(v2, 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->event.kind, "changed");
  EXPECT_GT(second->event.staleness, 0);
  EXPECT_LT(second->event.staleness, 1);
  commit();  // v2's sketch is written (v1's was replaced before any batch)
  auto stored = store->GetSketch(parse::UrlKey(url), url);
  ASSERT_TRUE(stored.ok());
  auto v2_sketch = DecodeSketch(*stored);
  ASSERT_TRUE(v2_sketch.ok());
  EXPECT_EQ(*v2_sketch, Fingerprint(url, v2).text.sketch);
  // Against v2 in the store (its batch committed), then against v3 in the
  // batch being committed, then against the store again.
  auto third = fetch(v3, 3);
  ASSERT_TRUE(third.has_value());
  EXPECT_GT(third->event.staleness, second->event.staleness);
  store::StoreBatch committing;
  book.TakeBatch(&committing);  // v3's sketch, not committed yet
  auto fourth = fetch(v3 + " tau", 4);
  ASSERT_TRUE(fourth.has_value());
  EXPECT_GT(fourth->event.staleness, 0);
  EXPECT_LT(fourth->event.staleness, 1);
  ASSERT_TRUE(store->Commit(committing, kT0).ok());
  commit();
  auto fifth = fetch(v3, 5);  // back to v3: against v3 + tau in the store
  ASSERT_TRUE(fifth.has_value());
  EXPECT_NEAR(fifth->event.staleness, fourth->event.staleness, 1e-9);
}

// Without a sketch store (the change feed off) no sketch is kept or
// written, and the staleness is unknown.
TEST_F(PageBookTest, WithoutASketchStoreNoSketchIsWritten) {
  const parse::PageFingerprint a = Fingerprint(kUrl, "one two three four");
  const parse::PageFingerprint b = Fingerprint(kUrl, "one two three five");
  ASSERT_TRUE(Fetch(Ok("e"), &a, 1, kT0).feed.has_value());
  PageBook::Fetched changed = Fetch(Ok("e"), &b, 2, kT0 + 60);
  ASSERT_TRUE(changed.feed.has_value());
  EXPECT_EQ(changed.feed->event.kind, "changed");
  EXPECT_LT(changed.feed->event.staleness, 0);
  store::StoreBatch batch;
  book_->TakeBatch(&batch);
  store::TempDir dir;
  auto opened = store::PageStore::Open(Config(dir.path() + "/db"));
  ASSERT_TRUE(opened.ok());
  ASSERT_TRUE((*opened)->Commit(batch, kT0).ok());
  EXPECT_FALSE((*opened)->GetSketch(parse::UrlKey(kUrl), kUrl).ok());
}

TEST_F(PageBookTest, ADatedSignalIsConsideredOnce) {
  // Never fetched: nothing to compare a date with.
  EXPECT_FALSE(book_->ConsiderDatedSignal(page_, kT0 - 100));
  Fetch(Ok("\"e\""), nullptr, 1, kT0);
  store::StoreBatch drained;
  book_->TakeBatch(&drained);
  ASSERT_FALSE(book_->marked());

  EXPECT_TRUE(book_->ConsiderDatedSignal(page_, kT0 + 50));
  EXPECT_EQ(book_->meta(page_).last_signal_lastmod, kT0 + 50);
  EXPECT_EQ(book_->marked_pages(), 1u);  // the record keeps the date
  store::StoreBatch batch;
  book_->TakeBatch(&batch);
  EXPECT_EQ(batch.operations(), 1u);

  // The same date again (a feed dating what a sitemap did), or an older
  // one: ignored, and nothing to write.
  EXPECT_FALSE(book_->ConsiderDatedSignal(page_, kT0 + 50));
  EXPECT_FALSE(book_->ConsiderDatedSignal(page_, kT0 + 10));
  EXPECT_FALSE(book_->marked());
  EXPECT_EQ(book_->meta(page_).last_signal_lastmod, kT0 + 50);
  EXPECT_TRUE(book_->ConsiderDatedSignal(page_, kT0 + 51));
}

TEST_F(PageBookTest, AddAndAdoptStopAtTheHostsLimit) {
  EXPECT_EQ(book_->host_pages(host_), 1u);
  EXPECT_FALSE(book_->Add("http://h.test/b", host_, 1.0, 1).ok());
  store::PageRecord record;
  record.url = "http://h.test/c";
  EXPECT_FALSE(book_->Adopt(record, host_, 1).ok());
  EXPECT_EQ(book_->size(), 1u);
  EXPECT_EQ(book_->host_pages(host_), 1u);
}

TEST(PageCodecTest, RecordRoundTripKeepsEveryFieldOnce) {
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  auto page = sched->AddUrl(0, 2.0);
  ASSERT_TRUE(page.ok());
  sched->Observe({*page, kT0, sched::FetchedObs{}});
  PageMeta meta;
  meta.set_last_outcome(fetch::OutcomeClass::kHttp4xx);
  meta.flags |= PageMeta::kValidators;
  ColdFields cold;
  cold.etag = "W/\"abc\"";
  cold.last_modified = "Tue, 24 Nov 2026 10:00:00 GMT";
  meta.content_hash = 7;
  meta.last_signal_lastmod = 1.4e9;
  meta.last_status = 404;

  store::PageRecord record;
  ASSERT_TRUE(
      EncodePageRecord(*sched, *page, "http://h.test/a", meta, cold, &record)
          .ok());
  EXPECT_EQ(record.etag, cold.etag);
  EXPECT_EQ(record.last_modified, cold.last_modified);
  EXPECT_EQ(record.last_outcome, "4xx");
  EXPECT_EQ(record.url, "http://h.test/a");
  EXPECT_EQ(record.url_key, parse::UrlKey("http://h.test/a"));
  EXPECT_EQ(record.last_fetch_time, kT0);  // derived from the scheduler's
  EXPECT_FALSE(record.sched_state.empty());

  const DecodedPage back = DecodePageRecord(record);
  EXPECT_FALSE(back.reset);
  EXPECT_TRUE(back.error.ok());
  EXPECT_EQ(back.cold.etag, cold.etag);
  EXPECT_EQ(back.cold.last_modified, cold.last_modified);
  EXPECT_TRUE(back.cold.other_outcome.empty());
  EXPECT_NE(back.meta.flags & PageMeta::kValidators, 0);
  EXPECT_EQ(back.meta.last_modified_time(), 1795514400.0);
  EXPECT_EQ(back.meta.last_outcome(), "4xx");
  EXPECT_EQ(back.meta.content_hash, 7u);
  EXPECT_EQ(back.meta.last_signal_lastmod, 1.4e9);
  EXPECT_EQ(back.meta.last_status, 404);
  EXPECT_EQ(back.saved.state.last_fetch, kT0);
  EXPECT_EQ(back.saved.state.importance, 2.0f);

  // The record's own last_fetch_time is not read back: one fact, the
  // scheduler's.
  record.last_fetch_time = 1;
  EXPECT_EQ(DecodePageRecord(record).saved.state.last_fetch, kT0);

  // An unknown page id, no state, a state that does not decode.
  EXPECT_FALSE(EncodePageRecord(*sched, *page + 1, "http://h.test/b", meta,
                                cold, &record)
                   .ok());
  // An outcome outside the fixed set: a code in memory, the string a cold
  // field, written back as it was.
  store::PageRecord odd = record;
  odd.last_outcome = "from-another-writer";
  const DecodedPage odd_back = DecodePageRecord(odd);
  EXPECT_TRUE(odd_back.meta.other_outcome());
  EXPECT_EQ(odd_back.meta.last_outcome(), "");
  EXPECT_EQ(odd_back.cold.other_outcome, "from-another-writer");
  store::PageRecord odd_again;
  ASSERT_TRUE(EncodePageRecord(*sched, *page, "http://h.test/a", odd_back.meta,
                               odd_back.cold, &odd_again)
                  .ok());
  EXPECT_EQ(odd_again.last_outcome, "from-another-writer");
  store::PageRecord bare;
  bare.etag = "x";
  const DecodedPage fresh = DecodePageRecord(bare);
  EXPECT_TRUE(fresh.reset);
  EXPECT_TRUE(fresh.error.ok());
  EXPECT_FALSE(fresh.saved.state.fetched());
  EXPECT_EQ(fresh.cold.etag, "x");
  EXPECT_NE(fresh.meta.flags & PageMeta::kValidators, 0);
  bare.sched_state = "\xff garbage";
  const DecodedPage bad = DecodePageRecord(bare);
  EXPECT_TRUE(bad.reset);
  EXPECT_FALSE(bad.error.ok());
}

TEST(PageBookRestartTest, ABookComesBackFromARealStore) {
  store::TempDir dir;
  const std::vector<std::string> urls = {"http://a.test/1", "http://a.test/2",
                                         "http://b.test:8080/x"};
  {
    auto sched = NewScheduler();
    ASSERT_NE(sched, nullptr);
    PageBook book(sched.get(), dir.path());
    for (const std::string& url : urls) {
      auto host = book.InternHost(parse::UrlAuthority(url));
      ASSERT_TRUE(host.ok());
      ASSERT_TRUE(book.Add(url, *host, 1.0, 100).ok());
    }
    book.Observe(book.RecordFetch(0,
                                  Ok("\"v0\"", "Mon, 23 Nov 2026 08:00:00 GMT"),
                                  nullptr, 100, kT0)
                     .observation);
    EXPECT_TRUE(book.ConsiderDatedSignal(0, kT0 + 30));
    book.Observe(book.RecordFetch(2,
                                  Outcome(fetch::OutcomeClass::kHttp5xx, 503),
                                  nullptr, 0, kT0 + 5)
                     .observation);
    book.SetHostFetchState(1, "fetch-state-of-b");
    auto store = store::PageStore::Open(Config(dir.Sub("db")));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store::StoreBatch batch;
    uint64_t failures = 0;
    book.TakeBatch(&batch, &failures);
    EXPECT_EQ(failures, 0u);
    ASSERT_TRUE(store.value()->Commit(batch, kT0 + 10).ok());
  }
  auto store = store::PageStore::Open(Config(dir.Sub("db")));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  PageBook book(sched.get(), dir.path());
  std::vector<std::string> seen;
  auto report = book.Restore(*store.value(),
                             [&](sched::PageId id, std::string_view url) {
                               EXPECT_EQ(id, seen.size());
                               seen.emplace_back(url);
                             },
                             {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report.value().pages, 3u);
  EXPECT_EQ(report.value().corrupt, 0u);
  EXPECT_TRUE(report.value().metas.empty());  // moved into the book
  ASSERT_EQ(book.size(), 3u);
  EXPECT_FALSE(book.marked());  // a restore writes nothing back

  auto id = [&](const std::string& url) {
    auto found = book.FindExact(url);
    EXPECT_TRUE(found.has_value()) << url;
    return found.value_or(0);
  };
  const sched::PageId fetched = id(urls[0]);
  EXPECT_EQ(book.url(fetched), urls[0]);
  // The validators stay in the store (read when the page is dispatched).
  EXPECT_EQ(book.cold_held(), 0u);
  EXPECT_NE(book.meta(fetched).flags & PageMeta::kValidators, 0);
  EXPECT_TRUE(book.meta(fetched).last_modified_time().has_value());
  book.set_store(store.value().get());
  EXPECT_EQ(book.cold_fields(fetched).etag, "\"v0\"");
  EXPECT_EQ(book.cold_fields(fetched).last_modified,
            "Mon, 23 Nov 2026 08:00:00 GMT");
  EXPECT_EQ(book.meta(fetched).last_outcome(), "ok");
  EXPECT_EQ(book.meta(fetched).content_hash, 100u);
  EXPECT_EQ(book.meta(fetched).last_status, 200);
  EXPECT_EQ(book.meta(fetched).last_signal_lastmod, kT0 + 30);
  EXPECT_EQ(book.last_fetch_time(fetched), kT0);
  // The considered date survives the restart: not considered again.
  EXPECT_FALSE(book.ConsiderDatedSignal(fetched, kT0 + 30));

  const sched::PageId failed = id(urls[2]);
  EXPECT_EQ(book.meta(failed).last_outcome(), "5xx");
  EXPECT_EQ(book.meta(failed).last_status, 503);
  EXPECT_EQ(book.last_fetch_time(failed), 0);
  EXPECT_EQ(book.last_fetch_time(id(urls[1])), 0);

  // The host table: names, page counts, the fetch state as stored.
  auto a = book.hosts().Find("a.test");
  auto b = book.hosts().Find("b.test:8080");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(book.host_pages(*a), 2u);
  EXPECT_EQ(book.host_pages(*b), 1u);
  EXPECT_EQ(book.hosts().fetch_state(*b), "fetch-state-of-b");
  EXPECT_EQ(book.hosts().fetch_state(*a), "");
  auto b_record = store.value()->GetHost("b.test:8080");
  ASSERT_TRUE(b_record.ok());
  EXPECT_EQ(b_record.value().fetch_state, "fetch-state-of-b");
}

// The fetch state through the book: the fetcher's export is recorded per
// host with pages (marked, written with the host's record); at start a
// stored state goes back into the host table and the fetcher's import, and
// one that does not decode is reported, its host starting afresh.
TEST(PageBookRestartTest, TheFetchStateIsRecordedAndRestoredPerHost) {
  store::TempDir dir;
  fetch::GateHostSnapshot gate;
  gate.host = "a.test";
  gate.next_allowed = kT0 + 5;
  gate.consecutive_errors = 2;
  fetch::RobotsSnapshot robots;
  robots.origin = "http://a.test";
  robots.status = 200;
  robots.fetched_at = kT0;
  robots.expires = kT0 + 60;
  fetch::CrawlerState exported;
  exported.hosts.push_back(gate);
  exported.robots.push_back(robots);
  fetch::GateHostSnapshot stranger = gate;
  stranger.host = "nopages.test";  // no page of it: skipped
  exported.hosts.push_back(stranger);
  {
    auto sched = NewScheduler();
    ASSERT_NE(sched, nullptr);
    PageBook book(sched.get(), dir.path());
    const sched::HostId a = book.InternHost("a.test").value();
    const sched::HostId b = book.InternHost("b.test").value();
    ASSERT_TRUE(book.Add("http://a.test/", a, 1.0, 100).ok());
    ASSERT_TRUE(book.Add("http://b.test/", b, 1.0, 100).ok());
    store::StoreBatch added;
    book.TakeBatch(&added);
    book.RecordFetchState(exported);
    EXPECT_TRUE(book.marked());
    EXPECT_FALSE(book.hosts().fetch_state(a).empty());
    EXPECT_TRUE(book.hosts().fetch_state(b).empty());
    EXPECT_FALSE(book.hosts().Find("nopages.test").has_value());
    book.SetHostFetchState(b, "not a fetch state");  // stored damaged
    auto store = store::PageStore::Open(Config(dir.Sub("db")));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store::StoreBatch batch;
    book.TakeBatch(&batch);
    ASSERT_TRUE(store.value()->Commit(added, kT0).ok());
    ASSERT_TRUE(store.value()->Commit(batch, kT0 + 1).ok());
    // Recorded again unchanged: nothing to write.
    book.RecordFetchState(exported);
    EXPECT_FALSE(book.marked());
  }
  auto store = store::PageStore::Open(Config(dir.Sub("db")));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  PageBook book(sched.get(), dir.path());
  auto report =
      book.Restore(*store.value(), [](sched::PageId, std::string_view) {}, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  RecoveryReport recovery = std::move(report).value();
  fetch::CrawlerState imported;
  ASSERT_TRUE(
      book.RestoreFetchState(*store.value(), &recovery, &imported).ok());
  ASSERT_EQ(imported.hosts.size(), 1u);
  EXPECT_EQ(imported.hosts[0].host, "a.test");
  EXPECT_EQ(imported.hosts[0].next_allowed, kT0 + 5);
  EXPECT_EQ(imported.hosts[0].consecutive_errors, 2);
  ASSERT_EQ(imported.robots.size(), 1u);
  EXPECT_EQ(imported.robots[0].origin, "http://a.test");
  EXPECT_EQ(recovery.corrupt, 1u);
  ASSERT_EQ(recovery.corrupt_records.size(), 1u);
  EXPECT_EQ(recovery.corrupt_records[0].key, "host b.test fetch_state");
  const sched::HostId a = book.hosts().Find("a.test").value();
  EXPECT_FALSE(book.hosts().fetch_state(a).empty());
  EXPECT_FALSE(book.marked());  // restoring writes nothing back
}

}  // namespace
}  // namespace freshd::daemon

namespace freshd::daemon {
namespace {

// Issue 43 item 7 (PageBook "Removal"), the book alone on a real store:
// gone_after_tries 404/410 answers in a row remove a page, a 200 between
// them resets the count; a page with no HTTP answer past
// gone_after_unreachable is removed with one "gone"; a removed page's
// records are deleted, its URL unknown, its host's count lowered, and the
// same URL added again is a new page whose record the deletion spares.
TEST(PageBookRemovalTest, GoneAndUnreachablePagesLeaveTheBookAndTheStore) {
  store::TempDir dir;
  auto opened = store::PageStore::Open(Config(dir.path() + "/db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<store::PageStore> store = std::move(opened).value();
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  PageBook book(sched.get(), dir.path());
  book.set_removal({/*gone_after_tries=*/3,
                    /*gone_after_unreachable=*/30 * 86400.0});
  auto host = book.InternHost("h.test");
  ASSERT_TRUE(host.ok());
  const std::string gone_url = "http://h.test/gone",
                    dead_url = "http://h.test/dead",
                    never_url = "http://h.test/never";
  const sched::PageId gone = *book.Add(gone_url, *host, 1.0, 100);
  const sched::PageId dead = *book.Add(dead_url, *host, 1.0, 100);
  const sched::PageId never = *book.Add(never_url, *host, 1.0, 100);
  auto commit = [&] {
    store::StoreBatch batch;
    book.TakeBatch(&batch);
    ASSERT_TRUE(store->Commit(batch, kT0).ok());
  };
  std::vector<std::string> feed;  // "kind url"
  auto fetch = [&](sched::PageId page, fetch::FetchResult r, double now) {
    PageBook::Fetched f = book.RecordFetch(page, r, nullptr, 7, now);
    book.Observe(f.observation);
    if (f.removal) book.Remove(page, *f.removal);
    if (f.feed) feed.push_back(f.feed->event.kind + " " + f.feed->event.url);
    return f.removal;
  };
  const auto k404 = Outcome(fetch::OutcomeClass::kHttp4xx, 404);
  const auto k410 = Outcome(fetch::OutcomeClass::kHttp4xx, 410);
  const auto kDns = Outcome(fetch::OutcomeClass::kDns, 0);
  double t = kT0;
  EXPECT_FALSE(fetch(gone, Ok("e"), t += 60));
  EXPECT_FALSE(fetch(dead, Ok("e"), t += 60));
  // 404, 410, then a 200: the count starts again.
  EXPECT_FALSE(fetch(gone, k404, t += 60));
  EXPECT_FALSE(fetch(gone, k410, t += 60));
  EXPECT_FALSE(fetch(gone, Ok("e"), t += 60));
  EXPECT_FALSE(fetch(gone, k404, t += 60));
  EXPECT_FALSE(fetch(gone, k404, t += 60));
  EXPECT_EQ(book.meta(gone).gone_tries, 2);
  EXPECT_EQ(fetch(gone, k410, t += 60), RemovalReason::kGone);
  // Never fetched with content: removed without a feed event.
  EXPECT_FALSE(fetch(never, k404, t += 60));
  EXPECT_FALSE(fetch(never, k404, t += 60));
  EXPECT_EQ(fetch(never, k404, t += 60), RemovalReason::kGone);
  // No HTTP answer: the clock runs from the streak's first failure; a
  // timeout (it says nothing of the page) does not stop it.
  const double first_dns = t += 60;
  EXPECT_FALSE(fetch(dead, kDns, first_dns));
  EXPECT_FALSE(fetch(dead, Outcome(fetch::OutcomeClass::kTimeout, 0),
                     first_dns + 86400));
  EXPECT_FALSE(fetch(dead, kDns, first_dns + 30 * 86400.0 - 60));
  EXPECT_EQ(fetch(dead, kDns, first_dns + 30 * 86400.0),
            RemovalReason::kUnreachable);

  // One "gone" per absence: the first 404 after content (twice here: the
  // page came back in between), the unreachable page's at its removal.
  EXPECT_EQ(feed,
            (std::vector<std::string>{"new " + gone_url, "new " + dead_url,
                                      "gone " + gone_url, "new " + gone_url,
                                      "gone " + gone_url, "gone " + dead_url}));
  EXPECT_EQ(book.removed_total(RemovalReason::kGone), 2u);
  EXPECT_EQ(book.removed_total(RemovalReason::kUnreachable), 1u);
  EXPECT_EQ(sched->removed_pages(), 3u);
  EXPECT_EQ(book.host_pages(*host), 0u);
  for (const std::string& url : {gone_url, dead_url, never_url}) {
    EXPECT_FALSE(book.Find(url).has_value()) << url;
  }
  // A removed page is never selected, and no longer observed.
  EXPECT_FALSE(sched->Select(t + 1e7, [](sched::HostId) { return true; }));
  EXPECT_FALSE(book.ConsiderDatedSignal(gone, t + 1e6));

  commit();
  for (const std::string& url : {gone_url, dead_url, never_url}) {
    EXPECT_FALSE(store->GetPage(parse::UrlKey(url), url).ok()) << url;
  }
  EXPECT_EQ(store->page_count(), 0u);

  // Met again (a link): a new page, a new id; its record stays although
  // the tombstone is marked again (a rewrite of every page).
  auto again = book.Add(gone_url, *host, 1.0, 100);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, gone);
  EXPECT_EQ(book.Find(gone_url), *again);
  book.MarkForRewrite(0, static_cast<sched::PageId>(book.size()));
  commit();
  EXPECT_TRUE(store->GetPage(parse::UrlKey(gone_url), gone_url).ok());
  EXPECT_EQ(store->page_count(), 1u);
}

// A restart counts a page whose last answer was 404/410 as having its
// consecutive failures as tries, and its absence as announced.
TEST(PageBookRemovalTest, TheStreakIsDerivedFromTheRecordAtARestart) {
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  PageBook book(sched.get());
  auto host = book.InternHost("h.test");
  ASSERT_TRUE(host.ok());
  const sched::PageId page = *book.Add("http://h.test/a", *host, 1.0, 100);
  for (int i = 0; i < 2; ++i) {
    PageBook::Fetched f = book.RecordFetch(
        page, Outcome(fetch::OutcomeClass::kHttp4xx, 404), nullptr, 0, kT0 + i);
    book.Observe(f.observation);
  }
  store::PageRecord record;
  ASSERT_TRUE(EncodePageRecord(*sched, page, "http://h.test/a", book.meta(page),
                               book.cold_fields(page), &record)
                  .ok());
  const DecodedPage decoded = DecodePageRecord(record);
  EXPECT_EQ(decoded.meta.last_status, 404);
  EXPECT_EQ(decoded.meta.gone_tries, 2);
  EXPECT_NE(decoded.meta.flags & PageMeta::kGoneAnnounced, 0);
  EXPECT_EQ(decoded.meta.unreachable_since, 0u);
}

}  // namespace
}  // namespace freshd::daemon

namespace freshd::daemon {
namespace {

// PageBook "Duplicates", the book alone on a real store: Collapse makes a
// page an alias of another (Find answers the alias URL with its page, the
// page's records go, the alias record is written and read back at a
// restart); DuplicateOf finds the first page of a host with a content
// hash, never one of another host; the cap refuses and counts.
TEST(PageBookDuplicatesTest, AliasesStandForTheirPageAndSurviveARestart) {
  store::TempDir dir;
  const std::string a = "http://h.test/a", b = "http://h.test/b",
                    c = "http://h.test/c", d = "http://h.test/d",
                    other = "http://o.test/a";
  {
    auto opened = store::PageStore::Open(Config(dir.path() + "/db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<store::PageStore> store = std::move(opened).value();
    auto sched = NewScheduler();
    ASSERT_NE(sched, nullptr);
    PageBook book(sched.get(), dir.path());
    book.set_max_aliases(2);
    auto h = book.InternHost("h.test");
    auto o = book.InternHost("o.test");
    ASSERT_TRUE(h.ok() && o.ok());
    std::map<std::string, sched::PageId> id;
    for (const std::string& url : {a, b, c, d}) {
      id[url] = *book.Add(url, *h, 1.0, 100);
    }
    id[other] = *book.Add(other, *o, 1.0, 100);
    auto fetch = [&](const std::string& url, uint64_t hash) {
      PageBook::Fetched f =
          book.RecordFetch(id[url], Ok("e"), nullptr, hash, kT0);
      book.Observe(f.observation);
    };
    for (const std::string& url : {a, b, c, d, other}) fetch(url, 42);
    // The first page of h.test with hash 42 is a; o.test's is its own.
    EXPECT_EQ(book.DuplicateOf(id[a], 42), std::nullopt);
    EXPECT_EQ(book.DuplicateOf(id[b], 42), id[a]);
    EXPECT_EQ(book.DuplicateOf(id[other], 42), std::nullopt);
    EXPECT_EQ(book.DuplicateOf(id[b], 0), std::nullopt);  // no text

    ASSERT_TRUE(book.Collapse(id[b], id[a], AliasReason::kDuplicate));
    ASSERT_TRUE(book.Collapse(id[c], id[a], AliasReason::kCanonical));
    EXPECT_FALSE(book.Collapse(id[a], id[a], AliasReason::kCanonical));
    EXPECT_FALSE(book.Collapse(id[d], id[b], AliasReason::kCanonical));
    // Full (2 aliases): refused, counted, d stays a page.
    EXPECT_FALSE(book.Collapse(id[d], id[a], AliasReason::kDuplicate));
    EXPECT_EQ(book.aliases().refused(), 1u);
    EXPECT_EQ(book.Find(d), id[d]);
    EXPECT_EQ(book.Find(b), id[a]);
    EXPECT_EQ(book.Find(c), id[a]);
    EXPECT_FALSE(book.FindExact(b).has_value());
    EXPECT_TRUE(sched->removed(id[b]));
    EXPECT_EQ(book.host_pages(*h), 2u);
    auto alias = book.AliasOf(c);
    ASSERT_TRUE(alias.has_value());
    EXPECT_EQ(alias->page_url, a);
    EXPECT_EQ(alias->reason, AliasReason::kCanonical);
    EXPECT_FALSE(book.AliasOf(a).has_value());
    EXPECT_EQ(book.collapsed_total(AliasReason::kDuplicate), 1u);
    EXPECT_EQ(book.collapsed_total(AliasReason::kCanonical), 1u);
    store::StoreBatch batch;
    book.TakeBatch(&batch);
    ASSERT_TRUE(store->Commit(batch, kT0).ok());
    EXPECT_FALSE(store->GetPage(parse::UrlKey(b), b).ok());
    EXPECT_TRUE(store->GetPage(parse::UrlKey(a), a).ok());
  }
  auto opened = store::PageStore::Open(Config(dir.path() + "/db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto sched = NewScheduler();
  ASSERT_NE(sched, nullptr);
  PageBook book(sched.get(), dir.path());
  book.set_max_aliases(2);
  auto restored = book.Restore(*opened.value(), nullptr, RecoveryOptions());
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(book.size(), 3u);  // a, d, o.test/a
  EXPECT_EQ(book.aliases().size(), 2u);
  EXPECT_EQ(book.Find(b), book.FindExact(a));
  auto alias = book.AliasOf(b);
  ASSERT_TRUE(alias.has_value());
  EXPECT_EQ(alias->page_url, a);
  EXPECT_EQ(alias->reason, AliasReason::kDuplicate);
  // The content index came back from the pages' hashes: of a and d (hash
  // 42, h.test), the one with the lower id holds it, the other is its
  // duplicate.
  const sched::PageId ra = *book.FindExact(a), rd = *book.FindExact(d);
  EXPECT_EQ(book.DuplicateOf(std::max(ra, rd), 42), std::min(ra, rd));
  // The page removed: its aliases are unknown URLs again.
  book.Remove(*book.FindExact(a), RemovalReason::kGone);
  EXPECT_FALSE(book.Find(b).has_value());
  EXPECT_FALSE(book.Find(c).has_value());
}

}  // namespace
}  // namespace freshd::daemon
