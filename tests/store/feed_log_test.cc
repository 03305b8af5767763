// The change-feed log in PageStore on a real LevelDB: events get contiguous
// sequence numbers in the commit of their batch, survive reopening, are
// read from a cursor in order with a limit, and are pruned from the head by
// count and by age; value encoding round trip and corruption.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/page_store.h"
#include "store/records.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

FeedEvent Event(int i, double time) {
  FeedEvent e;
  e.url = "https://h.example/p/" + std::to_string(i);
  e.time = time;
  e.kind = i % 3 == 0 ? "new" : "changed";
  e.status = 200;
  e.staleness = i % 3 == 0 ? -1 : 0.25;
  e.text_hash = 0x1234567890abcdefULL + static_cast<uint64_t>(i);
  e.warc_file = "freshd-20261126000000-00001-1.warc.gz";
  e.warc_offset = static_cast<uint64_t>(i) * 1000;
  return e;
}

class FeedLogTest : public ::testing::Test {
 protected:
  std::unique_ptr<PageStore> Open() {
    StoreConfig c;
    c.path = dir_.Sub("db");
    c.block_cache_bytes = 1 << 20;
    auto r = PageStore::Open(c);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }
  std::vector<FeedEvent> Read(const PageStore& s, uint64_t after,
                              size_t limit = 1000000) {
    std::vector<FeedEvent> out;
    Status st = s.ForEachFeedEvent(after, limit, [&](const FeedEvent& e) {
      out.push_back(e);
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }
  TempDir dir_;
};

TEST(FeedRecordTest, RoundTripAndCorruption) {
  FeedEvent e = Event(7, 1.7e9);
  std::string v;
  ASSERT_TRUE(EncodeFeedValue(e, &v).ok());
  FeedEvent back;
  ASSERT_TRUE(DecodeFeedValue(v, &back).ok());
  EXPECT_EQ(back, e);
  for (size_t n = 0; n < v.size(); ++n) {
    EXPECT_FALSE(DecodeFeedValue(v.substr(0, n), &back).ok()) << n;
  }
  EXPECT_FALSE(DecodeFeedValue(v + "x", &back).ok());
  e.url = std::string(kMaxUrlBytes + 1, 'a');
  EXPECT_FALSE(EncodeFeedValue(e, &v).ok());
}

TEST_F(FeedLogTest, SequenceIsContiguousAndDurable) {
  {
    auto s = Open();
    EXPECT_EQ(s->feed_bounds().newest, 0u);
    EXPECT_TRUE(Read(*s, 0).empty());
    for (int c = 0; c < 5; ++c) {
      StoreBatch b;
      PageRecord p;
      p.url = "https://h.example/p/" + std::to_string(c);
      p.url_key = static_cast<uint64_t>(c);
      ASSERT_TRUE(b.PutPage(p).ok());
      for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(b.AddFeedEvent(Event(c * 3 + i, 100 + c)).ok());
      }
      ASSERT_TRUE(s->Commit(b, 100 + c).ok());
    }
    EXPECT_EQ(s->feed_bounds().oldest, 1u);
    EXPECT_EQ(s->feed_bounds().newest, 15u);
  }
  auto s = Open();  // reopened: the sequence goes on
  EXPECT_EQ(s->feed_bounds().newest, 15u);
  auto all = Read(*s, 0);
  ASSERT_EQ(all.size(), 15u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, i + 1);
    FeedEvent want = Event(static_cast<int>(i), 100 + i / 3);
    want.seq = i + 1;
    EXPECT_EQ(all[i], want);
  }
  auto page = Read(*s, 4, 5);
  ASSERT_EQ(page.size(), 5u);
  EXPECT_EQ(page.front().seq, 5u);
  EXPECT_EQ(page.back().seq, 9u);
  EXPECT_TRUE(Read(*s, 15).empty());
  StoreBatch b;
  ASSERT_TRUE(b.AddFeedEvent(Event(99, 200)).ok());
  ASSERT_TRUE(s->Commit(b, 200).ok());
  ASSERT_EQ(Read(*s, 15).size(), 1u);
  EXPECT_EQ(Read(*s, 15)[0].seq, 16u);
}

TEST_F(FeedLogTest, PrunesByCountThenAgeAndKeepsSequence) {
  auto s = Open();
  StoreBatch b;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(b.AddFeedEvent(Event(i, 1000 + i)).ok());
  }
  ASSERT_TRUE(s->Commit(b, 1100).ok());
  auto n = s->PruneFeed(60, 0, 1100);  // by count only
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 40u);
  EXPECT_EQ(s->feed_bounds().oldest, 41u);
  EXPECT_EQ(Read(*s, 0).front().seq, 41u);
  n = s->PruneFeed(1000, 1070, 1100);  // by age: times 1040..1069 go
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 30u);
  EXPECT_EQ(s->feed_bounds().oldest, 71u);
  EXPECT_EQ(s->feed_bounds().newest, 100u);
  n = s->PruneFeed(1000, 0, 1100);  // nothing more
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  // A cursor behind the head reads from the oldest kept.
  EXPECT_EQ(Read(*s, 3).front().seq, 71u);
  s.reset();
  s = Open();
  EXPECT_EQ(s->feed_bounds().oldest, 71u);
  EXPECT_EQ(s->feed_bounds().newest, 100u);
  auto all = s->PruneFeed(0, 0, 1200);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, 30u);
  EXPECT_EQ(s->feed_bounds().oldest, 101u);
  EXPECT_EQ(s->feed_bounds().newest, 100u);
  s.reset();
  s = Open();  // empty log: the sequence still goes on from 101
  EXPECT_EQ(s->feed_bounds().oldest, 101u);
  StoreBatch c;
  ASSERT_TRUE(c.AddFeedEvent(Event(1, 2000)).ok());
  ASSERT_TRUE(s->Commit(c, 2000).ok());
  EXPECT_EQ(Read(*s, 0).front().seq, 101u);
}

TEST_F(FeedLogTest, SketchPutGetDelete) {
  auto s = Open();
  EXPECT_EQ(s->GetSketch(1, "https://a/").status().code(),
            Status::Code::kNotFound);
  StoreBatch b;
  ASSERT_TRUE(b.PutSketch(1, "https://a/", "abc").ok());
  ASSERT_TRUE(s->Commit(b, 1).ok());
  ASSERT_TRUE(s->GetSketch(1, "https://a/").ok());
  EXPECT_EQ(*s->GetSketch(1, "https://a/"), "abc");
  EXPECT_EQ(s->page_count(), 0u);  // not a page
  ASSERT_TRUE(b.PutSketch(1, "https://a/", "").ok());
  ASSERT_TRUE(s->Commit(b, 2).ok());
  EXPECT_FALSE(s->GetSketch(1, "https://a/").ok());
}

}  // namespace
}  // namespace freshd::store
