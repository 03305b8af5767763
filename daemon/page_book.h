// PageBook: the single owner of every page's durable state in the daemon
// (docs/DESIGN.md "page book"): URL <-> page id, the fetch-side fields
// (PageMeta: validators, content hash, last outcome, newest lastmod
// considered), each host's name <-> id and fetch state, and — through the
// Scheduler it is given — the scheduler state. Whatever changes a page, a host
// or the global statistics marks it here (Mark*, or Note with what
// Scheduler::Observe returned); TakeBatch then writes each marked record
// once, so a page observed ten times between two group commits is encoded
// once, and a host and the global record only when they changed.
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
#include <vector>

#include "base/status.h"
#include "daemon/host_table.h"
#include "daemon/page_meta.h"
#include "daemon/url_index.h"
#include "sched/scheduler.h"
#include "sched/state_codec.h"
#include "store/page_store.h"

namespace freshd::daemon {

class PageBook {
 public:
  // `scheduler` must outlive the book. The URLs' file goes in `url_dir`
  // (daemon/url_index.h; empty: the temporary directory).
  explicit PageBook(sched::Scheduler* scheduler, std::string url_dir = {});
  PageBook(const PageBook&) = delete;
  PageBook& operator=(const PageBook&) = delete;

  // After recovery (daemon/recovery.h): id i is urls[i] with metas[i]
  // (missing metas: never fetched). Nothing is marked.
  void Assign(std::vector<std::string> urls, std::vector<PageMeta> metas);
  // The same streamed, as recovery reads the store: RestoreUrl for ids 0,
  // 1, 2, … in order, then FinishRestore with the metas. REQUIRES: the
  // book was empty before the first RestoreUrl.
  void RestoreUrl(std::string_view url) { urls_.AddRestored(url); }
  // Before the RestoreUrl calls: room for `pages` URLs (at most the
  // scheduler's max_pages; daemon/url_index.h Reserve).
  void ReserveUrls(uint64_t pages) {
    urls_.Reserve(static_cast<size_t>(
        std::min<uint64_t>(pages, sched_->options().max_pages)));
  }
  void FinishRestore(std::vector<PageMeta> metas);

  // Adds a page for `url` (normalized) on `host` with `importance` to the
  // scheduler and the book and marks it. ResourceExhausted past
  // `max_per_host` pages on the host, or the scheduler's error.
  Result<sched::PageId> Add(const std::string& url, sched::HostId host,
                            double importance, uint32_t max_per_host);

  // Adds a page another node kept (the cluster's page stream) with its
  // saved scheduler state and metadata, as recovery restores one, and marks
  // it. ResourceExhausted past `max_per_host`, or the scheduler's error.
  Result<sched::PageId> Adopt(const std::string& url, sched::HostId host,
                              sched::SavedPage saved, PageMeta meta,
                              uint32_t max_per_host);

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
  PageMeta& meta(sched::PageId page) { return metas_[page]; }
  const PageMeta& meta(sched::PageId page) const { return metas_[page]; }

  HostTable& hosts() { return hosts_; }
  const HostTable& hosts() const { return hosts_; }
  uint32_t host_pages(sched::HostId host) const {
    return host < host_pages_.size() ? host_pages_[host] : 0;
  }
  // The host's fetch state (daemon/fetch_state.h encoding), kept and written
  // with its record; setting it marks the host.
  void SetHostFetchState(sched::HostId host, std::string encoded);
  // The same without marking (what the store already holds, at start).
  void RestoreHostFetchState(sched::HostId host, std::string encoded);

  void MarkPage(sched::PageId page);
  void MarkHost(sched::HostId host);
  void MarkGlobals() { globals_dirty_ = true; }
  // Marks what one observation of `page` changed.
  void Note(sched::PageId page, const sched::Scheduler::ObserveEffect& effect);

  // Marked pages, hosts, globals: how much the next TakeBatch writes.
  size_t marked_pages() const { return dirty_pages_.size(); }
  bool marked() const {
    return !dirty_pages_.empty() || !dirty_hosts_.empty() || globals_dirty_;
  }

  // Adds every marked record to `batch` (scheduler state encoded now) and
  // clears the marks. A record over the store's limits is left out and
  // counted in *failures (if given); the rest are written.
  void TakeBatch(store::StoreBatch* batch, uint64_t* failures = nullptr);

 private:
  sched::Scheduler* const sched_;
  UrlIndex urls_;
  std::vector<PageMeta> metas_;  // by page id
  HostTable hosts_;
  std::vector<uint32_t> host_pages_;           // by host id
  std::vector<std::string> host_fetch_state_;  // by host id, as stored
  std::vector<sched::PageId> dirty_pages_;
  std::vector<bool> page_dirty_;  // by page id
  std::vector<sched::HostId> dirty_hosts_;
  std::vector<bool> host_dirty_;  // by host id
  bool globals_dirty_ = false;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_BOOK_H_
