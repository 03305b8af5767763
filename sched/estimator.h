// Everything the scheduler estimates from observations: each page's change
// rate Δ (ChangeRateStats under its host's pooled prior, HostPool; with
// SchedulerOptions::rate_mixture its three rate draws under its host's
// distribution of rates, RateMixture), the signal policies' recall α and
// false-signal rate ν (PageSignals, RecentSignals), each host's signal
// coverage, the longevity policies' change profiles and fitted divergence
// curves (ProfileSet, DivergencePrior), and the exploration intervals.
//
// Owns: the host pool, the rate mixture and the page's draws, exploration
// intervals, change profiles and the divergence prior, the signal side
// tables, the coverage table, the re-estimation sweep's cursor.
// Writes: the estimate fields of the page table's PageStates (rate,
// static_q, rate_stats, the probe flag, signals). Reads: the options, the
// policy (what it uses), the model source (oracle_rate: the true Δ).
// Called by the Scheduler facade only; one owner thread, no locks.
// Issue 42 item 3 changes how it estimates; its callers need not change.

#ifndef FRESHD_SCHED_ESTIMATOR_H_
#define FRESHD_SCHED_ESTIMATOR_H_

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "sched/divergence_prior.h"
#include "sched/host_pool.h"
#include "sched/model_source.h"
#include "sched/observation.h"
#include "sched/page_state.h"
#include "sched/policy.h"
#include "sched/rate_mixture.h"
#include "sched/recent_signals.h"
#include "sched/scheduler_options.h"

namespace freshd::sched {

class Estimator {
 public:
  // `options`, `policy` and `pages` outlive the estimator.
  Estimator(const SchedulerOptions& options, const Policy& policy,
            std::vector<PageState>* pages);
  Estimator(const Estimator&) = delete;
  Estimator& operator=(const Estimator&) = delete;

  void set_model_source(const ModelSource* truth) { truth_ = truth; }

  // The page table grew by `page` (a new URL): its side tables, its host's
  // page count, its first estimates (the host's pooled ones).
  void AddPage(PageId page);
  // The page table grew by `page`, restored from `state` (see
  // Scheduler::RestorePage): the side tables as saved, its saved static
  // share to its host, its estimates kept or recomputed, its curve.
  void RestorePage(PageId page, const PageSnapshot& state,
                   std::optional<ProfileSet> profiles,
                   std::optional<RecentSignals> recent,
                   std::optional<RateMemory> rate);
  void Reserve(size_t pages);

  // A fetch or a 304 (`fetched` nullptr) of `page` at `now`, `tau` after the
  // previous one (0: the first), before the page's fetch time moves: the
  // interval's evidence, the estimates, profiles and curve, exploration.
  // `token_rate`: the budget (pages per second).
  void ObserveContent(PageId page, double now, const FetchedObs* fetched,
                      double tau, double token_rate);
  // A signal about `page` at `now`: false when stale (IsStaleSignal), else
  // counted (and its claimed time kept by the signal policies).
  bool ObserveSignal(PageId page, double now, const SignalObs& signal);
  // Scheduler::IsStaleSignal.
  bool IsStaleSignal(PageId page, double now, const SignalObs& signal) const;
  // Scheduler::ObserveSignalCoverage; returns whether the coverage moved.
  bool ObserveSignalCoverage(HostId host, double through);
  static constexpr HostId kMaxCoverageHosts = 1u << 24;
  double SignalCoverage(HostId host) const {
    return host < signal_coverage_.size()
               ? signal_coverage_[host]
               : std::numeric_limits<double>::infinity();
  }
  // The part of τ (the time since the page's last fetch) its signal sources
  // covered: τ_s = clamp(SignalCoverage(host) − last_fetch, 0, τ).
  double CoveredTau(const PageState& s, double tau) const;

  // Re-estimates the page's (Δ, α, ν) under its host's priors: Δ is the
  // median of its host's rate mixture given its evidence when there is one
  // (every policy: the Gamma posterior's mode lost to uniform on real,
  // bursty histories), else that mode under the host's Gamma prior.
  void RefreshEstimates(PageId page);
  // Re-estimates up to reestimate_per_fetch pages (round robin) but `skip`,
  // calling `reindex` for each.
  void Sweep(PageId skip, const std::function<void(PageId)>& reindex);

  // Read by the valuer and the facade.
  std::optional<RateMemory> RateMemoryOf(PageId page) const;
  const RecentSignals* RecentSignalsOf(PageId page) const {
    return page < recent_signals_.size() ? &recent_signals_[page] : nullptr;
  }
  // The page's signals since its last fetch by source and their weight
  // (signal policies), nullptr otherwise.
  const SourceSignals* SourceSignalsOf(PageId page) const {
    return page < source_signals_.size() ? &source_signals_[page] : nullptr;
  }
  // The page's PageSignals (signal policies), nullptr otherwise.
  const PageSignals* SignalsOf(PageId page) const {
    return page < signals_.size() ? &signals_[page] : nullptr;
  }
  const ProfileSet* Profiles(PageId page) const {
    return page < profiles_.size() ? &profiles_[page] : nullptr;
  }
  // rate_mixture's draws of a page (empty when none).
  const RateTerciles* DrawsOf(PageId page) const {
    return page < rate_draws_.size() ? &rate_draws_[page] : nullptr;
  }
  // explore's interval for the page's second fetch (s; 0: none).
  double ExploreInterval(PageId page) const {
    return page < explore_interval_.size() ? explore_interval_[page] : 0.0;
  }
  const HostPool& hosts() const { return hosts_; }
  HostPool& mutable_hosts() { return hosts_; }

 private:
  // Longevity, estimated mode: the page's curve (ProfileSet::fitted()) from
  // its change profiles under the host prior (sched/divergence_prior.h).
  void Refit(PageId page);
  // Teaches each source the host has seen its part of the interval `x`
  // (the page's pooled triple): its own count, the changed bit.
  void ObserveSources(PageId page, const SignalTriple& x);
  // Re-reports the page's P(static) under `prior` to its host
  // (HostPool::AdjustStatic); `counted`: the page is already among the
  // host's pages with evidence.
  void UpdateStaticShare(PageId page, bool counted, const RatePrior& prior);

  const SchedulerOptions& options_;
  const Policy& policy_;
  std::vector<PageState>& pages_;
  const ModelSource* truth_ = nullptr;  // oracle_rate: the true Δ
  HostPool hosts_;
  RateMixture rate_mixture_;              // rate_mixture only
  std::vector<RateTerciles> rate_draws_;  // rate_mixture only, by page
  // explore only, by page: the second fetch's interval (s) of a page
  // fetched once, fixed at that fetch (so its deadline stays put); 0: none.
  std::vector<float> explore_interval_;
  DivergencePrior divergence_prior_;           // longevity, estimated mode
  std::vector<ProfileSet> profiles_;           // longevity only
  std::vector<RecentSignals> recent_signals_;  // signal policies only
  std::vector<PageSignals> signals_;           // signal policies only
  std::vector<SourceSignals> source_signals_;  // signal policies only
  // By host: ObserveSignalCoverage's time (+inf: never reported); empty
  // until a host reports.
  std::vector<double> signal_coverage_;
  size_t sweep_cursor_ = 0;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_ESTIMATOR_H_
