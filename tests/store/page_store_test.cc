// PageStore on a real LevelDB in a temporary directory: records, batches,
// the sync policy, scans used for recovery, schema versioning, corruption
// reporting and the bloom filter.

#include "store/page_store.h"

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "base/coding.h"
#include "store/keys.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64: stands in for parse::UrlKey
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

PageRecord Page(int i) {
  PageRecord p;
  p.url = "https://host" + std::to_string(i % 7) + ".example/p/" +
          std::to_string(i);
  p.url_key = Mix(static_cast<uint64_t>(i));
  p.sched_state = "state-" + std::to_string(i);
  p.etag = "\"e" + std::to_string(i) + "\"";
  p.last_status = 200;
  p.last_outcome = "ok";
  p.last_fetch_time = 1000.0 + i;
  p.content_hash = Mix(static_cast<uint64_t>(i) + 1000000);
  return p;
}

class PageStoreTest : public ::testing::Test {
 protected:
  StoreConfig Config() const {
    StoreConfig c;
    c.path = dir_.Sub("db");
    c.block_cache_bytes = 1 << 20;
    c.sync_interval_s = 1.0;
    return c;
  }
  std::unique_ptr<PageStore> OpenOrDie() {
    auto r = PageStore::Open(Config());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }
  TempDir dir_;
};

TEST_F(PageStoreTest, PutGetAndContains) {
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  StoreBatch batch;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(batch.PutPage(Page(i)).ok());
  ASSERT_TRUE(store->Commit(batch, 1.0).ok());
  EXPECT_TRUE(batch.empty()) << "Commit clears the batch";
  for (int i = 0; i < 10; ++i) {
    PageRecord want = Page(i);
    auto got = store->GetPage(want.url_key, want.url);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, want);
    auto has = store->ContainsPage(want.url_key, want.url);
    ASSERT_TRUE(has.ok());
    EXPECT_TRUE(*has);
  }
  PageRecord missing = Page(99);
  auto has = store->ContainsPage(missing.url_key, missing.url);
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
  EXPECT_EQ(store->GetPage(missing.url_key, missing.url).status().code(),
            Status::Code::kNotFound);
}

// The installation secret is drawn once, kept across reopenings, and is
// not shared by two stores (64 random bits: equal by chance with p = 2^-64).
TEST_F(PageStoreTest, HashSecretIsRandomPerStoreAndStable) {
  uint64_t first;
  {
    auto store = OpenOrDie();
    ASSERT_NE(store, nullptr);
    first = store->hash_secret();
  }
  auto again = OpenOrDie();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->hash_secret(), first);
  StoreConfig other = Config();
  other.path = dir_.Sub("other");
  auto second = PageStore::Open(other);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second.value()->hash_secret(), first);
}

