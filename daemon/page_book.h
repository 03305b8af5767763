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
// Dispatch reads validators from here: no store read on the dispatch path;
// the URL itself is one pread of the book's URL file (daemon/url_index.h:
// the URL bytes are in the OS page cache, not the process).
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
  // (missing metas: never fetched). REQUIRES: the scheduler holds the
  // urls.size() pages already.
  void Assign(std::vector<std::string> urls, std::vector<PageMeta> metas);
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
  // By the URL's 64-bit key (no read; daemon/url_index.h "Collisions").
  std::optional<sched::PageId> Find(std::string_view url) const {
    return urls_.Find(url);
  }
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
  // written. REQUIRES: the batch taken before was committed (the group
  // commit has one job at the writer at a time): until the next call its
  // sketches are still read from memory.
  void TakeBatch(store::StoreBatch* batch, uint64_t* failures = nullptr);

 private:
  void FinishRestore(std::vector<PageMeta> metas);
  // Appends the page the scheduler just gave `id` and marks it.
  void Append(sched::PageId id, const std::string& url, sched::HostId host,
              PageMeta meta);
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
  const store::PageStore* sketch_store_ = nullptr;
  // Sketches recorded since the last TakeBatch, and those of the batch it
  // took (being committed); by page.
  std::unordered_map<sched::PageId, UnsavedSketch> sketches_marked_;
  std::unordered_map<sched::PageId, UnsavedSketch> sketches_committing_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_BOOK_H_
