// CaptureIndex: the WARC capture index, what a revisit record names.
// - The digest index: key 'W' + payload digest -> the first response record
//   archived with that payload (store/records.h WarcCapture, its seq the
//   entry's place in the eviction order), and key 'X' + be64(seq) -> the
//   payload digest, seq 1, 2, 3, ...; Prune drops from the head (and the
//   'W' entry if it still has that seq).
// - A page's last capture: key 'L' + be64(url_key) + url -> the capture
//   that holds its payload, named by the revisit of its next 304; it goes
//   with its page (StoreBatch::DeletePage).
// Both are written by StoreBatch::PutDigestCapture / PutLastCapture in the
// same commit as the fetch's page record; digest entries get their seq at
// commit (AppendDigest). The values are a contract (WARC revisits name them).
// Thread-safety: the store's rule, store/store_core.h; the sequence numbers
// are guarded by the core's lock.

#ifndef FRESHD_STORE_CAPTURE_INDEX_H_
#define FRESHD_STORE_CAPTURE_INDEX_H_

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "store/records.h"
#include "store/store_core.h"

namespace freshd::store {

class CaptureIndex {
 public:
  explicit CaptureIndex(StoreCore* core) : core_(core) {}

  // Reads the first and last 'X' keys. Call once, at open.
  Status Load();

  // The capture first archived with `payload_digest`, and a page's last
  // capture; NotFound if none, Corruption if it does not decode,
  // Unavailable after Close.
  Result<WarcCapture> GetDigest(std::string_view payload_digest) const;
  Result<WarcCapture> GetLast(uint64_t url_key, std::string_view url) const;

  // Digest entries kept (an upper bound: eviction-order entries between the
  // oldest kept and the newest assigned).
  uint64_t digest_entries() const;

  // Deletes the oldest digest entries while more than `max_entries` are
  // kept, committing with `now`, at most 10,000 per commit. Returns how
  // many went.
  Result<uint64_t> PruneDigests(uint64_t max_entries, double now);

  // Inside a StoreCore::Commit: BeginAppends first, then AppendDigest
  // writes `key` ('W' + digest) with `encoded` (EncodeCaptureValue with seq
  // 0, one placeholder byte at the end) given the next seq, and its 'X'
  // entry; Committed makes the numbers taken final.
  void BeginAppends();
  void AppendDigest(CommitWriter& writer, std::string_view key,
                    std::string_view encoded);
  void Committed();

 private:
  StoreCore* core_;
  // Guarded by the core's lock.
  uint64_t next_seq_ = 1;    // the next digest entry's seq
  uint64_t oldest_seq_ = 1;  // the oldest kept (= next if none)
  uint64_t pending_seq_ = 1;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_CAPTURE_INDEX_H_
