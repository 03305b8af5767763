#include "store/store_core.h"

#include <fcntl.h>
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <utility>

#include "base/coding.h"
#include "store/keys.h"
#include "store/leveldb_log.h"
#include "store/migrations.h"
#include "store/records.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

// The sync marker: magic, commit sequence, page count, CRC-32 of the rest.
constexpr char kMarkerMagic[8] = {'F', 'R', 'S', 'H', 'S', 'Y', 'N', 'C'};
constexpr size_t kMarkerSize = 8 + 8 + 8 + 4;

uint64_t DecodeFixed64At(const char* p) {
  uint64_t v = 0;
  Decoder d(std::string_view(p, 8));
  (void)d.GetFixed64(&v);
  return v;
}

std::string EncodeMarker(const SyncMarker& m) {
  std::string out(kMarkerMagic, sizeof kMarkerMagic);
  PutFixed64(&out, m.commit_seq);
  PutFixed64(&out, m.pages);
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(out.data()),
                    static_cast<uInt>(out.size()));
  std::string c;
  PutFixed64(&c, crc);
  out.append(c.data(), 4);
  return out;
}

Result<std::optional<SyncMarker>> ReadMarkerFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<SyncMarker>();
    return Status::IOError(path + ": cannot open");
  }
  char buf[kMarkerSize];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(kMarkerSize) ||
      std::string_view(buf, kMarkerSize) !=
          EncodeMarker({DecodeFixed64At(buf + 8), DecodeFixed64At(buf + 16)})) {
    return Status::Corruption(path + ": sync marker unreadable");
  }
  return std::optional<SyncMarker>(
      SyncMarker{DecodeFixed64At(buf + 8), DecodeFixed64At(buf + 16)});
}

// What a store directory without CURRENT still holds; empty if nothing.
// MANIFESTs alone do not count: LevelDB writes MANIFEST-000001 before CURRENT
// when it creates a database, so a process killed in between leaves a
// manifest that describes no table and no log (nothing was ever written),
// and the store is created again over it.
std::string OrphanedFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || fs::exists(fs::path(dir) / "CURRENT", ec))
    return {};
  int tables = 0, logs = 0, manifests = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    std::string ext = e.path().extension().string();
    if (ext == ".ldb" || ext == ".sst") ++tables;
    if (ext == ".log") ++logs;
    if (name.rfind("MANIFEST-", 0) == 0) ++manifests;
  }
  if (tables + logs == 0) return {};
  return std::to_string(tables) + " table files, " + std::to_string(logs) +
         " log files and " + std::to_string(manifests) + " manifests";
}

}  // namespace

Result<std::optional<SyncMarker>> ReadSyncMarker(const std::string& dir) {
  return ReadMarkerFile(dir + "/" + kSyncMarkerFile);
}

Result<std::unique_ptr<StoreCore>> StoreCore::Open(
    const StoreConfig& config, const StoreOpenOptions& open_options) {
  if (config.path.empty()) return Status::InvalidArgument("store path empty");
  // Without CURRENT, LevelDB would start an empty database here and then
  // delete the tables it does not know: refuse instead.
  if (std::string orphans = OrphanedFiles(config.path); !orphans.empty()) {
    return Status::Corruption(
        "store " + config.path +
        ": its CURRENT file (LevelDB's pointer to the live MANIFEST) is "
        "missing while " +
        orphans +
        " remain; not opened, nothing changed: run `freshd store repair "
        "--store " +
        config.path + "` to rebuild it from the tables");
  }
  std::unique_ptr<StoreCore> store(new StoreCore());
  store->path_ = config.path;
  store->sync_interval_s_ = config.sync_interval_s;
  store->cache_.reset(leveldb::NewLRUCache(config.block_cache_bytes));
  store->filter_.reset(leveldb::NewBloomFilterPolicy(10));
  store->logger_ = std::make_unique<CapturedLevelDbLog>();
  leveldb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  options.info_log = store->logger_.get();
  options.block_cache = store->cache_.get();
  options.filter_policy = store->filter_.get();
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, config.path, &db);
  if (!s.ok()) {
    Status err = FromLevelDb(s, "open " + config.path);
    if (err.code() != Status::Code::kCorruption) return err;
    return Status::Corruption(err.message() +
                              "; run `freshd store repair --store " +
                              config.path + "` (it reports what is lost)");
  }
  store->db_.reset(db);
  if (Status c = store->CheckSchema(open_options.migrate); !c.ok()) return c;
  if (Status c = store->LoadCounters(); !c.ok()) return c;
  std::string marker = config.path + "/" + kSyncMarkerFile;
  store->marker_fd_ =
      ::open(marker.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (store->marker_fd_ < 0) {
    return Status::IOError(marker + ": cannot open: " + std::strerror(errno));
  }
  return store;
}

