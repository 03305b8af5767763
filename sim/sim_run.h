// The event-driven run behind RunSimulation (sim/simulator.h), internal to
// sim/: the web's pages and their truth (sim_page_events.cc: changes,
// signals, crawls, the metrics integrated over time), the event loop over
// the shards' token buckets (sim_run.cc: set-up, scheduled events, the
// loop, the result at the end) and the cluster's events (sim_shards.cc:
// placing pages on shards by host, the λ exchange, budget changes, shard
// losses). One Run is one simulation; it drives the shards' schedulers,
// which RunSimulation creates and which outlive it.
// Not thread-safe: the simulating thread.

#ifndef FRESHD_SIM_SIM_RUN_H_
#define FRESHD_SIM_SIM_RUN_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "base/status.h"
#include "sched/math_constants.h"
#include "sched/rate_shares.h"
#include "sched/scheduler.h"
#include "sim/oracle_truth.h"
#include "sim/page_process.h"
#include "sim/population_posterior.h"
#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim::internal {

using sched::kInf;

enum EventKind : uint8_t {
  kChurnEvent = 0,
  kScrollEvent = 1,
  kTrueSignal = 2,
  kFalseSignal = 3,
  kRateChange = 4,
  kSnapshot = 5,
  kEstimate = 6,      // sample the scheduler's estimated freshness
  kExchange = 7,      // the shards' λ exchange
  kBudgetChange = 8,  // SimOptions::budget_changes[index]
  kShardLoss = 9,     // SimOptions::shard_losses[index]
};

// A node of the simulated cluster: a scheduler of its own hosts' pages.
struct Shard {
  // The truth its scheduler reads in oracle modes (SimOptions::oracle,
  // oracle_rate): declared first, so it outlives the scheduler.
  std::unique_ptr<OracleTruth> truth = std::make_unique<OracleTruth>();
  std::unique_ptr<sched::Scheduler> sched;
  std::vector<uint32_t> pages;  // local page id -> the web's page
  double share = 0;             // its budget, pages per second
  double wake = 0;              // no selection tried before
  bool live = true;
  sched::LambdaMeter lambda;  // what it publishes at each exchange
};

struct Event {
  double t;
  uint32_t index;  // page, rate change or snapshot index
  EventKind kind;
  double origin = 0;  // a true signal: the time of its change
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    return index > o.index;
  }
};

struct PageSim {
  Version live, copy;
  double seg_start = 0;
  double stale_since = -1;
  std::deque<std::pair<double, Version>> fetches;  // recent (time, version)
  double last_change = 0;     // time of the latest region event (0: none yet)
  double copy_modified = -1;  // Last-Modified served with our copy
};

class Run {
 public:
  Run(const WebModel& model, const SimOptions& options,
      std::vector<Shard>& shards, PopulationPosterior* posterior)
      : m_(model), o_(options), shards_(shards), posterior_(posterior) {
    end_ = o_.days * kDay;
    double warm = o_.warmup_days >= 0 ? o_.warmup_days : 0.1 * o_.days;
    warm_ = std::min(warm, o_.days) * kDay;
  }

  Result<SimResult> Go();

  // The scheduler's change-rate estimate of page p (per second); after Go,
  // wherever the page ended (MeasureRateError).
  double EstimatedRate(uint32_t p) const {
    return shards_[page_shard_[p]].sched->page(local_[p]).rate;
  }

 private:
  // Go's steps, in order: the per-page state and first fetches; the
  // scheduled events (returns the snapshot times); the event loop; the
  // metrics at the end.
  Status SetUpPages();
  std::vector<double> ScheduleEvents();
  Status Loop();
  Status HandleEvent(const Event& e, double now);
  void SelectOn(size_t shard, double now);
  void Finish(const std::vector<double>& snap_times);
  uint64_t selections_ = 0, evaluations_ = 0;
  sched::Scheduler& S(uint32_t p) { return *shards_[page_shard_[p]].sched; }
  uint32_t L(uint32_t p) const { return local_[p]; }
  // The live shard of `host`: rendezvous hashing over the live shards, so a
  // loss moves only the dead shards' hosts.
  uint32_t HostShard(uint32_t host) const;
  // Adds page p to shard `s` (a fresh page, or `from` a dead shard's
  // scheduler with its state); the page's truth to the shard's OracleTruth.
  Status Place(uint32_t p, uint32_t s, const sched::Scheduler* from,
               uint32_t from_local);
  // Budget events and the exchange (SimOptions::shards).
  void SetShare(Shard& sh, double share, double now);
  void Exchange(double now, bool step);
  void ScaleBudget(double factor, double now);
  Status LoseShards(int count, double now);
  void Settle();
  void Integrate(uint32_t p, double now);
  void Push(double t, uint32_t index, EventKind kind, double origin = 0) {
    if (t <= end_) queue_.push({t, index, kind, origin});
  }
  void OnChange(uint32_t p, Region r, double now);
  void Crawl(uint32_t p, double now);
  // --oracle-posterior: hands the scheduler page p's posterior.
  void UpdatePosterior(uint32_t p);
  // Adds the μ-weighted mean of the scheduler's P(fresh) at `now`.
  void SampleEstimate(double now);

  const WebModel& m_;
  const SimOptions& o_;
  std::vector<Shard>& shards_;
  PopulationPosterior* posterior_;  // --oracle-posterior, else nullptr
  std::vector<uint32_t> page_shard_, local_;        // by page
  std::vector<sched::PageParams> truth_;            // the oracle's, by page
  double total_rate_ = 0;                           // the cluster's, per second
  std::vector<std::pair<double, double>> spreads_;  // (t, spread) per exchange
  uint64_t exchange_stride_ = 1;
  double end_ = 0, warm_ = 0;
  std::vector<PageSim> pages_;
  std::vector<EventStream> churn_, scroll_;
  std::vector<FalseSignalStream> false_;
  std::vector<double> host_next_;
  std::vector<uint64_t> host_crawls_;  // measured crawls per host
  // By page: its rule's index in SimOptions::rules + 1 (0: none); empty
  // without rules.
  std::vector<uint8_t> rule_of_;
  // The measured window's intervals of ruled pages.
  void NoteInterval(uint32_t p, double from, double to, bool closed);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  SimResult r_;
  double fresh_all_ = 0;  // Σμ·fresh time over [0, now], unclipped
  std::vector<double> snapshots_;
  std::vector<uint64_t> snapshot_crawls_;
  double weight_ = 0;
  double estimate_sum_ = 0;  // Σ over SampleEstimate calls
  int estimate_count_ = 0;
};

}  // namespace freshd::sim::internal

#endif  // FRESHD_SIM_SIM_RUN_H_
