// StatusViews: the engine's counters for the operator and every read-only
// view of the crawl (docs/DESIGN.md "contract — status endpoint"): GET
// /status, /metrics, /page, and the status page's /hosts, /history,
// /overview; the status snapshot the status thread falls back to; the
// operator's housekeeping (history points, the progress line, systemd's
// STATUS=, disk use) and per-fetch metrics (daemon/fetch_metrics.h).
//
// It writes nothing but its own state. It reads the scheduler and the page
// book through const pointers, the rules in force through the frontier's
// RuleMatcher, and every other part's figures through the functions in
// Sources (the engine hands in readers of the dispatcher, the parse queue,
// the group committer, the writer, the observer's outcome counters, the
// signal intake and the cluster adapter): one narrow reading per view, no
// part behind it. An unset function reads as zero / null.
//
// The freshness estimate and the queue counts take a pass over the pages,
// bounded to ~1% of the scheduler's thread however fast they are polled
// (a cache priced by the pass's thread CPU); beyond kStatusSlicedPages the
// pass (and the overview's pages due next) is spread over housekeeping
// turns, ≤ kStatusSliceCpuS of CPU each (Tick), and the figures are the
// last complete pass's (/status "summary_pass" says which).
//
// Thread: the scheduler's (one owner: the engine, which calls Tick from its
// housekeeping and NoteFetch from each completion), except snapshot(),
// safe from any thread.

#ifndef FRESHD_DAEMON_STATUS_VIEWS_H_
#define FRESHD_DAEMON_STATUS_VIEWS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "conf/rules.h"
#include "daemon/cost_bounded_cache.h"
#include "daemon/dispatcher.h"
#include "daemon/fetch_metrics.h"
#include "daemon/loop_lag_probe.h"
#include "daemon/page_book.h"
#include "daemon/prometheus_text.h"
#include "daemon/recovery.h"
#include "daemon/status_history.h"
#include "daemon/store_writer.h"
#include "fetch/outcome.h"
#include "sched/scheduler.h"

