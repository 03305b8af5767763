// A change trace (docs/traces.md) exported from a store's change feed: the
// changes freshd itself saw between its fetches, so an operator without a
// git history can replay or plan from their own crawl.
//
// The trace is *censored* and says so: every row carries `observed=fetch`,
// meaning its time is when a fetch saw the event, not when it happened (a
// change happened some time since the page's previous fetch; several
// changes between two fetches are one row; a page is known from its first
// fetch). Columns: url,time,event,observed. Feed events map as
//   "new"       -> create (first content, or content again after "gone")
//   "changed"   -> change
//   "gone"      -> delete
//   "unchanged" -> no row
// and every page fetched at least once with no row from the feed gets one
// row with an empty time (seen, never seen changing). Pages never fetched
// are left out. The feed keeps only its newest events (retention): the
// stats say which span it covered.
// Thread-safety: reads `store` through its thread-safe scans; the stream
// belongs to the caller's thread.

#ifndef FRESHD_STORE_TRACE_EXPORT_H_
#define FRESHD_STORE_TRACE_EXPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/page_store.h"

namespace freshd::store {

struct TraceExportStats {
  uint64_t feed_events = 0;   // feed events read
  uint64_t rows = 0;          // rows written (header excluded)
  uint64_t static_pages = 0;  // rows with an empty time
  uint64_t first_seq = 0;     // feed span read (0, 0: the feed was empty)
  uint64_t last_seq = 0;
  double first_time = 0;  // Unix seconds of the first and last feed event
  double last_time = 0;
};

// RFC 4180 field: quoted (with doubled quotes) iff it holds , " CR or LF.
std::string CsvField(std::string_view s);

// Writes the trace to `out`. Corruption if a feed event or page record does
// not decode, IOError if `out` fails.
[[nodiscard]] Status ExportTrace(const PageStore& store, std::ostream& out,
                                 TraceExportStats* stats);

}  // namespace freshd::store

#endif  // FRESHD_STORE_TRACE_EXPORT_H_
