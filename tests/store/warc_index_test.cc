// The WARC capture index of the store: the digest index ('W' + 'X', first
// capture per payload, bounded by dropping the oldest) and a page's last
// capture ('L'), on a real LevelDB, across reopens; the value encoding
// refuses damaged bytes.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/page_store.h"
#include "store/records.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

WarcCapture Capture(int i) {
  WarcCapture c;
  c.record_id = "<urn:uuid:00000000-0000-4000-8000-" +
                std::to_string(100000000000 + i) + ">";
  c.target_uri = "http://h.test/p/" + std::to_string(i);
  c.date = 1.7e9 + i;
  c.payload_digest = "sha1:DIGEST" + std::to_string(i);
  return c;
}

TEST(WarcCaptureValueTest, RoundTripsAndRefusesEveryTruncation) {
  WarcCapture c = Capture(7);
  c.seq = 300;  // a two-byte varint
  std::string value;
  ASSERT_TRUE(EncodeCaptureValue(c, &value).ok());
  WarcCapture back;
  ASSERT_TRUE(DecodeCaptureValue(value, &back).ok());
  EXPECT_EQ(back, c);
  for (size_t n = 0; n < value.size(); ++n) {
    EXPECT_EQ(DecodeCaptureValue(value.substr(0, n), &back).code(),
              Status::Code::kCorruption)
        << n;
  }
  EXPECT_EQ(DecodeCaptureValue(value + "x", &back).code(),
            Status::Code::kCorruption);
  c.target_uri.assign(kMaxUrlBytes + 1, 'a');
  EXPECT_EQ(EncodeCaptureValue(c, &value).code(),
            Status::Code::kInvalidArgument);
}

class WarcIndexTest : public ::testing::Test {
 protected:
  void Reopen() {
    store_.reset();
    StoreConfig c;
    c.path = dir_.path() + "/db";
    auto s = PageStore::Open(c);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void SetUp() override { Reopen(); }
  void Put(int from, int to) {
    StoreBatch b;
    for (int i = from; i <= to; ++i) {
      ASSERT_TRUE(b.PutDigestCapture(Capture(i)).ok());
    }
    ASSERT_TRUE(store_->Commit(b, 1.0).ok());
  }
  TempDir dir_;
  std::unique_ptr<PageStore> store_;
};

// Entries get seq 1, 2, 3, ... in commit order (kept across reopens); a
// prune drops the oldest down to the bound and nothing else.
TEST_F(WarcIndexTest, DigestIndexKeepsOrderAcrossReopensAndDropsOldest) {
  Put(1, 6);
  Put(7, 10);
  EXPECT_EQ(store_->digest_entries(), 10u);
  for (int i = 1; i <= 10; ++i) {
    auto c = store_->GetDigestCapture(Capture(i).payload_digest);
    ASSERT_TRUE(c.ok()) << i;
    EXPECT_EQ(c->record_id, Capture(i).record_id);
    EXPECT_EQ(c->target_uri, Capture(i).target_uri);
    EXPECT_EQ(c->date, Capture(i).date);
    EXPECT_EQ(c->seq, static_cast<uint64_t>(i));
  }
  EXPECT_EQ(store_->GetDigestCapture("sha1:NONE").status().code(),
            Status::Code::kNotFound);
  Reopen();
  EXPECT_EQ(store_->digest_entries(), 10u);
  Put(11, 15);
  auto c15 = store_->GetDigestCapture(Capture(15).payload_digest);
  ASSERT_TRUE(c15.ok());
  EXPECT_EQ(c15->seq, 15u);
  auto pruned = store_->PruneDigests(8, 2.0);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(*pruned, 7u);
  EXPECT_EQ(store_->digest_entries(), 8u);
  for (int i = 1; i <= 15; ++i) {
    EXPECT_EQ(store_->GetDigestCapture(Capture(i).payload_digest).ok(), i > 7)
        << i;
  }
  Reopen();
  EXPECT_EQ(store_->digest_entries(), 8u);
  EXPECT_EQ(*store_->PruneDigests(8, 3.0), 0u);
  // A digest written again (a lookup that failed) keeps its newer entry
  // when its older order entry is pruned.
  Put(8, 8);
  EXPECT_EQ(store_->digest_entries(), 9u);
  ASSERT_EQ(*store_->PruneDigests(8, 4.0), 1u);  // the old entry of 8
  auto c8 = store_->GetDigestCapture(Capture(8).payload_digest);
  ASSERT_TRUE(c8.ok());
  EXPECT_EQ(c8->seq, 16u);
}

TEST_F(WarcIndexTest, LastCapturePerPage) {
  StoreBatch b;
  ASSERT_TRUE(b.PutLastCapture(1, "http://h.test/a", Capture(1)).ok());
  ASSERT_TRUE(b.PutLastCapture(1, "http://h.test/b", Capture(2)).ok());
  ASSERT_TRUE(store_->Commit(b, 1.0).ok());
  ASSERT_TRUE(b.PutLastCapture(1, "http://h.test/a", Capture(3)).ok());
  ASSERT_TRUE(store_->Commit(b, 1.0).ok());
  Reopen();
  auto a = store_->GetLastCapture(1, "http://h.test/a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->record_id, Capture(3).record_id);
  EXPECT_EQ(store_->GetLastCapture(1, "http://h.test/b")->record_id,
            Capture(2).record_id);
  EXPECT_EQ(store_->GetLastCapture(2, "http://h.test/a").status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(store_->digest_entries(), 0u);  // not part of the digest index
}

}  // namespace
}  // namespace freshd::store
