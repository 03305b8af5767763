// Store damage is reported exactly (issue #26, item 4), on a real LevelDB on
// disk: the page count kept in the store, flipped bytes in a table file, a
// truncated or deleted LevelDB log, a deleted CURRENT, a damaged log record;
// and CheckStore/RepairStore's reports for each.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "store/page_store.h"
#include "store/store_check.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

namespace fs = std::filesystem;

PageRecord Page(int i) {
  PageRecord p;
  p.url = "https://damage.example/p" + std::to_string(i);
  p.url_key = std::hash<std::string>()(p.url);
  // State plus 256 bytes standing for the old in-record sketch, so that
  // records fill as many blocks as before.
  p.sched_state = std::string(60, static_cast<char>('a' + i % 26)) +
                  std::string(256, static_cast<char>(i));
  p.etag = "\"" + std::to_string(i) + "\"";
  p.last_status = 200;
  p.last_outcome = "ok";
  p.last_fetch_time = 1.7e9 + i;
  p.content_hash = static_cast<uint64_t>(i) * 7919;
  return p;
}

StoreConfig Config(const std::string& path) {
  StoreConfig c;
  c.path = path;
  c.sync_interval_s = 0;  // every commit synced
  c.block_cache_bytes = 1 << 20;
  return c;
}

// Commits pages [from, to) in batches of `per_batch`.
void AddPages(PageStore& store, int from, int to, int per_batch = 10) {
  for (int i = from; i < to; i += per_batch) {
    StoreBatch batch;
    for (int k = i; k < std::min(to, i + per_batch); ++k) {
      ASSERT_TRUE(batch.PutPage(Page(k)).ok());
    }
    ASSERT_TRUE(store.Commit(batch, 1.0 * i).ok());
  }
}

uint64_t ScanPages(const PageStore& store, ScanStats* stats) {
  EXPECT_TRUE(
      store.ForEachPage([](const PageRecord&) { return true; }, stats, true)
          .ok());
  return stats->records;
}

std::vector<fs::path> FilesWithExtension(const std::string& dir,
                                         const std::string& ext) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ext) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StoreDamageTest, PageCountFollowsPutsUpdatesAndDeletes) {
  TempDir dir;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ(store.value()->page_count(), 0u);
    // A fresh store is not damage (LevelDB logs "Creating DB ... since it
    // was missing", which a run used to report as store damage).
    EXPECT_TRUE(store.value()->damage_log().empty())
        << store.value()->damage_log().front();
    EXPECT_TRUE(store.value()->open_damage().empty());
    AddPages(*store.value(), 0, 300);
    EXPECT_EQ(store.value()->page_count(), 300u);
    // Updates of known pages, a page put twice in one batch, deletes of a
    // known and an unknown page.
    StoreBatch batch;
    ASSERT_TRUE(batch.PutPage(Page(5)).ok());
    ASSERT_TRUE(batch.PutPage(Page(1000)).ok());
    ASSERT_TRUE(batch.PutPage(Page(1000)).ok());
    batch.DeletePage(Page(7).url_key, Page(7).url);
    batch.DeletePage(Page(2000).url_key, Page(2000).url);
    ASSERT_TRUE(store.value()->Commit(batch, 1e6).ok());
    EXPECT_EQ(store.value()->page_count(), 300u);  // +1000, -7
    ScanStats stats;
    EXPECT_EQ(ScanPages(*store.value(), &stats), 300u);
  }
  auto reopened = PageStore::Open(Config(dir.path()));
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened.value()->page_count(), 300u);
  EXPECT_TRUE(reopened.value()->open_damage().empty());
  auto check = CheckStore(dir.path());
  ASSERT_FALSE(check.ok());  // locked by `reopened`
  EXPECT_EQ(check.status().code(), Status::Code::kIOError);
}

