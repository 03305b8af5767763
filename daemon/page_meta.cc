#include "daemon/page_meta.h"

namespace freshd::daemon {

PageMeta PageMeta::FromRecord(const store::PageRecord& record) {
  PageMeta m;
  m.etag = record.etag;
  m.last_modified = record.last_modified;
  m.content_hash = record.content_hash;
  m.last_fetch_time = record.last_fetch_time;
  m.last_signal_lastmod = record.last_signal_lastmod;
  m.last_status = record.last_status;
  m.last_outcome = record.last_outcome;
  return m;
}

void PageMeta::ToRecord(store::PageRecord* record) const {
  record->etag = etag;
  record->last_modified = last_modified;
  record->content_hash = content_hash;
  record->last_fetch_time = last_fetch_time;
  record->last_signal_lastmod = last_signal_lastmod;
  record->last_status = last_status;
  record->last_outcome = last_outcome;
  // The sketch lives in the scheduler's saved change profiles (once).
  record->sketch.clear();
}

}  // namespace freshd::daemon
