// The page book's validators out of memory (daemon/page_book.h "Validators
// out of memory"), the book alone on a real LevelDB store: held while the
// page's record is pending commit, dropped once it is committed, read back
// from the store when the page is dispatched; a page fetched again before
// its record committed, or whose validators changed, gets the newest ones;
// a failed commit keeps them; a failed read gives none and is counted.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "daemon/page_book.h"
#include "daemon/page_codec.h"
#include "parse/url.h"
#include "sched/scheduler.h"
#include "store/page_store.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

constexpr double kT0 = 1.79e9;
constexpr char kUrl[] = "http://h.test/a";
constexpr char kLm1[] = "Tue, 24 Nov 2026 10:00:00 GMT";
constexpr char kLm2[] = "Wed, 25 Nov 2026 07:28:00 GMT";

fetch::FetchResult Answer(fetch::OutcomeClass outcome, int status,
                          std::string etag, std::string last_modified) {
  fetch::FetchResult r;
  r.outcome = outcome;
  r.status = status;
  r.etag = std::move(etag);
  r.last_modified = std::move(last_modified);
  return r;
}

fetch::FetchResult Ok(std::string etag, std::string last_modified) {
  return Answer(fetch::OutcomeClass::kOk, 200, std::move(etag),
                std::move(last_modified));
}

class PageValidatorsTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    StoreConfig c;
    c.path = dir_.path() + "/db";
    c.sync_interval_s = 1e9;
    auto store = store::PageStore::Open(c);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    sched::SchedulerOptions o;
    o.policy = "freshness";
    auto created = sched::Scheduler::Create(o);
    ASSERT_TRUE(created.ok());
    sched_ = std::move(created).value();
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path());
    book_->set_store(store_.get());
  }

  void AddPage() {
    auto host = book_->InternHost("h.test");
    ASSERT_TRUE(host.ok());
    auto page = book_->Add(kUrl, *host, 1.0, 100);
    ASSERT_TRUE(page.ok());
    page_ = *page;
  }

  // Dispatch, answer `r`, observe: as the loop does.
  ColdFields Fetch(const fetch::FetchResult& r, double now) {
    ColdFields sent = book_->ValidatorsForDispatch(page_);
    book_->Observe(book_->RecordFetch(page_, r, nullptr, 7, now).observation);
    return sent;
  }

  // The book's marks into one batch, committed to the store, and reported.
  void Commit() {
    store::StoreBatch batch;
    uint64_t failures = 0;
    book_->TakeBatch(&batch, &failures);
    ASSERT_EQ(failures, 0u);
    ASSERT_TRUE(store_->Commit(batch, kT0).ok());
    book_->Committed(true);
  }

  store::PageRecord Stored() {
    auto r = store_->GetPage(parse::UrlKey(kUrl), kUrl);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : store::PageRecord{};
  }

  store::TempDir dir_;
  std::unique_ptr<store::PageStore> store_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  sched::PageId page_ = 0;
};

TEST_F(PageValidatorsTest, HeldUntilCommittedThenReadFromTheStore) {
  AddPage();
  EXPECT_EQ(Fetch(Ok("\"v1\"", kLm1), kT0).etag, "");  // never fetched
  EXPECT_EQ(book_->validator_reads(), 0u);  // nothing to read: no read
  EXPECT_EQ(book_->cold_held(), 1u);        // pending commit
  EXPECT_NE(book_->meta(page_).flags & PageMeta::kValidators, 0);
  EXPECT_EQ(book_->meta(page_).last_modified_time(), 1795514400.0);
  Commit();
  EXPECT_EQ(book_->cold_held(), 0u);  // durable: out of memory
  EXPECT_EQ(Stored().etag, "\"v1\"");
  EXPECT_EQ(Stored().last_modified, kLm1);
  EXPECT_EQ(Stored().last_outcome, "ok");

  // The next dispatch reads them from the store, and holds them while the
  // fetch is in flight: a 304 without validators keeps them.
  const ColdFields sent = book_->ValidatorsForDispatch(page_);
  EXPECT_EQ(sent.etag, "\"v1\"");
  EXPECT_EQ(sent.last_modified, kLm1);
  EXPECT_EQ(book_->validator_reads(), 1u);
  EXPECT_EQ(book_->validator_read_failures(), 0u);
  book_->Observe(
      book_
          ->RecordFetch(page_,
                        Answer(fetch::OutcomeClass::kNotModified, 304, "", ""),
                        nullptr, 0, kT0 + 10)
          .observation);
  EXPECT_EQ(book_->meta(page_).last_outcome(), "not-modified");
  Commit();
  EXPECT_EQ(book_->cold_held(), 0u);
  EXPECT_EQ(Stored().etag, "\"v1\"");
  EXPECT_EQ(Stored().last_modified, kLm1);
  EXPECT_EQ(Stored().last_outcome, "not-modified");

  // A failure keeps them too (read at the dispatch, written back whole).
  EXPECT_EQ(
      Fetch(Answer(fetch::OutcomeClass::kHttp5xx, 503, "", ""), kT0 + 20).etag,
      "\"v1\"");
  Commit();
  EXPECT_EQ(Stored().etag, "\"v1\"");
  EXPECT_EQ(Stored().last_outcome, "5xx");
  EXPECT_EQ(book_->validator_reads(), 2u);
}

