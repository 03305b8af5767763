// PageStore: freshd's durable state in LevelDB — page records, host records,
// the signal log and the schema version (byte-level schema: store/README.md).
//
// Writes are grouped: the caller fills one StoreBatch per observation (page +
// host + signals) or per tick and commits it atomically. Commits are not
// fsync'ed one by one: the first commit at least `sync_interval_s` after the
// last sync is a sync write, so an OS crash or power loss loses at most that
// window; a killed process loses nothing that Commit() returned for. Close()
// syncs. The store never reads a clock: callers pass `now` (Unix seconds).
// Thread-safety: a PageStore is safe for concurrent use by several threads
// (reads run in parallel; a commit waits for reads in flight and vice versa).
// A StoreBatch is not; it belongs to the thread that fills it.

#ifndef FRESHD_STORE_PAGE_STORE_H_
#define FRESHD_STORE_PAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "store/records.h"

namespace leveldb {
class Cache;
class DB;
class FilterPolicy;
class Logger;
}  // namespace leveldb

namespace freshd::store {

// The schema this build writes. Opening a store written with a newer schema
// fails with InvalidArgument; older schemas are migrated (none exist yet).
inline constexpr uint32_t kSchemaVersion = 1;

// A group of writes applied atomically by PageStore::Commit.
class StoreBatch {
 public:
  // Each Put returns InvalidArgument (and adds nothing) if the record is
  // over a size limit of store/records.h.
  Status PutPage(const PageRecord& page);
  Status PutHost(const HostRecord& host);
  Status AddSignal(const SignalEntry& signal);
  // A change-feed event; Commit gives it the next feed sequence number (its
  // seq field is ignored), in the batch's order.
  Status AddFeedEvent(const FeedEvent& event);
  // A page's newest text sketch (base/sketch.h encoding, at most 1 MiB),
  // kept for the feed's staleness; the empty string deletes it.
  Status PutSketch(uint64_t url_key, std::string_view url,
                   std::string_view sketch);
  // The WARC digest index: `capture` is the first response record holding
  // payload_digest (key 'W'). Commit gives it the next index sequence
  // number (its seq field is ignored) and an eviction-order entry 'X', so
  // PruneDigests drops the oldest first. InvalidArgument over the limits.
  Status PutDigestCapture(const WarcCapture& capture);
  // A page's last archived capture with a payload (key 'L'), named by the
  // revisit of its next 304.
  Status PutLastCapture(uint64_t url_key, std::string_view url,
                        const WarcCapture& capture);
  // Deletes the page's record, its sketch and its last capture.
  void DeletePage(uint64_t url_key, std::string_view url);
  void DeleteHost(std::string_view host);

  // Moves `other`'s operations after this batch's (group commit).
  void Append(StoreBatch&& other);

  // The page records this batch puts, as (url_key, url, encoded value,
  // store/records.h DecodePageValue): what a cluster node publishes to its
  // page stream after the commit.
  void ForEachPagePut(
      const std::function<void(uint64_t url_key, std::string_view url,
                               std::string_view value)>& fn) const;

  size_t operations() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  void Clear() { ops_.clear(); }

