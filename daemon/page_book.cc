#include "daemon/page_book.h"

#include <algorithm>
#include <utility>

#include "base/sketch.h"
#include "daemon/fetch_state.h"
#include "daemon/page_codec.h"
#include "parse/http_date.h"
#include "parse/url.h"

namespace freshd::daemon {
namespace {

// A fetch that says the page is no longer there (the change feed's "gone").
bool IsGone(int32_t status, std::string_view outcome) {
  return outcome == "4xx" && (status == 404 || status == 410);
}

// "Sat, 21 Nov 2026 19:40:00 GMT" -> Unix seconds, or -1.
double HttpDateOrMinus1(std::string_view value) {
  return parse::ParseHttpDate(value).value_or(-1);
}

sched::FailureClass ToFailure(const fetch::FetchResult& r) {
  using O = fetch::OutcomeClass;
  using F = sched::FailureClass;
  switch (r.outcome) {
    case O::kHttp4xx:
      return r.status == 429 ? F::kHttp5xx : F::kHttp4xx;
    case O::kHttp5xx:
      return F::kHttp5xx;
    case O::kDns:
      return F::kDns;
    case O::kTls:
      return F::kTls;
    case O::kTimeout:
      return F::kTimeout;
    case O::kProtocol:  // the host speaks no HTTP: back off like a transport
      return F::kNetwork;
    case O::kTooLarge:
      return F::kTooLarge;
    case O::kRobotsDenied:
      return F::kRobotsDenied;
    case O::kRedirectLoop:
    case O::kBadRedirect:
      return F::kRedirectLoop;
    case O::kBadContentType:
    case O::kBadUrl:
    case O::kBlockedAddress:
      return F::kHttp4xx;  // permanent for this URL: the long back-off
    default:
      return F::kNetwork;
  }
}

}  // namespace

PageBook::PageBook(sched::Scheduler* scheduler, std::string url_dir)
    : sched_(scheduler), urls_(std::move(url_dir)) {}

Result<RecoveryReport> PageBook::Restore(const store::PageStore& store,
                                         const RestoredUrlFn& on_url,
                                         const RecoveryOptions& options) {
  ReserveUrls(store.page_count());
  auto report = RebuildScheduler(
      store, sched_, &hosts_,
      [&](sched::PageId id, std::string_view url) {
        urls_.AddRestored(url);
        if (on_url) on_url(id, url);
      },
      options);
  if (!report.ok()) return report.status();
  FinishRestore(std::move(report.value().metas));
  report.value().metas = {};
  if (Status s = RestoreAliases(store); !s.ok()) return s;
  return report;
}

void PageBook::Assign(std::vector<std::string> urls,
                      std::vector<PageMeta> metas,
                      std::vector<ColdFields> cold) {
  urls_.Assign(std::move(urls));
  FinishRestore(std::move(metas));
  for (sched::PageId id = 0; id < cold.size() && id < metas_.size(); ++id) {
    if (!cold[id].has_validators() && cold[id].other_outcome.empty()) continue;
    if (cold[id].has_validators()) metas_[id].flags |= PageMeta::kValidators;
    held_[id].fields = std::move(cold[id]);
  }
}

void PageBook::FinishRestore(std::vector<PageMeta> metas) {
  metas.resize(urls_.size());
  metas_ = std::move(metas);
  held_.clear();
  committing_.clear();
  hosts_.ClearPages();
  for (sched::PageId id = 0; id < urls_.size(); ++id) {
    (void)hosts_.AddPage(sched_->page(id).host, UINT32_MAX);
  }
  page_dirty_.assign(urls_.size(), false);
  dirty_pages_.clear();
  // The content index, from the pages' hashes (ids ascending: the first
  // page of a content holds it, as it did before the restart).
  content_owner_.clear();
  if (aliases_.max() > 0) {
    for (sched::PageId id = 0; id < metas_.size(); ++id) {
      if (metas_[id].content_hash == 0) continue;
      if (content_owner_.size() >= aliases_.max()) break;
      content_owner_.emplace(ContentKey(id, metas_[id].content_hash), id);
    }
  }
}

void PageBook::Append(sched::PageId id, const std::string& url,
                      sched::HostId host, PageMeta meta) {
  (void)hosts_.AddPage(host, UINT32_MAX);
  // As id: both count the pages added (appended even if the caller did not
  // ask Find first, so the two never drift apart).
  urls_.AddRestored(url);
  metas_.push_back(std::move(meta));
  page_dirty_.push_back(false);
  MarkPage(id);
}

Result<sched::PageId> PageBook::Add(const std::string& url, sched::HostId host,
                                    double importance, uint32_t max_per_host) {
  if (hosts_.pages(host) >= max_per_host) {
    return Status::ResourceExhausted("max_urls_per_host reached");
  }
  auto id = sched_->AddUrl(host, importance);
  if (!id.ok()) return id.status();
  Append(id.value(), url, host, PageMeta());
  return id.value();
}

Result<sched::PageId> PageBook::Adopt(const store::PageRecord& record,
                                      sched::HostId host,
                                      uint32_t max_per_host) {
  if (hosts_.pages(host) >= max_per_host) {
    return Status::ResourceExhausted("max_urls_per_host reached");
  }
  DecodedPage page = DecodePageRecord(record);
  sched::SavedPage& saved = page.saved;
  saved.state.host = host;
  auto id = sched_->RestorePage(saved.state, std::move(saved.profiles),
                                std::move(saved.recent), saved.rate);
  if (!id.ok()) return id.status();
  Append(id.value(), record.url, host, std::move(page.meta));
  // Not in this node's store yet: held until its record commits here.
  if (page.cold.has_validators() || !page.cold.other_outcome.empty()) {
    held_[id.value()].fields = std::move(page.cold);
  }
  return id.value();
}

double PageBook::last_fetch_time(sched::PageId page) const {
  const sched::PageState& s = sched_->page(page);
  return s.fetched() ? s.last_fetch : 0;
}

PageBook::Fetched PageBook::RecordFetch(
    sched::PageId page, const fetch::FetchResult& r,
    const parse::PageFingerprint* fingerprint, uint64_t text_hash, double now) {
  Fetched out;
  out.observation.page = page;
  out.observation.time = now;
  PageMeta& meta = metas_[page];
  // The validators sent (held since the dispatch, or read now).
  HeldCold& held = Hold(page);
  held.in_flight = false;
  held.written = 0;
  held.fields.other_outcome.clear();
  const bool fetched_before = sched_->page(page).fetched();
  // The change feed's view, before this fetch updates the page.
  const bool was_gone = IsGone(meta.last_status, meta.last_outcome());
  const bool had_content =
      fetched_before && !was_gone &&
      (meta.last_outcome() == "ok" || meta.last_outcome() == "not-modified");
  const bool after_signal = sched_->page(page).signals > 0;
  auto feed = [&](const char* kind) -> FeedItem& {
    FeedItem& item = out.feed.emplace();
    item.event.url = urls_.url(page);
    item.event.time = now;
    item.event.kind = kind;
    item.event.status = r.status;
    item.url_key = parse::UrlKey(item.event.url);
    return item;
  };
  meta.last_status = static_cast<int16_t>(std::clamp(r.status, 0, 32767));
  meta.set_last_outcome(r.outcome);
  MarkPage(page);
  out.removal = CountStreak(&meta, r, now);

  if (r.outcome == fetch::OutcomeClass::kOk) {
    const bool first = !fetched_before;
    sched::FetchedObs obs;
    if (fingerprint != nullptr) obs.sketch = fingerprint->text.sketch;
    obs.changed = !first && text_hash != meta.content_hash;
    meta.flags &= static_cast<uint8_t>(~PageMeta::kGoneAnnounced);
    if (first || was_gone || obs.changed) {
      FeedItem& item = feed(first || was_gone ? "new" : "changed");
      item.event.text_hash = text_hash;
      // The sketch's one durable home is the store's sketch key, read and
      // written here: the staleness against the previous version now, the
      // new sketch with the next TakeBatch.
      if (fingerprint != nullptr && sketch_store_ != nullptr) {
        UnsavedSketch next{item.url_key, item.event.url,
                           EncodeSketch(fingerprint->text.sketch)};
        // A page never fetched has no sketch: no read.
        const std::string previous =
            first ? std::string()
                  : PreviousSketch(page, item.url_key, item.event.url);
        auto now_sketch = DecodeSketch(next.encoded);
        auto old_sketch = DecodeSketch(previous);
        if (!previous.empty() && now_sketch.ok() && old_sketch.ok()) {
          item.event.staleness = SketchDivergence(*old_sketch, *now_sketch);
        }
        sketches_marked_[page] = std::move(next);
      }
    } else if (after_signal) {
      FeedItem& item = feed("unchanged");
      item.event.text_hash = text_hash;
      item.event.staleness = 0;
    }
    obs.last_modified = HttpDateOrMinus1(r.last_modified);
    obs.previous_last_modified = meta.last_modified_time().value_or(-1);
    meta.content_hash = text_hash;
    held.fields.etag = r.etag;
    held.fields.last_modified = r.last_modified;
    meta.set_last_modified(r.last_modified);
    out.observation.event = std::move(obs);
    if (fingerprint != nullptr && !fingerprint->page.nofollow) {
      out.links = &fingerprint->page.links;
    }
  } else if (r.outcome == fetch::OutcomeClass::kNotModified) {
    if (!r.etag.empty()) held.fields.etag = r.etag;
    if (!r.last_modified.empty()) {
      held.fields.last_modified = r.last_modified;
      meta.set_last_modified(r.last_modified);
    }
    if (after_signal && !was_gone) {
      FeedItem& item = feed("unchanged");
      item.event.text_hash = meta.content_hash;
      item.event.staleness = 0;
    }
    out.observation.event = sched::NotModifiedObs{};
  } else {
    // One "gone" an absence: at the first 404/410 after content, else at
    // the removal of a page that had content.
    const bool announced = (meta.flags & PageMeta::kGoneAnnounced) != 0;
    if ((had_content && IsGone(r.status, meta.last_outcome())) ||
        (out.removal && fetched_before && !announced)) {
      FeedItem& item = feed("gone");
      item.event.text_hash = meta.content_hash;
      meta.flags |= PageMeta::kGoneAnnounced;
    }
    out.observation.event = sched::FailedObs{ToFailure(r)};
  }
  if (held.fields.has_validators() && !sched_->removed(page)) {
    meta.flags |= PageMeta::kValidators;
  } else {
    // Nothing to hold: the record is written without (or, for a page
    // removed while in flight, deleted).
    meta.flags &= static_cast<uint8_t>(~PageMeta::kValidators);
    held_.erase(page);
  }
  return out;
}

Result<ColdFields> PageBook::ReadCold(sched::PageId page) const {
  if (store_ == nullptr) return Status::NotFound("no store to read from");
  const std::string url = urls_.url(page);
  Result<store::PageRecord> record = store_->GetPage(parse::UrlKey(url), url);
  if (!record.ok()) return record.status();
  ColdFields cold;
  cold.etag = std::move(record.value().etag);
  cold.last_modified = std::move(record.value().last_modified);
  if (metas_[page].other_outcome()) {
    cold.other_outcome = std::move(record.value().last_outcome);
  }
  return cold;
}

PageBook::HeldCold& PageBook::Hold(sched::PageId page) {
  auto [it, inserted] = held_.try_emplace(page);
  if (!inserted) return it->second;
  PageMeta& meta = metas_[page];
  const bool has_validators = (meta.flags & PageMeta::kValidators) != 0;
  if (!has_validators && !meta.other_outcome()) return it->second;
  ++cold_reads_;
  Result<ColdFields> read = ReadCold(page);
  if (read.ok()) it->second.fields = std::move(read).value();
  if (!read.ok() || (has_validators && !it->second.fields.has_validators())) {
    // Never a wrong validator: without them the next GET is unconditional
    // and the record is written without.
    ++cold_read_failures_;
    meta.flags &= static_cast<uint8_t>(~PageMeta::kValidators);
  }
  if (!read.ok() && meta.other_outcome()) meta.set_last_outcome_name("");
  return it->second;
}

ColdFields PageBook::ValidatorsForDispatch(sched::PageId page) {
  if (page >= metas_.size() || sched_->removed(page)) return {};
  auto it = held_.find(page);
  if (it == held_.end() && (metas_[page].flags & PageMeta::kValidators) == 0) {
    return {};  // never fetched, or no validators: nothing to read
  }
  HeldCold& held = it != held_.end() ? it->second : Hold(page);
  held.in_flight = true;
  ColdFields out;
  out.etag = held.fields.etag;
  out.last_modified = held.fields.last_modified;
  return out;
}

ColdFields PageBook::cold_fields(sched::PageId page) const {
  if (page >= metas_.size()) return {};
  if (auto it = held_.find(page); it != held_.end()) return it->second.fields;
  const PageMeta& meta = metas_[page];
  if ((meta.flags & PageMeta::kValidators) == 0 && !meta.other_outcome()) {
    return {};
  }
  Result<ColdFields> read = ReadCold(page);
  return read.ok() ? std::move(read).value() : ColdFields();
}

void PageBook::Committed(bool ok) { ReleaseCommitted(ok); }

void PageBook::ReleaseCommitted(bool ok) {
  for (sched::PageId page : committing_) {
    auto it = held_.find(page);
    if (it == held_.end() || it->second.written != batches_taken_) continue;
    HeldCold& held = it->second;
    // Not committed (the store may lack them), in flight (the fetch's
    // outcome keeps them), or marked again (the next batch writes them):
    // still held.
    if (!ok || held.in_flight || page_dirty_[page]) {
      held.written = 0;
      continue;
    }
    held_.erase(it);
  }
  committing_.clear();
  // A peak (a large batch) does not leave its bucket array behind.
  if (held_.bucket_count() > 8 * (held_.size() + 64)) held_.rehash(0);
}

std::optional<RemovalReason> PageBook::CountStreak(PageMeta* meta,
                                                   const fetch::FetchResult& r,
                                                   double now) const {
  using O = fetch::OutcomeClass;
  if (IsGone(r.status, fetch::OutcomeName(r.outcome))) {
    if (meta->gone_tries < UINT8_MAX) ++meta->gone_tries;
    meta->unreachable_since = 0;  // it answered
    if (removal_.gone_after_tries > 0 &&
        meta->gone_tries >= removal_.gone_after_tries) {
      return RemovalReason::kGone;
    }
    return std::nullopt;
  }
  if (r.outcome == O::kDns || r.outcome == O::kNetwork) {
    // No HTTP answer: the unreachable clock runs from the streak's first.
    meta->gone_tries = 0;
    if (meta->unreachable_since == 0) {
      meta->unreachable_since = static_cast<uint32_t>(
          std::clamp(now, 1.0, static_cast<double>(UINT32_MAX)));
      return std::nullopt;
    }
    if (removal_.gone_after_unreachable > 0 &&
        now - meta->unreachable_since >= removal_.gone_after_unreachable) {
      return RemovalReason::kUnreachable;
    }
    return std::nullopt;
  }
  // Any other HTTP answer ends both streaks; a failure that says nothing
  // of the page (timeout, TLS, robots, a proxy's) leaves them as they are.
  if (r.status > 0) {
    meta->gone_tries = 0;
    meta->unreachable_since = 0;
  }
  return std::nullopt;
}

void PageBook::Tombstone(sched::PageId page) {
  const sched::HostId host = sched_->page(page).host;
  if (metas_[page].content_hash != 0) {
    auto it = content_owner_.find(ContentKey(page, metas_[page].content_hash));
    if (it != content_owner_.end() && it->second == page) {
      content_owner_.erase(it);
    }
  }
  sched_->Remove(page);
  urls_.Remove(page);
  hosts_.RemovePage(host);
  metas_[page] = PageMeta();
  held_.erase(page);
  sketches_marked_.erase(page);  // deleted with the page, not put back
  MarkPage(page);
}

void PageBook::Remove(sched::PageId page, RemovalReason reason) {
  if (page >= metas_.size() || sched_->removed(page)) return;
  Tombstone(page);
  ++removed_[static_cast<int>(reason)];
}

std::optional<sched::PageId> PageBook::Find(std::string_view url) const {
  if (auto id = urls_.Find(url)) return id;
  if (aliases_.size() == 0) return std::nullopt;
  const AliasTable::Alias* alias = aliases_.Find(parse::UrlKey(url));
  if (alias == nullptr || sched_->removed(alias->page)) return std::nullopt;
  return alias->page;
}

std::optional<PageBook::AliasOfUrl> PageBook::AliasOf(
    std::string_view url) const {
  if (aliases_.size() == 0 || urls_.FindExact(url)) return std::nullopt;
  const AliasTable::Alias* alias = aliases_.Find(parse::UrlKey(url));
  if (alias == nullptr) return std::nullopt;
  return AliasOfUrl{urls_.url(alias->page), alias->page, alias->reason};
}

bool PageBook::Collapse(sched::PageId page, sched::PageId target,
                        AliasReason reason) {
  if (page == target || page >= metas_.size() || target >= metas_.size() ||
      sched_->removed(page) || sched_->removed(target)) {
    return false;
  }
  const std::string url = urls_.url(page);
  const uint64_t key = parse::UrlKey(url);
  if (!aliases_.Add(key, target, reason)) return false;
  Tombstone(page);
  aliases_marked_.push_back(
      {key, url, urls_.url(target), static_cast<uint8_t>(reason)});
  ++collapsed_[static_cast<int>(reason)];
  return true;
}

uint64_t PageBook::ContentKey(sched::PageId page, uint64_t text_hash) const {
  // The host's id spread over the word (Fibonacci hashing), so that one
  // text on two hosts makes two keys.
  const uint64_t host = sched_->page(page).host + uint64_t{1};
  return text_hash ^ (host * 0x9E3779B97F4A7C15ULL);
}

std::optional<sched::PageId> PageBook::DuplicateOf(sched::PageId page,
                                                   uint64_t text_hash) {
  if (text_hash == 0 || aliases_.max() == 0 || page >= metas_.size() ||
      sched_->removed(page)) {
    return std::nullopt;
  }
  const uint64_t key = ContentKey(page, text_hash);
  auto it = content_owner_.find(key);
  if (it != content_owner_.end()) {
    const sched::PageId owner = it->second;
    if (owner == page) return std::nullopt;
    if (!sched_->removed(owner) && metas_[owner].content_hash == text_hash &&
        sched_->page(owner).host == sched_->page(page).host) {
      return owner;
    }
    it->second = page;  // the first page moved on: this one holds it now
    return std::nullopt;
  }
  if (content_owner_.size() < aliases_.max()) content_owner_.emplace(key, page);
  return std::nullopt;
}

Status PageBook::RestoreAliases(const store::PageStore& store) {
  return store.ForEachAlias(
      [&](const store::AliasRecord& a) {
        const std::optional<sched::PageId> page = urls_.Find(a.target);
        // Its URL became a page again, or its page is gone: dropped.
        if (urls_.Find(a.url) || !page ||
            a.reason > static_cast<uint8_t>(AliasReason::kDuplicate) ||
            !aliases_.Add(a.url_key, *page,
                          static_cast<AliasReason>(a.reason))) {
          aliases_dropped_.push_back(a);
        }
        return true;
      },
      /*skip_corrupt=*/true);
}

std::string PageBook::PreviousSketch(sched::PageId page, uint64_t url_key,
                                     std::string_view url) const {
  for (const auto* unsaved : {&sketches_marked_, &sketches_committing_}) {
    auto it = unsaved->find(page);
    if (it != unsaved->end()) return it->second.encoded;
  }
  auto stored = sketch_store_->GetSketch(url_key, url);
  return stored.ok() ? std::move(stored).value() : std::string();
}

bool PageBook::ConsiderDatedSignal(sched::PageId page, double changed_at) {
  // A date is considered once, when it is newer than the last one
  // considered for this page: taken as a signal if it is also newer than
  // our copy (the scheduler's rule), else counted stale (and, as the copy
  // only gets newer, stale for good). Either way the record keeps it.
  if (page >= metas_.size() || sched_->removed(page)) return false;
  PageMeta& meta = metas_[page];
  if (!sched_->page(page).fetched() || changed_at <= meta.last_signal_lastmod)
    return false;
  meta.last_signal_lastmod = changed_at;
  MarkPage(page);
  return true;
}

void PageBook::Observe(const sched::Observation& obs) {
  const sched::Scheduler::ObserveEffect effect = sched_->Observe(obs);
  if (effect.page) MarkPage(obs.page);
  if (effect.host && obs.page < sched_->size()) {
    MarkHost(sched_->page(obs.page).host);
  }
  if (effect.globals) globals_dirty_ = true;
}

void PageBook::SetHostFetchState(sched::HostId host, std::string encoded) {
  if (hosts_.SetFetchState(host, std::move(encoded))) MarkHost(host);
}

void PageBook::RecordFetchState(const fetch::CrawlerState& state) {
  for (auto& [name, host_state] : GroupByHost(state)) {
    std::optional<sched::HostId> id = hosts_.Find(name);
    if (!id) continue;  // a host with no pages (e.g. only redirected to)
    SetHostFetchState(*id, EncodeHostFetchState(host_state));
  }
}

Status PageBook::RestoreFetchState(const store::PageStore& store,
                                   RecoveryReport* report,
                                   fetch::CrawlerState* state) {
  return store.ForEachHost(
      [&](const store::HostRecord& h) {
        if (h.fetch_state.empty()) return true;
        auto decoded = DecodeHostFetchState(h.fetch_state);
        if (!decoded.ok()) {  // reported; the host starts afresh
          ++report->corrupt;
          if (report->corrupt_records.size() < 1000) {
            report->corrupt_records.push_back(
                {"host " + h.host + " fetch_state",
                 decoded.status().message()});
          }
          return true;
        }
        if (auto id = hosts_.Find(h.host)) {
          RestoreHostFetchState(*id, h.fetch_state);
        }
        if (decoded.value().gate) {
          state->hosts.push_back(*decoded.value().gate);
        }
        for (auto& r : decoded.value().robots) state->robots.push_back(r);
        return true;
      },
      nullptr, /*skip_corrupt=*/true);
}

void PageBook::MarkForRewrite(sched::PageId begin, sched::PageId end) {
  if (begin == 0) {
    for (size_t h = 0; h < hosts_.size(); ++h) {
      MarkHost(static_cast<sched::HostId>(h));
    }
    globals_dirty_ = true;
  }
  for (sched::PageId p = begin; p < end && p < metas_.size(); ++p) MarkPage(p);
}

void PageBook::MarkPage(sched::PageId page) {
  if (page >= page_dirty_.size() || page_dirty_[page]) return;
  page_dirty_[page] = true;
  dirty_pages_.push_back(page);
}

void PageBook::MarkHost(sched::HostId host) {
  if (host_dirty_.size() <= host) host_dirty_.resize(host + 1, false);
  if (host_dirty_[host]) return;
  host_dirty_[host] = true;
  dirty_hosts_.push_back(host);
}

void PageBook::TakeBatch(store::StoreBatch* batch, uint64_t* failures) {
  auto failed = [&] {
    if (failures != nullptr) ++*failures;
  };
  // The batch taken before is committed (unless Committed said so).
  ReleaseCommitted(true);
  const uint64_t batch_number = ++batches_taken_;
  static const ColdFields kNone;
  for (sched::PageId page : dirty_pages_) {
    page_dirty_[page] = false;
    if (sched_->removed(page)) {
      // Its records go; unless the URL came back as a new page (then the
      // new page's record, written after, is the URL's).
      const std::string url = urls_.url(page);
      if (!urls_.Find(url)) batch->DeletePage(parse::UrlKey(url), url);
      continue;
    }
    // The record is written whole: cold fields held, else read back.
    const PageMeta& meta = metas_[page];
    HeldCold* held = nullptr;
    if (auto it = held_.find(page); it != held_.end()) {
      held = &it->second;
    } else if ((meta.flags & PageMeta::kValidators) != 0 ||
               meta.other_outcome()) {
      held = &Hold(page);
    }
    if (!PersistPage(*sched_, page, urls_.url(page), meta,
                     held != nullptr ? held->fields : kNone, batch)
             .ok()) {
      failed();
      if (held != nullptr) held->written = 0;  // not in the store: kept
    } else if (held != nullptr) {
      held->written = batch_number;
      committing_.push_back(page);
    }
  }
  dirty_pages_.clear();
  for (sched::HostId host : dirty_hosts_) {
    host_dirty_[host] = false;
    store::HostRecord base;
    base.fetch_state = std::string(hosts_.fetch_state(host));
    if (!PersistHostOnly(*sched_, hosts_, host, std::move(base), batch).ok()) {
      failed();
    }
  }
  dirty_hosts_.clear();
  if (globals_dirty_) {
    globals_dirty_ = false;
    if (!PersistGlobals(*sched_, batch).ok()) failed();
  }
  for (const store::AliasRecord& a : aliases_marked_) batch->PutAlias(a);
  aliases_marked_.clear();
  for (const store::AliasRecord& a : aliases_dropped_) {
    batch->DeleteAlias(a.url_key, a.url);
  }
  aliases_dropped_.clear();
  // The batch taken before is committed: its sketches are the store's now.
  sketches_committing_.clear();
  for (const auto& [page, sketch] : sketches_marked_) {
    if (!batch->PutSketch(sketch.url_key, sketch.url, sketch.encoded).ok()) {
      failed();
    }
  }
  sketches_committing_.swap(sketches_marked_);
}

}  // namespace freshd::daemon
