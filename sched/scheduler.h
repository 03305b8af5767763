// The scheduler facade the daemon and the simulator both drive: pages,
// observations, the policy's value function, the token bucket and the
// greedy selector (docs/DESIGN.md "the one idea").
//
// Time unit: seconds everywhere (the daemon passes seconds since the epoch,
// the simulator virtual seconds); rates per second; values in importance x
// seconds. The scheduler reads no clock: every call is told `now`.
// In oracle mode a ModelSource (the simulator's) supplies each page's true
// model (sched/model_source.h); in estimated mode change rates, signal quality
// and divergence curves are estimated from observations, pooled per host
// (HostPool). Selection is exact (a brute-force argmax would choose the same
// page) and cheap: each page is indexed by its value at a horizon (values only
// grow between observations; a value averaged over draws, which may fall, by a
// bound that allows for it), which moves forward every 1-64 x sqrt(N)
// selections, as the work of selecting and of refreshing balance. The next
// horizon's bounds are computed a slice a Select while the current one
// serves (SchedulerOptions::refresh_slice_pages), so no Select computes
// more than a slice of them once the first horizon is set.
// Operators' rules (SetRules/SetPageRule; [[rule]] in the daemon's config)
// are constraints the selection honours while value order spends the rest of
// the budget: a ruled page is not eligible before last_fetch + its
// min_interval, is due (overdue: ahead of value order, as the max_interval
// floor) once last_fetch + its max_interval has passed, and is valued at its
// rule's importance. Forced fetches take tokens from the same bucket. A page
// holds its rule as one byte in a side table that exists only once a page has
// a rule: nothing a page, and no change in any output, without rules.
// Not thread-safe: one owner thread, no locks (docs/DESIGN.md).
//
// A facade over single-concern parts (sched/README.md), each owning its
// state: the page table (pages_, a vector of PageState here), the rule table
// (sched/rule_table.h), the estimator (sched/estimator.h: everything
// learned from observations), the valuer (sched/valuer.h: values, bounds,
// deadlines; read-only), the selection index (sched/selection_index.h: the
// horizon and the selector) and the summary pass (sched/summary.h). The
// facade wires them and keeps the token bucket, the threshold and the
// observation dispatch.

#ifndef FRESHD_SCHED_SCHEDULER_H_
#define FRESHD_SCHED_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "sched/estimator.h"
#include "sched/host_pool.h"
#include "sched/model_source.h"
#include "sched/observation.h"
#include "sched/page_state.h"
#include "sched/policy.h"
#include "sched/rate_mixture.h"
#include "sched/recent_signals.h"
#include "sched/rule_table.h"
#include "sched/scheduler_options.h"
#include "sched/selection_index.h"
#include "sched/selector.h"
#include "sched/summary.h"
#include "sched/token_bucket.h"
#include "sched/valuer.h"