// The hazard: a page fetched again before its record committed, or whose
// validators changed, never gets the store's older ones.
TEST_F(PageValidatorsTest, NewestValidatorsWinOverTheStores) {
  AddPage();
  Fetch(Ok("\"v1\"", kLm1), kT0);
  Commit();
  ASSERT_EQ(Stored().etag, "\"v1\"");

  // Changed to v2; its record not yet taken: memory, not the store.
  EXPECT_EQ(Fetch(Ok("\"v2\"", kLm2), kT0 + 10).etag, "\"v1\"");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v2\"");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).last_modified, kLm2);
  // Fetched again (v3) with v2's record taken but not committed yet.
  store::StoreBatch taken;
  book_->TakeBatch(&taken);
  EXPECT_EQ(Stored().etag, "\"v1\"");  // the store is behind
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v2\"");
  book_->Observe(
      book_->RecordFetch(page_, Ok("\"v3\"", kLm2), nullptr, 9, kT0 + 20)
          .observation);
  // v2's batch commits: v3 stays held (its record is the next batch's).
  ASSERT_TRUE(store_->Commit(taken, kT0).ok());
  book_->Committed(true);
  EXPECT_EQ(Stored().etag, "\"v2\"");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v3\"");
  book_->Observe(
      book_
          ->RecordFetch(page_,
                        Answer(fetch::OutcomeClass::kNotModified, 304, "", ""),
                        nullptr, 0, kT0 + 30)
          .observation);
  Commit();
  EXPECT_EQ(book_->cold_held(), 0u);
  EXPECT_EQ(Stored().etag, "\"v3\"");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v3\"");
  book_->Observe(
      book_->RecordFetch(page_, Ok("", ""), nullptr, 11, kT0 + 40).observation);
  // The server dropped its validators: none from memory, though the store
  // still holds v3 until the next commit.
  EXPECT_EQ(book_->meta(page_).flags & PageMeta::kValidators, 0);
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "");
  Commit();
  EXPECT_EQ(Stored().etag, "");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "");
}

// A commit that failed: the store may lack the page's newest validators,
// so the book keeps them until a commit writes them.
TEST_F(PageValidatorsTest, AFailedCommitKeepsThemHeld) {
  AddPage();
  Fetch(Ok("\"v1\"", kLm1), kT0);
  Commit();
  Fetch(Ok("\"v2\"", kLm2), kT0 + 10);
  store::StoreBatch lost;
  book_->TakeBatch(&lost);
  book_->Committed(false);  // never written
  EXPECT_EQ(book_->cold_held(), 1u);
  EXPECT_EQ(Stored().etag, "\"v1\"");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v2\"");
  // Another batch without the page does not drop them either.
  Commit();
  EXPECT_EQ(book_->cold_held(), 1u);
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v2\"");
}

