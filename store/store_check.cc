#include "store/store_check.h"

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>

#include "base/coding.h"
#include "store/keys.h"
#include "store/leveldb_log.h"
#include "store/page_store.h"
#include "store/records.h"

namespace freshd::store {
namespace {

namespace fs = std::filesystem;

std::string Plural(uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Adds the problems one scan saw.
void NoteScan(const char* kind, const Status& scan, const ScanStats& stats,
              StoreCheckReport* r) {
  if (!scan.ok()) {
    r->problems.push_back(std::string(kind) +
                          " scan failed: " + scan.ToString());
  }
  if (stats.corrupt > 0) {
    r->problems.push_back(Plural(stats.corrupt, kind) +
                          " stored but not decodable (skipped)");
  }
  if (!stats.read_error.empty()) {
    r->problems.push_back(
        std::string(kind) +
        " records: LevelDB skipped damaged data: " + stats.read_error +
        " (the records in the damaged block are unreadable)");
  }
}

// The newest readable version of each key found in damaged tables.
struct Salvaged {
  uint64_t seq = 0;
  bool deleted = false;
  std::string value;
  bool suspect = false;  // from a block that failed its checksum
};

// Splits a table's internal key into the user key, sequence and type;
// false if it is too short or of no known type.
bool SplitInternalKey(leveldb::Slice k, std::string* user, uint64_t* seq,
                      bool* deleted) {
  if (k.size() < 8) return false;
  uint64_t tag = 0;
  for (int i = 7; i >= 0; --i) {
    tag = (tag << 8) | static_cast<unsigned char>(k[k.size() - 8 + i]);
  }
  if ((tag & 0xff) > 1) return false;  // kTypeDeletion 0, kTypeValue 1
  user->assign(k.data(), k.size() - 8);
  *seq = tag >> 8;
  *deleted = (tag & 0xff) == 0;
  return true;
}

// Whether a record read from a block that failed its checksum is worth
// keeping: its key and value decode as the record kind its prefix names.
// Counters and notes (C, Q, D) are recomputed by the repair; the hash
// secret and schema version are kept if well-formed (a fresh secret would
// make every stored sketch differ from the next fetch's).
bool DecodesCleanly(const std::string& key, const std::string& value) {
  if (key.empty()) return false;
  switch (key[0]) {
    case kPagePrefix: {
      PageRecord p;
      return key.size() > 9 && ParsePageKey(key, &p.url_key, &p.url) &&
             DecodePageValue(value, &p).ok();
    }
    case kHostPrefix: {
      HostRecord h;
      return ParseHostKey(key, &h.host) && DecodeHostValue(value, &h).ok();
    }
    default:
      break;
  }
  if (key == kHashSecretKey) return value.size() == 8;
  if (key == kSchemaKey) {
    Decoder d(value);
    uint64_t v = 0;
    return d.GetVarint64(&v) && d.done();
  }
  return false;
}

// LevelDB's RepairDB reads tables without verifying block checksums and
// aborts the process (an assertion in TableBuilder) when a damaged block
// yields keys out of order. So every table is first read here with
// checksums verified; one that fails is moved to lost/ and what its intact
// blocks hold is returned in *salvaged, to be written back afterwards.
// The damaged table is then read again without verification: a record of a
// block that failed its checksum is kept too (marked suspect) when its key
// and value decode (DecodesCleanly) and no intact block holds its key. That
// is what a running daemon reads from such a block anyway (LevelDB checks
// no checksum on a point read), so the repair keeps at least every page
// the check before it counted readable. Appends one line per damaged
// table to *log.
Status SetAsideDamagedTables(const std::string& path,
                             std::map<std::string, Salvaged>* salvaged,
                             std::vector<std::string>* log) {
  std::error_code ec;
  std::vector<fs::path> tables;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    std::string ext = e.path().extension().string();
    if (ext == ".ldb" || ext == ".sst") tables.push_back(e.path());
  }
  leveldb::Env* env = leveldb::Env::Default();
  for (const fs::path& t : tables) {
    uint64_t size = 0;
    leveldb::RandomAccessFile* raw_file = nullptr;
    leveldb::Status s = env->GetFileSize(t.string(), &size);
    if (s.ok()) s = env->NewRandomAccessFile(t.string(), &raw_file);
    if (!s.ok()) return Status::IOError(t.string() + ": " + s.ToString());
    std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);
    leveldb::Options options;
    options.paranoid_checks = true;
    leveldb::Table* raw_table = nullptr;
    s = leveldb::Table::Open(options, file.get(), size, &raw_table);
    std::unique_ptr<leveldb::Table> table(raw_table);
    uint64_t kept = 0;
    std::map<std::string, Salvaged> found;
    if (s.ok()) {
      leveldb::ReadOptions ro;
      ro.verify_checksums = true;
      ro.fill_cache = false;
      std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
      std::string user;
      uint64_t seq = 0;
      bool deleted = false;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (!SplitInternalKey(it->key(), &user, &seq, &deleted)) continue;
        Salvaged& v = found[user];
        if (v.seq <= seq) v = {seq, deleted, it->value().ToString(), false};
        ++kept;
      }
      s = it->status();
    }
    if (s.ok()) continue;  // intact
    uint64_t suspect = 0;
    if (table != nullptr) {
      // The blocks that failed: their records that still decode.
      leveldb::ReadOptions ro;
      ro.verify_checksums = false;
      ro.fill_cache = false;
      std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
      std::map<std::string, Salvaged> extra;
      std::string user;
      uint64_t seq = 0;
      bool deleted = false;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (!SplitInternalKey(it->key(), &user, &seq, &deleted) ||
            found.count(user) > 0) {
          continue;
        }
        std::string value = it->value().ToString();
        if (!deleted && !DecodesCleanly(user, value)) continue;
        Salvaged& v = extra[user];
        if (v.seq <= seq) v = {seq, deleted, std::move(value), true};
      }
      // A record after a damaged entry of its block is out of a scan's
      // reach, but a seek starts at the block's nearest restart point, as
      // the daemon's point reads do: so the one-record keys are sought.
      for (const char* key : {kHashSecretKey, kSchemaKey}) {
        if (found.count(key) > 0 || extra.count(key) > 0) continue;
        // The table is opened with the bytewise comparator: the key with an
        // all-zero tag sorts before every version of `key`.
        it->Seek(std::string(key) + std::string(8, '\0'));
        if (it->Valid() && SplitInternalKey(it->key(), &user, &seq, &deleted) &&
            user == key && !deleted &&
            DecodesCleanly(user, it->value().ToString())) {
          extra[user] = {seq, false, it->value().ToString(), true};
        }
      }
      for (auto& [key, v] : extra) {
        if (!v.deleted) ++suspect;
        found.emplace(key, std::move(v));
      }
    }
    for (auto& [key, v] : found) {
      Salvaged& into = (*salvaged)[key];
      if (into.seq <= v.seq) into = std::move(v);
    }
    table.reset();
    file.reset();
    fs::create_directories(fs::path(path) / "lost", ec);
    fs::rename(t, fs::path(path) / "lost" / t.filename(), ec);
    if (ec) {
      return Status::IOError(t.string() +
                             ": cannot move to lost/: " + ec.message());
    }
    log->push_back("table " + t.filename().string() + ": " + s.ToString() +
                   "; " + std::to_string(kept) +
                   " entries read from its intact blocks and " +
                   std::to_string(suspect) +
                   " that still decode from its damaged blocks, file moved "
                   "to lost/");
  }
  return Status::OK();
}

}  // namespace