// 20 flipped bytes in the table file of a store of thousands of pages: the
// scan skips the damaged blocks and the page count says how many pages they
// held; check and repair report the same number.
TEST(StoreDamageTest, FlippedBytesInTableAreCountedExactly) {
  TempDir dir;
  constexpr int kPages = 5000;
  uint64_t secret = 0;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok());
    AddPages(*store.value(), 0, kPages, 100);
    store.value()->CompactAll();
    secret = store.value()->hash_secret();
  }
  auto tables = FilesWithExtension(dir.path(), ".ldb");
  ASSERT_FALSE(tables.empty());
  fs::path biggest = tables.front();
  for (const auto& t : tables) {
    if (fs::file_size(t) > fs::file_size(biggest)) biggest = t;
  }
  {
    std::fstream f(biggest, std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(biggest));
    for (int k = 0; k < 20; ++k) {
      // Spread over the first half of the file: data blocks.
      f.seekg(size / 2 * k / 20 + 100);
      char c = 0;
      f.read(&c, 1);
      f.seekp(size / 2 * k / 20 + 100);
      c = static_cast<char>(c ^ 0x5a);
      f.write(&c, 1);
    }
  }
  uint64_t readable = 0;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ(store.value()->page_count(), static_cast<uint64_t>(kPages));
    ScanStats stats;
    readable = ScanPages(*store.value(), &stats);
    EXPECT_LT(readable, static_cast<uint64_t>(kPages));
    EXPECT_GT(readable, 0u);
    EXPECT_NE(stats.read_error.find("orruption"), std::string::npos)
        << stats.read_error;
  }
  auto check = CheckStore(dir.path());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_FALSE(check.value().healthy());
  EXPECT_EQ(check.value().pages_expected, static_cast<uint64_t>(kPages));
  EXPECT_EQ(check.value().pages, readable);
  EXPECT_EQ(check.value().pages_lost(), kPages - readable);
  auto repair = RepairStore(dir.path());
  ASSERT_TRUE(repair.ok()) << repair.status().ToString();
  EXPECT_TRUE(repair.value().after.healthy())
      << repair.value().after.problems.front();
  // Repair keeps every page that was readable before it: the first block
  // (the counters, the hash secret and the first pages) is damaged too, and
  // the check's scan read its pages from the block cache, where LevelDB's
  // point read of the page count had put it unverified; the repair keeps
  // what a damaged block holds that still decodes, and says how much.
  EXPECT_GE(repair.value().after.pages, readable);
  EXPECT_GT(repair.value().records_from_damaged_blocks, 0u);
  EXPECT_LE(repair.value().after.pages, static_cast<uint64_t>(kPages));
  EXPECT_EQ(repair.value().pages_lost, kPages - repair.value().after.pages);
  EXPECT_FALSE(repair.value().repair_log.empty());
  auto again = CheckStore(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again.value().healthy());
  EXPECT_EQ(again.value().pages_expected, repair.value().after.pages);
  // The hash secret (in the damaged first block) survived: a fresh one
  // would make every stored sketch differ from the next fetch's.
  auto reopened = PageStore::Open(Config(dir.path()));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(reopened.value()->hash_secret(), secret);
  ScanStats stats;
  EXPECT_EQ(ScanPages(*reopened.value(), &stats), repair.value().after.pages);
  EXPECT_TRUE(stats.read_error.empty()) << stats.read_error;
}

// The first 500 pages are compacted into a table, the next 500 only in the
// LevelDB log: a truncated or deleted log loses synced commits, which
// LevelDB itself does not report; the sync marker does.
class LostLogTailTest : public ::testing::TestWithParam<bool> {};

TEST_P(LostLogTailTest, IsReportedWithThePagesLost) {
  const bool truncate = GetParam();
  TempDir dir;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok());
    AddPages(*store.value(), 0, 500);
    store.value()->CompactAll();
    AddPages(*store.value(), 500, 1000);
  }
  auto logs = FilesWithExtension(dir.path(), ".log");
  ASSERT_EQ(logs.size(), 1u);
  if (truncate) {
    fs::resize_file(logs[0], fs::file_size(logs[0]) / 2);
  } else {
    fs::remove(logs[0]);
  }
  auto store = PageStore::Open(Config(dir.path()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ScanStats stats;
  const uint64_t readable = ScanPages(*store.value(), &stats);
  EXPECT_EQ(store.value()->page_count(), readable);
  ASSERT_EQ(store.value()->open_damage().size(), 1u);
  const std::string& damage = store.value()->open_damage()[0];
  EXPECT_NE(damage.find("log lost its tail"), std::string::npos) << damage;
  EXPECT_NE(damage.find(std::to_string(1000 - readable) + " pages lost"),
            std::string::npos)
      << damage;
  EXPECT_NE(damage.find("1000 at the last sync"), std::string::npos) << damage;
  if (truncate) {
    EXPECT_GT(readable, 500u);
    EXPECT_LT(readable, 1000u);
  } else {
    EXPECT_EQ(readable, 500u);
  }
  store.value().reset();
  // Still said by a later open, and by check, until a repair.
  for (int i = 0; i < 2; ++i) {
    auto again = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again.value()->open_damage().size(), 1u);
    EXPECT_NE(again.value()->open_damage()[0].find("earlier open"),
              std::string::npos);
    EXPECT_EQ(again.value()->pages_before_damage(), 1000u);
  }
  auto check = CheckStore(dir.path());
  ASSERT_TRUE(check.ok());
  EXPECT_FALSE(check.value().healthy());
  EXPECT_EQ(check.value().pages_expected, 1000u);
  EXPECT_EQ(check.value().pages_lost(), 1000 - readable);
  auto repair = RepairStore(dir.path());
  ASSERT_TRUE(repair.ok());
  EXPECT_EQ(repair.value().pages_lost, 1000 - readable);
  EXPECT_TRUE(repair.value().after.healthy());
}

