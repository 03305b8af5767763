// StoreWriter: the writer stage's group commit on a real LevelDB, and the
// page book's marks that feed it (each marked record written once).

#include "daemon/store_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "daemon/page_book.h"
#include "parse/url.h"
#include "store/page_store.h"
#include "tests/daemon/store_fixture.h"
#include "tests/store/temp_dir.h"
#include "tests/store/warc_reader.h"

namespace freshd::daemon {
namespace {

using StoreWriterTest = TempStoreTest;

TEST_F(StoreWriterTest, JobsQueuedWhileOneIsWrittenGoOutAsOneCommit) {
  StoreWriter writer(store_.get(), nullptr, 1.0);
  writer.Start();
  // Hold the writer in the first job's callback while 50 more are queued.
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  WriterJob first;
  ASSERT_TRUE(first.batch.PutPage(TestPageRecord(0)).ok());
  first.done = [&](Status s) {
    EXPECT_TRUE(s.ok());
    entered.set_value();
    released.wait();
  };
  writer.Submit(std::move(first));
  entered.get_future().wait();
  std::atomic<int> done{0};
  for (int i = 1; i <= 50; ++i) {
    WriterJob job;
    ASSERT_TRUE(job.batch.PutPage(TestPageRecord(i)).ok());
    job.done = [&](Status s) {
      EXPECT_TRUE(s.ok());
      ++done;
    };
    writer.Submit(std::move(job));
  }
  EXPECT_EQ(writer.queued(), 50u);
  release.set_value();
  ASSERT_TRUE(writer.Stop().ok());
  EXPECT_EQ(done.load(), 50);
  const StoreWriter::Stats stats = writer.stats();
  EXPECT_EQ(stats.jobs, 51u);
  EXPECT_EQ(stats.records, 51u);
  EXPECT_EQ(stats.commits, 2u);  // the first, then the other 50 together
  for (int i = 0; i <= 50; ++i) {
    auto got =
        store_->GetPage(TestPageRecord(i).url_key, TestPageRecord(i).url);
    ASSERT_TRUE(got.ok()) << i;
    EXPECT_EQ(got.value().etag, TestPageRecord(i).etag);
  }
}

TEST_F(StoreWriterTest, ASubmitAfterStopIsWrittenOnTheCallersThread) {
  StoreWriter writer(store_.get(), nullptr, 1.0);
  writer.Start();
  ASSERT_TRUE(writer.Stop().ok());
  bool called = false;
  WriterJob job;
  ASSERT_TRUE(job.batch.PutPage(TestPageRecord(7)).ok());
  job.done = [&](Status s) { called = s.ok(); };
  writer.Submit(std::move(job));
  EXPECT_TRUE(called);
  EXPECT_TRUE(
      store_->GetPage(TestPageRecord(7).url_key, TestPageRecord(7).url).ok());
}

fetch::FetchResult Fetched(const std::string& url, const std::string& body) {
  fetch::FetchResult r;
  r.url = r.final_url = url;
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.raw_headers = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
  r.raw_body = body;
  r.raw_request = "GET / HTTP/1.1\r\nHost: h.test\r\n\r\n";
  return r;
}

// A fetch's feed event is committed with the page's record, names the WARC
// file and offset of its response record, and keeps the staleness the page
// book measured (daemon/page_book.h: PageBookSketchTest).
TEST_F(StoreWriterTest, FeedEventsCarryWarcPlaceAndStaleness) {
  store::WarcWriterOptions wo;
  wo.dir = dir_.path();
  auto warc = store::WarcWriter::Open(wo);
  ASSERT_TRUE(warc.ok());
  StoreWriter writer(store_.get(), warc.value().get(), 1.0);
  // The feed hook (what a cluster node publishes) sees each event once
  // committed, with the seq and fields the store holds.
  std::mutex hooked_mu;
  std::vector<store::FeedEvent> hooked;
  writer.set_feed_hook([&](const std::vector<store::FeedEvent>& e) {
    std::lock_guard<std::mutex> lock(hooked_mu);
    hooked.insert(hooked.end(), e.begin(), e.end());
  });
  const store::PageRecord page = TestPageRecord(1);
  auto job = [&](const char* kind, double staleness, const std::string& body) {
    WriterJob j;
    EXPECT_TRUE(j.batch.PutPage(page).ok());
    j.warc.push_back(WarcItem{Fetched(page.url, body), UnixNow()});
    FeedItem f;
    f.event.url = page.url;
    f.event.time = UnixNow();  // an old one would be pruned by max_age
    f.event.kind = kind;
    f.event.status = 200;
    f.url_key = page.url_key;
    f.event.staleness = staleness;
    f.warc_item = 0;
    j.feed.push_back(std::move(f));
    return j;
  };
  writer.Submit(job("new", -1, "<p>one</p>"));  // not started:
  // written on this thread, alone
  writer.Start();
  // Two jobs in one group.
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  WriterJob hold = job("changed", 0.625, "<p>two</p>");
  hold.done = [&](Status) {
    entered.set_value();
    released.wait();
  };
  writer.Submit(std::move(hold));
  entered.get_future().wait();
  writer.Submit(job("changed", 0, "<p>three</p>"));
  writer.Submit(job("changed", 0.375, "<p>four</p>"));
  release.set_value();
  ASSERT_TRUE(writer.Stop().ok());
  ASSERT_TRUE(warc.value()->Close().ok());
  std::vector<store::FeedEvent> events;
  ASSERT_TRUE(store_
                  ->ForEachFeedEvent(0, 100,
                                     [&](const store::FeedEvent& e) {
                                       events.push_back(e);
                                       return true;
                                     })
                  .ok());
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(writer.stats().feed_events, 4u);
  {
    std::lock_guard<std::mutex> lock(hooked_mu);
    EXPECT_EQ(hooked, events);
  }
  EXPECT_LT(events[0].staleness, 0);  // unknown
  EXPECT_EQ(events[1].staleness, 0.625);
  EXPECT_EQ(events[2].staleness, 0);
  EXPECT_EQ(events[3].staleness, 0.375);
  // The writer writes no sketch: the page book does (TakeBatch).
  EXPECT_FALSE(store_->GetSketch(page.url_key, page.url).ok());
  uint64_t last_offset = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, i + 1);
    ASSERT_FALSE(events[i].warc_file.empty());
    EXPECT_EQ(events[i].warc_file.find('/'), std::string::npos);
    EXPECT_TRUE(i == 0 || events[i].warc_offset > last_offset);
    last_offset = events[i].warc_offset;
    // The offset starts the gzip member of the response record.
    std::ifstream in(dir_.path() + "/" + events[i].warc_file, std::ios::binary);
    ASSERT_TRUE(in.good()) << events[i].warc_file;
    in.seekg(static_cast<std::streamoff>(events[i].warc_offset));
    unsigned char magic[2] = {};
    in.read(reinterpret_cast<char*>(magic), 2);
    EXPECT_EQ(magic[0], 0x1f);
    EXPECT_EQ(magic[1], 0x8b);
  }
}