Result<StoreCheckReport> CheckStore(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return Status::NotFound(path + ": no such store directory");
  }
  StoreCheckReport r;
  Result<std::optional<SyncMarker>> marker = ReadSyncMarker(path);
  if (marker.ok() && marker.value()) {
    r.pages_expected = marker.value()->pages;
    r.expected_known = true;
  }
  bool has_current = fs::exists(fs::path(path) / "CURRENT", ec);
  bool has_files = false;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    std::string ext = e.path().extension().string();
    if (ext == ".ldb" || ext == ".sst" || ext == ".log") has_files = true;
  }
  if (!has_current && !has_files) {
    return Status::InvalidArgument(path + ": not a freshd store (empty)");
  }
  StoreConfig config;
  config.path = path;
  config.block_cache_bytes = 8 << 20;
  // An older schema is read as it is: the check changes nothing a
  // migration would (the daemon's next start migrates it).
  Result<std::unique_ptr<PageStore>> opened =
      PageStore::Open(config, StoreOpenOptions{.migrate = false});
  if (!opened.ok()) {
    if (opened.status().code() != Status::Code::kCorruption) {
      return opened.status();
    }
    r.problems.push_back(opened.status().message());
    return r;
  }
  PageStore& store = *opened.value();
  r.opened = true;
  r.schema_version = store.schema_version();
  const uint64_t count = store.page_count();
  for (const std::string& d : store.open_damage()) r.problems.push_back(d);
  r.pages_expected = std::max(count, store.pages_before_damage());
  r.expected_known = true;
  ScanStats pages, hosts;
  NoteScan(
      "page",
      store.ForEachPage([](const PageRecord&) { return true; }, &pages, true),
      pages, &r);
  NoteScan(
      "host",
      store.ForEachHost([](const HostRecord&) { return true; }, &hosts, true),
      hosts, &r);
  r.pages = pages.records;
  r.hosts = hosts.records;
  r.corrupt_records = pages.corrupt + hosts.corrupt;
  if (r.pages < r.pages_expected) {
    r.problems.push_back(std::to_string(r.pages_expected) +
                         " pages expected, " + std::to_string(r.pages) +
                         " readable: " + Plural(r.pages_lost(), "page") +
                         " lost");
  } else if (r.pages > count) {
    r.problems.push_back("the page count says " + std::to_string(count) +
                         " but " + std::to_string(r.pages) +
                         " pages are readable (the count is stale)");
  }
  r.leveldb_log = store.damage_log();
  if (!r.leveldb_log.empty() && r.problems.empty()) {
    r.problems.push_back("LevelDB's log reports damage (" +
                         Plural(r.leveldb_log.size(), "line") + ")");
  }
  if (Status c = store.Close(); !c.ok()) return c;
  return r;
}

