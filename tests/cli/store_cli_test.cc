// `freshd store check` and `freshd store repair` (issue #26, item 4) on a
// real LevelDB store: exit codes 0 / 3 / 1 / 2 as documented, and the
// report's page figures for a table with flipped bytes and a deleted
// CURRENT.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "store/page_store.h"
#include "tests/cli/run_command.h"
#include "tests/store/temp_dir.h"

namespace freshd::testing {
namespace {

namespace fs = std::filesystem;

void MakeStore(const std::string& path, int pages) {
  StoreConfig config;
  config.path = path;
  config.sync_interval_s = 0;
  auto s = store::PageStore::Open(config);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (int i = 0; i < pages; i += 50) {
    store::StoreBatch batch;
    for (int k = i; k < i + 50 && k < pages; ++k) {
      store::PageRecord p;
      p.url = "https://cli.example/" + std::to_string(k);
      p.url_key = std::hash<std::string>()(p.url);
      p.sched_state = std::string(300, static_cast<char>(k));
      ASSERT_TRUE(batch.PutPage(p).ok());
    }
    ASSERT_TRUE(s.value()->Commit(batch, i).ok());
  }
  s.value()->CompactAll();
}

uint64_t Field(const std::string& out, const std::string& key) {
  size_t at = out.find("\n" + key + ": ");
  if (at == std::string::npos && out.rfind(key + ": ", 0) == 0)
    at = 0;
  else if (at != std::string::npos)
    ++at;
  if (at == std::string::npos) return ~0ull;
  return std::stoull(out.substr(at + key.size() + 2));
}

TEST(StoreCliTest, HealthyStoreChecksClean) {
  store::TempDir dir;
  MakeStore(dir.path(), 400);
  CommandResult r = RunFreshd({"store", "check", "--store", dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Field(r.out, "pages expected"), 400u) << r.out;
  EXPECT_EQ(Field(r.out, "pages readable"), 400u);
  EXPECT_NE(r.out.find("verdict: healthy"), std::string::npos);
}

TEST(StoreCliTest, BadUsageAndLockedStore) {
  EXPECT_EQ(
      RunFreshd({"store", "check", "--store", "/nonexistent/x"}).exit_code, 2);
  EXPECT_EQ(RunFreshd({"store", "check"}).exit_code, 2);
  store::TempDir dir;
  MakeStore(dir.path(), 10);
  StoreConfig config;
  config.path = dir.path();
  auto held = store::PageStore::Open(config);  // as a running daemon would
  ASSERT_TRUE(held.ok());
  CommandResult r = RunFreshd({"store", "check", "--store", dir.path()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("lock"), std::string::npos) << r.err;
}

TEST(StoreCliTest, FlippedBytesReportedThenRepaired) {
  store::TempDir dir;
  constexpr uint64_t kPages = 3000;
  MakeStore(dir.path(), kPages);
  fs::path table;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (e.path().extension() == ".ldb" &&
        (table.empty() || fs::file_size(e.path()) > fs::file_size(table))) {
      table = e.path();
    }
  }
  ASSERT_FALSE(table.empty());
  {
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(table));
    for (int k = 0; k < 20; ++k) {
      f.seekp(size / 2 * k / 20 + 64);
      f.put(static_cast<char>(0xa5 ^ k));
    }
  }
  CommandResult check = RunFreshd({"store", "check", "--store", dir.path()});
  EXPECT_EQ(check.exit_code, 3) << check.out << check.err;
  const uint64_t readable = Field(check.out, "pages readable");
  EXPECT_LT(readable, kPages) << check.out;
  EXPECT_EQ(Field(check.out, "pages expected"), kPages) << check.out;
  EXPECT_EQ(Field(check.out, "pages lost"), kPages - readable) << check.out;
  EXPECT_NE(check.out.find("problem: " + std::to_string(kPages) +
                           " pages expected, " + std::to_string(readable) +
                           " readable"),
            std::string::npos)
      << check.out;

  CommandResult repair = RunFreshd({"store", "repair", "--store", dir.path()});
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  const uint64_t after = Field(repair.out, "after pages readable");
  EXPECT_GE(after, readable) << repair.out;
  const uint64_t suspect =
      Field(repair.out, "records kept from damaged blocks");
  EXPECT_TRUE(suspect > 0 && suspect != ~0ull) << repair.out;
  EXPECT_EQ(Field(repair.out, "pages lost by the damage"), kPages - after)
      << repair.out;
  EXPECT_NE(repair.out.find("repair: "), std::string::npos);
  EXPECT_EQ(RunFreshd({"store", "check", "--store", dir.path()}).exit_code, 0);
}

TEST(StoreCliTest, DeletedCurrentIsNamedAndRepaired) {
  store::TempDir dir;
  MakeStore(dir.path(), 500);
  fs::remove(fs::path(dir.path()) / "CURRENT");
  CommandResult check = RunFreshd({"store", "check", "--store", dir.path()});
  EXPECT_EQ(check.exit_code, 3) << check.out << check.err;
  EXPECT_NE(check.out.find("CURRENT file"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("not a freshd store"), std::string::npos);
  CommandResult repair = RunFreshd({"store", "repair", "--store", dir.path()});
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_EQ(Field(repair.out, "after pages readable"), 500u) << repair.out;
  EXPECT_EQ(Field(repair.out, "pages lost by the damage"), 0u);
}

TEST(StoreCliTest, TraceExportsTheChangeFeedCensored) {
  store::TempDir dir;
  {
    StoreConfig config;
    config.path = dir.path();
    auto s = store::PageStore::Open(config);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store::StoreBatch batch;
    for (const char* url : {"https://cli.example/a", "https://cli.example/b"}) {
      store::PageRecord p;
      p.url = url;
      p.url_key = std::hash<std::string>()(p.url);
      p.last_fetch_time = 1800000000;
      ASSERT_TRUE(batch.PutPage(p).ok());
    }
    for (const auto& [time, kind] :
         {std::pair{1700000000.0, "new"}, std::pair{1700086400.0, "changed"}}) {
      store::FeedEvent e;
      e.url = "https://cli.example/a";
      e.time = time;
      e.kind = kind;
      ASSERT_TRUE(batch.AddFeedEvent(e).ok());
    }
    ASSERT_TRUE(s.value()->Commit(batch, 1).ok());
  }
  const std::string file = dir.path() + "/../trace-export-test.csv";
  CommandResult r =
      RunFreshd({"store", "trace", "--store", dir.path(), "-o", file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadWholeFile(file),
            "url,time,event,observed\n"
            "https://cli.example/a,1700000000.000,create,fetch\n"
            "https://cli.example/a,1700086400.000,change,fetch\n"
            "https://cli.example/b,,change,fetch\n");
  fs::remove(file);
  EXPECT_NE(r.err.find("censored"), std::string::npos) << r.err;
  // Not a store: bad usage, and nothing created there.
  store::TempDir empty;
  CommandResult bad = RunFreshd({"store", "trace", "--store", empty.path()});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_FALSE(fs::exists(fs::path(empty.path()) / "CURRENT"));
}

}  // namespace
}  // namespace freshd::testing
