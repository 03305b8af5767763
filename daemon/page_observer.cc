#include "daemon/page_observer.h"

#include <algorithm>

#include "parse/url.h"

namespace freshd::daemon {
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
  for (int c = 0; c <= static_cast<int>(fetch::kLastOutcomeClass); ++c) {
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
  const parse::PageFingerprint* fingerprint =
      parsed.fingerprint && parsed.fingerprint->ok()
          ? &parsed.fingerprint->value()
          : nullptr;
  PageBook::Fetched fetched =
      book_->RecordFetch(page, r, fingerprint, parsed.text_hash, now);
  std::optional<FeedItem>& event = fetched.feed;
  if (r.outcome == fetch::OutcomeClass::kOk ||
      r.outcome == fetch::OutcomeClass::kNotModified) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
  } else if (r.outcome == fetch::OutcomeClass::kRobotsDenied) {
    ++robots_denied_total_;
  }
  book_->Observe(fetched.observation);
  // Gone for good (PageBook "Removal"): after the observation, so that the
  // tombstone ignores nothing it should have seen.
  if (fetched.removal) book_->Remove(page, *fetched.removal);
  // Last: adding pages grows the book.
  if (fetched.links != nullptr) {
    const sched::HostId host = sched_->page(page).host;
    for (const auto& link : *fetched.links) {
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
  // Duplicate URLs collapse (Frontier::Collapse): after the links, which an
  // alias's page still gives.
  if (r.outcome == fetch::OutcomeClass::kOk && !fetched.removal) {
    frontier_->Collapse(page, fingerprint ? fingerprint->page.canonical : "",
                        parsed.text_hash, now);
  }
  if (!r.raw_headers.empty() || !r.redirect_hops.empty()) {
    committer_->AddWarc(std::move(r), started_unix, event ? &*event : nullptr);
  }
  if (event && options_.change_feed) committer_->AddFeed(std::move(*event));
}

}  // namespace freshd::daemon