fetch::FetchResult NotModified(const std::string& url) {
  fetch::FetchResult r = Fetched(url, "");
  r.outcome = fetch::OutcomeClass::kNotModified;
  r.status = 304;
  r.raw_headers = "HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n\r\n";
  return r;
}

// Identical-payload dedup from the store's digest index: the same payload
// at two URLs, fetched twice, in one group and after a restart (a new
// store handle and WARC writer: nothing in memory survives) is archived
// once; every other capture is a revisit naming it, and a 304's revisit
// names the page's last capture. With dedup off, every payload is written.
TEST_F(StoreWriterTest, RevisitsNameTheirOriginalAcrossRestart) {
  const std::string a = "http://h.test/a", b = "http://h.test/b",
                    c = "http://h.test/c";
  const std::string same = "<p>the same payload</p>";
  auto run = [&](std::vector<WarcItem> items, uint64_t dedup_entries) {
    store::WarcWriterOptions wo;
    wo.dir = dir_.path();
    auto warc = store::WarcWriter::Open(wo);
    ASSERT_TRUE(warc.ok());
    StoreWriter writer(store_.get(), warc.value().get(), 1.0, FeedConfig{},
                       ArchivePolicy{dedup_entries, true});
    writer.Start();
    WriterJob job;
    job.warc = std::move(items);
    writer.Submit(std::move(job));
    ASSERT_TRUE(writer.Stop().ok());
    ASSERT_TRUE(warc.value()->Close().ok());
  };
  const double t0 = 1.7e9;
  run({{Fetched(a, same), t0}, {Fetched(b, same), t0 + 1}}, 1000);
  // The restart.
  store_.reset();
  StoreConfig sc;
  sc.path = dir_.path() + "/db";
  auto reopened = store::PageStore::Open(sc);
  ASSERT_TRUE(reopened.ok());
  store_ = std::move(reopened).value();
  run({{Fetched(c, same), t0 + 10},
       {NotModified(a), t0 + 11},
       {NotModified(b), t0 + 12},
       {Fetched(a, "<p>changed</p>"), t0 + 13},
       {NotModified(a), t0 + 14}},
      1000);

  std::vector<store::ParsedRecord> records = store::ReadWarcDir(dir_.path());
  std::string original_id, changed_id;
  std::vector<store::ParsedRecord> revisits;
  int responses = 0;
  for (store::ParsedRecord& r : records) {
    if (r.fields["warc-type"] == "response") {
      ++responses;
      if (r.fields["warc-target-uri"] == a && original_id.empty())
        original_id = r.fields["warc-record-id"];
      else if (r.fields["warc-target-uri"] == a)
        changed_id = r.fields["warc-record-id"];
    }
    if (r.fields["warc-type"] == "revisit") revisits.push_back(r);
    if (r.fields["warc-type"] == "warcinfo") {
      EXPECT_NE(r.block.find("robots: obey\r\n"), std::string::npos);
      EXPECT_NE(r.block.find("format: WARC File Format 1.1\r\n"),
                std::string::npos);
    }
  }
  EXPECT_EQ(responses, 2);  // a's first payload and a's changed one
  ASSERT_FALSE(original_id.empty());
  ASSERT_FALSE(changed_id.empty());
  ASSERT_EQ(revisits.size(), 5u);
  const std::string t0_date = "2023-11-14T22:13:20Z";  // t0
  const std::string same_digest = store::WarcSha1Digest(same);
  // b (same group), c (after the restart): identical payload of a's.
  for (int i : {0, 1}) {
    auto& f = revisits[i].fields;
    EXPECT_EQ(f["warc-target-uri"], i == 0 ? b : c);
    EXPECT_EQ(f["warc-profile"],
              "http://netpreserve.org/warc/1.1/revisit/"
              "identical-payload-digest");
    EXPECT_EQ(f["warc-refers-to"], original_id);
    EXPECT_EQ(f["warc-refers-to-target-uri"], a);
    EXPECT_EQ(f["warc-refers-to-date"], t0_date);
    EXPECT_EQ(f["warc-payload-digest"], same_digest);
  }
  // The 304s of a and b name the capture holding their payload: a's.
  for (int i : {2, 3}) {
    auto& f = revisits[i].fields;
    EXPECT_EQ(f["warc-target-uri"], i == 2 ? a : b);
    EXPECT_EQ(f["warc-profile"],
              "http://netpreserve.org/warc/1.1/revisit/server-not-modified");
    EXPECT_EQ(f["warc-refers-to"], original_id);
    EXPECT_EQ(f["warc-refers-to-target-uri"], a);
    EXPECT_EQ(f["warc-refers-to-date"], t0_date);
    EXPECT_EQ(f["warc-payload-digest"], same_digest);
  }
  // After a changed: its 304 names the new capture (same group).
  EXPECT_EQ(revisits[4].fields["warc-refers-to"], changed_id);
  EXPECT_EQ(revisits[4].fields["warc-refers-to-date"], "2023-11-14T22:13:33Z");
  EXPECT_EQ(store_->digest_entries(), 2u);

  // Dedup off: the same payload again is a response (the last-capture
  // index still serves 304s).
  run({{Fetched(c, same), t0 + 20}}, 0);
  int same_responses = 0;
  for (store::ParsedRecord& r : store::ReadWarcDir(dir_.path())) {
    if (r.fields["warc-type"] == "response" &&
        r.fields["warc-payload-digest"] == same_digest)
      ++same_responses;
  }
  EXPECT_EQ(same_responses, 2);
}