Result<StoreRepairReport> RepairStore(const std::string& path) {
  StoreRepairReport report;
  Result<StoreCheckReport> before = CheckStore(path);
  if (!before.ok()) return before.status();
  report.before = std::move(before).value();
  std::map<std::string, Salvaged> salvaged;
  if (Status a = SetAsideDamagedTables(path, &salvaged, &report.repair_log);
      !a.ok()) {
    return a;
  }
  CapturedLevelDbLog log;
  leveldb::Options options;
  options.info_log = &log;
  leveldb::Status s = leveldb::RepairDB(path, options);
  for (std::string& line : log.lines()) report.repair_log.push_back(line);
  if (!s.ok()) {
    return Status::IOError("RepairDB " + path + ": " + s.ToString());
  }
  // The page count and sync marker describe the store before the repair:
  // drop both so the next open counts the pages that are really there.
  {
    CapturedLevelDbLog open_log;
    leveldb::Options o;
    o.info_log = &open_log;
    leveldb::DB* raw = nullptr;
    s = leveldb::DB::Open(o, path, &raw);
    if (!s.ok()) {
      return Status::IOError("reopen after repair " + path + ": " +
                             s.ToString());
    }
    std::unique_ptr<leveldb::DB> db(raw);
    leveldb::WriteOptions wo;
    wo.sync = true;
    leveldb::WriteBatch wb;
    wb.Delete(kPageCountKey);
    wb.Delete(kDamageNoteKey);
    // What the damaged tables still held, unless a newer copy survived.
    uint64_t restored = 0, restored_suspect = 0;
    for (const auto& [key, v] : salvaged) {
      std::string existing;
      if (v.deleted || key == kPageCountKey || key == kDamageNoteKey ||
          !db->Get(leveldb::ReadOptions(), key, &existing).IsNotFound()) {
        continue;
      }
      wb.Put(key, v.value);
      ++(v.suspect ? restored_suspect : restored);
    }
    if (!salvaged.empty()) {
      report.repair_log.push_back(
          std::to_string(restored) +
          " records written back from the intact blocks of damaged tables, " +
          std::to_string(restored_suspect) +
          " from blocks that failed their checksum (key and value decode; "
          "a flipped byte inside a field cannot be ruled out)");
    }
    report.records_from_damaged_blocks = restored_suspect;
    s = db->Write(wo, &wb);
    if (!s.ok()) {
      return Status::IOError("reset page count " + path + ": " + s.ToString());
    }
  }
  std::error_code ec;
  fs::remove(fs::path(path) / kSyncMarkerFile, ec);
  Result<StoreCheckReport> after = CheckStore(path);
  if (!after.ok()) return after.status();
  report.after = std::move(after).value();
  if (report.before.expected_known &&
      report.before.pages_expected > report.after.pages) {
    report.pages_lost = report.before.pages_expected - report.after.pages;
  }
  return report;
}

}  // namespace freshd::store
