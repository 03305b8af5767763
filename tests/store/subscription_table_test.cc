// The WebSub subscriptions as stored (store/subscription_table.h) in a real
// LevelDB: put, read back after reopening, delete; the value codec's
// bounds; a corrupt record skipped or reported; the pages untouched.

#include "store/subscription_table.h"

#include <gtest/gtest.h>
#include <leveldb/db.h>

#include <string>
#include <vector>

#include "store/keys.h"
#include "store/page_store.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

SubscriptionRecord Sub(int i) {
  SubscriptionRecord r;
  r.id = std::string(31, 'a') + static_cast<char>('0' + i);
  r.feed_url = "https://s" + std::to_string(i) + ".example/feed";
  r.topic = r.feed_url + "?self";
  r.hub = "https://hub.example/";
  r.secret = std::string(64, static_cast<char>('a' + i));
  r.state = 2;
  r.lease_end_unix = 1e9 + i;
  r.next_action_unix = 1e9 - i;
  r.failures = static_cast<uint32_t>(i);
  return r;
}

std::vector<SubscriptionRecord> All(const PageStore& store,
                                    bool skip_corrupt = false,
                                    Status* status = nullptr) {
  std::vector<SubscriptionRecord> out;
  Status s = store.ForEachSubscription(
      [&](const SubscriptionRecord& r) {
        out.push_back(r);
        return true;
      },
      skip_corrupt);
  if (status != nullptr) *status = s;
  return out;
}

TEST(SubscriptionTableTest, PutReopenDelete) {
  TempDir dir;
  StoreConfig c;
  c.path = dir.Sub("db");
  {
    auto store = PageStore::Open(c);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    StoreBatch batch;
    for (int i = 0; i < 3; ++i) batch.PutSubscription(Sub(i));
    ASSERT_TRUE((*store)->Commit(batch, 1.0).ok());
    StoreBatch del;
    del.DeleteSubscription(Sub(1).id);
    ASSERT_TRUE((*store)->Commit(del, 2.0).ok());
  }
  auto store = PageStore::Open(c);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::vector<SubscriptionRecord> got = All(**store);
  ASSERT_EQ(got.size(), 2u);
  for (const SubscriptionRecord& r : got) {
    const SubscriptionRecord want = Sub(r.id.back() - '0');
    EXPECT_EQ(r.feed_url, want.feed_url);
    EXPECT_EQ(r.topic, want.topic);
    EXPECT_EQ(r.hub, want.hub);
    EXPECT_EQ(r.secret, want.secret);
    EXPECT_EQ(r.state, want.state);
    EXPECT_EQ(r.lease_end_unix, want.lease_end_unix);
    EXPECT_EQ(r.next_action_unix, want.next_action_unix);
    EXPECT_EQ(r.failures, want.failures);
  }
  EXPECT_NE(got[0].id, Sub(1).id);
  EXPECT_NE(got[1].id, Sub(1).id);
}

TEST(SubscriptionTableTest, ValueCodecRefusesWhatItDidNotWrite) {
  const std::string good = EncodeSubscriptionValue(Sub(4));
  SubscriptionRecord r;
  EXPECT_TRUE(DecodeSubscriptionValue(good, &r).ok());
  EXPECT_FALSE(
      DecodeSubscriptionValue(good.substr(0, good.size() - 1), &r).ok());
  EXPECT_FALSE(DecodeSubscriptionValue(good + "x", &r).ok());
  std::string v2 = good;
  v2[0] = 2;  // an unknown version
  EXPECT_FALSE(DecodeSubscriptionValue(v2, &r).ok());
  SubscriptionRecord long_secret = Sub(1);
  long_secret.secret.assign(kMaxSubscriptionSecretBytes + 1, 's');
  EXPECT_FALSE(
      DecodeSubscriptionValue(EncodeSubscriptionValue(long_secret), &r).ok());
  EXPECT_FALSE(DecodeSubscriptionValue("", &r).ok());
}

TEST(SubscriptionTableTest, CorruptRecordIsReportedOrSkipped) {
  TempDir dir;
  StoreConfig c;
  c.path = dir.Sub("db");
  {
    auto store = PageStore::Open(c);
    ASSERT_TRUE(store.ok());
    StoreBatch batch;
    batch.PutSubscription(Sub(1));
    ASSERT_TRUE((*store)->Commit(batch, 1.0).ok());
  }
  {
    leveldb::DB* db = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), c.path, &db).ok());
    ASSERT_TRUE(
        db->Put(leveldb::WriteOptions(), SubscriptionKey("zz"), "junk").ok());
    delete db;
  }
  auto store = PageStore::Open(c);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Status s;
  All(**store, false, &s);
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  std::vector<SubscriptionRecord> kept = All(**store, true, &s);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].id, Sub(1).id);
  EXPECT_EQ((*store)->page_count(), 0u);
}

}  // namespace
}  // namespace freshd::store