TEST_F(PageStoreTest, UrlKeyCollisionsKeepBothPages) {
  auto store = OpenOrDie();
  PageRecord a = Page(1), b = Page(2);
  b.url_key = a.url_key;  // a 64-bit collision
  StoreBatch batch;
  ASSERT_TRUE(batch.PutPage(a).ok());
  ASSERT_TRUE(batch.PutPage(b).ok());
  ASSERT_TRUE(store->Commit(batch, 1.0).ok());
  EXPECT_EQ(*store->GetPage(a.url_key, a.url), a);
  EXPECT_EQ(*store->GetPage(b.url_key, b.url), b);
  int seen = 0;
  ASSERT_TRUE(store
                  ->ForEachPage([&](const PageRecord&) {
                    ++seen;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(seen, 2);
}

TEST_F(PageStoreTest, MissesAfterCompactionUseBloomFilteredTables) {
  auto store = OpenOrDie();
  StoreBatch batch;
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(batch.PutPage(Page(i)).ok());
    if (batch.operations() == 500) {
      ASSERT_TRUE(store->Commit(batch, i).ok());
    }
  }
  ASSERT_TRUE(store->Commit(batch, 5000).ok());
  store->CompactAll();  // everything now lives in table files
  int found = 0;
  for (int i = 0; i < 10000; ++i) {
    PageRecord p = Page(i);
    auto has = store->ContainsPage(p.url_key, p.url);
    ASSERT_TRUE(has.ok());
    found += *has;
    EXPECT_EQ(*has, i < 5000) << i;
  }
  EXPECT_EQ(found, 5000);
  store.reset();
  // Every table file carries the bloom filter block LevelDB consults before
  // reading a data block (its meta-index names the policy).
  int tables = 0;
  for (const auto& e : std::filesystem::directory_iterator(Config().path)) {
    if (e.path().extension() != ".ldb") continue;
    ++tables;
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    EXPECT_NE(bytes.find("filter.leveldb.BuiltinBloomFilter2"),
              std::string::npos)
        << e.path();
  }
  EXPECT_GT(tables, 0);
}

TEST_F(PageStoreTest, SyncsOncePerInterval) {
  auto store = OpenOrDie();
  std::vector<bool> synced_at;
  for (int i = 0; i < 30; ++i) {
    StoreBatch batch;
    ASSERT_TRUE(batch.PutPage(Page(i)).ok());
    bool synced = false;
    ASSERT_TRUE(store->Commit(batch, 100.0 + 0.1 * i, &synced).ok());
    synced_at.push_back(synced);
  }
  // First commit syncs; then one every 1.0 s of caller time (10 commits).
  std::vector<int> sync_indices;
  for (int i = 0; i < 30; ++i)
    if (synced_at[i]) sync_indices.push_back(i);
  ASSERT_GE(sync_indices.size(), 3u);
  EXPECT_EQ(sync_indices[0], 0);
  for (size_t k = 1; k < sync_indices.size(); ++k) {
    int gap = sync_indices[k] - sync_indices[k - 1];
    EXPECT_GE(gap, 9);
    EXPECT_LE(gap, 11);
  }
  bool synced = true;
  // Nothing due: last commit was within the interval.
  ASSERT_TRUE(store->MaybeSync(100.0 + 0.1 * 29, false, &synced).ok());
  EXPECT_FALSE(synced);
  ASSERT_TRUE(store->MaybeSync(200.0, false, &synced).ok());
  EXPECT_EQ(synced, sync_indices.back() != 29);
  ASSERT_TRUE(store->MaybeSync(200.5, true, &synced).ok());
  EXPECT_TRUE(synced);
}

TEST_F(PageStoreTest, CloseKeepsEverythingAndReopenRecovers) {
  {
    auto store = OpenOrDie();
    for (int i = 0; i < 200; ++i) {
      StoreBatch batch;
      ASSERT_TRUE(batch.PutPage(Page(i)).ok());
      HostRecord h;
      h.host = "host" + std::to_string(i % 7) + ".example:443";
      h.pooled_estimates = std::to_string(i);
      ASSERT_TRUE(batch.PutHost(h).ok());
      FeedEvent e;
      e.url = Page(i).url;
      e.time = 50.0 + i;
      e.kind = i % 2 ? "changed" : "new";
      ASSERT_TRUE(batch.AddFeedEvent(e).ok());
      ASSERT_TRUE(store->Commit(batch, 1.0).ok());  // never due: not synced
    }
    ASSERT_TRUE(store->Close().ok());
    StoreBatch late;
    ASSERT_TRUE(late.PutPage(Page(1)).ok());
    EXPECT_EQ(store->Commit(late, 2.0).code(), Status::Code::kUnavailable);
    EXPECT_EQ(store->GetPage(Page(1).url_key, Page(1).url).status().code(),
              Status::Code::kUnavailable);
    EXPECT_EQ(store->ForEachPage([](const PageRecord&) { return true; }).code(),
              Status::Code::kUnavailable);
    EXPECT_TRUE(store->Close().ok()) << "Close is idempotent";
  }
  auto store = OpenOrDie();
  std::map<std::string, PageRecord> pages;
  ScanStats stats;
  ASSERT_TRUE(store
                  ->ForEachPage(
                      [&](const PageRecord& p) {
                        pages[p.url] = p;
                        return true;
                      },
                      &stats)
                  .ok());
  EXPECT_EQ(stats.records, 200u);
  EXPECT_EQ(stats.corrupt, 0u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(pages[Page(i).url], Page(i));
  int hosts = 0;
  ASSERT_TRUE(store
                  ->ForEachHost([&](const HostRecord& h) {
                    ++hosts;
                    EXPECT_GE(std::stoi(h.pooled_estimates), 193) << h.host;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(hosts, 7);
  std::vector<double> times;
  ASSERT_TRUE(store
                  ->ForEachFeedEvent(149, 1000,
                                     [&](const FeedEvent& e) {
                                       times.push_back(e.time);
                                       return true;
                                     })
                  .ok());
  ASSERT_EQ(times.size(), 51u);  // seq 150..200: times 199..249
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_EQ(times.front(), 199.0);
  auto pruned = store->PruneFeed(1000, 200.0, 3.0);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 150u);  // times 50..199
  EXPECT_EQ(store->feed_bounds().oldest, 151u);
  EXPECT_EQ(store->feed_bounds().newest, 200u);
}

// Feed numbers continue across a reopen (the next seq is in the store):
// 1..10 with no hole.
TEST_F(PageStoreTest, FeedNumbersContinueAcrossReopen) {
  {
    auto store = OpenOrDie();
    for (int round = 0; round < 2; ++round) {  // second round after reopen
      StoreBatch batch;
      for (int i = 0; i < 5; ++i) {
        FeedEvent e;
        e.url = "https://a/";
        e.time = 10.0;
        e.kind = "new";
        ASSERT_TRUE(batch.AddFeedEvent(e).ok());
      }
      ASSERT_TRUE(store->Commit(batch, 1.0).ok());
      if (round == 0) {
        ASSERT_TRUE(store->Close().ok());
        store = OpenOrDie();
      }
    }
  }
  auto store = OpenOrDie();
  std::vector<uint64_t> seqs;
  ASSERT_TRUE(store
                  ->ForEachFeedEvent(0, 100,
                                     [&](const FeedEvent& e) {
                                       seqs.push_back(e.seq);
                                       return true;
                                     })
                  .ok());
  ASSERT_EQ(seqs.size(), 10u);
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i + 1);
}

TEST_F(PageStoreTest, PruneDeletesInBoundedBatches) {
  auto store = OpenOrDie();
  StoreBatch batch;
  for (int i = 0; i < 25000; ++i) {
    FeedEvent e;
    e.url = "https://a/";
    e.time = 1000.0 + i;
    e.kind = "changed";
    ASSERT_TRUE(batch.AddFeedEvent(e).ok());
    if (batch.operations() == 5000) {
      ASSERT_TRUE(store->Commit(batch, 1.0).ok());
    }
  }
  auto pruned = store->PruneFeed(1000000, 1000.0 + 22000, 2.0);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(*pruned, 22000u);
  double first = -1;
  int left = 0;
  ASSERT_TRUE(store
                  ->ForEachFeedEvent(0, 100000,
                                     [&](const FeedEvent& e) {
                                       if (left++ == 0) first = e.time;
                                       return true;
                                     })
                  .ok());
  EXPECT_EQ(left, 3000);
  EXPECT_EQ(first, 1000.0 + 22000);
}

TEST_F(PageStoreTest, EarlyStopInScan) {
  auto store = OpenOrDie();
  StoreBatch batch;
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(batch.PutPage(Page(i)).ok());
  ASSERT_TRUE(store->Commit(batch, 1.0).ok());
  int n = 0;
  ASSERT_TRUE(
      store->ForEachPage([&](const PageRecord&) { return ++n < 5; }).ok());
  EXPECT_EQ(n, 5);
}

TEST_F(PageStoreTest, DeletesAreAtomicWithPuts) {
  auto store = OpenOrDie();
  StoreBatch batch;
  ASSERT_TRUE(batch.PutPage(Page(1)).ok());
  HostRecord host;
  host.host = "h";
  ASSERT_TRUE(batch.PutHost(host).ok());
  ASSERT_TRUE(batch.PutSketch(Page(1).url_key, Page(1).url, "sketch").ok());
  WarcCapture capture;
  capture.record_id = "<urn:uuid:1>";
  capture.target_uri = Page(1).url;
  capture.payload_digest = "sha1:AAAA";
  ASSERT_TRUE(batch.PutLastCapture(Page(1).url_key, Page(1).url, capture).ok());
  ASSERT_TRUE(store->Commit(batch, 1.0).ok());
  ASSERT_TRUE(store->GetSketch(Page(1).url_key, Page(1).url).ok());
  ASSERT_TRUE(store->GetLastCapture(Page(1).url_key, Page(1).url).ok());
  batch.DeletePage(Page(1).url_key, Page(1).url);
  batch.DeleteHost("h");
  ASSERT_TRUE(batch.PutPage(Page(2)).ok());
  ASSERT_TRUE(store->Commit(batch, 2.0).ok());
  EXPECT_FALSE(*store->ContainsPage(Page(1).url_key, Page(1).url));
  EXPECT_TRUE(*store->ContainsPage(Page(2).url_key, Page(2).url));
  EXPECT_EQ(store->GetHost("h").status().code(), Status::Code::kNotFound);
  // The page's sketch and last capture go with it.
  EXPECT_EQ(store->GetSketch(Page(1).url_key, Page(1).url).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(store->GetLastCapture(Page(1).url_key, Page(1).url).status().code(),
            Status::Code::kNotFound);
}

TEST_F(PageStoreTest, OversizedRecordIsRejectedAndNotAdded) {
  StoreBatch batch;
  PageRecord p = Page(1);
  p.sched_state.assign(kMaxBlobBytes + 1, 's');
  EXPECT_EQ(batch.PutPage(p).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(batch.empty());
}

// Writes raw bytes under a key, bypassing the store (simulated damage).
void RawPut(const std::string& path, const std::string& key,
            const std::string& value) {
  leveldb::DB* db = nullptr;
  leveldb::Options o;
  o.create_if_missing = true;
  ASSERT_TRUE(leveldb::DB::Open(o, path, &db).ok());
  ASSERT_TRUE(db->Put(leveldb::WriteOptions(), key, value).ok());
  delete db;
}

TEST_F(PageStoreTest, CorruptRecordsAreReportedNotCrashed) {
  {
    auto store = OpenOrDie();
    StoreBatch batch;
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(batch.PutPage(Page(i)).ok());
    ASSERT_TRUE(store->Commit(batch, 1.0).ok());
  }
  PageRecord bad = Page(3);
  RawPut(Config().path, PageKey(bad.url_key, bad.url), "\x01\xff\xff");
  RawPut(Config().path, "P\x01", "short key");
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetPage(bad.url_key, bad.url).status().code(),
            Status::Code::kCorruption);
  Status s = store->ForEachPage([](const PageRecord&) { return true; });
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  ScanStats stats;
  ASSERT_TRUE(store
                  ->ForEachPage([](const PageRecord&) { return true; }, &stats,
                                /*skip_corrupt=*/true)
                  .ok());
  EXPECT_EQ(stats.records, 9u);
  EXPECT_EQ(stats.corrupt, 2u);
}

TEST_F(PageStoreTest, NewerSchemaIsAClearError) {
  { ASSERT_NE(OpenOrDie(), nullptr); }
  std::string v;
  PutVarint64(&v, kSchemaVersion + 1);
  RawPut(Config().path, kSchemaKey, v);
  auto r = PageStore::Open(Config());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("newer"), std::string::npos)
      << r.status().ToString();
}

TEST_F(PageStoreTest, MalformedSchemaKeyIsCorruption) {
  { ASSERT_NE(OpenOrDie(), nullptr); }
  RawPut(Config().path, kSchemaKey, "\xff");  // truncated varint
  auto r = PageStore::Open(Config());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
}

TEST_F(PageStoreTest, ForeignDatabaseIsRefused) {
  RawPut(Config().path, "some-other-app", "x");
  auto r = PageStore::Open(Config());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

TEST_F(PageStoreTest, SecondOpenOfALockedStoreFails) {
  auto store = OpenOrDie();
  auto second = PageStore::Open(Config());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kIOError);
}

}  // namespace
}  // namespace freshd::store

namespace freshd::store {
namespace {

// Aliases (key 'A', store/alias_table.h): put, read back in key order,
// deleted; a value that does not decode is Corruption, skipped on request.
// A batch's page deletions reach the page-stream hook with an empty value.
TEST_F(PageStoreTest, AliasesRoundTripAndPageDeletesAreReported) {
  auto store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  const AliasRecord a{11, "http://h.test/a", "http://h.test/b", 0};
  const AliasRecord c{12, "http://h.test/c", "http://h.test/d", 1};
  StoreBatch batch;
  batch.PutAlias(a);
  batch.PutAlias(c);
  ASSERT_TRUE(batch.PutPage(Page(1)).ok());
  ASSERT_TRUE(store->Commit(batch, 1.0).ok());
  std::vector<AliasRecord> read;
  auto read_all = [&](bool skip) {
    read.clear();
    return store->ForEachAlias(
        [&](const AliasRecord& r) {
          read.push_back(r);
          return true;
        },
        skip);
  };
  ASSERT_TRUE(read_all(false).ok());
  EXPECT_EQ(read, (std::vector<AliasRecord>{a, c}));
  EXPECT_EQ(store->page_count(), 1u);  // aliases are not pages

  batch.DeleteAlias(a.url_key, a.url);
  batch.DeletePage(Page(1).url_key, Page(1).url);
  std::vector<std::pair<std::string, std::string>> reported;
  batch.ForEachPagePut(
      [&](uint64_t, std::string_view url, std::string_view value) {
        reported.emplace_back(std::string(url), std::string(value));
      });
  EXPECT_EQ(
      reported,
      (std::vector<std::pair<std::string, std::string>>{{Page(1).url, ""}}));
  ASSERT_TRUE(store->Commit(batch, 2.0).ok());
  ASSERT_TRUE(read_all(false).ok());
  EXPECT_EQ(read, (std::vector<AliasRecord>{c}));
  EXPECT_EQ(store->page_count(), 0u);
  store.reset();

  RawPut(Config().path, AliasKey(13, "http://h.test/e"), "\x02zz");
  store = OpenOrDie();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(read_all(false).code(), Status::Code::kCorruption);
  ASSERT_TRUE(read_all(true).ok());
  EXPECT_EQ(read, (std::vector<AliasRecord>{c}));
}

}  // namespace
}  // namespace freshd::store