namespace freshd::daemon {

// The summary's cache (daemon/cost_bounded_cache.h).
inline constexpr double kSummaryMinCostS = 1e-3;
inline constexpr double kSummaryCostFactor = 100;
// Beyond this many pages the status figures and the overview's pages due
// next come from passes over the pages spread over housekeeping turns
// (StatusViews::Tick), each turn at most kStatusSliceCpuS of the thread's
// CPU: one pass took ~170 ms at 10M pages (issue 29: no step over 20 ms).
inline constexpr size_t kStatusSlicedPages = size_t{1} << 16;
inline constexpr double kStatusSliceCpuS = 2.5e-3;
// The overview's pass runs only while the overview was asked for within
// this many seconds (a page's value costs microseconds: 10M of them are
// seconds of CPU).
inline constexpr double kDueWantedS = 60;
inline constexpr size_t kDueNext = 20;  // the overview's pages due next

class StatusViews {
 public:
  // The fetch outcomes counted so far (PageObserver's counters).
  struct FetchCounts {
    uint64_t fetched_total = 0;  // ok + 304
    uint64_t robots_denied_total = 0;
    size_t last_minute = 0;  // completions in the 60 s before `now`
    std::map<std::string, uint64_t, std::less<>> outcomes;  // by class
  };
  // The signal intake's counters.
  struct SignalCounts {
    uint64_t signals_total = 0;
    uint64_t signals_stale_total = 0;
    uint64_t sitemaps_fetched = 0;
  };
  // The stages' queues and the threads' lag.
  struct StageFigures {
    size_t in_flight = 0;     // fetches on the network or being parsed
    uint64_t on_network = 0;  // of which on the network
    double limit_seconds[kLimits] = {};  // LimitMeter::seconds()
    int fair_share_cap = 0;              // FairShare::cap()
    uint64_t fair_share_hosts = 0;       // hosts_last_window()
    bool fair_share_contended = false;   // contended_last_window()
    uint64_t fair_share_low_yield = 0;   // low_yield_last_window()
    // FairShare's ParseCost: hosts over their fair share of the parse
    // pool's time in the last window, the largest share, the pool's CPU
    // seconds metered since start.
    uint64_t parse_hosts_over_share = 0;
    double parse_share_max = 0;
    double parse_seconds = 0;
    uint64_t parse_jobs = 0;  // ParseQueue
    uint64_t parse_bytes = 0;
    bool committing = false;            // a group commit at the writer
    uint64_t commit_pending_bytes = 0;  // WARC payload not yet handed over
    uint64_t commit_errors = 0;         // GroupCommitter::store_errors
    // PageBook::validator_read_failures: unconditional GETs for want of
    // the stored validators.
    uint64_t validator_read_failures = 0;
    StoreWriter::Stats writer;
    LoopLagProbe::Stats network_lag;    // the network thread's
    LoopLagProbe::Stats scheduler_lag;  // the scheduler thread's
  };
  // A host's politeness gate as the dispatcher mirrors it.
  struct HostGate {
    double next_allowed = 0;  // steady seconds (SteadyNow); ≤ now: open
    int in_flight = 0;
  };
  struct Sources {
    std::function<FetchCounts(double now)> fetches;
    std::function<SignalCounts()> signals;
    std::function<nlohmann::json()> site_feeds;  // /status "site_feeds"
    // /status "signal_sources" (SignalIntake::SignalSourcesJson) and its
    // /metrics families (freshd_signal_source_*).
    std::function<nlohmann::json()> signal_sources;
    std::function<void(PrometheusText&)> signal_source_metrics;
    std::function<void(PrometheusText&)> site_feed_metrics;
    // /status "indexnow" and its /metrics (null without [push] listen).
    std::function<nlohmann::json()> indexnow;
    std::function<void(PrometheusText&)> indexnow_metrics;
    // /status "websub" and its /metrics (null without [push] listen).
    std::function<nlohmann::json()> websub;
    std::function<void(PrometheusText&)> websub_metrics;
    // /status "controls" (daemon/operator_controls.h) and its /metrics.
    std::function<nlohmann::json()> controls;
    std::function<void(PrometheusText&)> controls_metrics;
    // /status "frontier" (daemon/frontier.h: what it turned away) and its
    // /metrics.
    std::function<nlohmann::json()> frontier;
    std::function<void(PrometheusText&)> frontier_metrics;
    std::function<StageFigures()> stages;
    std::function<HostGate(sched::HostId)> host_gate;
    std::function<double()> rate_target;  // [budget] rate in force
    std::function<bool()> stopping;       // /status "state"
    // /status "cluster" (null without a cluster), and its /metrics
    // families appended from that JSON.
    std::function<nlohmann::json()> cluster;
    std::function<void(const nlohmann::json& status, std::string* out)>
        cluster_metrics;
  };
  struct Options {
    std::string policy;         // [sched] policy
    double max_interval_s = 0;  // [sched] max_interval
    double progress_s = 0;      // [log] progress; 0: no progress line
    std::string store_path;     // disk use scanned with each history point
    std::string warc_dir;
    double started_unix = 0;  // uptime_s, rate_actual's window
    // A turn's CPU for the sliced passes; every turn does at least one
    // slice of each pass it advances (0: exactly one).
    double slice_cpu_s = kStatusSliceCpuS;
  };

  // The pointers must outlive the views; `rules` is the frontier's matcher
  // (the rules in force, replaced in place on reload).
  StatusViews(Options options, const sched::Scheduler* sched,
              const PageBook* book, const RuleMatcher* rules,
              const RecoveryReport* recovery, Sources sources);
  StatusViews(const StatusViews&) = delete;
  StatusViews& operator=(const StatusViews&) = delete;