// Reads the page count and commit sequence (counting the pages of a store
// written before the count existed) and compares them with the sync marker.
Status StoreCore::LoadCounters() {
  auto read = [&](const char* key, uint64_t* out, bool* found) -> Status {
    std::string value;
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), key, &value);
    *found = s.ok();
    if (s.IsNotFound()) return Status::OK();
    if (!s.ok()) return FromLevelDb(s, std::string("read key ") + key);
    Decoder d(value);
    if (!d.GetVarint64(out) || !d.done())
      return Status::Corruption(std::string("counter key ") + key +
                                " is malformed");
    return Status::OK();
  };
  bool have_count = false, have_seq = false;
  if (Status s = read(kPageCountKey, &page_count_, &have_count); !s.ok())
    return s;
  if (Status s = read(kCommitSeqKey, &commit_seq_, &have_seq); !s.ok())
    return s;
  if (!have_count) {
    ScanStats stats;
    Status scan = Scan<PageRecord>(
        *db_, kPagePrefix, std::string(1, kPagePrefix),
        [](std::string_view, std::string_view, PageRecord*) {
          return Status::OK();
        },
        std::function<bool(const PageRecord&)>(
            [](const PageRecord&) { return true; }),
        &stats, true);
    if (!scan.ok()) return scan;
    page_count_ = stats.records;
    std::string v;
    PutVarint64(&v, page_count_);
    leveldb::WriteOptions wo;
    wo.sync = true;
    if (Status w = FromLevelDb(db_->Put(wo, kPageCountKey, v), "page count");
        !w.ok())
      return w;
  }
  std::string note;
  leveldb::Status n = db_->Get(leveldb::ReadOptions(), kDamageNoteKey, &note);
  if (n.ok()) {
    Decoder d(note);
    std::string_view text;
    if (!d.GetVarint64(&pages_before_damage_) ||
        !d.GetLengthPrefixed(&text, 1 << 16)) {
      open_damage_.push_back("the damage note key is malformed");
    } else {
      open_damage_.push_back(std::string(text) +
                             " [found at an earlier open; `freshd store "
                             "repair` clears this note]");
    }
  } else if (!n.IsNotFound()) {
    return FromLevelDb(n, "read damage note");
  }
  Result<std::optional<SyncMarker>> marker = ReadSyncMarker(path_);
  if (!marker.ok()) {
    open_damage_.push_back(marker.status().message() +
                           " (cannot tell whether synced commits were lost)");
  } else if (marker.value() && marker.value()->commit_seq > commit_seq_) {
    const SyncMarker& m = *marker.value();
    std::string pages =
        m.pages > page_count_
            ? std::to_string(m.pages - page_count_) + " pages lost ("
            : "pages: ";
    open_damage_.push_back(
        "the LevelDB log lost its tail: " +
        std::to_string(m.commit_seq - commit_seq_) +
        " commits that a sync had made durable are missing (commits " +
        std::to_string(commit_seq_ + 1) + " to " +
        std::to_string(m.commit_seq) + "); " + pages + std::to_string(m.pages) +
        " at the last sync, " + std::to_string(page_count_) + " now" +
        (m.pages > page_count_ ? ")" : ""));
    // Kept in the store, so later opens (and `freshd store check`) still
    // say it after this open has moved the marker on.
    pages_before_damage_ = std::max(pages_before_damage_, m.pages);
    std::string v;
    PutVarint64(&v, pages_before_damage_);
    PutLengthPrefixed(&v, open_damage_.back());
    leveldb::WriteOptions wo;
    wo.sync = true;
    if (Status w = FromLevelDb(db_->Put(wo, kDamageNoteKey, v), "damage note");
        !w.ok())
      return w;
  }
  return Status::OK();
}

