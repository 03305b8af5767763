// StoreBatch: the writes of one commit across the store's tables, filled by
// one thread and applied atomically by PageStore::Commit (store/page_store.h),
// which hands each kind to the table that owns it: page and host records,
// sketches and last captures are plain puts and deletes; feed events and
// digest index entries get their sequence numbers from their table
// (store/feed_log.h, store/capture_index.h) at commit, in batch order.
// Thread-safety: none; a StoreBatch belongs to the thread that fills it.

#ifndef FRESHD_STORE_STORE_BATCH_H_
#define FRESHD_STORE_STORE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/alias_table.h"
#include "store/control_table.h"
#include "store/records.h"
#include "store/subscription_table.h"

namespace freshd::store {

class StoreBatch {
 public:
  // Each Put returns InvalidArgument (and adds nothing) if the record is
  // over a size limit of store/records.h.
  [[nodiscard]] Status PutPage(const PageRecord& page);
  [[nodiscard]] Status PutHost(const HostRecord& host);
  // A change-feed event; Commit gives it the next feed sequence number (its
  // seq field is ignored), in the batch's order.
  [[nodiscard]] Status AddFeedEvent(const FeedEvent& event);
  // A page's newest text sketch (base/sketch.h encoding, at most 1 MiB),
  // kept for the feed's staleness; the empty string deletes it.
  [[nodiscard]] Status PutSketch(uint64_t url_key, std::string_view url,
                                 std::string_view sketch);
  // The WARC digest index: `capture` is the first response record holding
  // payload_digest (key 'W'). Commit gives it the next index sequence
  // number (its seq field is ignored) and an eviction-order entry 'X', so
  // PruneDigests drops the oldest first. InvalidArgument over the limits.
  [[nodiscard]] Status PutDigestCapture(const WarcCapture& capture);
  // A page's last archived capture with a payload (key 'L'), named by the
  // revisit of its next 304.
  [[nodiscard]] Status PutLastCapture(uint64_t url_key, std::string_view url,
                                      const WarcCapture& capture);
  // Deletes the page's record, its sketch and its last capture.
  void DeletePage(uint64_t url_key, std::string_view url);
  void DeleteHost(std::string_view host);
  // An operator control (store/control_table.h), put or deleted.
  void PutControl(const ControlRecord& control);
  void DeleteControl(char kind, std::string_view target);
  // A WebSub subscription (store/subscription_table.h), put or deleted.
  void PutAlias(const AliasRecord& alias);
  void DeleteAlias(uint64_t url_key, std::string_view url);
  void PutSubscription(const SubscriptionRecord& subscription);
  void DeleteSubscription(std::string_view id);

  // Moves `other`'s operations after this batch's (group commit).
  void Append(StoreBatch&& other);

  // The page records this batch puts, as (url_key, url, encoded value,
  // store/records.h DecodePageValue), and those it deletes, with an empty
  // value (a page removed for good): what a cluster node publishes to its
  // page stream after the commit (an empty value is the page's tombstone
  // there: a replay adopts nothing from it).
  void ForEachPagePut(
      const std::function<void(uint64_t url_key, std::string_view url,
                               std::string_view value)>& fn) const;

  size_t operations() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  void Clear() { ops_.clear(); }

 private:
  friend class PageStore;
  struct Op {
    enum class Kind { kPut, kDelete, kFeed, kDigest } kind;
    std::string key;  // kFeed: empty (assigned at commit)
    // kDigest: key 'W' + digest; value ends in a one-byte seq (0) that
    // Commit replaces with the assigned one.
    std::string value;
  };
  std::vector<Op> ops_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_STORE_BATCH_H_
