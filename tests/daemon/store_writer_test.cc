// StoreWriter: the writer stage's group commit on a real LevelDB, and the
// page book's marks that feed it (each marked record written once).

#include "daemon/store_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "daemon/page_book.h"
#include "parse/url.h"
#include "store/page_store.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

store::PageRecord Page(int i) {
  store::PageRecord r;
  r.url = "http://h.test/p/" + std::to_string(i);
  r.url_key = parse::UrlKey(r.url);
  r.etag = "e" + std::to_string(i);
  return r;
}

class StoreWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreConfig c;
    c.path = dir_.path() + "/db";
    auto store = store::PageStore::Open(c);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  store::TempDir dir_;
  std::unique_ptr<store::PageStore> store_;
};

TEST_F(StoreWriterTest, JobsQueuedWhileOneIsWrittenGoOutAsOneCommit) {
  StoreWriter writer(store_.get(), nullptr, 1.0);
  writer.Start();
  // Hold the writer in the first job's callback while 50 more are queued.
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  WriterJob first;
  ASSERT_TRUE(first.batch.PutPage(Page(0)).ok());
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
    ASSERT_TRUE(job.batch.PutPage(Page(i)).ok());
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
    auto got = store_->GetPage(Page(i).url_key, Page(i).url);
    ASSERT_TRUE(got.ok()) << i;
    EXPECT_EQ(got.value().etag, Page(i).etag);
  }
}

TEST_F(StoreWriterTest, ASubmitAfterStopIsWrittenOnTheCallersThread) {
  StoreWriter writer(store_.get(), nullptr, 1.0);
  writer.Start();
  ASSERT_TRUE(writer.Stop().ok());
  bool called = false;
  WriterJob job;
  ASSERT_TRUE(job.batch.PutPage(Page(7)).ok());
  job.done = [&](Status s) { called = s.ok(); };
  writer.Submit(std::move(job));
  EXPECT_TRUE(called);
  EXPECT_TRUE(store_->GetPage(Page(7).url_key, Page(7).url).ok());
}

TEST(PageBookTest, AMarkedRecordIsWrittenOnceAndCarriesItsMeta) {
  sched::SchedulerOptions o;
  o.policy = "freshness";
  auto sched = sched::Scheduler::Create(o);
  ASSERT_TRUE(sched.ok());
  PageBook book(sched.value().get());
  auto host = book.hosts().Intern("h.test");
  ASSERT_TRUE(host.ok());
  auto a = book.Add("http://h.test/a", host.value(), 1.0, 10);
  auto b = book.Add("http://h.test/b", host.value(), 1.0, 10);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(book.Find("http://h.test/b"), b.value());
  EXPECT_FALSE(book.Add("http://h.test/c", host.value(), 1.0, 2).ok());
  book.meta(a.value()).etag = "x";
  book.MarkPage(a.value());  // again: still one record
  store::StoreBatch batch;
  book.TakeBatch(&batch);
  EXPECT_EQ(batch.operations(), 2u);  // a and b, no host, no globals
  EXPECT_FALSE(book.marked());
  store::StoreBatch empty;
  book.TakeBatch(&empty);
  EXPECT_TRUE(empty.empty());
  // An observation that moved host and global statistics marks those.
  book.Note(a.value(), {true, true, true});
  store::StoreBatch next;
  book.TakeBatch(&next);
  EXPECT_EQ(next.operations(), 3u);  // page, host, globals
}

}  // namespace
}  // namespace freshd::daemon