namespace freshd::sched {

// Options from the daemon's config: daemon/scheduler_options.h.

class Scheduler {
 public:
  // Fails with InvalidArgument for an unknown policy or a bad option.
  // `truth` (not owned; outlives the scheduler): the pages' true models,
  // read in oracle and oracle_rate modes only (sched/model_source.h); a
  // page it knows nothing of is valued as never changing.
  static Result<std::unique_ptr<Scheduler>> Create(
      const SchedulerOptions& options, const ModelSource* truth = nullptr);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Adds a never-fetched URL of `host` with importance > 0 (clamped to
  // [1e-6, 1e6]). Ids are dense from 0. ResourceExhausted past max_pages.
  Result<PageId> AddUrl(HostId host, double importance);

  // Recovery: appends a page with a previously saved state (in-flight flag
  // cleared; importance clamped as in AddUrl; its cached estimates kept, or
  // its host's prior when it has none) and, for longevity policies, its
  // change profiles (in estimated mode the divergence curve saved with them,
  // ProfileSet::fitted(), or a refit when there is none). Host statistics are
  // not replayed: restore them through mutable_hosts() first so the page's
  // prior is its host's. Ids continue densely; ResourceExhausted past
  // max_pages. Oracle mode: the model source's truth, after ModelChanged.
  // `rate`: the page's saved draws and exploration interval
  // (RateMemoryOf), taken as saved when the mixture / exploration is on
  // (the draws then join their host's histogram and the page's estimates are
  // not recomputed); without them the draws are recomputed.
  Result<PageId> RestorePage(const PageSnapshot& state,
                             std::optional<ProfileSet> profiles = {},
                             std::optional<RecentSignals> recent = {},
                             std::optional<RateMemory> rate = {});
  // Recovery in bulk: between BeginRestore() and FinishRestore(), pages
  // restored (RestorePage) or changed are not indexed for selection one by
  // one (a bound, a tree insert and a heap push each); FinishRestore(now)
  // indexes them all at once as the first Select(now) would: it starts the
  // first horizon at `now` (one pass of bounds and a partial sort,
  // Selector::UpdateAll), so that the first Select does not. Without `now`
  // the first Select does it. When a horizon exists already (Selects before
  // BeginRestore), every page is re-indexed over it instead. The choices are
  // the same as with pages restored one by one. A Select while restoring
  // finishes the restore first, as FinishRestore() would.
  void BeginRestore() { index_.BeginRestore(); }
  // Makes room for `pages` pages in all (at most max_pages) in the per-page
  // arrays, so that a restore of a known count grows none of them by
  // doubling (copies, and capacity never used).
  void Reserve(size_t pages);
  void FinishRestore(std::optional<double> now = std::nullopt);
  bool restoring() const { return index_.restoring(); }

  // The page's rate draws and exploration interval, kept when rate_mixture
  // or explore is on (nullopt otherwise, or for an unknown id).
  std::optional<RateMemory> RateMemoryOf(PageId page) const {
    return estimator_.RateMemoryOf(page);
  }
  // The claimed times of the page's signals since its last fetch, kept by
  // the signal policies only (nullptr otherwise, or for an unknown id).
  const RecentSignals* RecentSignalsOf(PageId page) const {
    return estimator_.RecentSignalsOf(page);
  }
  // The page's signals since its last fetch by source, and their weight
  // (signal policies only; nullptr otherwise or for an unknown id). Not
  // saved: after a restore the counts are 0 and each signal weighs one.
  const SourceSignals* SourceSignalsOf(PageId page) const {
    return estimator_.SourceSignalsOf(page);
  }

  // Replaces the rule table (rule r of SetPageRule is rules[r - 1]); pages
  // whose rule no longer exists lose it; every ruled page is re-indexed.
  // InvalidArgument past kMaxPageRules, for a negative, NaN or infinite
  // field, or min_interval > max_interval (both set).
  [[nodiscard]] Status SetRules(std::vector<PageRule> rules);
  // Gives the page rule `rule` (1-based into SetRules' table; 0: none) and
  // re-indexes it. InvalidArgument for an unknown page or rule.
  [[nodiscard]] Status SetPageRule(PageId page, uint8_t rule);
  // The page's rule (0: none, also for an unknown id).
  uint8_t RuleOf(PageId page) const { return rules_.RuleOf(page); }
  const std::vector<PageRule>& rules() const { return rules_.rules(); }
  // Pages by rule, index 0 counting pages without one (size rules() + 1).
  std::vector<uint64_t> PagesPerRule() const;

  // Oracle and oracle_rate modes: the model source's truth for `page`
  // changed (its parameters, curve or mixture: sched/model_source.h);
  // re-estimates (oracle_rate: Δ) and re-indexes the page. Otherwise, or for
  // an unknown id, nothing. oracle_rate reads only the true Δ. A mixture
  // (oracle mode, policies without change profiles) is a diagnostic: the
  // page's value is then the policy's value averaged over its draws given
  // what was seen since the last fetch, each weighted by its weight ×
  // P(the n signals in τ | draw) ∝ σⁿe^{−στ}, σ = αΔ + ν (for the signal
  // policies; for the others by its weight alone); its index bound allows
  // for the weights' drift up to the horizon. Params() and
  // FreshProbability() keep the true parameters.
  void ModelChanged(PageId page);
  using WeightedParams = sched::WeightedParams;

  // What one Observe changed of the state a caller persists: the page's
  // saved state (EncodeSavedPage), its host's pooled statistics, the global
  // statistics. The daemon's page book writes exactly these.
  struct ObserveEffect {
    bool page = false;
    bool host = false;
    bool globals = false;
  };

  // Consumes one observation (unknown page ids are ignored). A fetched, 304
  // or failed observation ends the page's in-flight state. A stale signal
  // (IsStaleSignal) is ignored. Returns what changed.
  ObserveEffect Observe(const Observation& obs);

  // Signal coverage: the signal sources of `host` (its sitemaps and feeds,
  // as the daemon reads them) have reported every change they would report
  // up to `through` (the time of a successful read). Silence is evidence
  // only where a source looked: wherever the likelihood of a page's
  // signals since its last fetch is used (the truth mixture's weights, the
  // rate draws' weights, FreshProbability, Summarize), the "no more
  // signals" term runs over τ_s = clamp(through − last_fetch, 0, τ) instead
  // of τ, the signals seen still count, and the time after τ_s is time
  // with no signal source, in which the page changes at its rate Δ
  // unobserved: P(fresh) = e^{−κτ_s}q^n · e^{−Δ(τ−τ_s)}. A fetch interval's
  // signal evidence (SignalStats) then spans its covered part (see
  // OnContent). A host that never reported coverage is covered through
  // `now` (the simulator's signals arrive as they happen): nothing changes
  // for it. `through` only moves forward (an older report, NaN or a host
  // past the host table's bound, kMaxCoverageHosts, is ignored). Not
  // saved: after a restart a host is covered through `now` until its next
  // read (daemon/README.md).
  void ObserveSignalCoverage(HostId host, double through);
  static constexpr HostId kMaxCoverageHosts = Estimator::kMaxCoverageHosts;
  // The time through which `host`'s signals were reported; +inf when it
  // never reported (covered through any `now`).
  double SignalCoverage(HostId host) const {
    return estimator_.SignalCoverage(host);
  }

  // Whether `signal`, received at `now`, is about a change the page's copy
  // already has: its changed_at is not after the page's last fetch, or it
  // has none and arrives within options().signal_window of that fetch.
  // A date-only changed_at (midnight UTC, IsWholeDayClaim) claims its whole
  // day, so it is stale only once that day ended by the last fetch: a
  // sitemap's `2026-11-25` for a page fetched that morning may be a change
  // after the fetch, and the sitemap will not say so again (the cost: one
  // false signal when the change came before it). Never for a page not yet
  // fetched; false for an unknown id.
  bool IsStaleSignal(PageId page, double now, const SignalObs& signal) const {
    return estimator_.IsStaleSignal(page, now, signal);
  }

  // When may the caller contact `host`? (politeness, in-flight limit,
  // back-off): a time at or before Select's `now`: now; a later time: not
  // before it; +inf (kHostClosedUntilReopened): not until ReopenHost(host).
  // The answer binds until then: a host the gate closes leaves the
  // selection (none of its pages is looked at) until that time or
  // ReopenHost, whichever comes first, so the caller must call ReopenHost
  // whenever a host may go earlier than it said (a slot freed, a delay
  // shortened). An open host is asked again at every Select that reaches it.
  using HostGate = std::function<HostOpening(HostId)>;
  // The older form: may the caller contact `host` now? Asked anew at every
  // Select: the hosts it closes are reopened when the Select returns
  // (O(closed hosts)), so the two forms mix; for callers whose gates are
  // not times (tests, a first Select that only builds the index).
  using HostOpenFn = std::function<bool(HostId)>;

  // Takes a token and returns the page to fetch now, marked in flight; or
  // nullopt (no token kept back) when no token is available or no page is
  // eligible: not in flight, past min_interval and its back-off, host open;
  // for a due-only policy (Policy::due_only, nutch) also when no known page
  // is due (the best value is 0): the token is left unused. The choice is
  // the brute-force argmax of PriorityOf over the eligible pages (Eligible).
  std::optional<PageId> Select(double now, const HostGate& gate);
  std::optional<PageId> Select(double now, const HostOpenFn& host_open);

  // The caller's slot of the page's fetch, noted beside its in-flight flag
  // (PageState::fetch_slot) so that the caller needs no map by page of its
  // own: the flag stays the one record of what is in flight. The scheduler
  // never reads it. REQUIRES: page < size().
  void SetFetchSlot(PageId page, uint32_t slot) {
    pages_[page].fetch_slot = slot;
  }

  // `host`, closed by a HostGate answer, may go before the time it gave:
  // it rejoins the selection (asked again when reached). O(log hosts).
  void ReopenHost(HostId host) { index_.ReopenHost(host); }
  // Hosts a gate has closed and that have not reopened yet.
  size_t closed_hosts() const { return index_.closed_hosts(); }

  // Operator holds (daemon/operator_controls.h: a page a paused or blocked
  // URL pattern matches): a held page is not eligible (Eligible, Select)
  // until released. Its value and index entry stay as they are: a Select
  // that reaches it passes it over as it passes a page in flight (one bit
  // read), and a release needs no re-index. Unknown ids: nothing.
  void SetHeld(PageId page, bool held);
  bool held(PageId page) const { return page < held_.size() && held_[page]; }
  size_t held_pages() const { return held_count_; }

  // Removes a page for good (the daemon's pages gone for good: 404/410
  // over several tries, unreachable past an age; daemon/page_book.h): its
  // id stays as a tombstone (ids index a dozen dense arrays; a restart,
  // which restores only stored pages, drops it), never eligible again,
  // indexed with the lowest bound and no deadline so that no Select
  // evaluates it (Selector::BestByValue stops at the first removed entry),
  // not counted by Summarize, and every later observation of it is
  // ignored. Its contributions to its host's pooled statistics stay (they
  // were evidence about the host). Unknown or removed ids: nothing.
  void Remove(PageId page);
  bool removed(PageId page) const {
    return page < pages_.size() && pages_[page].removed();
  }
  size_t removed_pages() const { return removed_count_; }

  // When the next token is available (>= now); +inf at rate 0.
  double NextTokenTime(double now) { return bucket_.NextTokenTime(now); }

  // Changes the budget from `now` on. Nothing is recomputed.
  void SetRate(double pages_per_second, double now);

  // The effective bounds on the page's next interval: the scheduler's
  // min_interval or its rule's, whichever is longer, and its rule's
  // max_interval (+inf: none; the scheduler's max_interval applies too).
  double MinIntervalOf(PageId page) const {
    return rules_.MinIntervalOf(page, options_.min_interval);
  }

  // The page's value at `now` under the policy (new_page_value if never
  // fetched; averaged over draws as the truth's mixture and
  // SchedulerOptions::value_over_rate_uncertainty say) and its selection
  // priority; Eligible() as Select() sees it.
  double Value(PageId page, double now) const {
    return valuer_.Value(page, now);
  }
  Priority PriorityOf(PageId page, double now) const {
    return valuer_.PriorityOf(page, now);
  }
  bool Eligible(PageId page, double now, const HostOpenFn& host_open) const;
  bool Eligible(PageId page, double now, const HostGate& gate) const {
    return Eligible(page, now, [&](HostId h) { return gate(h).at <= now; });
  }

  // The model the value function reads (truth or estimate).
  PageParams Params(PageId page) const { return valuer_.Params(page); }
  // P(the page's copy is fresh at `now`) under Params(page), given the
  // signals received since its last fetch (sched/crawl_value.h
  // FreshProbability; signals count only for policies that estimate their
  // quality, or in oracle mode); 0 before its first fetch.
  double FreshProbability(PageId page, double now) const {
    return valuer_.FreshProbability(page, now);
  }

  // The whole copy at `now`, in one pass over the pages that evaluates no
  // value function (sched/summary.h).
  using Summary = sched::Summary;
  Summary Summarize(double now) const;

  // The same pass in slices, for a caller that must not hold its thread
  // for a whole pass (~170 ms at 10M pages): SummarizeSome adds up to
  // `max_pages` pages from pass->next on, each at the `now` it is given,
  // and returns true once the pass has covered every page; summary() is
  // then the figures of the pass (before: of the pages covered so far).
  // Pages added during a pass are covered if the pass reaches them.
  using SummaryPass = sched::SummaryPass;
  bool SummarizeSome(double now, size_t max_pages, SummaryPass* pass) const {
    return sched::SummarizeSome(pages_, rules_, valuer_, now, max_pages, pass);
  }

  // Base times of the page's change profiles, oldest first (longevity).
  std::vector<double> ProfileBaseTimes(PageId page) const;
  // The page's divergence curve (true in oracle mode, else fitted; "never
  // changes" before the first fetch); nullptr for policies without curves.
  const DivergenceModel* Model(PageId page) const {
    return valuer_.Model(page);
  }

  const PageState& page(PageId id) const { return pages_[id]; }
  // The page's whole state, with what is kept beside its PageState (the
  // signal policies' PageSignals): what EncodeSavedPage saves and
  // RestorePage takes. REQUIRES: id < size().
  PageSnapshot Snapshot(PageId id) const;
  // The page's change profiles (longevity policies); nullptr otherwise.
  const ProfileSet* Profiles(PageId id) const {
    return policy_->uses_profiles() ? estimator_.Profiles(id) : nullptr;
  }
  const HostPool& hosts() const { return estimator_.hosts(); }
  HostPool& mutable_hosts() { return estimator_.mutable_hosts(); }
  size_t size() const { return pages_.size(); }
  const Policy& policy() const { return *policy_; }
  const SchedulerOptions& options() const { return options_; }
  // Running estimate of the implied threshold (value of recent choices).
  double threshold() const { return threshold_; }
  // Recovery: puts back a saved threshold (ignored unless finite, >= 0).
  void RestoreThreshold(double threshold) {
    if (threshold >= 0 && threshold < 1e300) threshold_ = threshold;
  }
  // The sum and number of the marginal values threshold() has averaged,
  // since creation: a caller's window of them is the mean of its
  // differences (sched/rate_shares.h LambdaMeter), without the lag of
  // threshold()'s 100-selection memory.
  double marginal_sum() const { return marginal_sum_; }
  uint64_t marginal_count() const { return marginal_count_; }
  uint64_t selections() const { return selections_; }
  uint64_t overdue_selections() const { return overdue_selections_; }
  size_t last_evaluations() const { return index_.last_evaluations(); }
  uint64_t horizon_refreshes() const { return index_.horizon_refreshes(); }
  // Horizon moves whose bounds were not staged in time: all computed in one
  // Select (the first, after a pause longer than a horizon, or with
  // refresh_slice_pages 0), or the staging finished in the Select that
  // swapped it in (late).
  uint64_t full_refreshes() const { return index_.full_refreshes(); }
  uint64_t late_refreshes() const { return index_.late_refreshes(); }
  // Index bounds computed so far (refreshes, staging, re-indexing): the
  // work a Select's share of the refresh costs (tests bound it).
  uint64_t bound_evaluations() const { return index_.bound_evaluations(); }
  // The current horizon's length in sqrt(N) token intervals.
  double horizon_scale() const { return index_.horizon_scale(); }

 private:
  Scheduler(const SchedulerOptions& options, std::unique_ptr<Policy> policy,
            const ModelSource* truth);

  void Reindex(PageId page) { index_.Reindex(page); }
  void OnContent(PageId page, double now, const FetchedObs* fetched);
  void OnFailure(PageId page, double now, FailureClass failure);
  // The page's own conditions of Eligible (not in flight, past its
  // back-off, min_interval and its rule's), its host aside.
  bool PageEligible(PageId page, double now) const;
  bool KeepsTruth() const { return options_.oracle || options_.oracle_rate; }

  SchedulerOptions options_;
  std::unique_ptr<Policy> policy_;
  // The page table: a plain vector, by PageId, that every part reads (the
  // estimator writes the estimate fields, the facade the rest); a class of
  // its own would only forward push_back and size.
  std::vector<PageState> pages_;
  std::vector<bool> held_;  // SetHeld; shorter than pages_: not held
  size_t held_count_ = 0;
  size_t removed_count_ = 0;  // Remove
  RuleTable rules_;
  TokenBucket bucket_;
  Estimator estimator_;
  Valuer valuer_;
  SelectionIndex index_;
  double threshold_ = 0;
  double marginal_sum_ = 0;
  uint64_t marginal_count_ = 0;
  uint64_t selections_ = 0;
  uint64_t overdue_selections_ = 0;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SCHEDULER_H_
