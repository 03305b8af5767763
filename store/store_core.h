// StoreCore: the LevelDB database under every table of freshd's store, and
// what is store-wide rather than any one table's: opening (schema check and
// the migration chain, store/migrations.h), atomic commits, the sync policy
// and the sync marker, the page count and commit sequence, damage found at
// open and LevelDB's damage log, and the installation's hash secret. The
// typed tables (store/page_table.h, host_table.h, feed_log.h,
// capture_index.h, sketch_table.h) read through it and write through
// Commit; store/page_store.h is the facade the daemon holds.
//
// Commits are not fsync'ed one by one: the first commit at least
// sync_interval_s after the last sync is a sync write, so an OS crash or
// power loss loses at most that window; a killed process loses nothing that
// Commit() returned for. Close() syncs. The store never reads a clock:
// callers pass `now` (Unix seconds).
//
// Threading (the store's one rule; the tables, the facade and
// daemon/store_writer.h refer here): a StoreCore and the tables over it are
// safe for concurrent use. Reads (point reads, scans, bounds) run in
// parallel under a shared lock from any thread; Commit, MaybeSync, the
// tables' pruning, CompactAll and Close hold it exclusively, so a commit
// waits for the reads in flight and vice versa. The daemon writes from one
// thread at a time (the writer thread while it runs, the engine's thread
// before it starts and after it stops) and reads from others (the /changes
// handler, the change stream's backfill).

#ifndef FRESHD_STORE_STORE_CORE_H_
#define FRESHD_STORE_STORE_CORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "conf/config.h"

namespace leveldb {
class Cache;
class DB;
class FilterPolicy;
class Logger;
class WriteBatch;
}  // namespace leveldb

namespace freshd::store {

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

struct StoreOpenOptions {
  // Run the migration chain on a store of an older schema (the daemon).
  // false: open it as it is, for inspection (`freshd store check`): the
  // tables read every older record version, and Commit is refused.
  bool migrate = true;
};

// The writes of one commit, filled under the core's exclusive lock. Puts and
// deletes of page keys ('P') keep the store's page count.
class CommitWriter {
 public:
  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);

 private:
  friend class StoreCore;
  CommitWriter(leveldb::DB* db, leveldb::WriteBatch* batch)
      : db_(db), batch_(batch) {}
  bool PageExists(const std::string& key);

  leveldb::DB* db_;
  leveldb::WriteBatch* batch_;
  // Page keys written so far: whether each exists after the ops so far.
  std::unordered_map<std::string, bool> pages_;
  int64_t page_delta_ = 0;
};

class StoreCore {
 public:
  // Opens (creating if missing) the LevelDB at config.path with a 10-bit
  // bloom filter and an LRU block cache of config.block_cache_bytes, with
  // paranoid_checks and its info log captured (see damage_log()), then checks
  // the schema: an empty database is given kSchemaVersion, an older one is
  // migrated (options.migrate; migrations() says what ran).
  // Errors: IOError (LevelDB could not open, e.g. locked by another process),
  // Corruption (damaged database or schema key, a log record that fails its
  // checksum, or a directory whose CURRENT file is missing while table or
  // log files remain: nothing is opened or changed then; a migration step
  // that could not write), InvalidArgument (schema newer than
  // kSchemaVersion, or a non-freshd database).
  static Result<std::unique_ptr<StoreCore>> Open(
      const StoreConfig& config, const StoreOpenOptions& options = {});

  ~StoreCore();  // Close()s, ignoring its result
  StoreCore(const StoreCore&) = delete;
  StoreCore& operator=(const StoreCore&) = delete;

  // One atomic commit: `fill` adds the writes (returning an error adds
  // nothing and commits nothing), the core adds the commit sequence and page
  // count, writes, and on success runs `committed` (still under the lock:
  // where tables advance the sequences they assigned in `fill`). Synced iff
  // this is the first commit at least sync_interval_s after the last sync;
  // *synced (if given) tells which. A synced commit makes it and every
  // earlier commit durable. Errors: IOError from LevelDB (nothing applied),
  // Unavailable after Close or on a store opened without migrating; an
  // IOError writing the sync marker after a successful write (`committed`
  // ran).
  Status Commit(double now, bool* synced,
                const std::function<Status(CommitWriter&)>& fill,
                const std::function<void()>& committed = {});

  // Syncs now if anything was committed since the last sync and the
  // interval has elapsed (call it from an idle tick); force=true syncs
  // regardless. *synced tells whether a sync happened.
  Status MaybeSync(double now, bool force = false, bool* synced = nullptr);

  // Syncs and closes; later calls fail with Unavailable. Idempotent.
  Status Close();

  // Compacts the whole key range (benchmarks, offline maintenance).
  void CompactAll();

  // A shared hold on the open database, for a table's reads; the lock is
  // held while the hold lives. Unavailable after Close.
  class ReadHold {
   public:
    leveldb::DB& db() const { return *db_; }

   private:
    friend class StoreCore;
    ReadHold(std::shared_lock<std::shared_mutex> lock, leveldb::DB* db)
        : lock_(std::move(lock)), db_(db) {}
    std::shared_lock<std::shared_mutex> lock_;
    leveldb::DB* db_;
  };
  Result<ReadHold> Read() const;
  // The shared lock alone, for a table's in-memory bounds.
  std::shared_lock<std::shared_mutex> LockShared() const {
    return std::shared_lock<std::shared_mutex>(mu_);
  }
  // The database for a table's Load at open, before the store is shared.
  leveldb::DB& db_at_open() { return *db_; }

  // This installation's hash secret: 64 random bits drawn when the store was
  // created (or first opened by a freshd that knows it) and kept in the
  // store, so text hashes and shingle sketches stay comparable across
  // restarts but cannot be predicted (or collided on purpose) by a site.
  uint64_t hash_secret() const { return hash_secret_; }

  // The schema of the store as opened: kSchemaVersion, or older when opened
  // with migrate = false.
  uint64_t schema_version() const { return schema_version_; }
  // One line per migration step this open ran, oldest first.
  const std::vector<std::string>& migrations() const { return migrations_; }

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
  // 1,000.
  std::vector<std::string> damage_log() const;

 private:
  StoreCore() = default;
  Status CheckSchema(bool migrate);
  Status LoadHashSecret();
  Status LoadCounters();
  Status WriteSyncMarker();      // REQUIRES: mu_ held exclusively, after a sync
  Status AfterSync(double now);  // REQUIRES: mu_ held exclusively

  // Shared by reads and scans, exclusive for commits, syncs and Close().
  mutable std::shared_mutex mu_;
  // Constant after Open.
  double sync_interval_s_ = 1.0;
  uint64_t hash_secret_ = 0;
  uint64_t schema_version_ = 0;
  bool writable_ = true;
  std::vector<std::string> migrations_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::Logger> logger_;
  std::unique_ptr<leveldb::DB> db_;
  std::string path_;
  std::vector<std::string> open_damage_;
  uint64_t pages_before_damage_ = 0;
  int marker_fd_ = -1;
  // Guarded by mu_.
  bool closed_ = false;
  bool ever_synced_ = false;
  double last_sync_time_ = 0.0;
  uint64_t unsynced_commits_ = 0;
  uint64_t page_count_ = 0;
  uint64_t commit_seq_ = 0;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_STORE_CORE_H_
