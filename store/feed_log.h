// FeedLog: the change feed's durable log (README "The change feed"): events
// under key 'E' + be64(seq), seq 1, 2, 3, ... store-wide with no holes, the
// next seq under key 'F' (kept in the batch that appends events, so numbers
// are never reused, even after every event was pruned). Events are appended
// at commit (StoreBatch::AddFeedEvent, numbered in batch order, committed
// with the page records of the same batch or not at all) and pruned only
// from the head. The event encoding (store/records.h FeedEvent) is a
// contract: /changes and the cluster's change stream serve it.
// Thread-safety: the store's rule, store/store_core.h; the sequence numbers
// are guarded by the core's lock (Append/FinishAppends/Committed run inside
// a StoreCore::Commit).

#ifndef FRESHD_STORE_FEED_LOG_H_
#define FRESHD_STORE_FEED_LOG_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "base/status.h"
#include "store/records.h"
#include "store/store_core.h"

namespace freshd::store {

class FeedLog {
 public:
  explicit FeedLog(StoreCore* core) : core_(core) {}

  // Reads 'F' and the oldest event kept. Call once, at open.
  Status Load();

  // Sequence numbers of the oldest event kept and of the newest committed
  // (oldest = newest + 1 when none is kept; 0, 0 on a store that never had
  // one).
  struct Bounds {
    uint64_t oldest = 1;
    uint64_t newest = 0;
  };
  Bounds bounds() const;

  // Calls `fn` for events with seq > after, oldest first, at most `limit`.
  // Corruption on an event that does not decode (naming its seq).
  Status ForEach(uint64_t after, size_t limit,
                 const std::function<bool(const FeedEvent&)>& fn) const;

  // Deletes the oldest events while more than `max_events` are kept or the
  // oldest is older than `before` (Unix s), committing with `now`, at most
  // 10,000 per commit. Returns how many went.
  Result<uint64_t> Prune(uint64_t max_events, double before, double now);

  // Inside a StoreCore::Commit: BeginAppends first, then Append writes
  // `encoded` (EncodeFeedValue) as the next event; FinishAppends writes 'F'
  // if any was appended; Committed makes the numbers taken final (call it
  // from `committed`). A commit that fails leaves them free for the next.
  void BeginAppends();
  void Append(CommitWriter& writer, std::string_view encoded);
  void FinishAppends(CommitWriter& writer);
  void Committed();

 private:
  StoreCore* core_;
  // Guarded by the core's lock.
  uint64_t next_seq_ = 1;     // the next event's seq
  uint64_t oldest_seq_ = 1;   // the oldest event kept (= next if none)
  uint64_t pending_seq_ = 1;  // during a commit: the next seq to assign
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_FEED_LOG_H_
