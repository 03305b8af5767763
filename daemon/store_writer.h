// StoreWriter: the engine's writer stage (daemon/README.md): one thread that
// owns the LevelDB store and the WARC output. Jobs (a StoreBatch of records
// and the fetches to archive) are queued from the scheduler's thread; the
// writer takes every job queued so far, writes their WARC records (gzip and
// digests happen here, never on the network or scheduler thread), commits all
// their records as one LevelDB WriteBatch (group commit), syncs per
// [store] sync_interval, then reports each job's Status through its
// callback. A job's records are durable against a process crash (SIGKILL)
// once its callback ran; against power loss after the next sync.
// Change feed: a job's feed events are written in the same LevelDB batch as
// its records, after its WARC records (so an event names the file and
// offset of its capture; its staleness and the page's sketch come
// measured and written by the page book, daemon/page_book.h). Retention is
// enforced after commits (every 1,000 events or 60 s).
// WARC revisits: the writer keeps, in the same LevelDB batch as the jobs'
// records, each page's last capture with a payload (store key 'L') and,
// with dedup on (ArchivePolicy), the digest index (keys 'W'/'X': the first
// response record of each payload digest; the oldest go past
// dedup_entries + 1 %). An ok response whose payload is in the index (or
// earlier in the same group) is written as an identical-payload-digest
// revisit of it; a 304's server-not-modified revisit names the page's last
// capture. Each costs one point read (bloom-filtered on a miss).
// The queue is bounded by the caller (queued() is how far behind the writer
// is); Submit never blocks.
// Thread-safety: Submit, queued() and stats() are safe from any thread. The
// writer thread is the store's only writer while it runs (the caller writes
// before Start and after Stop) and the WARC writer's only user; other
// threads may read the store meanwhile (the store's rule,
// store/store_core.h).

#ifndef FRESHD_DAEMON_STORE_WRITER_H_
#define FRESHD_DAEMON_STORE_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "fetch/outcome.h"
#include "store/page_store.h"
#include "store/warc_writer.h"

namespace freshd::daemon {

// One fetch to archive as WARC records (daemon/warc_archive.h).
struct WarcItem {
  fetch::FetchResult result;  // with raw headers and body
  double started_unix = 0;
};

// One change-feed event to append (daemon/change_feed.h).
struct FeedItem {
  // seq and warc_* are set by the writer; staleness by the page book.
  store::FeedEvent event;
  uint64_t url_key = 0;  // parse::UrlKey(event.url)
  int warc_item = -1;    // index in WriterJob::warc of its capture; -1: none
};

// What the writer archives beyond ok/304 responses, and its dedup bound.
struct ArchivePolicy {
  uint64_t dedup_entries = 0;  // digest index bound; 0: no dedup
  bool errors = true;          // archive 4xx/5xx responses
};

// A page record as committed: store/records.h's encoded value (empty: the
// page's records were deleted, a page removed for good).
struct CommittedPage {
  uint64_t url_key = 0;
  std::string url;
  std::string value;
};
using CommittedHook = std::function<void(const std::vector<CommittedPage>&)>;
// The change-feed events a commit wrote, in seq order, each with its seq.
using FeedHook = std::function<void(const std::vector<store::FeedEvent>&)>;

struct WriterJob {
  store::StoreBatch batch;
  std::vector<WarcItem> warc;
  std::vector<FeedItem> feed;
  // Runs on the writer thread after the commit (and the WARC writes) with
  // the first error, if any. May be empty.
  std::function<void(Status)> done;
};

class StoreWriter {
 public:
  struct Stats {
    uint64_t jobs = 0;          // jobs committed
    uint64_t commits = 0;       // LevelDB batches written (group commits)
    uint64_t records = 0;       // operations committed
    uint64_t warc_records = 0;  // fetches archived
    uint64_t warc_deduped = 0;  // ok responses written as revisits
    uint64_t feed_events = 0;   // change-feed events committed
    uint64_t feed_pruned = 0;   // and dropped by retention
    uint64_t errors = 0;        // failed commits or WARC writes
    uint64_t queued = 0;        // jobs waiting now
    uint64_t queued_bytes = 0;  // their WARC payload bytes
    double busy_s = 0;          // thread CPU spent writing
  };

  // `store` must outlive the writer; `warc` may be null (no WARC output).
  // `sync_interval_s` as [store] sync_interval.
  StoreWriter(store::PageStore* store, store::WarcWriter* warc,
              double sync_interval_s, FeedConfig feed = {},
              ArchivePolicy archive = {});
  ~StoreWriter();  // Stop()s
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Runs on the writer thread after each successful commit, with the page
  // records it wrote (a cluster node publishes them). Set it before Start.
  void set_committed_hook(CommittedHook fn) { committed_hook_ = std::move(fn); }
  // Runs on the writer thread after each successful commit that wrote
  // change-feed events, with those events (a cluster node publishes them).
  // Set it before Start.
  void set_feed_hook(FeedHook fn) { feed_hook_ = std::move(fn); }

  void Start();
  // Queues `job`. After Stop, the job is committed on the caller's thread.
  void Submit(WriterJob job);
  // Commits everything queued, syncs, and joins the thread. Returns the
  // final sync's Status. Idempotent.
  Status Stop();

  size_t queued() const;
  Stats stats() const;

 private:
  void Run();
  // Writes `jobs` (WARC, then one commit); the writer thread, or the caller
  // after Stop.
  void Write(std::vector<WriterJob>& jobs);
  // Adds the jobs' feed events (and sketches) to `batch`, and to `added`
  // (if not null) those it added.
  void AddFeed(std::vector<WriterJob>& jobs,
               const std::vector<std::vector<store::WarcWritten>>& written,
               store::StoreBatch* batch, std::vector<store::FeedEvent>* added);
  void MaybePruneFeed(double now);
  // Archives the jobs' fetches, adding the capture index to `batch`.
  void Archive(std::vector<WriterJob>& jobs,
               std::vector<std::vector<store::WarcWritten>>* written,
               store::StoreBatch* batch, Status* first_error, uint64_t* records,
               uint64_t* deduped, uint64_t* errors);
  void MaybePruneDigests(double now);

  store::PageStore* const store_;
  store::WarcWriter* const warc_;
  const double sync_interval_s_;
  const FeedConfig feed_;
  const ArchivePolicy archive_;
  CommittedHook committed_hook_;
  FeedHook feed_hook_;
  // Writer thread only.
  uint64_t events_since_prune_ = 0;
  double last_prune_ = 0;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<WriterJob> queue_;  // guarded by mu_
  uint64_t queued_bytes_ = 0;    // guarded by mu_
  bool stopping_ = false;        // guarded by mu_
  bool running_ = false;         // guarded by mu_
  Stats stats_;                  // guarded by mu_ (but queued fields)
  std::thread thread_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_STORE_WRITER_H_
