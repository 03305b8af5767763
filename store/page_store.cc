#include "store/page_store.h"

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
#include <unordered_map>
#include <utility>

#include "base/coding.h"
#include "store/keys.h"
#include "store/leveldb_log.h"

namespace freshd::store {
namespace {

Status FromLevelDb(const leveldb::Status& s, std::string_view what) {
  if (s.ok()) return Status::OK();
  std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::IOError(msg);
}

std::string Printable(std::string_view key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : key.substr(0, 96)) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// Iterates keys starting with `prefix` from `start`; `decode` turns one
// (key, value) into a record or a Status; corrupt ones are counted/stopped.
template <typename Record, typename DecodeFn>
Status Scan(leveldb::DB& db, char prefix, const std::string& start,
            DecodeFn decode, const std::function<bool(const Record&)>& fn,
            ScanStats* stats, bool skip_corrupt) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  leveldb::ReadOptions ro;
  ro.fill_cache = false;  // a full scan must not evict the hot set
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(db.NewIterator(ro));
  for (it->Seek(start); it->Valid(); it->Next()) {
    leveldb::Slice k = it->key();
    if (k.empty() || k[0] != prefix) break;
    Record record;
    Status s = decode(std::string_view(k.data(), k.size()),
                      std::string_view(it->value().data(), it->value().size()),
                      &record);
    if (!s.ok()) {
      if (!skip_corrupt)
        return Status::Corruption("key '" + Printable({k.data(), k.size()}) +
                                  "': " + s.message());
      ++st.corrupt;
      continue;
    }
    ++st.records;
    if (!fn(record)) return Status::OK();
  }
  // A block failing its checksum is skipped by LevelDB's iterator, which
  // goes on and keeps the first such error.
  if (!it->status().ok() && skip_corrupt) {
    st.read_error = it->status().ToString();
    return Status::OK();
  }
  return FromLevelDb(it->status(), "scan");
}

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

Status DecodePageEntry(std::string_view key, std::string_view value,
                       PageRecord* out) {
  if (!ParsePageKey(key, &out->url_key, &out->url))
    return Status::Corruption("malformed page key");
  return DecodePageValue(value, out);
}

Status DecodeHostEntry(std::string_view key, std::string_view value,
                       HostRecord* out) {
  if (!ParseHostKey(key, &out->host))
    return Status::Corruption("malformed host key");
  return DecodeHostValue(value, out);
}

Status DecodeSignalEntry(std::string_view key, std::string_view value,
                         SignalEntry* out) {
  if (key.size() != 17) return Status::Corruption("malformed signal key");
  return DecodeSignalValue(value, out);
}

}  // namespace

void StoreBatch::Append(StoreBatch&& other) {
  if (ops_.empty()) {
    ops_ = std::move(other.ops_);
  } else {
    ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()),
                std::make_move_iterator(other.ops_.end()));
  }
  other.ops_.clear();
}

Result<std::optional<SyncMarker>> ReadSyncMarker(const std::string& dir) {
  return ReadMarkerFile(dir + "/" + kSyncMarkerFile);
}

