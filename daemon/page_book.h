// PageBook: the single owner of every page's durable state in the daemon
// (docs/DESIGN.md "page book"): URL <-> page id, the fetch-side fields
// (PageMeta: validators, content hash, last outcome, newest lastmod
// considered), the host table (names, page counts, fetch state:
// daemon/host_book.h) and — through the Scheduler it is given — the
// scheduler state. Every write goes through one entry point per event
// (AddPage, Adopt, Restore, RecordFetch, ConsiderDatedSignal, Observe,
// SetHostFetchState); each marks what it changed, and TakeBatch then writes
// each marked record once (daemon/page_codec.h), so a page observed ten
// times between two group commits is encoded once, and a host and the
// global record only when they changed. Callers read through const
// accessors only.
// Each fact once: the last fetch time is the scheduler's
// (PageState::last_fetch); a page's sketch is the store's (sketch key),
// read and written here only (set_sketch_store): RecordFetch measures a
// new version's staleness against the previous sketch and TakeBatch writes
// the new one. Only the sketches of the last two group commits are kept in
// memory, never every page's (~500 B a page).
// Validators out of memory (issue 43 item 2): a page's ETag and
// Last-Modified (and a last outcome outside fetch::OutcomeName's set: its
// ColdFields, daemon/page_meta.h) are held here only while the page's
// record is pending commit or the page is in flight; once the batch that
// wrote them is committed (Committed, or the next TakeBatch) they leave
// memory, and recovery never loads them. ValidatorsForDispatch gives the
// conditional GET's validators: the held ones (the newest: a page fetched
// again before its record committed, or whose validators changed, never
// gets the store's older ones), else one point read of the page's store
// record (set_store) on this thread: 12-20 us a read at 1M pages on a
// loaded 2-core machine (bench/scale/README.md; the URL is also a pread,
// of the book's URL file: daemon/url_index.h). The fields read stay held
// until the fetch's record commits, so its outcome can keep them (a 304
// without validators, a failure). A read that fails (a store error, no
// record, a record without the validators it should have) gives no
// validators — an unconditional GET, never a wrong validator — and is
// counted (validator_read_failures, /status and /metrics). A page marked
// for another reason (a signal, a rewrite) whose cold fields are in the
// store has them read back by TakeBatch the same way (the record is
// written whole). A failed commit keeps its pages' fields held (the store
// may lack them) until a later commit writes them.
// Removal (issue 43 item 7): a page whose fetches answer 404/410 on
// RemovalOptions::gone_after_tries consecutive tries, or that has had no
// HTTP answer (DNS or connect failures) for gone_after_unreachable since
// the first failure of the streak, is removed for good (Remove): the
// scheduler keeps its id as a tombstone (sched/scheduler.h Remove: no
// selection work, no further fetch, not in the summary), the URL index
// forgets the URL (UrlIndex::Remove), its host counts one page fewer, its
// held validators are dropped, and the next TakeBatch deletes its store
// records (page, sketch, last capture) — so a restart, which restores only
// stored pages, does not bring it back, and the tombstone's fixed per-page
// arrays (~150 B) are freed by the next restart, not reused before: ids
// index a dozen dense arrays and the URL file is append-only. A tombstone
// is a tombstone, not a free slot.
// The change feed gets one "gone" per absence: at the first 404/410 after
// content, as before, or else (content, then other failures, then gone; or
// unreachable) at the removal; a page that never had content is removed
// without one. The event carries the URL, the time, the last status (0:
// no HTTP answer) and the last content's text hash.
// A removed URL met again (a link, a sitemap, a signal) is a new URL: it
// joins as a new page under the frontier's rules. It cannot loop faster
// than the removal takes: gone_after_tries 404/410 answers, each after the
// scheduler's 4xx back-off (max_interval), or gone_after_unreachable; each
// round leaves one tombstone until the next restart.
// The streak (PageMeta::gone_tries, unreachable_since) is not stored: a
// restart counts a page whose last answer was 404/410 as having its
// consecutive failures as tries, and restarts the unreachable clock.
// Duplicates (issue 43 item 7): a URL whose <link rel=canonical> names
// another page of its host, or whose content is another page's of its host
// (the same visible-text hash), is collapsed into that page (Collapse): it
// becomes an alias (daemon/alias_table.h: a small record, not a page; the
// Frontier decides, PageBook keeps), its page is tombstoned as a removed
// one is (not counted as removed), its page records deleted and its alias
// record written (store/alias_table.h), read back at a restart. Find
// answers an alias URL with its page (a link, a sitemap entry, a signal
// reach the page), unless that page was removed since: then the URL is
// unknown again and may come back as a page. The content index (hash and
// host -> the first page seen with it) is bounded by the same cap as the
// aliases and rebuilt at a restart from the pages' hashes.
// Not thread-safe: the scheduler's thread.