uint64_t StoreCore::page_count() const {
  std::shared_lock lock(mu_);
  return page_count_;
}

std::vector<std::string> StoreCore::damage_log() const {
  return static_cast<const CapturedLevelDbLog*>(logger_.get())->damage_lines();
}

Status StoreCore::WriteSyncMarker() {
  if (marker_fd_ < 0) return Status::OK();
  std::string m = EncodeMarker({commit_seq_, page_count_});
  if (::pwrite(marker_fd_, m.data(), m.size(), 0) !=
          static_cast<ssize_t>(m.size()) ||
      ::fdatasync(marker_fd_) != 0) {
    return Status::IOError(path_ + "/" + kSyncMarkerFile +
                           ": write failed: " + std::strerror(errno));
  }
  return Status::OK();
}

Status StoreCore::AfterSync(double now) {
  ever_synced_ = true;
  last_sync_time_ = now;
  unsynced_commits_ = 0;
  return WriteSyncMarker();
}

// A fresh store gets kSchemaVersion; an older one runs the migration chain
// (or stays as it is, not writable, when not migrating).
Status StoreCore::CheckSchema(bool migrate) {
  std::string value;
  leveldb::Status s = db_->Get(leveldb::ReadOptions(), kSchemaKey, &value);
  if (s.IsNotFound()) {
    // A fresh store has no keys at all; anything else is not ours.
    std::unique_ptr<leveldb::Iterator> it(
        db_->NewIterator(leveldb::ReadOptions()));
    it->SeekToFirst();
    if (it->Valid())
      return Status::InvalidArgument(
          "not a freshd store (keys present but no schema version key)");
    if (!it->status().ok()) return FromLevelDb(it->status(), "schema check");
    std::string v;
    PutVarint64(&v, kSchemaVersion);
    leveldb::WriteOptions wo;
    wo.sync = true;
    Status w = FromLevelDb(db_->Put(wo, kSchemaKey, v), "write schema version");
    schema_version_ = kSchemaVersion;
    return w.ok() ? LoadHashSecret() : w;
  }
  if (!s.ok()) return FromLevelDb(s, "read schema version");
  Decoder d(value);
  uint64_t version = 0;
  if (!d.GetVarint64(&version) || !d.done() || version == 0)
    return Status::Corruption("schema version key is malformed");
  if (version > kSchemaVersion)
    return Status::InvalidArgument(
        "store schema version " + std::to_string(version) +
        " is newer than this freshd supports (" +
        std::to_string(kSchemaVersion) + "); use a newer freshd");
  if (version < kSchemaVersion) {
    if (migrate) {
      if (Status m = Migrate(*db_, version, &migrations_); !m.ok()) {
        return Status::Corruption("store " + path_ +
                                  ": migration failed: " + m.message());
      }
      version = kSchemaVersion;
    } else {
      writable_ = false;
    }
  }
  schema_version_ = version;
  return LoadHashSecret();
}

Status StoreCore::LoadHashSecret() {
  std::string value;
  leveldb::Status s = db_->Get(leveldb::ReadOptions(), kHashSecretKey, &value);
  if (s.ok()) {
    Decoder d(value);
    if (!d.GetFixed64(&hash_secret_) || !d.done())
      return Status::Corruption("hash secret key is malformed");
    return Status::OK();
  }
  if (!s.IsNotFound()) return FromLevelDb(s, "read hash secret");
  std::random_device entropy;  // the kernel's CSPRNG on Linux
  hash_secret_ = (uint64_t{entropy()} << 32) ^ entropy();
  std::string v;
  PutFixed64(&v, hash_secret_);
  leveldb::WriteOptions wo;
  wo.sync = true;
  return FromLevelDb(db_->Put(wo, kHashSecretKey, v), "write hash secret");
}

StoreCore::~StoreCore() { (void)Close(); }

bool CommitWriter::PageExists(const std::string& key) {
  auto it = pages_.find(key);
  if (it != pages_.end()) return it->second;
  std::string value;
  // Anything but NotFound (a damaged block) counts as present: such a page
  // was counted when it was first written.
  return !db_->Get(leveldb::ReadOptions(), key, &value).IsNotFound();
}