  nlohmann::json StatusJson() const;
  std::string MetricsText() const;
  // NotFound for a URL the book does not know (checked against the stored
  // URL: never another URL's page); InvalidArgument for one that does not
  // normalize.
  Result<nlohmann::json> PageJson(std::string_view url) const;
  // GET /hosts: hosts sorted by `sort` ("pages", "fetches", "errors",
  // "bytes": descending; "host": by name), `limit` from `offset`, with the
  // total.
  nlohmann::json HostsJson(size_t offset, size_t limit,
                           std::string_view sort) const;
  // GET /history: the plots' points (daemon/status_history.h), the live
  // one from the snapshot.
  nlohmann::json HistoryJson() const;
  // GET /overview: errors by class, the pages due next, the recent fetches.
  nlohmann::json OverviewJson() const;

  // A fetch's completion as the operator sees it: the fetch metrics, and
  // the log's first error of each class per host.
  void NoteFetch(sched::PageId page, const fetch::FetchResult& r, double now);
  // Housekeeping turn at `now` (Unix seconds): advances the sliced passes
  // by a turn's worth, publishes the snapshot, then the operator's tick (a
  // history point every kHistoryStepS, the progress line every [log]
  // progress, STATUS=, disk use).
  void Tick(double now);
  // Computes StatusJson into the snapshot (with "snapshot_unix").
  void PublishSnapshot();

  // The last snapshot published; null before the first. Any thread.
  std::shared_ptr<const nlohmann::json> snapshot() const;

 private:
  struct DiskUse {
    double bytes = 0;
    double files = 0;
  };
  using DueList = std::vector<std::pair<double, sched::PageId>>;

  const sched::Scheduler::Summary& CopySummary(double now) const;
  void AdvancePasses(double now);
  void OperatorTick(double now);
  // Adds the values at `now` of pages [begin, end) not in flight to `top`,
  // keeping at least the kDueNext highest (unsorted).
  void AddDueValues(sched::PageId begin, sched::PageId end, double now,
                    DueList* top) const;
  nlohmann::json SummaryPassJson() const;
  nlohmann::json RulesStatusJson() const;
  nlohmann::json RuleJson(sched::PageId page) const;
  // /page "signal_sources": by source, the page's signals since its fetch
  // and its host's recall, false-signal rate, precision and weight of it
  // (null for policies without signals).
  nlohmann::json PageSignalSourcesJson(sched::PageId page) const;
  void AppendOperatorMetrics(PrometheusText& out) const;
  FetchCounts Fetches(double now) const;
  StageFigures Stages() const;
  HostGate Gate(sched::HostId host) const;
  double RateTarget() const;

  const Options options_;
  const sched::Scheduler* const sched_;
  const PageBook* const book_;
  const RuleMatcher* const rules_;
  const RecoveryReport* const recovery_;
  const Sources sources_;

  FetchMetrics fetch_metrics_;
  StatusHistory history_;
  double last_progress_ = 0;        // Unix seconds of the last progress line
  DiskUse store_disk_, warc_disk_;  // rescanned with each history point
  // The pages due next: (value, page), highest first (OverviewJson).
  mutable CostBoundedCache<DueList> due_cache_{kSummaryMinCostS,
                                               kSummaryCostFactor};
  mutable CostBoundedCache<sched::Scheduler::Summary> summary_cache_{
      kSummaryMinCostS, kSummaryCostFactor};  // steady clock; thread CPU cost
  // Beyond kStatusSlicedPages: the summary of the last complete pass (the
  // running pass's until one completes), and the pass under way.
  sched::Scheduler::Summary sliced_summary_;
  size_t sliced_summary_pages_ = 0;  // pages sliced_summary_ covers
  sched::Scheduler::SummaryPass summary_pass_;
  bool summary_pass_done_ = false;
  // The overview's pass: its result, the pass under way (the next page and
  // the best values so far) and until when (steady clock) it is wanted.
  DueList sliced_due_;
  DueList due_pass_top_;
  sched::PageId due_pass_next_ = 0;
  bool due_pass_done_ = false;
  mutable double due_wanted_until_ = 0;
  mutable std::mutex snapshot_mu_;
  std::shared_ptr<const nlohmann::json> snapshot_;  // by snapshot_mu_
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_STATUS_VIEWS_H_