#ifndef FRESHD_DAEMON_PAGE_BOOK_H_
#define FRESHD_DAEMON_PAGE_BOOK_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "daemon/alias_table.h"
#include "daemon/host_book.h"
#include "daemon/page_meta.h"
#include "daemon/recovery.h"
#include "daemon/store_writer.h"
#include "daemon/url_index.h"
#include "fetch/outcome.h"
#include "parse/html_fingerprint.h"
#include "sched/scheduler.h"
#include "store/page_store.h"

namespace freshd::fetch {
struct CrawlerState;
}  // namespace freshd::fetch

namespace freshd::daemon {

// When a page is gone for good (see "Removal" above); 0: never.
struct RemovalOptions {
  uint32_t gone_after_tries = 0;      // consecutive 404/410 answers
  double gone_after_unreachable = 0;  // seconds without an HTTP answer
};

// Why a page was removed.
enum class RemovalReason { kGone, kUnreachable };
inline const char* RemovalReasonName(RemovalReason r) {
  return r == RemovalReason::kGone ? "gone" : "unreachable";
}

class PageBook {
 public:
  // What one completed fetch gives its caller (RecordFetch).
  struct Fetched {
    // For the scheduler, through Observe (after the caller's own counting).
    sched::Observation observation;
    // The change feed's event ("new", "changed", "unchanged" after a
    // signal, "gone"), if this fetch makes one.
    std::optional<FeedItem> feed;
    // The page's links to follow (into the caller's fingerprint), or null
    // (no HTML, a failed parse, nofollow).
    const std::vector<parse::Link>* links = nullptr;
    // The page is gone for good: the caller Removes it once the
    // observation is applied.
    std::optional<RemovalReason> removal;
  };

  // `scheduler` must outlive the book. The URLs' file goes in `url_dir`
  // (daemon/url_index.h; empty: the temporary directory).
  explicit PageBook(sched::Scheduler* scheduler, std::string url_dir = {});
  PageBook(const PageBook&) = delete;
  PageBook& operator=(const PageBook&) = delete;

  // ---- writes: one entry point per event ----

  // Rebuilds the scheduler and the book from `store` (daemon/recovery.h),
  // then `on_url` for each page (ids ascending; the URL valid during the
  // call). REQUIRES: the book and the scheduler are empty. Nothing is
  // marked. The report's metas are moved into the book.
  Result<RecoveryReport> Restore(const store::PageStore& store,
                                 const RestoredUrlFn& on_url,
                                 const RecoveryOptions& options);
  // The same from values (tests, tools): id i is urls[i] with metas[i]
  // (missing metas: never fetched) and cold[i] (missing: none), held until
  // written (a meta with kValidators and no cold fields has them in the
  // store). REQUIRES: the scheduler holds the urls.size() pages already.
  void Assign(std::vector<std::string> urls, std::vector<PageMeta> metas,
              std::vector<ColdFields> cold = {});
  // The host's fetch state as the store holds it (at start: not marked).
  void RestoreHostFetchState(sched::HostId host, std::string encoded) {
    (void)hosts_.SetFetchState(host, std::move(encoded));
  }

  // The id of host `name`, interning it (HostBook::Intern).
  Result<sched::HostId> InternHost(std::string_view name) {
    return hosts_.Intern(name);
  }

