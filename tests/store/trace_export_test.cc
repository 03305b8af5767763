// ExportTrace on a real LevelDB store: feed events become censored trace
// rows (new -> create, changed -> change, gone -> delete, unchanged -> no
// row), fetched pages without rows get an empty-time row, pages never
// fetched are left out, URLs are CSV-quoted, and the feed is read past one
// batch.

#include "store/trace_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "store/page_store.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

class TraceExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreConfig c;
    c.path = dir_.Sub("db");
    c.block_cache_bytes = 1 << 20;
    auto r = PageStore::Open(c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    store_ = std::move(r).value();
  }
  void Page(uint64_t key, const std::string& url, double fetched) {
    PageRecord p;
    p.url_key = key;
    p.url = url;
    p.last_fetch_time = fetched;
    ASSERT_TRUE(batch_.PutPage(p).ok());
  }
  void Event(const std::string& url, double time, const std::string& kind) {
    FeedEvent e;
    e.url = url;
    e.time = time;
    e.kind = kind;
    e.status = kind == "gone" ? 404 : 200;
    ASSERT_TRUE(batch_.AddFeedEvent(e).ok());
  }
  void Commit() { ASSERT_TRUE(store_->Commit(batch_, 1).ok()); }

  TempDir dir_;
  std::unique_ptr<PageStore> store_;
  StoreBatch batch_;
};

TEST(CsvFieldTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("https://a.example/x"), "https://a.example/x");
  EXPECT_EQ(CsvField("https://a.example/x,y"), "\"https://a.example/x,y\"");
  EXPECT_EQ(CsvField("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(CsvField("a\nb"), "\"a\nb\"");
}

TEST_F(TraceExportTest, FeedEventsBecomeCensoredRows) {
  Page(1, "https://a.example/", 1700000300);
  Page(2, "https://a.example/b,c", 1700000400);
  Page(3, "https://a.example/static", 1700000050);
  Page(4, "https://a.example/never-fetched", 0);
  Page(5, "https://a.example/same", 1700000500);
  Event("https://a.example/", 1700000000.25, "new");
  Event("https://a.example/b,c", 1700000001, "new");
  Event("https://a.example/", 1700000100, "changed");
  Event("https://a.example/same", 1700000150, "unchanged");
  Event("https://a.example/b,c", 1700000200, "gone");
  Event("https://a.example/b,c", 1700000400, "new");
  Commit();
  std::ostringstream out;
  TraceExportStats stats;
  ASSERT_TRUE(ExportTrace(*store_, out, &stats).ok());
  EXPECT_EQ(out.str(),
            "url,time,event,observed\n"
            "https://a.example/,1700000000.250,create,fetch\n"
            "\"https://a.example/b,c\",1700000001.000,create,fetch\n"
            "https://a.example/,1700000100.000,change,fetch\n"
            "\"https://a.example/b,c\",1700000200.000,delete,fetch\n"
            "\"https://a.example/b,c\",1700000400.000,create,fetch\n"
            // Fetched, no change seen (page order is url_key order).
            "https://a.example/static,,change,fetch\n"
            "https://a.example/same,,change,fetch\n");
  EXPECT_EQ(stats.feed_events, 6u);
  EXPECT_EQ(stats.rows, 7u);
  EXPECT_EQ(stats.static_pages, 2u);
  EXPECT_EQ(stats.first_seq, 1u);
  EXPECT_EQ(stats.last_seq, 6u);
  EXPECT_EQ(stats.first_time, 1700000000.25);
  EXPECT_EQ(stats.last_time, 1700000400);
}

TEST_F(TraceExportTest, ReadsTheWholeFeedPastOneBatch) {
  const int kPages = 50;
  const int kEvents = 10000;  // more than one 4,096-event read
  for (int i = 0; i < kPages; ++i) {
    Page(static_cast<uint64_t>(i + 1), "https://a.example/" + std::to_string(i),
         2e9);
  }
  for (int i = 0; i < kEvents; ++i) {
    Event("https://a.example/" + std::to_string(i % kPages), 1e9 + i,
          i < kPages ? "new" : "changed");
  }
  Commit();
  std::ostringstream out;
  TraceExportStats stats;
  ASSERT_TRUE(ExportTrace(*store_, out, &stats).ok());
  EXPECT_EQ(stats.feed_events, static_cast<uint64_t>(kEvents));
  EXPECT_EQ(stats.rows, static_cast<uint64_t>(kEvents));
  EXPECT_EQ(stats.static_pages, 0u);
  EXPECT_EQ(stats.last_time, 1e9 + kEvents - 1);
  const std::string text = out.str();
  EXPECT_EQ(static_cast<int>(std::count(text.begin(), text.end(), '\n')),
            kEvents + 1);
}

TEST_F(TraceExportTest, AnEmptyStoreIsAHeader) {
  std::ostringstream out;
  TraceExportStats stats;
  ASSERT_TRUE(ExportTrace(*store_, out, &stats).ok());
  EXPECT_EQ(out.str(), "url,time,event,observed\n");
  EXPECT_EQ(stats.first_seq, 0u);
}

}  // namespace
}  // namespace freshd::store