void CommitWriter::Put(std::string_view key, std::string_view value) {
  if (!key.empty() && key[0] == kPagePrefix) {
    std::string k(key);
    if (!PageExists(k)) ++page_delta_;
    pages_[std::move(k)] = true;
  }
  batch_->Put(leveldb::Slice(key.data(), key.size()),
              leveldb::Slice(value.data(), value.size()));
}

void CommitWriter::Delete(std::string_view key) {
  if (!key.empty() && key[0] == kPagePrefix) {
    std::string k(key);
    if (PageExists(k)) --page_delta_;
    pages_[std::move(k)] = false;
  }
  batch_->Delete(leveldb::Slice(key.data(), key.size()));
}

Status StoreCore::Commit(double now, bool* synced,
                         const std::function<Status(CommitWriter&)>& fill,
                         const std::function<void()>& committed) {
  std::unique_lock lock(mu_);
  if (synced != nullptr) *synced = false;
  if (closed_) return Status::Unavailable("store is closed");
  if (!writable_) {
    return Status::Unavailable("store schema " +
                               std::to_string(schema_version_) +
                               " was opened without migrating: read only");
  }
  leveldb::WriteBatch wb;
  CommitWriter writer(db_.get(), &wb);
  if (Status f = fill(writer); !f.ok()) return f;
  const uint64_t count = static_cast<uint64_t>(
      static_cast<int64_t>(page_count_) + writer.page_delta_);
  if (writer.page_delta_ != 0) {
    std::string v;
    PutVarint64(&v, count);
    wb.Put(kPageCountKey, v);
  }
  {
    std::string v;
    PutVarint64(&v, commit_seq_ + 1);
    wb.Put(kCommitSeqKey, v);
  }
  bool sync = sync_interval_s_ <= 0 || !ever_synced_ ||
              now - last_sync_time_ >= sync_interval_s_;
  leveldb::WriteOptions wo;
  wo.sync = sync;
  leveldb::Status s = db_->Write(wo, &wb);
  if (!s.ok()) return FromLevelDb(s, "commit");
  page_count_ = count;
  ++commit_seq_;
  if (committed) committed();
  Status marker;
  if (sync) {
    marker = AfterSync(now);
  } else {
    ++unsynced_commits_;
  }
  if (synced != nullptr) *synced = sync;
  return marker;
}

Result<StoreCore::ReadHold> StoreCore::Read() const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  return ReadHold(std::move(lock), db_.get());
}

Status StoreCore::MaybeSync(double now, bool force, bool* synced) {
  std::unique_lock lock(mu_);
  if (synced != nullptr) *synced = false;
  if (closed_) return Status::Unavailable("store is closed");
  bool due = force || (unsynced_commits_ > 0 &&
                       now - last_sync_time_ >= sync_interval_s_);
  if (!due) return Status::OK();
  // An empty synced batch fsyncs the log, making every earlier write durable.
  leveldb::WriteBatch empty;
  leveldb::WriteOptions wo;
  wo.sync = true;
  if (Status s = FromLevelDb(db_->Write(wo, &empty), "sync"); !s.ok()) return s;
  if (synced != nullptr) *synced = true;
  return AfterSync(now);
}

Status StoreCore::Close() {
  std::unique_lock lock(mu_);
  if (closed_) return Status::OK();
  closed_ = true;
  if (db_ == nullptr) return Status::OK();  // Open failed half-way
  Status result;
  if (unsynced_commits_ > 0 || !ever_synced_) {
    leveldb::WriteBatch empty;
    leveldb::WriteOptions wo;
    wo.sync = true;
    result = FromLevelDb(db_->Write(wo, &empty), "final sync");
  }
  if (result.ok()) result = WriteSyncMarker();
  if (marker_fd_ >= 0) ::close(marker_fd_);
  marker_fd_ = -1;
  db_.reset();  // before the cache, filter and logger it uses
  return result;
}

void StoreCore::CompactAll() {
  std::unique_lock lock(mu_);
  if (!closed_) db_->CompactRange(nullptr, nullptr);
}

}  // namespace freshd::store