  // Adds a page for `url` (normalized) on `host` with `importance` to the
  // scheduler and the book and marks it. ResourceExhausted past
  // `max_per_host` pages on the host, or the scheduler's error.
  Result<sched::PageId> Add(const std::string& url, sched::HostId host,
                            double importance, uint32_t max_per_host);

  // Adds a page another node kept (the cluster's page stream: its record,
  // decoded here) as recovery restores one, and marks it. ResourceExhausted
  // past `max_per_host`, or the scheduler's error.
  Result<sched::PageId> Adopt(const store::PageRecord& record,
                              sched::HostId host, uint32_t max_per_host);

  // The change feed's sketches (with the feed on; null: none kept, the
  // staleness of every event unknown): a "new" or "changed" version's
  // staleness is its sketch's divergence from the page's previous sketch —
  // one not yet committed, else one point read of `store` — and TakeBatch
  // writes the new sketch to `store`'s sketch key. `store` must outlive
  // the book.
  void set_sketch_store(const store::PageStore* store) {
    sketch_store_ = store;
  }

  // A completed fetch of `page` at `now` (Unix seconds): `fingerprint` is
  // the parsed HTML (null: none or a failed parse), `text_hash` the visible
  // text's hash (0 unless ok). Updates the page's fields, marks it, and
  // returns the observation for the scheduler, the change feed's event and
  // the links. REQUIRES: page < size().
  Fetched RecordFetch(sched::PageId page, const fetch::FetchResult& result,
                      const parse::PageFingerprint* fingerprint,
                      uint64_t text_hash, double now);

  // The store a page's validators are read from once its record is
  // durable (see "Validators out of memory" above); must outlive the book.
  // Null: none read (each read counts as failed).
  void set_store(const store::PageStore* store) { store_ = store; }
  // The validators (ETag, Last-Modified) to send with the fetch of `page`
  // being dispatched: held ones, else read from the store (counted); kept
  // held until the fetch is recorded (RecordFetch) and committed. Empty
  // for a page without validators and after a failed read.
  ColdFields ValidatorsForDispatch(sched::PageId page);
  // The batch the last TakeBatch gave was committed (`ok`) or not: the
  // cold fields it wrote leave memory, or stay held. Without the call the
  // next TakeBatch takes the batch before as committed (its REQUIRES).
  void Committed(bool ok);
  // Store reads of cold fields (dispatch and TakeBatch), and those that
  // failed (an unconditional GET followed).
  uint64_t validator_reads() const { return cold_reads_; }
  uint64_t validator_read_failures() const { return cold_read_failures_; }
  // Pages whose cold fields are held in memory now.
  size_t cold_held() const { return held_.size(); }

  // When pages are removed (default: never).
  void set_removal(const RemovalOptions& options) { removal_ = options; }
  const RemovalOptions& removal() const { return removal_; }

  // Removes `page` for good (see "Removal" above) and marks it, so the
  // next TakeBatch deletes its records. Counted by reason. Removed ids:
  // nothing.
  void Remove(sched::PageId page, RemovalReason reason);
  bool removed(sched::PageId page) const { return sched_->removed(page); }
  // Pages removed since start, by reason.
  uint64_t removed_total(RemovalReason reason) const {
    return removed_[static_cast<int>(reason)];
  }

  // The cap on aliases and on the content index (0, the default: no
  // duplicate is collapsed).
  void set_max_aliases(size_t max_aliases) { aliases_.set_max(max_aliases); }
  // Collapses `page` into `target` (see "Duplicates" above): false, and
  // nothing changed, when the alias table is full (counted there), either
  // is removed, or they are the same page.
  bool Collapse(sched::PageId page, sched::PageId target, AliasReason reason);
  // The page of `page`'s host with the same content hash (non-zero), seen
  // before and still holding it; else nullopt, and `page` is indexed as
  // that content's first page (while the index has room).
  std::optional<sched::PageId> DuplicateOf(sched::PageId page,
                                           uint64_t text_hash);
  // What `url` is an alias of (its page's URL), if it is one.
  struct AliasOfUrl {
    std::string page_url;
    sched::PageId page = 0;
    AliasReason reason = AliasReason::kCanonical;
  };
  std::optional<AliasOfUrl> AliasOf(std::string_view url) const;
  const AliasTable& aliases() const { return aliases_; }
  uint64_t collapsed_total(AliasReason reason) const {
    return collapsed_[static_cast<int>(reason)];
  }

