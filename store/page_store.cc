#include "store/page_store.h"

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <mutex>
#include <random>
#include <shared_mutex>
#include <utility>

#include "base/coding.h"
#include "store/keys.h"

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
  return FromLevelDb(it->status(), "scan");
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

Status StoreBatch::PutPage(const PageRecord& page) {
  Op op{Op::Kind::kPut, PageKey(page.url_key, page.url), {}, 0};
  if (Status s = EncodePageValue(page, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
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

void StoreBatch::DeletePage(uint64_t url_key, std::string_view url) {
  ops_.push_back({Op::Kind::kDelete, PageKey(url_key, url), {}, 0});
}

void StoreBatch::DeleteHost(std::string_view host) {
  ops_.push_back({Op::Kind::kDelete, HostKey(host), {}, 0});
}

Result<std::unique_ptr<PageStore>> PageStore::Open(const StoreConfig& config) {
  if (config.path.empty()) return Status::InvalidArgument("store path empty");
  std::unique_ptr<PageStore> store(new PageStore());
  store->sync_interval_s_ = config.sync_interval_s;
  store->cache_.reset(leveldb::NewLRUCache(config.block_cache_bytes));
  store->filter_.reset(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options;
  options.create_if_missing = true;
  options.block_cache = store->cache_.get();
  options.filter_policy = store->filter_.get();
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, config.path, &db);
  if (!s.ok()) return FromLevelDb(s, "open " + config.path);
  store->db_.reset(db);
  if (Status c = store->CheckSchema(); !c.ok()) return c;
  return store;
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
  for (const StoreBatch::Op& op : batch.ops_) {
    switch (op.kind) {
      case StoreBatch::Op::Kind::kPut:
        wb.Put(op.key, op.value);
        break;
      case StoreBatch::Op::Kind::kDelete:
        wb.Delete(op.key);
        break;
      case StoreBatch::Op::Kind::kSignal:
        wb.Put(SignalKey(op.signal_time_us, seq++), op.value);
        break;
    }
  }
  if (seq != next_signal_seq_) {
    std::string v;
    PutVarint64(&v, seq);
    wb.Put(kSignalSeqKey, v);
  }
  bool sync = sync_interval_s_ <= 0 || !ever_synced_ ||
              now - last_sync_time_ >= sync_interval_s_;
  leveldb::WriteOptions wo;
  wo.sync = sync;
  leveldb::Status s = db_->Write(wo, &wb);
  if (!s.ok()) return FromLevelDb(s, "commit");
  next_signal_seq_ = seq;
  batch.Clear();
  if (sync) {
    ever_synced_ = true;
    last_sync_time_ = now;
    unsynced_commits_ = 0;
  } else {
    ++unsynced_commits_;
  }
  if (synced != nullptr) *synced = sync;
  return Status::OK();
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
  ever_synced_ = true;
  last_sync_time_ = now;
  unsynced_commits_ = 0;
  if (synced != nullptr) *synced = true;
  return Status::OK();
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
  db_.reset();  // before the cache and filter it uses
  return result;
}

void PageStore::CompactAll() {
  std::unique_lock lock(mu_);
  if (!closed_) db_->CompactRange(nullptr, nullptr);
}

}  // namespace freshd::store
