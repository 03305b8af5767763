#include "store/feed_log.h"

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

Status FeedLog::Load() {
  leveldb::DB& db = core_->db_at_open();
  std::string value;
  leveldb::Status s = db.Get(leveldb::ReadOptions(), kFeedSeqKey, &value);
  if (s.ok()) {
    Decoder d(value);
    if (!d.GetVarint64(&next_seq_) || !d.done() || next_seq_ == 0)
      return Status::Corruption("feed sequence key is malformed");
  } else if (!s.IsNotFound()) {
    return FromLevelDb(s, "read feed sequence");
  }
  oldest_seq_ = next_seq_;
  std::unique_ptr<leveldb::Iterator> it(db.NewIterator(leveldb::ReadOptions()));
  it->Seek(std::string(1, kFeedPrefix));
  if (it->Valid() && it->key().size() == 9 && it->key()[0] == kFeedPrefix) {
    const uint64_t first = DecodeBigEndian64(it->key().data() + 1);
    if (first < next_seq_) oldest_seq_ = first;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "feed scan");
  return Status::OK();
}

FeedLog::Bounds FeedLog::bounds() const {
  auto lock = core_->LockShared();
  return Bounds{oldest_seq_, next_seq_ - 1};
}

Status FeedLog::ForEach(uint64_t after, size_t limit,
                        const std::function<bool(const FeedEvent&)>& fn) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(hold->db().NewIterator(ro));
  size_t n = 0;
  const uint64_t from = std::max(after + 1, oldest_seq_);
  for (it->Seek(FeedKey(from)); it->Valid() && n < limit; it->Next()) {
    leveldb::Slice k = it->key();
    if (k.size() != 9 || k[0] != kFeedPrefix) break;
    FeedEvent e;
    e.seq = DecodeBigEndian64(k.data() + 1);
    if (e.seq >= next_seq_) break;  // not possible; defensive
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

Result<uint64_t> FeedLog::Prune(uint64_t max_events, double before,
                                double now) {
  constexpr size_t kChunk = 10000;
  uint64_t deleted = 0;
  for (;;) {
    std::vector<std::string> keys;
    uint64_t new_oldest = 0;
    {
      Result<StoreCore::ReadHold> hold = core_->Read();
      if (!hold.ok()) return hold.status();
      const uint64_t kept = next_seq_ - oldest_seq_;
      // Over the count: these go whatever their age.
      uint64_t by_count = kept > max_events ? kept - max_events : 0;
      std::unique_ptr<leveldb::Iterator> it(
          hold->db().NewIterator(leveldb::ReadOptions()));
      for (it->Seek(FeedKey(oldest_seq_)); it->Valid() && keys.size() < kChunk;
           it->Next()) {
        leveldb::Slice k = it->key();
        if (k.size() != 9 || k[0] != kFeedPrefix) break;
        const uint64_t seq = DecodeBigEndian64(k.data() + 1);
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
        keys.push_back(k.ToString());
        new_oldest = seq + 1;
      }
      if (!it->status().ok()) return FromLevelDb(it->status(), "feed prune");
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
    deleted += keys.size();
    if (keys.size() < kChunk) return deleted;
  }
}

void FeedLog::BeginAppends() { pending_seq_ = next_seq_; }

void FeedLog::Append(CommitWriter& writer, std::string_view encoded) {
  writer.Put(FeedKey(pending_seq_++), encoded);
}

void FeedLog::FinishAppends(CommitWriter& writer) {
  if (pending_seq_ <= next_seq_) return;
  std::string v;
  PutVarint64(&v, pending_seq_);
  writer.Put(kFeedSeqKey, v);
}

void FeedLog::Committed() { next_seq_ = std::max(next_seq_, pending_seq_); }

}  // namespace freshd::store
