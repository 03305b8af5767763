// PageObserver: the observe step of a page's path (fetch -> parse ->
// observe -> write). A page's fetch, parsed, is recorded by the page book
// (PageBook::RecordFetch: its fields, marked for the next commit) and
// becomes one Observation to the scheduler, the change-feed item (new,
// changed, unchanged after a signal, gone; the book decides it from its
// fields before this fetch) and the WARC item, both queued with the
// GroupCommitter; the page's anchors go to
// the Frontier (or, clustered, to their owners through `route_away`) and
// its feed links to SignalIntake. A page the book finds gone for good
// (PageBook::Fetched::removal) is removed once observed. It counts the outcomes
// (/status pages_fetched_total, robots_denied_total, errors; /metrics
// freshd_fetch_outcomes_total) and the completions of the last minute.
// It reaches the other parts only through what it is given: never the
// engine.
// Thread: the engine's (scheduler's) thread.

#ifndef FRESHD_DAEMON_PAGE_OBSERVER_H_
#define FRESHD_DAEMON_PAGE_OBSERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/work_router.h"
#include "daemon/frontier.h"
#include "daemon/group_committer.h"
#include "daemon/page_book.h"
#include "daemon/signal_intake.h"
#include "fetch/outcome.h"
#include "parse/html_fingerprint.h"
#include "sched/scheduler.h"

namespace freshd::daemon {

class PageObserver {
 public:
  // What the parse job hands back for a fetched body: an HTML body's
  // fingerprint, and the text hash of any body (the fingerprint's for HTML).
  struct Parsed {
    std::optional<Result<parse::PageFingerprint>> fingerprint;
    uint64_t text_hash = 0;
  };
  struct Options {
    bool site_feeds = true;   // [site_feeds] enabled: feed links are kept
    bool change_feed = true;  // [feed] enabled: change-feed items queued
  };
  // Clustered: publishes `url` to its owner and returns true when its host
  // is another node's. Null: nothing is routed.
  using RouteAway =
      std::function<bool(const std::string&, cluster::WorkItem::Kind, double)>;

  // The parts must outlive the observer.
  PageObserver(Options options, PageBook* book, sched::Scheduler* sched,
               Frontier* frontier, SignalIntake* intake,
               GroupCommitter* committer, RouteAway route_away);

  // The fetch of `page`, started at `started_unix`, ended with `r` (its
  // body parsed into `parsed`) and is observed at `now`.
  void Observe(sched::PageId page, fetch::FetchResult r, Parsed parsed,
               double started_unix, double now);

  uint64_t fetched_total() const { return fetched_total_; }  // ok + 304
  uint64_t robots_denied_total() const { return robots_denied_total_; }
  // By outcome class name; every class from zero.
  const std::map<std::string, uint64_t, std::less<>>& outcomes() const {
    return outcomes_;
  }
  // Completions (ok or 304) within the minute before `now`.
  size_t FetchesInLastMinute(double now) const;

 private:
  void CountOutcome(std::string_view name);

  const Options options_;
  PageBook* const book_;
  sched::Scheduler* const sched_;
  Frontier* const frontier_;
  SignalIntake* const intake_;
  GroupCommitter* const committer_;
  const RouteAway route_away_;
  uint64_t fetched_total_ = 0;
  uint64_t robots_denied_total_ = 0;
  std::map<std::string, uint64_t, std::less<>> outcomes_;
  mutable std::vector<double> recent_fetches_;  // completions, last 60 s
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_OBSERVER_H_
