// PageStore: freshd's durable state, the facade the daemon holds. It owns the
// core (store/store_core.h: open, schema and migrations, commits, syncs,
// counters, damage) and the typed tables over it, one file each:
//   pages       store/page_table.h     page records ('P')
//   hosts       store/host_table.h     host records ('H')
//   feed        store/feed_log.h       the change feed ('E', 'F')
//   captures    store/capture_index.h  WARC digest index and last captures
//                                      ('W', 'X', 'L')
//   sketches    store/sketch_table.h   each page's text sketch ('G')
// A StoreBatch (store/store_batch.h) is one commit's writes across them;
// Commit applies it atomically. The methods below forward to the owner
// named in each; byte-level schema: store/README.md.
// Thread-safety: the store's rule, stated once in store/store_core.h: safe
// for concurrent use (reads in parallel, writes exclusive).

#ifndef FRESHD_STORE_PAGE_STORE_H_
#define FRESHD_STORE_PAGE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "store/alias_table.h"
#include "store/capture_index.h"
#include "store/control_table.h"
#include "store/feed_log.h"
#include "store/host_table.h"
#include "store/migrations.h"
#include "store/page_table.h"
#include "store/records.h"
#include "store/scan_stats.h"
#include "store/sketch_table.h"
#include "store/store_batch.h"
#include "store/store_core.h"
#include "store/subscription_table.h"

namespace freshd::store {

class PageStore {
 public:
  // StoreCore::Open, then each table loads its bounds. Errors as
  // StoreCore::Open's.
  static Result<std::unique_ptr<PageStore>> Open(
      const StoreConfig& config, const StoreOpenOptions& options = {});

  ~PageStore();  // Close()s, ignoring its result
  PageStore(const PageStore&) = delete;
  PageStore& operator=(const PageStore&) = delete;

  // Applies `batch` atomically (StoreCore::Commit: sync policy, *synced) and
  // clears it; feed events and digest entries are numbered by their tables
  // in batch order. Errors: IOError from LevelDB (batch kept).
  Status Commit(StoreBatch& batch, double now, bool* synced = nullptr);

  // StoreCore: syncs, the hash secret, the page count, damage, schema.
  Status MaybeSync(double now, bool force = false, bool* synced = nullptr) {
    return core_->MaybeSync(now, force, synced);
  }
  uint64_t hash_secret() const { return core_->hash_secret(); }
  uint64_t page_count() const { return core_->page_count(); }
  const std::vector<std::string>& open_damage() const {
    return core_->open_damage();
  }
  uint64_t pages_before_damage() const { return core_->pages_before_damage(); }
  std::vector<std::string> damage_log() const { return core_->damage_log(); }
  uint64_t schema_version() const { return core_->schema_version(); }
  const std::vector<std::string>& migrations() const {
    return core_->migrations();
  }
  Status Close() { return core_->Close(); }
  void CompactAll() { core_->CompactAll(); }

  // PageTable and HostTable.
  Result<PageRecord> GetPage(uint64_t url_key, std::string_view url) const {
    return pages_.Get(url_key, url);
  }
  Result<bool> ContainsPage(uint64_t url_key, std::string_view url) const {
    return pages_.Contains(url_key, url);
  }
  Status ForEachPage(const std::function<bool(const PageRecord&)>& fn,
                     ScanStats* stats = nullptr,
                     bool skip_corrupt = false) const {
    return pages_.ForEach(fn, stats, skip_corrupt);
  }
  Result<HostRecord> GetHost(std::string_view host) const {
    return hosts_.Get(host);
  }
  Status ForEachHost(const std::function<bool(const HostRecord&)>& fn,
                     ScanStats* stats = nullptr,
                     bool skip_corrupt = false) const {
    return hosts_.ForEach(fn, stats, skip_corrupt);
  }

  // ControlTable: the operators' runtime controls.
  Status ForEachControl(const std::function<bool(const ControlRecord&)>& fn,
                        bool skip_corrupt = false) const {
    return controls_.ForEach(fn, skip_corrupt);
  }

  // SubscriptionTable: the WebSub subscriptions.
  Status ForEachSubscription(
      const std::function<bool(const SubscriptionRecord&)>& fn,
      bool skip_corrupt = false) const {
    return subscriptions_.ForEach(fn, skip_corrupt);
  }

  // AliasTable: duplicate URLs collapsed into pages.
  Status ForEachAlias(const std::function<bool(const AliasRecord&)>& fn,
                      bool skip_corrupt = false) const {
    return aliases_.ForEach(fn, skip_corrupt);
  }

  // FeedLog.
  using FeedBounds = FeedLog::Bounds;
  FeedBounds feed_bounds() const { return feed_.bounds(); }
  Status ForEachFeedEvent(
      uint64_t after, size_t limit,
      const std::function<bool(const FeedEvent&)>& fn) const {
    return feed_.ForEach(after, limit, fn);
  }
  Result<uint64_t> PruneFeed(uint64_t max_events, double before, double now) {
    return feed_.Prune(max_events, before, now);
  }

  // CaptureIndex and SketchTable.
  Result<WarcCapture> GetDigestCapture(std::string_view payload_digest) const {
    return captures_.GetDigest(payload_digest);
  }
  Result<WarcCapture> GetLastCapture(uint64_t url_key,
                                     std::string_view url) const {
    return captures_.GetLast(url_key, url);
  }
  uint64_t digest_entries() const { return captures_.digest_entries(); }
  Result<uint64_t> PruneDigests(uint64_t max_entries, double now) {
    return captures_.PruneDigests(max_entries, now);
  }
  Result<std::string> GetSketch(uint64_t url_key, std::string_view url) const {
    return sketches_.Get(url_key, url);
  }

 private:
  explicit PageStore(std::unique_ptr<StoreCore> core);

  std::unique_ptr<StoreCore> core_;
  PageTable pages_;
  HostTable hosts_;
  ControlTable controls_;
  SubscriptionTable subscriptions_;
  AliasTable aliases_;
  FeedLog feed_;
  CaptureIndex captures_;
  SketchTable sketches_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_PAGE_STORE_H_