INSTANTIATE_TEST_SUITE_P(TruncatedOrDeleted, LostLogTailTest,
                         ::testing::Values(true, false));

TEST(StoreDamageTest, DeletedCurrentSaysWhatItIsAndChangesNothing) {
  TempDir dir;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok());
    AddPages(*store.value(), 0, 800);
    store.value()->CompactAll();
  }
  fs::remove(fs::path(dir.path()) / "CURRENT");
  std::vector<std::string> before;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    before.push_back(e.path().filename().string());
  }
  auto store = PageStore::Open(Config(dir.path()));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kCorruption);
  EXPECT_NE(store.status().message().find("CURRENT file"), std::string::npos)
      << store.status().message();
  EXPECT_NE(store.status().message().find("freshd store repair"),
            std::string::npos);
  EXPECT_EQ(store.status().message().find("not a freshd store"),
            std::string::npos);
  std::vector<std::string> after;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    after.push_back(e.path().filename().string());
  }
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(before, after);

  auto repair = RepairStore(dir.path());
  ASSERT_TRUE(repair.ok()) << repair.status().ToString();
  EXPECT_FALSE(repair.value().before.opened);
  EXPECT_EQ(repair.value().before.pages_expected, 800u);  // the sync marker
  EXPECT_TRUE(repair.value().after.healthy());
  EXPECT_EQ(repair.value().after.pages, 800u);
  EXPECT_EQ(repair.value().pages_lost, 0u);
}

// LevelDB creates a database by writing MANIFEST-000001 and then CURRENT; a
// SIGKILL between the two (RecoveryCrashTest hit it) leaves a manifest and
// nothing else. No data was ever written, so the store opens, empty, and
// takes writes.
TEST(StoreDamageTest, CreationKilledBeforeCurrentOpensEmpty) {
  TempDir dir;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok());
  }
  for (const auto& e : fs::directory_iterator(dir.path())) {
    std::string name = e.path().filename().string();
    if (name.rfind("MANIFEST-", 0) != 0) fs::remove_all(e.path());
  }
  ASSERT_FALSE(fs::exists(fs::path(dir.path()) / "CURRENT"));
  auto store = PageStore::Open(Config(dir.path()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  uint64_t pages = 0;
  ASSERT_TRUE(store.value()
                  ->ForEachPage([&](const PageRecord&) {
                    ++pages;
                    return true;
                  })
                  .ok());
  EXPECT_EQ(pages, 0u);
  AddPages(*store.value(), 0, 10);
  EXPECT_TRUE(fs::exists(fs::path(dir.path()) / "CURRENT"));
}

TEST(StoreDamageTest, DamagedLogRecordFailsOpenWithRepairAdvice) {
  TempDir dir;
  {
    auto store = PageStore::Open(Config(dir.path()));
    ASSERT_TRUE(store.ok());
    AddPages(*store.value(), 0, 400);
  }
  auto logs = FilesWithExtension(dir.path(), ".log");
  ASSERT_EQ(logs.size(), 1u);
  {
    std::fstream f(logs[0], std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(logs[0]));
    f.seekp(size / 3);
    f.write("\xde\xad\xbe\xef", 4);
  }
  auto store = PageStore::Open(Config(dir.path()));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kCorruption);
  EXPECT_NE(store.status().message().find("freshd store repair"),
            std::string::npos)
      << store.status().message();
  auto repair = RepairStore(dir.path());
  ASSERT_TRUE(repair.ok()) << repair.status().ToString();
  EXPECT_FALSE(repair.value().before.healthy());
  EXPECT_TRUE(repair.value().after.healthy());
  EXPECT_LE(repair.value().after.pages, 400u);
  EXPECT_EQ(repair.value().pages_lost, 400 - repair.value().after.pages);
}

}  // namespace
}  // namespace freshd::store
