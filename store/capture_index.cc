#include "store/capture_index.h"

#include <leveldb/db.h>
#include <leveldb/iterator.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/coding.h"
#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

Result<WarcCapture> GetCapture(const StoreCore& core, const std::string& key,
                               std::string_view what) {
  Result<StoreCore::ReadHold> hold = core.Read();
  if (!hold.ok()) return hold.status();
  std::string value;
  leveldb::Status s = hold->db().Get(leveldb::ReadOptions(), key, &value);
  if (!s.ok()) return FromLevelDb(s, what);
  WarcCapture c;
  if (Status d = DecodeCaptureValue(value, &c); !d.ok()) return d;
  return c;
}

}  // namespace

Status CaptureIndex::Load() {
  leveldb::DB& db = core_->db_at_open();
  std::unique_ptr<leveldb::Iterator> it(db.NewIterator(leveldb::ReadOptions()));
  it->Seek(std::string(1, kDigestOrderPrefix));
  if (it->Valid() && it->key().size() == 9 &&
      it->key()[0] == kDigestOrderPrefix) {
    oldest_seq_ = DecodeBigEndian64(it->key().data() + 1);
    it->Seek(std::string(1, kDigestOrderPrefix + 1));
    if (it->Valid()) {
      it->Prev();
    } else {
      it->SeekToLast();
    }
    if (it->Valid() && it->key().size() == 9 &&
        it->key()[0] == kDigestOrderPrefix) {
      next_seq_ = DecodeBigEndian64(it->key().data() + 1) + 1;
    }
    if (next_seq_ < oldest_seq_) next_seq_ = oldest_seq_;  // defensive
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "digest scan");
  return Status::OK();
}

Result<WarcCapture> CaptureIndex::GetDigest(
    std::string_view payload_digest) const {
  return GetCapture(*core_, DigestKey(payload_digest),
                    "digest " + std::string(payload_digest));
}

Result<WarcCapture> CaptureIndex::GetLast(uint64_t url_key,
                                          std::string_view url) const {
  return GetCapture(*core_, LastCaptureKey(url_key, url),
                    "last capture " + std::string(url));
}

uint64_t CaptureIndex::digest_entries() const {
  auto lock = core_->LockShared();
  return next_seq_ - oldest_seq_;
}

Result<uint64_t> CaptureIndex::PruneDigests(uint64_t max_entries, double now) {
  constexpr uint64_t kChunk = 10000;
  uint64_t deleted = 0;
  for (;;) {
    std::vector<std::string> keys;
    uint64_t new_oldest = 0, entries = 0;
    {
      Result<StoreCore::ReadHold> hold = core_->Read();
      if (!hold.ok()) return hold.status();
      leveldb::DB& db = hold->db();
      const uint64_t kept = next_seq_ - oldest_seq_;
      uint64_t excess = kept > max_entries ? kept - max_entries : 0;
      std::unique_ptr<leveldb::Iterator> it(
          db.NewIterator(leveldb::ReadOptions()));
      for (it->Seek(DigestOrderKey(oldest_seq_));
           it->Valid() && excess > 0 && entries < kChunk; it->Next()) {
        leveldb::Slice k = it->key();
        if (k.size() != 9 || k[0] != kDigestOrderPrefix) break;
        const uint64_t seq = DecodeBigEndian64(k.data() + 1);
        std::string digest_key =
            DigestKey(std::string_view(it->value().data(), it->value().size()));
        // The index entry goes only if it is still this one (a digest
        // written again later has a newer order entry).
        std::string value;
        WarcCapture c;
        if (db.Get(leveldb::ReadOptions(), digest_key, &value).ok() &&
            (!DecodeCaptureValue(value, &c).ok() || c.seq == seq)) {
          keys.push_back(std::move(digest_key));
        }
        keys.push_back(k.ToString());
        new_oldest = seq + 1;
        --excess;
        ++entries;
      }
      if (!it->status().ok()) return FromLevelDb(it->status(), "digest prune");
    }
    if (keys.empty()) return deleted;
    Status s = core_->Commit(
        now, nullptr,
        [&](CommitWriter& w) {
          for (const std::string& k : keys) w.Delete(k);
          return Status::OK();
        },
        [&] { oldest_seq_ = std::max(oldest_seq_, new_oldest); });
    if (!s.ok()) return s;
    deleted += entries;
    if (entries < kChunk) return deleted;
  }
}

void CaptureIndex::BeginAppends() { pending_seq_ = next_seq_; }

void CaptureIndex::AppendDigest(CommitWriter& writer, std::string_view key,
                                std::string_view encoded) {
  std::string v(encoded);
  v.pop_back();  // the placeholder seq 0 (one varint byte)
  PutVarint64(&v, pending_seq_);
  writer.Put(key, v);
  writer.Put(DigestOrderKey(pending_seq_++), key.substr(1));
}

void CaptureIndex::Committed() {
  next_seq_ = std::max(next_seq_, pending_seq_);
}

}  // namespace freshd::store
