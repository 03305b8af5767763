#include "daemon/page_observer.h"

#include <algorithm>

#include "base/sketch.h"
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

PageObserver::PageObserver(Options options, PageBook* book,
                           sched::Scheduler* sched, Frontier* frontier,
                           SignalIntake* intake, GroupCommitter* committer,
                           RouteAway route_away)
    : options_(options),
      book_(book),
      sched_(sched),
      frontier_(frontier),
      intake_(intake),
      committer_(committer),
      route_away_(std::move(route_away)) {
  // Every outcome class is counted from zero, so /metrics shows each from
  // the start (a rate() over a series that appears late misses its first).
  for (int c = 0; c <= static_cast<int>(fetch::OutcomeClass::kProtocol); ++c) {
    outcomes_.emplace(
        std::string(fetch::OutcomeName(static_cast<fetch::OutcomeClass>(c))),
        0);
  }
}

void PageObserver::CountOutcome(std::string_view name) {
  auto it = outcomes_.find(name);
  if (it == outcomes_.end()) {
    outcomes_.emplace(std::string(name), 1);
  } else {
    ++it->second;
  }
}

size_t PageObserver::FetchesInLastMinute(double now) const {
  recent_fetches_.erase(recent_fetches_.begin(),
                        std::lower_bound(recent_fetches_.begin(),
                                         recent_fetches_.end(), now - 60));
  return recent_fetches_.size();
}

void PageObserver::Observe(sched::PageId page, fetch::FetchResult r,
                           Parsed parsed, double started_unix, double now) {
  CountOutcome(fetch::OutcomeName(r.outcome));
  PageMeta& meta = book_->meta(page);
  // The change feed's view, before this fetch updates the page.
  const bool was_gone = IsGone(meta.last_status, meta.last_outcome());
  const bool had_content =
      meta.last_fetch_time != 0 && !was_gone &&
      (meta.last_outcome() == "ok" || meta.last_outcome() == "not-modified");
  const bool after_signal = sched_->page(page).signals > 0;
  std::optional<FeedItem> event;
  auto feed = [&](const char* kind) {
    event.emplace();
    event->event.url = book_->url(page);
    event->event.time = now;
    event->event.kind = kind;
    event->event.status = r.status;
    event->url_key = parse::UrlKey(event->event.url);
  };
  meta.last_status = r.status;
  meta.set_last_outcome(fetch::OutcomeName(r.outcome));
  book_->MarkPage(page);

  if (r.outcome == fetch::OutcomeClass::kOk) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
    const bool first = meta.last_fetch_time == 0;
    sched::FetchedObs obs;
    const uint64_t hash = parsed.text_hash;
    const parse::PageFingerprint* fingerprint = nullptr;
    if (parsed.fingerprint && parsed.fingerprint->ok()) {
      fingerprint = &parsed.fingerprint->value();
      obs.sketch = fingerprint->text.sketch;
    }
    obs.changed = !first && hash != meta.content_hash;
    if (first || was_gone || obs.changed) {
      feed(first || was_gone ? "new" : "changed");
      event->event.text_hash = hash;
      if (fingerprint != nullptr) {
        event->sketch = EncodeSketch(fingerprint->text.sketch);
      }
    } else if (after_signal) {
      feed("unchanged");
      event->event.text_hash = hash;
      event->event.staleness = 0;
    }
    obs.last_modified = HttpDateOrMinus1(r.last_modified);
    obs.previous_last_modified = HttpDateOrMinus1(meta.last_modified());
    meta.content_hash = hash;
    meta.set_etag(r.etag);
    meta.set_last_modified(r.last_modified);
    meta.last_fetch_time = now;
    book_->Note(page, sched_->Observe({page, now, std::move(obs)}));
    // Last: adding pages grows the book (`meta` is not used after this).
    if (fingerprint != nullptr && !fingerprint->page.nofollow) {
      const sched::HostId host = sched_->page(page).host;
      for (const auto& link : fingerprint->page.links) {
        if (link.kind == parse::LinkKind::kFeed) {
          if (options_.site_feeds) intake_->NoteSiteFeed(link.url, host);
          continue;
        }
        if (link.kind != parse::LinkKind::kAnchor || link.nofollow) continue;
        if (!route_away_ ||
            !route_away_(link.url, cluster::WorkItem::Kind::kLink, 1.0)) {
          frontier_->AddUrl(link.url, 1.0, false, now);
        }
      }
    }
  } else if (r.outcome == fetch::OutcomeClass::kNotModified) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
    if (!r.etag.empty()) meta.set_etag(r.etag);
    if (!r.last_modified.empty()) meta.set_last_modified(r.last_modified);
    meta.last_fetch_time = now;
    if (after_signal && !was_gone) {
      feed("unchanged");
      event->event.text_hash = meta.content_hash;
      event->event.staleness = 0;
    }
    book_->Note(page, sched_->Observe({page, now, sched::NotModifiedObs{}}));
  } else {
    if (had_content && IsGone(r.status, meta.last_outcome())) {
      feed("gone");
      event->event.text_hash = meta.content_hash;
    }
    if (r.outcome == fetch::OutcomeClass::kRobotsDenied) ++robots_denied_total_;
    book_->Note(page,
                sched_->Observe({page, now, sched::FailedObs{ToFailure(r)}}));
  }
  if (!r.raw_headers.empty() || !r.redirect_hops.empty()) {
    committer_->AddWarc(std::move(r), started_unix, event ? &*event : nullptr);
  }
  if (event && options_.change_feed) committer_->AddFeed(std::move(*event));
}

}  // namespace freshd::daemon