 private:
  friend class PageStore;
  struct Op {
    enum class Kind { kPut, kDelete, kSignal, kFeed, kDigest } kind;
    std::string key;  // kSignal, kFeed: empty (assigned at commit)
    // kDigest: key 'W' + digest; value ends in a one-byte seq (0) that
    // Commit replaces with the assigned one.
    std::string value;
    int64_t signal_time_us = 0;
  };
  std::vector<Op> ops_;
};

// What a full scan saw. Corrupt records are skipped only when asked.
struct ScanStats {
  uint64_t records = 0;  // decoded and passed to the callback
  uint64_t corrupt = 0;  // failed to decode (skipped)
  // LevelDB's first read error (a table block failing its checksum, a
  // missing table file); under skip_corrupt the scan went on past it and
  // the records of the damaged block(s) were not seen. Empty: none.
  std::string read_error;
};

// The file in a store directory recording what the last sync made durable
// (commit sequence number and page count), written after every sync, so a
// LevelDB log that lost its tail afterwards is noticed on the next open.
inline constexpr char kSyncMarkerFile[] = "FRESHD-SYNCED";

struct SyncMarker {
  uint64_t commit_seq = 0;  // commits made durable so far
  uint64_t pages = 0;       // the page count they left
};

// The marker in store directory `dir`: nullopt if there is none, Corruption
// if it is unreadable, IOError if it cannot be opened.
Result<std::optional<SyncMarker>> ReadSyncMarker(const std::string& dir);

class PageStore {
 public:
  // Opens (creating if missing) the LevelDB at config.path with a 10-bit
  // bloom filter and an LRU block cache of config.block_cache_bytes.
  // LevelDB runs with paranoid_checks and its info log captured (see
  // damage_log()); scans verify block checksums.
  // Errors: IOError (LevelDB could not open, e.g. locked by another process),
  // Corruption (damaged database or schema key, a log record that fails its
  // checksum, or a directory whose CURRENT file is missing while table or
  // log files remain: nothing is opened or changed then), InvalidArgument
  // (schema newer than kSchemaVersion, or a non-freshd database).
  static Result<std::unique_ptr<PageStore>> Open(const StoreConfig& config);

  ~PageStore();  // Close()s, ignoring its result
  PageStore(const PageStore&) = delete;
  PageStore& operator=(const PageStore&) = delete;

  // Applies `batch` atomically and clears it. Synced (fsync of the LevelDB
  // log) iff this is the first commit at least sync_interval_s after the
  // last sync; *synced (if given) tells which. A synced commit makes it and
  // every earlier commit durable. Errors: IOError from LevelDB (batch kept).
  Status Commit(StoreBatch& batch, double now, bool* synced = nullptr);

  // Syncs now if anything was committed since the last sync and the
  // interval has elapsed (call it from an idle tick); force=true syncs
  // regardless. *synced tells whether a sync happened.
  Status MaybeSync(double now, bool force = false, bool* synced = nullptr);

  // This installation's hash secret: 64 random bits drawn when the store was
  // created (or first opened by a freshd that knows it) and kept in the
  // store, so text hashes and shingle sketches stay comparable across
  // restarts but cannot be predicted (or collided on purpose) by a site.
  uint64_t hash_secret() const { return hash_secret_; }

  // Pages the store holds by its own count (the page count key, updated in
  // the same atomic batch as the page records it counts; a store written
  // before it existed is counted once on open). A scan that restores fewer
  // lost the difference.
  uint64_t page_count() const;

  // What Open() found damaged that a scan cannot see, one sentence each:
  // the LevelDB log lost commits that a sync had made durable (the sync
  // marker is ahead of the store), with the page count the last sync saw.
  // A finding is kept in the store (a damage note) and reported by every
  // later open until `freshd store repair` clears it.
  const std::vector<std::string>& open_damage() const { return open_damage_; }

  // The page count before the damage in open_damage() (0 if none): what a
  // full restore should give, when it is more than page_count().
  uint64_t pages_before_damage() const { return pages_before_damage_; }

  // LevelDB info-log lines since open that report damage (dropped log
  // bytes, corruption met by a compaction or a read), oldest first, at most
  // 1,000. Thread-safe.
  std::vector<std::string> damage_log() const;

  // Point reads. NotFound if absent; Corruption if the stored value fails to
  // decode; IOError from LevelDB; Unavailable after Close() (as for every
  // method below).
  Result<PageRecord> GetPage(uint64_t url_key, std::string_view url) const;
  Result<HostRecord> GetHost(std::string_view host) const;

  // "Seen this URL?" A miss is answered by the memtable and one bloom-filter
  // probe per table file that could hold the key (no data block read, in
  // the common case). Error only on IOError.
  Result<bool> ContainsPage(uint64_t url_key, std::string_view url) const;

