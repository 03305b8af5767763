// The one codec between a page's store::PageRecord and the daemon's
// in-memory state of that page: the scheduler's SavedPage (sched_state), the
// page book's PageMeta (content hash, last status and outcome code, newest
// lastmod considered, whether it has validators) and the ColdFields the
// book keeps out of memory once the record is durable (the validators, an
// outcome outside the fixed set). Recovery, the cluster's page replay
// and the page book's group commit all go through here, so a field is
// added or dropped in one file.
//
// Each fact once: the last fetch time lives in the scheduler's PageState
// (last_fetch, inside sched_state), which the scheduler needs for every
// value it computes; the record's last_fetch_time is derived from it on
// encode (0: never fetched) for the store's own readers (store trace) and
// ignored on decode. The sketch is not in the record: its one durable home
// is the store's sketch key (PageStore::PutSketch / GetSketch).
// Thread-safety: free functions over values; the Scheduler overload reads
// the scheduler, so it runs on the scheduler's thread.

#ifndef FRESHD_DAEMON_PAGE_CODEC_H_
#define FRESHD_DAEMON_PAGE_CODEC_H_

#include <string_view>

#include "base/status.h"
#include "daemon/page_meta.h"
#include "sched/scheduler.h"
#include "sched/state_codec.h"
#include "store/records.h"

namespace freshd::daemon {

struct DecodedPage {
  sched::SavedPage saved;  // host is the caller's to set (ids are local)
  PageMeta meta;
  ColdFields cold;  // recovery drops them (the store holds them)
  // The record had no scheduler state, or one that did not decode
  // (`error`): the page restarts as never fetched.
  bool reset = false;
  Status error;
};

// Decodes `record`'s scheduler state and fetch fields.
DecodedPage DecodePageRecord(const store::PageRecord& record);

// Fills `record` (url, url_key, sched_state, fetch fields, last_fetch_time)
// for `page` of `scheduler` with `meta` and `cold` (its other_outcome is
// the record's last_outcome when meta's code is "other"). InvalidArgument
// for an unknown page id.
[[nodiscard]] Status EncodePageRecord(const sched::Scheduler& scheduler,
                                      sched::PageId page, std::string_view url,
                                      const PageMeta& meta,
                                      const ColdFields& cold,
                                      store::PageRecord* record);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_CODEC_H_
