// GroupCommitter alone: a real StoreWriter on a temporary LevelDB (and WARC
// directory), an io_context run by the test, records from a vector standing
// in for the page book. No network, no loop.

#include "daemon/group_committer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "parse/url.h"
#include "store/page_store.h"
#include "store/warc_writer.h"
#include "tests/daemon/store_fixture.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

class GroupCommitterTest : public TempStoreTest {
 protected:
  // The records "the book" has marked.
  RecordSource Marked() {
    return {[this] { return !marked_.empty(); },
            [this](store::StoreBatch* batch, uint64_t*) {
              for (const auto& r : marked_) ASSERT_TRUE(batch->PutPage(r).ok());
              marked_.clear();
            },
            [this](bool ok) { reported_.push_back(ok); }};
  }

  // Runs io until `done` holds (the writer reports from its thread).
  void RunUntil(const std::function<bool()>& done) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(done());
  }

  bool Stored(int i) {
    const store::PageRecord p = TestPageRecord(i);
    return store_->GetPage(p.url_key, p.url).ok();
  }

  boost::asio::io_context io_;
  std::vector<store::PageRecord> marked_;
  std::vector<bool> reported_;  // each commit's outcome, as the book hears it
};

TEST_F(GroupCommitterTest, WorkArrivingDuringACommitGoesAsOneNextJob) {
  StoreWriter writer(store_.get(), nullptr, 1.0);
  writer.Start();
  GroupCommitter committer(io_, &writer, Marked(), /*archive=*/false);
  int after_commit = 0;
  committer.set_on_committed([&] { ++after_commit; });
  std::vector<std::string> acked;

  marked_.push_back(TestPageRecord(0));
  committer.Request([&](Status s) {
    EXPECT_TRUE(s.ok());
    acked.push_back("a");
  });
  io_.poll_one();  // the first job goes to the writer
  ASSERT_TRUE(committer.running());
  // While it is written, more records and waiters arrive: none is sent.
  for (int i = 1; i <= 20; ++i) {
    marked_.push_back(TestPageRecord(i));
    committer.Request(i % 10 == 0 ? [&](Status s) {
      EXPECT_TRUE(s.ok());
      acked.push_back("b");
    }
                                  : std::function<void(Status)>());
  }
  EXPECT_EQ(marked_.size(), 20u);
  RunUntil([&] { return acked.size() == 3 && !committer.running(); });
  EXPECT_EQ(acked, (std::vector<std::string>{"a", "b", "b"}));
  EXPECT_TRUE(marked_.empty());
  ASSERT_TRUE(writer.Stop().ok());
  // Two jobs: the first, and everything that arrived during it.
  EXPECT_EQ(writer.stats().jobs, 2u);
  EXPECT_EQ(writer.stats().records, 21u);
  EXPECT_EQ(after_commit, 2);
  // The record source heard of each commit, before the next take.
  EXPECT_EQ(reported_, (std::vector<bool>{true, true}));
  for (int i = 0; i <= 20; ++i) EXPECT_TRUE(Stored(i)) << i;
  EXPECT_EQ(committer.store_errors(), 0u);
}

TEST_F(GroupCommitterTest, WarcItemsAreCountedUntilHandedToTheWriter) {
  const std::string warc_dir = dir_.path() + "/warc";
  std::filesystem::create_directories(warc_dir);
  store::WarcWriterOptions wo;
  wo.dir = warc_dir;
  auto warc = store::WarcWriter::Open(wo);
  ASSERT_TRUE(warc.ok()) << warc.status().ToString();
  StoreWriter writer(store_.get(), warc.value().get(), 1.0);
  writer.Start();
  GroupCommitter committer(io_, &writer, Marked(), /*archive=*/true);

  fetch::FetchResult r;
  r.url = r.final_url = "http://h.test/p/1";
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.content_type = "text/html";
  r.raw_request = "GET /p/1 HTTP/1.1\r\nHost: h.test\r\n\r\n";
  r.raw_headers = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
  r.raw_body = "<p>hello</p>";
  r.body = "<p>hello</p>";
  r.remote_ip = "127.0.0.1";
  const uint64_t bytes = r.raw_headers.size() + r.raw_body.size();
  FeedItem event;
  event.event.url = r.url;
  ASSERT_TRUE(committer.AddWarc(r, 1.7e9, &event));
  EXPECT_EQ(event.warc_item, 0);
  EXPECT_EQ(committer.pending_bytes(), bytes);
  bool committed = false;
  committer.Request([&](Status s) {
    EXPECT_TRUE(s.ok()) << s.ToString();
    committed = true;
  });
  RunUntil([&] { return committed; });
  EXPECT_EQ(committer.pending_bytes(), 0u);
  ASSERT_TRUE(writer.Stop().ok());
  EXPECT_EQ(writer.stats().warc_records, 1u);
  ASSERT_TRUE(warc.value()->Close().ok());

  // Without WARC output nothing is queued.
  GroupCommitter plain(io_, &writer, Marked(), /*archive=*/false);
  EXPECT_FALSE(plain.AddWarc(r, 1.7e9));
  EXPECT_EQ(plain.pending_bytes(), 0u);
}

TEST_F(GroupCommitterTest, NoReportAfterStop) {
  StoreWriter writer(store_.get(), nullptr, 1.0);
  writer.Start();
  bool acked = false;
  {
    GroupCommitter committer(io_, &writer, Marked(), /*archive=*/false);
    marked_.push_back(TestPageRecord(7));
    committer.Request([&](Status) { acked = true; });
    io_.poll_one();  // submitted
    committer.Stop();
  }
  ASSERT_TRUE(writer.Stop().ok());  // the job is written...
  io_.restart();
  io_.poll();
  EXPECT_FALSE(acked);  // ...but its report goes nowhere
  EXPECT_TRUE(Stored(7));
}

}  // namespace
}  // namespace freshd::daemon