  // Full scans in key order (pages by url_key, hosts by name, signals by
  // time then arrival). `fn` returns false to stop early. A record that does
  // not decode stops the scan with Corruption naming its key, unless
  // skip_corrupt, in which case it is counted in stats->corrupt.
  // ForEachPage is how the daemon rebuilds the scheduler's index on start.
  // REQUIRES: `fn` does not call Commit/MaybeSync/Close/PruneSignals on
  // this store (the scan holds the read lock; that would deadlock).
  Status ForEachPage(const std::function<bool(const PageRecord&)>& fn,
                     ScanStats* stats = nullptr,
                     bool skip_corrupt = false) const;
  Status ForEachHost(const std::function<bool(const HostRecord&)>& fn,
                     ScanStats* stats = nullptr,
                     bool skip_corrupt = false) const;
  // Signals with time >= since (Unix seconds), oldest first.
  Status ForEachSignal(double since,
                       const std::function<bool(const SignalEntry&)>& fn,
                       ScanStats* stats = nullptr,
                       bool skip_corrupt = false) const;

  // The change feed: sequence numbers of the oldest event kept and of the
  // newest committed (oldest = newest + 1 when none is kept; 0, 0 on a store
  // that never had one). Seqs are contiguous: events go only from the head.
  struct FeedBounds {
    uint64_t oldest = 1;
    uint64_t newest = 0;
  };
  FeedBounds feed_bounds() const;

  // Calls `fn` for events with seq > after, oldest first, at most `limit`.
  // Corruption on an event that does not decode (naming its key).
  Status ForEachFeedEvent(
      uint64_t after, size_t limit,
      const std::function<bool(const FeedEvent&)>& fn) const;

  // Deletes the oldest feed events while more than `max_events` are kept or
  // the oldest is older than `before` (Unix s), committing with `now`, at
  // most 10,000 per commit. Returns how many went.
  Result<uint64_t> PruneFeed(uint64_t max_events, double before, double now);

  // The WARC digest index: the capture first archived with `payload_digest`
  // and a page's last capture; NotFound if none, Corruption if it does not
  // decode.
  Result<WarcCapture> GetDigestCapture(std::string_view payload_digest) const;
  Result<WarcCapture> GetLastCapture(uint64_t url_key,
                                     std::string_view url) const;
  // Index entries kept (an upper bound: eviction-order entries between the
  // oldest kept and the newest assigned).
  uint64_t digest_entries() const;
  // Deletes the oldest digest index entries while more than `max_entries`
  // are kept, committing with `now`, at most 10,000 per commit. Returns how
  // many went.
  Result<uint64_t> PruneDigests(uint64_t max_entries, double now);

  // A page's sketch as PutSketch left it; NotFound if none.
  Result<std::string> GetSketch(uint64_t url_key, std::string_view url) const;

  // Deletes signal entries older than `before`, in batches of 10,000
  // committed with `now`; returns how many.
  Result<uint64_t> PruneSignals(double before, double now);

  // Syncs and closes; later calls fail with Unavailable. Idempotent.
  Status Close();

  // Compacts the whole key range (benchmarks, offline maintenance).
  void CompactAll();

 private:
  PageStore() = default;
  Status CheckSchema();
  Status LoadHashSecret();
  Status LoadCounters();
  Status LoadFeedBounds();
  Status LoadDigestBounds();
  Status WriteSyncMarker();      // REQUIRES: mu_ held exclusively, after a sync
  Status AfterSync(double now);  // REQUIRES: mu_ held exclusively

  // Shared by reads and scans, exclusive for commits, syncs and Close().
  mutable std::shared_mutex mu_;
  // Constant after Open.
  double sync_interval_s_ = 1.0;
  uint64_t hash_secret_ = 0;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::Logger> logger_;
  std::unique_ptr<leveldb::DB> db_;
  std::string path_;
  std::vector<std::string> open_damage_;
  int marker_fd_ = -1;
  // Guarded by mu_.
  bool closed_ = false;
  bool ever_synced_ = false;
  double last_sync_time_ = 0.0;
  uint64_t unsynced_commits_ = 0;
  uint64_t next_signal_seq_ = 0;
  uint64_t next_feed_seq_ = 1;      // the next event's seq
  uint64_t oldest_feed_seq_ = 1;    // the oldest event kept (= next if none)
  uint64_t next_digest_seq_ = 1;    // the next digest index entry's seq
  uint64_t oldest_digest_seq_ = 1;  // the oldest kept (= next if none)
  uint64_t page_count_ = 0;
  uint64_t commit_seq_ = 0;
  uint64_t pages_before_damage_ = 0;  // constant after Open
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_PAGE_STORE_H_