// A read that fails (no record: a store that lost it) sends no validators,
// never a wrong one, is counted, and writes the record without.
TEST_F(PageValidatorsTest, AFailedReadGivesNoneAndIsCounted) {
  AddPage();
  Fetch(Ok("\"v1\"", kLm1), kT0);
  Commit();
  store::StoreBatch drop;
  drop.DeletePage(parse::UrlKey(kUrl), kUrl);
  ASSERT_TRUE(store_->Commit(drop, kT0).ok());
  const ColdFields sent = book_->ValidatorsForDispatch(page_);
  EXPECT_EQ(sent.etag, "");
  EXPECT_EQ(sent.last_modified, "");
  EXPECT_EQ(book_->validator_reads(), 1u);
  EXPECT_EQ(book_->validator_read_failures(), 1u);
  EXPECT_EQ(book_->meta(page_).flags & PageMeta::kValidators, 0);
  // The answer to the unconditional GET brings them back.
  book_->Observe(
      book_->RecordFetch(page_, Ok("\"v2\"", kLm2), nullptr, 7, kT0 + 10)
          .observation);
  Commit();
  EXPECT_EQ(Stored().etag, "\"v2\"");
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v2\"");
  EXPECT_EQ(book_->validator_read_failures(), 1u);

  // No store at all (a store error): the same. The dispatch above holds
  // v2 until its fetch is recorded and committed: no read for the 304.
  book_->set_store(nullptr);
  book_->Observe(
      book_
          ->RecordFetch(page_,
                        Answer(fetch::OutcomeClass::kNotModified, 304, "", ""),
                        nullptr, 0, kT0 + 20)
          .observation);
  EXPECT_EQ(book_->validator_read_failures(), 1u);
  Commit();  // written through the test's own handle, dropped from memory
  EXPECT_EQ(Stored().etag, "\"v2\"");
  EXPECT_EQ(book_->cold_held(), 0u);
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "");
  EXPECT_EQ(book_->validator_read_failures(), 2u);
}

// A page marked for another reason (a dated signal) is written whole: its
// validators are read back from the store, not lost.
TEST_F(PageValidatorsTest, ARecordRewrittenWithoutAFetchKeepsThem) {
  AddPage();
  Fetch(Ok("\"v1\"", kLm1), kT0);
  Commit();
  ASSERT_TRUE(book_->ConsiderDatedSignal(page_, kT0 + 5));
  Commit();
  EXPECT_EQ(Stored().etag, "\"v1\"");
  EXPECT_EQ(Stored().last_modified, kLm1);
  EXPECT_EQ(Stored().last_signal_lastmod, kT0 + 5);
  EXPECT_EQ(book_->cold_held(), 0u);
}

// A page removed while its fetch was in flight holds nothing after it.
TEST_F(PageValidatorsTest, ARemovedPageHoldsNothing) {
  AddPage();
  Fetch(Ok("\"v1\"", kLm1), kT0);
  Commit();
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "\"v1\"");
  EXPECT_EQ(book_->cold_held(), 1u);  // in flight
  book_->Remove(page_, RemovalReason::kGone);
  EXPECT_EQ(book_->cold_held(), 0u);
  (void)book_->RecordFetch(page_, Ok("\"v2\"", kLm2), nullptr, 7, kT0 + 10);
  EXPECT_EQ(book_->cold_held(), 0u);
  Commit();
  EXPECT_FALSE(store_->GetPage(parse::UrlKey(kUrl), kUrl).ok());
  EXPECT_EQ(book_->ValidatorsForDispatch(page_).etag, "");
}

// A restart loads no validator: the meta says the page has some, the
// dispatch reads them.
TEST_F(PageValidatorsTest, ARestartLoadsNoneAndReadsThemAtDispatch) {
  AddPage();
  Fetch(Ok("\"v1\"", kLm1), kT0);
  Commit();
  book_.reset();
  sched_.reset();
  store_.reset();
  Open();
  auto report = book_->Restore(*store_, nullptr, RecoveryOptions{});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(book_->size(), 1u);
  page_ = 0;
  EXPECT_EQ(book_->cold_held(), 0u);
  EXPECT_NE(book_->meta(page_).flags & PageMeta::kValidators, 0);
  EXPECT_EQ(book_->meta(page_).last_outcome(), "ok");
  EXPECT_EQ(book_->meta(page_).last_modified_time(), 1795514400.0);
  EXPECT_EQ(book_->validator_reads(), 0u);
  const ColdFields sent = book_->ValidatorsForDispatch(page_);
  EXPECT_EQ(sent.etag, "\"v1\"");
  EXPECT_EQ(sent.last_modified, kLm1);
  EXPECT_EQ(book_->validator_reads(), 1u);
}

}  // namespace
}  // namespace freshd::daemon
