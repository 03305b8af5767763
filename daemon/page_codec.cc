#include "daemon/page_codec.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "parse/url.h"

namespace freshd::daemon {

DecodedPage DecodePageRecord(const store::PageRecord& record) {
  DecodedPage page;
  page.meta.set_last_outcome_name(record.last_outcome);
  if (page.meta.other_outcome()) page.cold.other_outcome = record.last_outcome;
  page.cold.etag = record.etag;
  page.cold.last_modified = record.last_modified;
  if (page.cold.has_validators()) page.meta.flags |= PageMeta::kValidators;
  page.meta.set_last_modified(record.last_modified);
  page.meta.content_hash = record.content_hash;
  page.meta.last_signal_lastmod = record.last_signal_lastmod;
  page.meta.last_status =
      static_cast<int16_t>(std::clamp(record.last_status, -32768, 32767));
  page.reset = record.sched_state.empty();
  if (!page.reset) {
    Result<sched::SavedPage> decoded =
        sched::DecodeSavedPage(record.sched_state);
    if (decoded.ok()) {
      page.saved = std::move(decoded).value();
    } else {
      page.error = decoded.status();
      page.reset = true;
    }
  }
  // The removal streak is not stored: a page whose last answer was
  // 404/410 counts its consecutive failures as its tries (each a 404/410
  // unless other failures came between), and its absence as announced
  // (the first 404/410 after content wrote the event).
  if (record.last_outcome == "4xx" &&
      (record.last_status == 404 || record.last_status == 410)) {
    page.meta.gone_tries = static_cast<uint8_t>(
        std::max<int>(1, page.reset ? 1 : page.saved.state.failures));
    page.meta.flags |= PageMeta::kGoneAnnounced;
  }
  return page;
}

Status EncodePageRecord(const sched::Scheduler& scheduler, sched::PageId page,
                        std::string_view url, const PageMeta& meta,
                        const ColdFields& cold, store::PageRecord* record) {
  if (page >= scheduler.size()) {
    return Status::InvalidArgument("persist: unknown page id");
  }
  record->url = std::string(url);
  record->url_key = parse::UrlKey(url);
  record->etag = cold.etag;
  record->last_modified = cold.last_modified;
  record->last_outcome = meta.other_outcome()
                             ? cold.other_outcome
                             : std::string(meta.last_outcome());
  record->content_hash = meta.content_hash;
  record->last_signal_lastmod = meta.last_signal_lastmod;
  record->last_status = meta.last_status;
  const sched::PageState& state = scheduler.page(page);
  record->last_fetch_time = state.fetched() ? state.last_fetch : 0;
  const std::optional<sched::RateMemory> rate = scheduler.RateMemoryOf(page);
  record->sched_state = sched::EncodeSavedPage(
      scheduler.Snapshot(page), scheduler.Profiles(page),
      scheduler.RecentSignalsOf(page), rate ? &*rate : nullptr);
  return Status::OK();
}

}  // namespace freshd::daemon
