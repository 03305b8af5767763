// PageMeta: the fetch-side durable fields of one page that the page book
// (daemon/page_book.h) keeps beside the scheduler's PageState: the
// validators sent back on the next conditional GET, the content hash a
// change is detected by, the last outcome, and the newest sitemap lastmod
// considered as a signal. Together with the scheduler's saved state they
// make the page's store::PageRecord; recovery fills them from the store, so
// dispatch never reads the store.
// Thread-safety: a plain value.

#ifndef FRESHD_DAEMON_PAGE_META_H_
#define FRESHD_DAEMON_PAGE_META_H_

#include <cstdint>
#include <string>

#include "store/records.h"

namespace freshd::daemon {

struct PageMeta {
  std::string etag;                // If-None-Match on the next fetch
  std::string last_modified;       // If-Modified-Since on the next fetch
  uint64_t content_hash = 0;       // of the visible text; 0: never fetched
  double last_fetch_time = 0;      // Unix seconds, 0: never
  double last_signal_lastmod = 0;  // Unix seconds, 0: none considered
  int32_t last_status = 0;         // HTTP status, 0: none
  std::string last_outcome;        // fetch::OutcomeName, "" before a fetch

  // The record's fetch fields from / into a store record (the URL, key and
  // scheduler state are the book's to set).
  static PageMeta FromRecord(const store::PageRecord& record);
  void ToRecord(store::PageRecord* record) const;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_META_H_