// The digest index stays within its bound (+1 % slack, at least one).
TEST_F(StoreWriterTest, DigestIndexIsBounded) {
  store::WarcWriterOptions wo;
  wo.dir = dir_.path();
  auto warc = store::WarcWriter::Open(wo);
  ASSERT_TRUE(warc.ok());
  StoreWriter writer(store_.get(), warc.value().get(), 1.0, FeedConfig{},
                     ArchivePolicy{10, true});
  for (int i = 0; i < 40; ++i) {
    WriterJob job;  // written on this thread (not started), one by one
    job.warc.push_back(
        {Fetched("http://h.test/" + std::to_string(i), std::to_string(i)),
         1.7e9});
    writer.Submit(std::move(job));
    EXPECT_LE(store_->digest_entries(), 11u);
  }
  EXPECT_GE(store_->digest_entries(), 10u);
  // The newest payload is still deduplicated; the oldest is not.
  WriterJob job;
  job.warc.push_back({Fetched("http://h.test/x", "39"), 1.7e9});
  job.warc.push_back({Fetched("http://h.test/y", "0"), 1.7e9});
  writer.Submit(std::move(job));
  EXPECT_EQ(writer.stats().warc_deduped, 1u);
}

TEST(PageBookTest, AMarkedRecordIsWrittenOnceAndCarriesItsMeta) {
  sched::SchedulerOptions o;
  o.policy = "freshness";
  auto sched = sched::Scheduler::Create(o);
  ASSERT_TRUE(sched.ok());
  PageBook book(sched.value().get());
  auto host = book.InternHost("h.test");
  ASSERT_TRUE(host.ok());
  auto a = book.Add("http://h.test/a", host.value(), 1.0, 10);
  auto b = book.Add("http://h.test/b", host.value(), 1.0, 10);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(book.Find("http://h.test/b"), b.value());
  EXPECT_FALSE(book.Add("http://h.test/c", host.value(), 1.0, 2).ok());
  // A failed fetch marks the page again: still one record.
  book.Observe({a.value(), 1.79e9, sched::FailedObs{}});
  store::StoreBatch batch;
  book.TakeBatch(&batch);
  EXPECT_EQ(batch.operations(), 2u);  // a and b, no host, no globals
  EXPECT_FALSE(book.marked());
  store::StoreBatch empty;
  book.TakeBatch(&empty);
  EXPECT_TRUE(empty.empty());
  // An observation that moved host and global statistics marks those.
  book.Observe({a.value(), 1.79e9 + 60, sched::FetchedObs{}});
  store::StoreBatch next;
  book.TakeBatch(&next);
  EXPECT_EQ(next.operations(), 3u);  // page, host, globals
}

}  // namespace
}  // namespace freshd::daemon