  // A signal dated `changed_at` for `page`: true if the caller should
  // signal the scheduler (the page was fetched and the date is newer than
  // the newest one considered), which the book records (and marks) so a
  // restart, or a feed dating the same change as a sitemap, does not
  // consider it again. False otherwise, nothing changed.
  bool ConsiderDatedSignal(sched::PageId page, double changed_at);

  // Applies `obs` to the scheduler and marks what it changed.
  void Observe(const sched::Observation& obs);

  // The host's fetch state (daemon/fetch_state.h encoding); marks the host
  // if it changed.
  void SetHostFetchState(sched::HostId host, std::string encoded);
  // The fetch state saved: the fetcher's export (times already in Unix
  // seconds) host by host into the host table, in daemon/fetch_state.h's
  // encoding; a host with no pages (e.g. only redirected to) is skipped;
  // each host whose state changed is marked.
  void RecordFetchState(const fetch::CrawlerState& state);
  // The fetch state stored with every host, at start: each that decodes
  // goes back into the host table (not marked) and its gate and robots.txt
  // copies into `state` (Unix seconds, as stored); one that does not decode
  // is reported in `report` (its host starts afresh). Errors: the store's.
  Status RestoreFetchState(const store::PageStore& store,
                           RecoveryReport* report, fetch::CrawlerState* state);

  // ---- reads ----

  // Before a streamed restore: room for `pages` URLs (at most the
  // scheduler's max_pages; daemon/url_index.h Reserve).
  void ReserveUrls(uint64_t pages) {
    urls_.Reserve(static_cast<size_t>(
        std::min<uint64_t>(pages, sched_->options().max_pages)));
  }
  // By the URL's 64-bit key (no read; daemon/url_index.h "Collisions"); an
  // alias URL gives its page (see "Duplicates" above).
  std::optional<sched::PageId> Find(std::string_view url) const;
  // The same, checked against the stored URL (one read on a hit).
  std::optional<sched::PageId> FindExact(std::string_view url) const {
    return urls_.FindExact(url);
  }
  // Read from the URL file (one pread; daemon/url_index.h).
  // REQUIRES: page < size().
  std::string url(sched::PageId page) const { return urls_.url(page); }
  // Every page's URL in id order, read in large chunks (no read per page).
  void ForEachUrl(
      const std::function<void(sched::PageId, std::string_view)>& fn) const {
    urls_.ForEach(fn);
  }
  UrlIndex::Urls urls() const { return urls_.urls(); }
  size_t size() const { return urls_.size(); }
  const PageMeta& meta(sched::PageId page) const { return metas_[page]; }
  // The page's cold fields now: held, else read from the store (not
  // counted; empty when the read fails). For tests and tools.
  ColdFields cold_fields(sched::PageId page) const;
  // The page's last fetch time (Unix seconds; 0: never): the scheduler's.
  double last_fetch_time(sched::PageId page) const;

  const HostBook& hosts() const { return hosts_; }
  uint32_t host_pages(sched::HostId host) const { return hosts_.pages(host); }

  // Marks pages [begin, end) — and, with begin 0, every host and the
  // globals — so the next TakeBatch rewrites them: a whole book written in
  // groups (a store rebuilt from memory; the scale bench's store).
  void MarkForRewrite(sched::PageId begin, sched::PageId end);

  // Marked pages, hosts, globals: how much the next TakeBatch writes.
  size_t marked_pages() const { return dirty_pages_.size(); }
  bool marked() const {
    return !dirty_pages_.empty() || !dirty_hosts_.empty() || globals_dirty_;
  }

