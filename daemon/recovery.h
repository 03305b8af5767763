// Scheduler state <-> store: what the daemon writes after each observation
// (PersistPage / PersistHost into one store::StoreBatch) and how it rebuilds
// its Scheduler from the store on start (RebuildScheduler).
//
// Encodings are sched/state_codec.h's: PageRecord::sched_state is a
// SavedPage (PageState + change profiles + the signal policies' recent
// signal times), HostRecord::pooled_estimates a HostStats; the host record
// named kGlobalStatsHost holds SavedGlobals (the global pooled statistics,
// the scheduler's implied threshold and the cached host-rate spread). Host ids
// and page ids are process-local: the rebuild re-interns host names
// (HostBook) and assigns page ids densely in store order (by url_key),
// returning the id -> URL map.
// Corrupt records are skipped and reported with their key, never dropped
// silently (see RecoveryOptions). Not thread-safe: the scheduler's thread.

#ifndef FRESHD_DAEMON_RECOVERY_H_
#define FRESHD_DAEMON_RECOVERY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "daemon/host_book.h"
#include "daemon/page_meta.h"
#include "sched/scheduler.h"
#include "store/page_store.h"

namespace freshd::daemon {

// Not a valid authority, so it never names a real host.
inline constexpr std::string_view kGlobalStatsHost = "*";

// Adds `page`'s record (daemon/page_codec.h: `meta`, `cold` and the
// scheduler's saved state, url = `url` normalized) to `batch`.
// InvalidArgument (nothing added) for an unknown page id or a record over
// the store's limits.
Status PersistPage(const sched::Scheduler& scheduler, sched::PageId page,
                   std::string_view url, const PageMeta& meta,
                   const ColdFields& cold, store::StoreBatch* batch);

// Adds the host's record (`base` carries its robots and politeness fields;
// host = hosts.Name(host) and pooled_estimates are set here; empty estimates
// if the pool has no statistics for it) and the global record (SavedGlobals),
// since every host observation also moves the global statistics.
// InvalidArgument (nothing added) for an id the table does not know.
Status PersistHost(const sched::Scheduler& scheduler, const HostBook& hosts,
                   sched::HostId host, store::HostRecord base,
                   store::StoreBatch* batch);
// The two halves of PersistHost, for a caller that writes many hosts and the
// global record once per batch (the page book's group commit).
Status PersistHostOnly(const sched::Scheduler& scheduler, const HostBook& hosts,
                       sched::HostId host, store::HostRecord base,
                       store::StoreBatch* batch);
Status PersistGlobals(const sched::Scheduler& scheduler,
                      store::StoreBatch* batch);

// How far a running rebuild has come, for another thread to read (the
// status endpoint's `recovering` answer, daemon/status_routes.h): written by
// the rebuilding thread, read by any; every field an atomic (relaxed
// counters: no ordering between them is promised).
struct RecoveryProgress {
  std::atomic<double> started_unix{0};      // set by whoever starts recovery
  std::atomic<uint64_t> expected_pages{0};  // RecoveryReport::expected_pages
  std::atomic<uint64_t> hosts_restored{0};
  std::atomic<uint64_t> pages_restored{0};  // pages + pages_reset so far
  // After the store, the start adds the seeds file's URLs (cli/cmd_run.cc)
  // before the loop serves: set while it does, with the lines read so far
  // and the file's count.
  std::atomic<bool> adding_seeds{false};
  std::atomic<uint64_t> seeds_read{0};
  std::atomic<uint64_t> seeds_total{0};
};

inline constexpr uint64_t kProgressEvery = 1024;

struct RecoveryOptions {
  // false: a record that does not decode is skipped and reported; a page
  // whose scheduler state is unreadable keeps its URL and restarts as never
  // fetched. true: the first one aborts the rebuild with Corruption.
  bool abort_on_corrupt = false;
  size_t max_reported = 1000;  // corrupt records listed (all are counted)
  // Updated as the rebuild runs (every kProgressEvery pages), if not null.
  RecoveryProgress* progress = nullptr;
  // The scheduler's clock. The pages are restored in bulk (Scheduler::
  // BeginRestore) and indexed for selection once they are all in: with a
  // clock, by starting the first horizon at clock() then (the full index
  // build is part of the recovery, not of the first Select); without, at
  // the first Select.
  std::function<double()> clock;
};

struct CorruptRecord {
  std::string key;    // "page <url>", "host <name>" or "store <kind>"
  std::string error;  // the decoder's message
};

struct RecoveryReport {
  // The store's own page count (store::PageStore::page_count): what a full
  // restore gives; pages + pages_reset short of it were lost to damage.
  uint64_t expected_pages = 0;
  uint64_t pages = 0;        // pages restored with their saved state
  uint64_t pages_reset = 0;  // pages restored as never fetched (no/bad state)
  uint64_t hosts = 0;        // hosts whose statistics were restored
  bool global_restored = false;
  // The scheduler's implied threshold when the global record was written
  // (0 if none); the rebuild puts it back (Scheduler::RestoreThreshold).
  double threshold = 0;
  uint64_t corrupt = 0;  // records that did not decode (store or state)
  std::vector<CorruptRecord> corrupt_records;  // the first max_reported
  // Damage the store saw that no record names, one sentence each: a
  // LevelDB log that lost synced commits (PageStore::open_damage), blocks
  // skipped by the scans, LevelDB's own log lines about damage.
  std::vector<std::string> store_damage;
  // The schema migrations the store's open ran, one line each
  // (PageStore::migrations, store/migrations.h).
  std::vector<std::string> store_migrations;
  // expected_pages - pages - pages_reset, or 0.
  uint64_t pages_lost() const {
    return expected_pages > pages + pages_reset
               ? expected_pages - pages - pages_reset
               : 0;
  }
  // Per page id: the record's in-memory fetch fields (content hash, last
  // outcome code, newest lastmod considered, whether it has validators),
  // which the page book keeps beside the scheduler (daemon/page_book.h
  // moves the vector out). The validator strings are not loaded: the book
  // reads them from the store when the page is dispatched.
  std::vector<PageMeta> metas;
};

// Called for each restored page with its id (ids ascend) and URL, valid
// during the call only: the caller keeps the URL where it lives (the page
// book's UrlIndex) with no transient copy of every URL.
using RestoredUrlFn =
    std::function<void(sched::PageId id, std::string_view url)>;

// Scans store hosts first (interning every host name into `hosts` with its
// stored fetch state, and restoring its statistics into
// scheduler->mutable_hosts()), then pages
// (each restored with Scheduler::RestorePage, then on_url(id, its URL)),
// in bulk: see RecoveryOptions::clock. Errors: the store's (IOError,
// Unavailable), ResourceExhausted from the scheduler or the host table,
// Corruption under abort_on_corrupt. The scheduler may hold part of the store
// after an error.
Result<RecoveryReport> RebuildScheduler(const store::PageStore& store,
                                        sched::Scheduler* scheduler,
                                        HostBook* hosts,
                                        const RestoredUrlFn& on_url,
                                        const RecoveryOptions& options = {});
// The same with (*urls)[id] = its URL.
// REQUIRES: scheduler->size() == urls->size() (normally both empty).
Result<RecoveryReport> RebuildScheduler(const store::PageStore& store,
                                        sched::Scheduler* scheduler,
                                        HostBook* hosts,
                                        std::vector<std::string>* urls,
                                        const RecoveryOptions& options = {});

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_RECOVERY_H_