Status StoreBatch::PutPage(const PageRecord& page) {
  Op op{Op::Kind::kPut, PageKey(page.url_key, page.url), {}, 0};
  if (Status s = EncodePageValue(page, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

void StoreBatch::ForEachPagePut(
    const std::function<void(uint64_t, std::string_view, std::string_view)>& fn)
    const {
  std::string url;
  for (const Op& op : ops_) {
    if (op.kind != Op::Kind::kPut || op.key.empty() ||
        op.key[0] != kPagePrefix) {
      continue;
    }
    uint64_t url_key = 0;
    if (ParsePageKey(op.key, &url_key, &url)) fn(url_key, url, op.value);
  }
}

Status StoreBatch::PutHost(const HostRecord& host) {
  Op op{Op::Kind::kPut, HostKey(host.host), {}, 0};
  if (Status s = EncodeHostValue(host, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::AddSignal(const SignalEntry& signal) {
  Op op{Op::Kind::kSignal, {}, {}, SignalTimeMicros(signal.time)};
  if (Status s = EncodeSignalValue(signal, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::AddFeedEvent(const FeedEvent& event) {
  Op op{Op::Kind::kFeed, {}, {}, 0};
  if (Status s = EncodeFeedValue(event, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::PutSketch(uint64_t url_key, std::string_view url,
                             std::string_view sketch) {
  if (url.size() > kMaxUrlBytes)
    return Status::InvalidArgument("sketch: url over the limit");
  if (sketch.size() > kMaxBlobBytes)
    return Status::InvalidArgument("sketch over 1 MiB");
  if (sketch.empty()) {
    ops_.push_back({Op::Kind::kDelete, SketchKey(url_key, url), {}, 0});
  } else {
    ops_.push_back(
        {Op::Kind::kPut, SketchKey(url_key, url), std::string(sketch), 0});
  }
  return Status::OK();
}

Status StoreBatch::PutDigestCapture(const WarcCapture& capture) {
  if (capture.payload_digest.empty() ||
      capture.payload_digest.size() > kMaxSmallFieldBytes)
    return Status::InvalidArgument("digest index: bad payload digest");
  WarcCapture c = capture;
  c.seq = 0;  // one byte, replaced at commit
  Op op{Op::Kind::kDigest, DigestKey(c.payload_digest), {}, 0};
  if (Status s = EncodeCaptureValue(c, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::PutLastCapture(uint64_t url_key, std::string_view url,
                                  const WarcCapture& capture) {
  if (url.size() > kMaxUrlBytes)
    return Status::InvalidArgument("last capture: url over the limit");
  WarcCapture c = capture;
  c.seq = 0;
  Op op{Op::Kind::kPut, LastCaptureKey(url_key, url), {}, 0};
  if (Status s = EncodeCaptureValue(c, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

void StoreBatch::DeletePage(uint64_t url_key, std::string_view url) {
  ops_.push_back({Op::Kind::kDelete, PageKey(url_key, url), {}, 0});
  ops_.push_back({Op::Kind::kDelete, SketchKey(url_key, url), {}, 0});
  ops_.push_back({Op::Kind::kDelete, LastCaptureKey(url_key, url), {}, 0});
}

void StoreBatch::DeleteHost(std::string_view host) {
  ops_.push_back({Op::Kind::kDelete, HostKey(host), {}, 0});
}

Result<std::unique_ptr<PageStore>> PageStore::Open(const StoreConfig& config) {
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
  std::unique_ptr<PageStore> store(new PageStore());
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
  if (Status c = store->CheckSchema(); !c.ok()) return c;
  if (Status c = store->LoadCounters(); !c.ok()) return c;
  if (Status c = store->LoadFeedBounds(); !c.ok()) return c;
  if (Status c = store->LoadDigestBounds(); !c.ok()) return c;
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
Status PageStore::LoadFeedBounds() {
  std::string value;
  leveldb::Status s = db_->Get(leveldb::ReadOptions(), kFeedSeqKey, &value);
  if (s.ok()) {
    Decoder d(value);
    if (!d.GetVarint64(&next_feed_seq_) || !d.done() || next_feed_seq_ == 0)
      return Status::Corruption("feed sequence key is malformed");
  } else if (!s.IsNotFound()) {
    return FromLevelDb(s, "read feed sequence");
  }
  oldest_feed_seq_ = next_feed_seq_;
  std::unique_ptr<leveldb::Iterator> it(
      db_->NewIterator(leveldb::ReadOptions()));
  it->Seek(std::string(1, kFeedPrefix));
  if (it->Valid() && it->key().size() == 9 && it->key()[0] == kFeedPrefix) {
    const uint64_t first = DecodeBigEndian64(it->key().data() + 1);
    if (first < next_feed_seq_) oldest_feed_seq_ = first;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "feed scan");
  return Status::OK();
}

// The digest index's eviction order: the first and last 'X' keys.
Status PageStore::LoadDigestBounds() {
  std::unique_ptr<leveldb::Iterator> it(
      db_->NewIterator(leveldb::ReadOptions()));
  it->Seek(std::string(1, kDigestOrderPrefix));
  if (it->Valid() && it->key().size() == 9 &&
      it->key()[0] == kDigestOrderPrefix) {
    oldest_digest_seq_ = DecodeBigEndian64(it->key().data() + 1);
    it->Seek(std::string(1, kDigestOrderPrefix + 1));
    if (it->Valid()) {
      it->Prev();
    } else {
      it->SeekToLast();
    }
    if (it->Valid() && it->key().size() == 9 &&
        it->key()[0] == kDigestOrderPrefix) {
      next_digest_seq_ = DecodeBigEndian64(it->key().data() + 1) + 1;
    }
    if (next_digest_seq_ < oldest_digest_seq_)  // defensive
      next_digest_seq_ = oldest_digest_seq_;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "digest scan");
  return Status::OK();
}

Result<WarcCapture> PageStore::GetDigestCapture(
    std::string_view payload_digest) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  std::string value;
  leveldb::Status s =
      db_->Get(leveldb::ReadOptions(), DigestKey(payload_digest), &value);
  if (!s.ok()) return FromLevelDb(s, "digest " + std::string(payload_digest));
  WarcCapture c;
  if (Status d = DecodeCaptureValue(value, &c); !d.ok()) return d;
  return c;
}

Result<WarcCapture> PageStore::GetLastCapture(uint64_t url_key,
                                              std::string_view url) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  std::string value;
  leveldb::Status s =
      db_->Get(leveldb::ReadOptions(), LastCaptureKey(url_key, url), &value);
  if (!s.ok()) return FromLevelDb(s, "last capture " + std::string(url));
  WarcCapture c;
  if (Status d = DecodeCaptureValue(value, &c); !d.ok()) return d;
  return c;
}

uint64_t PageStore::digest_entries() const {
  std::shared_lock lock(mu_);
  return next_digest_seq_ - oldest_digest_seq_;
}

Result<uint64_t> PageStore::PruneDigests(uint64_t max_entries, double now) {
  constexpr uint64_t kChunk = 10000;
  uint64_t deleted = 0;
  for (;;) {
    StoreBatch batch;
    uint64_t new_oldest = 0, entries = 0;
    {
      std::shared_lock lock(mu_);
      if (closed_) return Status::Unavailable("store is closed");
      const uint64_t kept = next_digest_seq_ - oldest_digest_seq_;
      uint64_t excess = kept > max_entries ? kept - max_entries : 0;
      std::unique_ptr<leveldb::Iterator> it(
          db_->NewIterator(leveldb::ReadOptions()));
      for (it->Seek(DigestOrderKey(oldest_digest_seq_));
           it->Valid() && excess > 0 && entries < kChunk; it->Next()) {
        leveldb::Slice k = it->key();
        if (k.size() != 9 || k[0] != kDigestOrderPrefix) break;
        const uint64_t seq = DecodeBigEndian64(k.data() + 1);
        const std::string digest_key =
            DigestKey(std::string_view(it->value().data(), it->value().size()));
        // The index entry goes only if it is still this one (a digest
        // written again later has a newer order entry).
        std::string value;
        WarcCapture c;
        if (db_->Get(leveldb::ReadOptions(), digest_key, &value).ok() &&
            (!DecodeCaptureValue(value, &c).ok() || c.seq == seq)) {
          batch.ops_.push_back(
              {StoreBatch::Op::Kind::kDelete, digest_key, {}, 0});
        }
        batch.ops_.push_back(
            {StoreBatch::Op::Kind::kDelete, k.ToString(), {}, 0});
        new_oldest = seq + 1;
        --excess;
        ++entries;
      }
      if (!it->status().ok()) return FromLevelDb(it->status(), "digest prune");
    }
    if (batch.empty()) return deleted;
    if (Status s = Commit(batch, now); !s.ok()) return s;
    {
      std::unique_lock lock(mu_);
      oldest_digest_seq_ = std::max(oldest_digest_seq_, new_oldest);
    }
    deleted += entries;
    if (entries < kChunk) return deleted;
  }
}

PageStore::FeedBounds PageStore::feed_bounds() const {
  std::shared_lock lock(mu_);
  return FeedBounds{oldest_feed_seq_, next_feed_seq_ - 1};
}

Status PageStore::ForEachFeedEvent(
    uint64_t after, size_t limit,
    const std::function<bool(const FeedEvent&)>& fn) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
  size_t n = 0;
  const uint64_t from = std::max(after + 1, oldest_feed_seq_);
  for (it->Seek(FeedKey(from)); it->Valid() && n < limit; it->Next()) {
    leveldb::Slice k = it->key();
    if (k.size() != 9 || k[0] != kFeedPrefix) break;
    FeedEvent e;
    e.seq = DecodeBigEndian64(k.data() + 1);
    if (e.seq >= next_feed_seq_) break;  // not possible; defensive
    leveldb::Slice v = it->value();
    if (Status d = DecodeFeedValue(std::string_view(v.data(), v.size()), &e);
        !d.ok()) {
      return Status::Corruption("feed event " + std::to_string(e.seq) + ": " +
                                d.message());
    }
    ++n;
    if (!fn(e)) break;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "feed scan");
  return Status::OK();
}

Result<uint64_t> PageStore::PruneFeed(uint64_t max_events, double before,
                                      double now) {
  constexpr uint64_t kChunk = 10000;
  uint64_t deleted = 0;
  for (;;) {
    StoreBatch batch;
    uint64_t new_oldest = 0;
    {
      std::shared_lock lock(mu_);
      if (closed_) return Status::Unavailable("store is closed");
      const uint64_t kept = next_feed_seq_ - oldest_feed_seq_;
      // Over the count: these go whatever their age.
      uint64_t by_count = kept > max_events ? kept - max_events : 0;
      std::unique_ptr<leveldb::Iterator> it(
          db_->NewIterator(leveldb::ReadOptions()));
      uint64_t seq = oldest_feed_seq_;
      for (it->Seek(FeedKey(oldest_feed_seq_));
           it->Valid() && batch.operations() < kChunk; it->Next()) {
        leveldb::Slice k = it->key();
        if (k.size() != 9 || k[0] != kFeedPrefix) break;
        seq = DecodeBigEndian64(k.data() + 1);
        if (by_count == 0) {
          FeedEvent e;
          leveldb::Slice v = it->value();
          // An event that does not decode is dropped as if too old.
          if (DecodeFeedValue(std::string_view(v.data(), v.size()), &e).ok() &&
              e.time >= before) {
            break;
          }
        } else {
          --by_count;
        }
        batch.ops_.push_back(
            {StoreBatch::Op::Kind::kDelete, k.ToString(), {}, 0});
        new_oldest = seq + 1;
      }
      if (!it->status().ok()) return FromLevelDb(it->status(), "feed prune");
    }
    if (batch.empty()) return deleted;
    const size_t n = batch.operations();
    if (Status s = Commit(batch, now); !s.ok()) return s;
    {
      std::unique_lock lock(mu_);
      oldest_feed_seq_ = std::max(oldest_feed_seq_, new_oldest);
    }
    deleted += n;
    if (n < kChunk) return deleted;
  }
}

Result<std::string> PageStore::GetSketch(uint64_t url_key,
                                         std::string_view url) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  std::string value;
  leveldb::Status s =
      db_->Get(leveldb::ReadOptions(), SketchKey(url_key, url), &value);
  if (!s.ok()) return FromLevelDb(s, "sketch " + std::string(url));
  return value;
}

Status PageStore::LoadCounters() {
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

uint64_t PageStore::page_count() const {
  std::shared_lock lock(mu_);
  return page_count_;
}

std::vector<std::string> PageStore::damage_log() const {
  return static_cast<const CapturedLevelDbLog*>(logger_.get())->damage_lines();
}

Status PageStore::WriteSyncMarker() {
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

Status PageStore::AfterSync(double now) {
  ever_synced_ = true;
  last_sync_time_ = now;
  unsynced_commits_ = 0;
  return WriteSyncMarker();
}

Status PageStore::CheckSchema() {
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
  if (Status k = LoadHashSecret(); !k.ok()) return k;
  value.clear();
  s = db_->Get(leveldb::ReadOptions(), kSignalSeqKey, &value);
  if (s.ok()) {
    Decoder seq(value);
    if (!seq.GetVarint64(&next_signal_seq_) || !seq.done())
      return Status::Corruption("signal sequence key is malformed");
  } else if (!s.IsNotFound()) {
    return FromLevelDb(s, "read signal sequence");
  }
  return Status::OK();
}

Status PageStore::LoadHashSecret() {
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

PageStore::~PageStore() { (void)Close(); }

Status PageStore::Commit(StoreBatch& batch, double now, bool* synced) {
  std::unique_lock lock(mu_);
  if (synced != nullptr) *synced = false;
  if (closed_) return Status::Unavailable("store is closed");
  leveldb::WriteBatch wb;
  uint64_t seq = next_signal_seq_;
  uint64_t feed_seq = next_feed_seq_;
  uint64_t digest_seq = next_digest_seq_;
  // Page keys this batch writes: whether each exists after the ops so far.
  std::unordered_map<std::string_view, bool> pages;
  int64_t page_delta = 0;
  auto existed = [&](const std::string& key) {
    auto it = pages.find(key);
    if (it != pages.end()) return it->second;
    std::string value;
    // Anything but NotFound (a damaged block) counts as present: such a
    // page was counted when it was first written.
    return !db_->Get(leveldb::ReadOptions(), key, &value).IsNotFound();
  };
  for (const StoreBatch::Op& op : batch.ops_) {
    const bool page = !op.key.empty() && op.key[0] == kPagePrefix;
    switch (op.kind) {
      case StoreBatch::Op::Kind::kPut:
        if (page) {
          if (!existed(op.key)) ++page_delta;
          pages[op.key] = true;
        }
        wb.Put(op.key, op.value);
        break;
      case StoreBatch::Op::Kind::kDelete:
        if (page) {
          if (existed(op.key)) --page_delta;
          pages[op.key] = false;
        }
        wb.Delete(op.key);
        break;
      case StoreBatch::Op::Kind::kSignal:
        wb.Put(SignalKey(op.signal_time_us, seq++), op.value);
        break;
      case StoreBatch::Op::Kind::kFeed:
        wb.Put(FeedKey(feed_seq++), op.value);
        break;
      case StoreBatch::Op::Kind::kDigest: {
        std::string v = op.value;
        v.pop_back();  // the placeholder seq 0 (one varint byte)
        PutVarint64(&v, digest_seq);
        wb.Put(op.key, v);
        wb.Put(DigestOrderKey(digest_seq++), op.key.substr(1));
        break;
      }
    }
  }
  if (feed_seq != next_feed_seq_) {
    std::string v;
    PutVarint64(&v, feed_seq);
    wb.Put(kFeedSeqKey, v);
  }
  if (seq != next_signal_seq_) {
    std::string v;
    PutVarint64(&v, seq);
    wb.Put(kSignalSeqKey, v);
  }
  const uint64_t count =
      static_cast<uint64_t>(static_cast<int64_t>(page_count_) + page_delta);
  if (page_delta != 0) {
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
  next_signal_seq_ = seq;
  next_feed_seq_ = feed_seq;
  next_digest_seq_ = digest_seq;
  page_count_ = count;
  ++commit_seq_;
  batch.Clear();
  Status marker;
  if (sync) {
    marker = AfterSync(now);
  } else {
    ++unsynced_commits_;
  }
  if (synced != nullptr) *synced = sync;
  return marker;
}

Status PageStore::MaybeSync(double now, bool force, bool* synced) {
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

Result<PageRecord> PageStore::GetPage(uint64_t url_key,
                                      std::string_view url) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  std::string value;
  leveldb::Status s =
      db_->Get(leveldb::ReadOptions(), PageKey(url_key, url), &value);
  if (!s.ok()) return FromLevelDb(s, "page " + std::string(url));
  PageRecord page;
  page.url_key = url_key;
  page.url = std::string(url);
  if (Status d = DecodePageValue(value, &page); !d.ok()) return d;
  return page;
}

Result<HostRecord> PageStore::GetHost(std::string_view host) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  std::string value;
  leveldb::Status s = db_->Get(leveldb::ReadOptions(), HostKey(host), &value);
  if (!s.ok()) return FromLevelDb(s, "host " + std::string(host));
  HostRecord record;
  record.host = std::string(host);
  if (Status d = DecodeHostValue(value, &record); !d.ok()) return d;
  return record;
}

Result<bool> PageStore::ContainsPage(uint64_t url_key,
                                     std::string_view url) const {
  // LevelDB's Get consults the memtables, then per candidate table the
  // bloom filter block (cached) before any data block: a miss reads no data.
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  std::string value;
  leveldb::Status s =
      db_->Get(leveldb::ReadOptions(), PageKey(url_key, url), &value);
  if (s.IsNotFound()) return false;
  if (!s.ok()) return FromLevelDb(s, "contains");
  return true;
}

Status PageStore::ForEachPage(const std::function<bool(const PageRecord&)>& fn,
                              ScanStats* stats, bool skip_corrupt) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  return Scan<PageRecord>(*db_, kPagePrefix, std::string(1, kPagePrefix),
                          DecodePageEntry, fn, stats, skip_corrupt);
}

Status PageStore::ForEachHost(const std::function<bool(const HostRecord&)>& fn,
                              ScanStats* stats, bool skip_corrupt) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  return Scan<HostRecord>(*db_, kHostPrefix, std::string(1, kHostPrefix),
                          DecodeHostEntry, fn, stats, skip_corrupt);
}

Status PageStore::ForEachSignal(
    double since, const std::function<bool(const SignalEntry&)>& fn,
    ScanStats* stats, bool skip_corrupt) const {
  std::shared_lock lock(mu_);
  if (closed_) return Status::Unavailable("store is closed");
  return Scan<SignalEntry>(*db_, kSignalPrefix,
                           SignalKey(SignalTimeMicros(since), 0),
                           DecodeSignalEntry, fn, stats, skip_corrupt);
}

Result<uint64_t> PageStore::PruneSignals(double before, double now) {
  // Deletes in bounded batches; the read lock is released before each commit.
  constexpr size_t kChunk = 10000;
  const std::string end = SignalKey(SignalTimeMicros(before), 0);
  uint64_t deleted = 0;
  for (;;) {
    StoreBatch batch;
    {
      std::shared_lock lock(mu_);
      if (closed_) return Status::Unavailable("store is closed");
      std::unique_ptr<leveldb::Iterator> it(
          db_->NewIterator(leveldb::ReadOptions()));
      for (it->Seek(std::string(1, kSignalPrefix));
           it->Valid() && batch.operations() < kChunk; it->Next()) {
        leveldb::Slice k = it->key();
        if (k.empty() || k[0] != kSignalPrefix || k.compare(end) >= 0) break;
        batch.ops_.push_back(
            {StoreBatch::Op::Kind::kDelete, k.ToString(), {}, 0});
      }
      if (!it->status().ok()) return FromLevelDb(it->status(), "prune scan");
    }
    if (batch.empty()) return deleted;
    const size_t n = batch.operations();
    if (Status s = Commit(batch, now); !s.ok()) return s;
    deleted += n;
    if (n < kChunk) return deleted;
  }
}

Status PageStore::Close() {
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

void PageStore::CompactAll() {
  std::unique_lock lock(mu_);
  if (!closed_) db_->CompactRange(nullptr, nullptr);
}

}  // namespace freshd::store
