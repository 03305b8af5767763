// The schema migration chain (store/migrations.h) on a store written by
// freshd c561337 (tests/data/store/schema1, README there): opening it runs
// step 1 -> 2, which drops the signal log and the dead record fields, and
// every page, sketch, capture, host and feed event reads back exactly as
// c561337 read it (tests/data/store/schema1.expected.txt).

#include "store/migrations.h"

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/coding.h"
#include "store/keys.h"
#include "store/page_store.h"
#include "store/store_check.h"
#include "tests/store/temp_dir.h"

namespace freshd::store {
namespace {

namespace fs = std::filesystem;

const fs::path kFixture = fs::path(FRESHD_TEST_DATA_DIR) / "store" / "schema1";
const fs::path kExpected =
    fs::path(FRESHD_TEST_DATA_DIR) / "store" / "schema1.expected.txt";

// A copy of the fixture to open (opening a store writes to it).
std::string CopyFixture(const TempDir& dir) {
  const std::string path = dir.Sub("db");
  fs::copy(kFixture, path, fs::copy_options::recursive);
  return path;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The dump of tests/data/store/make/dump_schema1.cc, through today's API.
std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (unsigned char c : s) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o.empty() ? "-" : o;
}
std::string Num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
std::string Capture(const WarcCapture& c) {
  return Hex(c.record_id) + " " + Hex(c.target_uri) + " " + Num(c.date) + " " +
         Hex(c.payload_digest);
}
std::string Dump(PageStore& st) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "secret %llu pages %llu\n",
                static_cast<unsigned long long>(st.hash_secret()),
                static_cast<unsigned long long>(st.page_count()));
  out += line;
  Status r = st.ForEachPage([&](const PageRecord& p) {
    out += "page " + std::to_string(p.url_key) + " " + Hex(p.url) + " " +
           Hex(p.sched_state) + " " + Hex(p.etag) + " " + Hex(p.last_modified) +
           " " + std::to_string(p.last_status) + " " + Hex(p.last_outcome) +
           " " + Num(p.last_fetch_time) + " " + std::to_string(p.content_hash) +
           " " + Num(p.last_signal_lastmod) + "\n";
    auto sk = st.GetSketch(p.url_key, p.url);
    out += "sketch " + Hex(p.url) + " " +
           (sk.ok() ? Hex(*sk) : sk.status().ToString()) + "\n";
    auto lc = st.GetLastCapture(p.url_key, p.url);
    out +=
        "last " + Hex(p.url) + " " + (lc.ok() ? Capture(*lc) : "none") + "\n";
    if (lc.ok()) {
      auto dc = st.GetDigestCapture(lc->payload_digest);
      out += "digest " + Hex(lc->payload_digest) + " " +
             (dc.ok() ? Capture(*dc) : "none") + " " +
             std::to_string(dc.ok() ? dc->seq : 0) + "\n";
    }
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.ToString();
  r = st.ForEachHost([&](const HostRecord& h) {
    out += "host " + Hex(h.host) + " " + Hex(h.pooled_estimates) + " " +
           Hex(h.fetch_state) + "\n";
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.ToString();
  out += "feed " + std::to_string(st.feed_bounds().oldest) + " " +
         std::to_string(st.feed_bounds().newest) + " digests " +
         std::to_string(st.digest_entries()) + "\n";
  r = st.ForEachFeedEvent(0, 1 << 30, [&](const FeedEvent& e) {
    out += "event " + std::to_string(e.seq) + " " + Hex(e.url) + " " +
           Num(e.time) + " " + e.kind + " " + std::to_string(e.status) + " " +
           Num(e.staleness) + " " + std::to_string(e.text_hash) + " " +
           Hex(e.warc_file) + " " + std::to_string(e.warc_offset) + "\n";
    return true;
  });
  EXPECT_TRUE(r.ok()) << r.ToString();
  return out;
}

// What LevelDB holds, by key type: count, and the version bytes of the
// values of 'P' and 'H'; the schema key's value.
struct RawCounts {
  std::map<char, int> keys;
  std::map<char, std::map<int, int>> versions;
  uint64_t schema = 0;
};
RawCounts Raw(const std::string& path) {
  RawCounts c;
  leveldb::DB* raw = nullptr;
  leveldb::Options o;
  leveldb::Status s = leveldb::DB::Open(o, path, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return c;
  std::unique_ptr<leveldb::DB> db(raw);
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator({}));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const char type = it->key()[0];
    ++c.keys[type];
    if ((type == kPagePrefix || type == kHostPrefix) && !it->value().empty())
      ++c.versions[type][static_cast<uint8_t>(it->value()[0])];
    if (it->key() == kSchemaKey) {
      Decoder d(std::string_view(it->value().data(), it->value().size()));
      EXPECT_TRUE(d.GetVarint64(&c.schema));
    }
  }
  it.reset();
  fs::remove(fs::path(path) / "LOG");  // what the raw open wrote
  return c;
}

std::unique_ptr<PageStore> OpenOrDie(const std::string& path,
                                     StoreOpenOptions options = {}) {
  StoreConfig config;
  config.path = path;
  auto s = PageStore::Open(config, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST(MigrationsTest, ChainHasOneStepPerSchema) {
  const auto chain = MigrationChain();
  ASSERT_EQ(chain.size(), kSchemaVersion - 1);
  for (size_t i = 0; i < chain.size(); ++i) {
    EXPECT_EQ(chain[i].from, i + 1);
    EXPECT_NE(chain[i].run, nullptr);
  }
}

TEST(MigrationsTest, FixtureIsSchema1WithDeadKeys) {
  TempDir dir;
  const RawCounts before = Raw(CopyFixture(dir));
  EXPECT_EQ(before.schema, 1u);
  EXPECT_EQ(before.keys.at('S'), 3);
  EXPECT_EQ(before.keys.at('N'), 1);
  EXPECT_EQ(before.keys.at('P'), 102);
  EXPECT_EQ(before.keys.at('H'), 3);
  EXPECT_EQ(before.versions.at('P').at(2), 102);
  EXPECT_EQ(before.versions.at('H').at(2), 3);
}

// The open runs step 1 -> 2; everything reads back as c561337 read it; the
// dead keys are gone and every record is in the current encoding; a second
// open runs nothing.
TEST(MigrationsTest, OpeningASchema1StoreMigratesAndReadsTheSame) {
  TempDir dir;
  const std::string path = CopyFixture(dir);
  const RawCounts before = Raw(path);
  const std::string expected = ReadFile(kExpected);
  ASSERT_FALSE(expected.empty()) << kExpected;
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), kSchemaVersion);
    ASSERT_EQ(store->migrations().size(), 1u);
    const std::string& line = store->migrations()[0];
    std::printf("migration: %s\n", line.c_str());
    EXPECT_EQ(line.rfind("schema 1 -> 2: ", 0), 0u) << line;
    EXPECT_NE(line.find("3 signal entries deleted (and their sequence key)"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find("102 page and 3 host records rewritten"),
              std::string::npos)
        << line;
    EXPECT_TRUE(store->open_damage().empty());
    EXPECT_EQ(Dump(*store), expected);
    ASSERT_TRUE(store->Close().ok());
  }
  const RawCounts after = Raw(path);
  EXPECT_EQ(after.schema, 2u);
  EXPECT_EQ(after.keys.count('S'), 0u);
  EXPECT_EQ(after.keys.count('N'), 0u);
  EXPECT_EQ(after.versions.at('P'), (std::map<int, int>{{3, 102}}));
  EXPECT_EQ(after.versions.at('H'), (std::map<int, int>{{3, 3}}));
  for (char type : std::string("CEFGHKLPQVWX")) {
    EXPECT_EQ(after.keys.at(type), before.keys.at(type)) << type;
  }
  auto again = OpenOrDie(path);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->migrations().empty());
  EXPECT_EQ(Dump(*again), expected);
  // It is a live store: a commit continues the feed's and index's numbers.
  StoreBatch batch;
  FeedEvent e;
  e.url = "http://h0.test/new";
  e.kind = "new";
  ASSERT_TRUE(batch.AddFeedEvent(e).ok());
  ASSERT_TRUE(again->Commit(batch, 1.0).ok());
  EXPECT_EQ(again->feed_bounds().newest, 103u);
}

// The step alone, on the raw database: a second run (a step interrupted
// after its first batches runs again) changes nothing.
TEST(MigrationsTest, Step1To2IsIdempotent) {
  TempDir dir;
  const std::string path = CopyFixture(dir);
  leveldb::DB* raw = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  std::string first, second;
  ASSERT_TRUE(MigrateSchema1To2(*db, &first).ok());
  ASSERT_TRUE(MigrateSchema1To2(*db, &second).ok());
  EXPECT_NE(first.find("102 page and 3 host"), std::string::npos) << first;
  EXPECT_EQ(second,
            "0 signal entries deleted, 0 page and 0 host records rewritten")
      << second;
  // Undecodable records are left as they were, and said.
  leveldb::WriteBatch wb;
  wb.Put(PageKey(1, "http://bad/"), std::string("\x02junk", 5));
  ASSERT_TRUE(db->Write(leveldb::WriteOptions(), &wb).ok());
  std::string third;
  ASSERT_TRUE(MigrateSchema1To2(*db, &third).ok());
  EXPECT_NE(third.find("1 records left as they were"), std::string::npos)
      << third;
  std::string value;
  ASSERT_TRUE(
      db->Get(leveldb::ReadOptions(), PageKey(1, "http://bad/"), &value).ok());
  EXPECT_EQ(value, std::string("\x02junk", 5));
}

// Without migrating (`freshd store check`), a schema-1 store reads the same,
// refuses commits and is left at schema 1; the check says its version.
TEST(MigrationsTest, InspectionOpenLeavesSchema1AsItIs) {
  TempDir dir;
  const std::string path = CopyFixture(dir);
  {
    auto store = OpenOrDie(path, StoreOpenOptions{.migrate = false});
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), 1u);
    EXPECT_TRUE(store->migrations().empty());
    EXPECT_EQ(Dump(*store), ReadFile(kExpected));
    StoreBatch batch;
    ASSERT_TRUE(batch.PutSketch(1, "http://x/", "s").ok());
    EXPECT_EQ(store->Commit(batch, 1.0).code(), Status::Code::kUnavailable);
  }
  Result<StoreCheckReport> check = CheckStore(path);
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->healthy()) << check->problems.front();
  EXPECT_EQ(check->schema_version, 1u);
  EXPECT_EQ(check->pages, 102u);
  EXPECT_EQ(check->hosts, 3u);
  const RawCounts raw = Raw(path);
  EXPECT_EQ(raw.schema, 1u);
  EXPECT_EQ(raw.keys.at('S'), 3);
  // After the daemon's open, the check reads schema 2.
  ASSERT_NE(OpenOrDie(path), nullptr);
  check = CheckStore(path);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->healthy());
  EXPECT_EQ(check->schema_version, kSchemaVersion);
  EXPECT_EQ(check->pages, 102u);
}

// A store newer than this build is refused, and left alone.
TEST(MigrationsTest, NewerSchemaIsRefused) {
  TempDir dir;
  const std::string path = CopyFixture(dir);
  {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path, &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    std::string v;
    PutVarint64(&v, kSchemaVersion + 1);
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), kSchemaKey, v).ok());
  }
  StoreConfig config;
  config.path = path;
  auto store = PageStore::Open(config);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(store.status().message().find(
                "store schema version 3 is newer than this freshd supports "
                "(2); use a newer freshd"),
            std::string::npos)
      << store.status().message();
  EXPECT_EQ(Raw(path).keys.at('S'), 3);
}

}  // namespace
}  // namespace freshd::store