  // Adds every marked record and the new sketches to `batch` (scheduler
  // state encoded now) and clears the marks. A record over the store's
  // limits is left out and counted in *failures (if given); the rest are
  // written. REQUIRES: the batch taken before was committed or reported
  // (Committed; the group commit has one job at the writer at a time):
  // until the next call its sketches and cold fields are still read from
  // memory.
  void TakeBatch(store::StoreBatch* batch, uint64_t* failures = nullptr);

 private:
  void FinishRestore(std::vector<PageMeta> metas);
  // The page's cold fields as the store holds them; an error when the
  // store is not set, fails or has no record.
  Result<ColdFields> ReadCold(sched::PageId page) const;
  // The page's cold fields, held: found, or read from the store when its
  // meta says it has some (counted; a failed read leaves it without).
  struct HeldCold;
  HeldCold& Hold(sched::PageId page);
  // The cold fields the batch being committed wrote: dropped (ok) or kept.
  void ReleaseCommitted(bool ok);
  // The aliases `store` holds whose URL is no page and whose page is
  // known (the others are deleted at the next TakeBatch).
  Status RestoreAliases(const store::PageStore& store);
  // Takes `page` out of the scheduler, the URL index and its host (Remove
  // and Collapse), and marks it.
  void Tombstone(sched::PageId page);
  uint64_t ContentKey(sched::PageId page, uint64_t text_hash) const;
  // Appends the page the scheduler just gave `id` and marks it.
  void Append(sched::PageId id, const std::string& url, sched::HostId host,
              PageMeta meta);
  // Counts the fetch `r` into the page's removal streaks; the reason when
  // it is gone for good.
  std::optional<RemovalReason> CountStreak(PageMeta* meta,
                                           const fetch::FetchResult& r,
                                           double now) const;
  void MarkPage(sched::PageId page);
  void MarkHost(sched::HostId host);
  // The page's sketch before this fetch (base/sketch.h encoding; empty:
  // none): the newest not yet committed, else the store's.
  std::string PreviousSketch(sched::PageId page, uint64_t url_key,
                             std::string_view url) const;

  // A sketch the store does not hold yet.
  struct UnsavedSketch {
    uint64_t url_key = 0;
    std::string url;
    std::string encoded;
  };

  sched::Scheduler* const sched_;
  UrlIndex urls_;
  std::vector<PageMeta> metas_;  // by page id
  HostBook hosts_;
  std::vector<sched::PageId> dirty_pages_;
  std::vector<bool> page_dirty_;  // by page id
  std::vector<sched::HostId> dirty_hosts_;
  std::vector<bool> host_dirty_;  // by host id
  bool globals_dirty_ = false;
  RemovalOptions removal_;
  uint64_t removed_[2] = {0, 0};  // by RemovalReason
  AliasTable aliases_;
  uint64_t collapsed_[2] = {0, 0};  // by AliasReason
  // Content hash mixed with the host -> the first page seen with it.
  std::unordered_map<uint64_t, sched::PageId> content_owner_;
  // Alias records to write, and to delete, with the next TakeBatch.
  std::vector<store::AliasRecord> aliases_marked_;
  std::vector<store::AliasRecord> aliases_dropped_;
  const store::PageStore* sketch_store_ = nullptr;
  // Sketches recorded since the last TakeBatch, and those of the batch it
  // took (being committed); by page.
  std::unordered_map<sched::PageId, UnsavedSketch> sketches_marked_;
  std::unordered_map<sched::PageId, UnsavedSketch> sketches_committing_;
  // Cold fields in memory (see "Validators out of memory"), by page.
  struct HeldCold {
    ColdFields fields;
    uint64_t written = 0;    // the TakeBatch that wrote them; 0: none yet
    bool in_flight = false;  // dispatched, not yet recorded
  };
  std::unordered_map<sched::PageId, HeldCold> held_;
  // The pages whose cold fields the batch being committed wrote, and its
  // TakeBatch number.
  std::vector<sched::PageId> committing_;
  uint64_t batches_taken_ = 0;
  const store::PageStore* store_ = nullptr;
  uint64_t cold_reads_ = 0;
  uint64_t cold_read_failures_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_BOOK_H_
