// The scheduler facade the daemon and the simulator both drive: pages,
// observations, the policy's value function, the token bucket and the
// greedy selector (docs/DESIGN.md "the one idea").
//
// Time unit: seconds everywhere (the daemon passes seconds since the epoch,
// the simulator virtual seconds); rates per second; values in importance x
// seconds. The scheduler reads no clock: every call is told `now`.
// In oracle mode the caller supplies each page's true model (SetTruth); in
// estimated mode change rates, signal quality and divergence curves are
// estimated from observations, pooled per host (HostPool).
// Selection is exact (a brute-force argmax would choose the same page) and
// cheap: each page is indexed by its value at a horizon (values only grow
// between observations; a value averaged over draws, which may fall, by a
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

#ifndef FRESHD_SCHED_SCHEDULER_H_
#define FRESHD_SCHED_SCHEDULER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "sched/divergence_prior.h"
#include "sched/host_pool.h"
#include "sched/observation.h"
#include "sched/page_state.h"
#include "sched/policy.h"
#include "sched/rate_mixture.h"
#include "sched/recent_signals.h"
#include "sched/selector.h"
#include "sched/token_bucket.h"

namespace freshd::sched {

// Bounds on the selection horizon's length, in sqrt(N) token intervals
// (Scheduler::AdvanceHorizon adapts it between them).
inline constexpr double kMinHorizonScale = 1;
inline constexpr double kMaxHorizonScale = 64;

struct SchedulerOptions {
  std::string policy = "ncis";
  bool oracle = false;  // values from SetTruth(), not estimates
  // Diagnostic (simulator): estimated mode, but every page's change rate Δ
  // is its SetTruth() value; α, ν and the curves are still estimated (given
  // Δ). Separates the change-rate error from the rest (docs/RESULTS.md).
  bool oracle_rate = false;
  double rate = 1;                     // budget R, pages per second
  double burst = 10;                   // token bucket depth B
  double new_page_value = 86400;       // value of a never-fetched URL
  double min_interval = 60;            // s; never refetch sooner
  double max_interval = 90 * 86400.0;  // s; floor; <= 0 or inf: none
  int history = 4;                     // change profiles kept (longevity)
  int refit_every = 1;  // longevity: refit the curve every n fetches
  // Estimated mode: after each fetch outcome this many other pages (round
  // robin) are re-estimated against their host's current pooled prior and
  // re-indexed, so pages with little evidence of their own (never refetched)
  // follow what their host has learned since. 0: off.
  int reestimate_per_fetch = 2;
  // s; a signal that claims no change time (SignalObs::changed_at) and
  // arrives within this long after the page's last fetch is dropped as
  // probably about a change the fetch already saw. 0: keep every one.
  double signal_window = 0;
  // Estimated mode, signal policies: value a page over its change rate's
  // uncertainty rather than at the estimate, three draws Δ̂·e^{±√3·sd} and
  // Δ̂ (weights 1/6, 2/3, 1/6: the 3-point Gauss–Hermite rule for ln Δ ~
  // N(ln Δ̂, sd²)), sd² = 1/(the bits' Fisher information about ln Δ + the
  // prior's weight), each weighted by how likely it makes the signals since
  // the fetch. A page whose signals arrive fast is then likelier to be a
  // fast page, one whose signals stay away a slow one: the value follows
  // (noisy.toml R = 100, gap to the oracle: ncis 7.9% → 6.9%, ncis1 6.3% →
  // 4.8%, cis 4.1% → 2.4%; docs/RESULTS.md (d)). Costs three value
  // evaluations per value (BENCHMARKS.md). [sched]
  // value_over_rate_uncertainty in the daemon's config.
  bool value_over_rate_uncertainty = true;
  // Lazy re-valuation in Select (policies with a finite
  // Policy::MaxValueGrowth: freshness, ncis): a page valued earlier, with no
  // change to it since, is passed over unvalued while its value then plus
  // its growth bound times the time elapsed is not above the best found.
  // The choice is the same either way (off: for comparisons).
  bool lazy_revaluation = true;
  // Estimated mode: each page's rate is also a posterior on a grid under
  // its host's distribution of rates (sched/rate_mixture.h): the policies
  // without signals value a page over its three draws (and take the middle
  // one as Δ̂), and every policy's FreshProbability averages over them. Off:
  // one Gamma rate per host, each page's estimate its posterior mode.
  // [sched] rate_model = "mixture" in the daemon's config.
  bool rate_mixture = true;
  RateMixtureOptions rate_mixture_options;
  // Estimated mode: exploration where a fetch's information pays. A page
  // fetched once (no interval seen, its rate unknown) is due again after
  // the uniform interval N/R; with rate_mixture, a page of a policy without
  // signals whose last 3+ intervals all changed (its rate only bounded
  // below) and whose posterior is wide (upper draw > 4× the lower) is due
  // after a quarter of its last interval, once (not after an interval that
  // was itself such a probe). [sched] explore. Not for the due-only
  // policies (nutch): a faithful baseline fetches on its own schedule.
  bool explore = true;
  size_t max_pages = 10'000'000;  // AddUrl fails beyond this
  // The horizon refresh is amortised: while a horizon serves, the next
  // one's bounds are computed at most this many pages a Select (spread over
  // the first 3/4 of the horizon; the horizon is lengthened so that they
  // fit) and ordered, then swapped in when it begins. 0, or no more pages
  // than this: every page's bound in the one Select that moves the horizon
  // (the former way).
  size_t refresh_slice_pages = 1024;
  // The selection horizon's first length, in sqrt(N) token intervals
  // (kMinHorizonScale..kMaxHorizonScale); AdvanceHorizon adapts it from
  // there, a horizon at a time, so a frontier of millions of pages spends
  // its first horizons far from the balance (benchmarks start there).
  double initial_horizon_scale = kMinHorizonScale;
  PolicyOptions policy_options;
  HostPoolOptions host_pool;
};

// An operator's constraint on the pages it is given to (Scheduler::SetRules).
// Intervals in seconds, 0: none; importance > 0 replaces the page's μ in every
// value (0: the page's own). min_interval <= max_interval when both are set.
struct PageRule {
  double min_interval = 0;
  double max_interval = 0;
  double importance = 0;
};
// At most this many rules: a page's rule is one byte, 0 meaning none.
inline constexpr size_t kMaxPageRules = 255;

// Options from the daemon's config: daemon/scheduler_options.h.

class Scheduler {
 public:
  // Fails with InvalidArgument for an unknown policy or a bad option.
  static Result<std::unique_ptr<Scheduler>> Create(
      const SchedulerOptions& options);

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
  // max_pages. Oracle mode: call SetTruth.
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
  void BeginRestore() { restoring_ = true; }
  // Makes room for `pages` pages in all (at most max_pages) in the per-page
  // arrays, so that a restore of a known count grows none of them by
  // doubling (copies, and capacity never used).
  void Reserve(size_t pages);
  void FinishRestore(std::optional<double> now = std::nullopt);
  bool restoring() const { return restoring_; }

  // The page's rate draws and exploration interval, kept when rate_mixture
  // or explore is on (nullopt otherwise, or for an unknown id).
  std::optional<RateMemory> RateMemoryOf(PageId page) const;
  // The claimed times of the page's signals since its last fetch, kept by
  // the signal policies only (nullptr otherwise, or for an unknown id).
  const RecentSignals* RecentSignalsOf(PageId page) const {
    return page < recent_signals_.size() ? &recent_signals_[page] : nullptr;
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
  uint8_t RuleOf(PageId page) const {
    return page < page_rule_.size() ? page_rule_[page] : 0;
  }
  const std::vector<PageRule>& rules() const { return rules_; }
  // Pages by rule, index 0 counting pages without one (size rules() + 1).
  std::vector<uint64_t> PagesPerRule() const;

  // Oracle mode: the page's true parameters (rates per second) and
  // divergence model (rates per second). oracle_rate: only params.delta is
  // used. Otherwise ignored.
  void SetTruth(PageId page, const PageParams& params,
                const DivergenceModel& model);

  // Oracle mode, diagnostic: the page's model is uncertain, a weighted set
  // of parameter draws (a posterior: sim/population_posterior.h). Its value
  // is then the policy's value averaged over the draws given what was seen
  // since the last fetch: each draw weighted by `weight` × P(the n signals
  // in τ | draw) ∝ σⁿe^{−στ}, σ = αΔ + ν (for the signal policies; for the
  // others by `weight` alone). Such an average may fall as τ grows; its
  // index bound allows for the weights' drift up to the horizon
  // (MixtureBound). Params() and FreshProbability() keep SetTruth's
  // parameters. Ignored outside oracle mode, for policies with change
  // profiles, or with non-finite or negative weights; an empty set (or all
  // weights 0) removes it.
  struct WeightedParams {
    PageParams params;
    double weight = 1;
  };
  void SetTruthMixture(PageId page, std::vector<WeightedParams> mixture);

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
  // signals since its last fetch is used (SetTruthMixture's weights, the
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
  static constexpr HostId kMaxCoverageHosts = 1u << 24;
  // The time through which `host`'s signals were reported; +inf when it
  // never reported (covered through any `now`).
  double SignalCoverage(HostId host) const {
    return host < signal_coverage_.size()
               ? signal_coverage_[host]
               : std::numeric_limits<double>::infinity();
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
  bool IsStaleSignal(PageId page, double now, const SignalObs& signal) const;

  // May the caller contact `host` now? (politeness, in-flight limit)
  using HostGate = std::function<bool(HostId)>;

  // Takes a token and returns the page to fetch now, marked in flight; or
  // nullopt (no token kept back) when no token is available or no page is
  // eligible: not in flight, past min_interval and its back-off, host open;
  // for a due-only policy (Policy::due_only, nutch) also when no known page
  // is due (the best value is 0): the token is left unused.
  std::optional<PageId> Select(double now, const HostGate& host_open);

  // When the next token is available (>= now); +inf at rate 0.
  double NextTokenTime(double now) { return bucket_.NextTokenTime(now); }

  // Changes the budget from `now` on. Nothing is recomputed.
  void SetRate(double pages_per_second, double now);

  // The effective bounds on the page's next interval: the scheduler's
  // min_interval or its rule's, whichever is longer, and its rule's
  // max_interval (+inf: none; the scheduler's max_interval applies too).
  double MinIntervalOf(PageId page) const;

  // The page's value at `now` under the policy (new_page_value if never
  // fetched; averaged over draws as SetTruthMixture and
  // SchedulerOptions::value_over_rate_uncertainty say) and its selection
  // priority; Eligible() as Select() sees it.
  double Value(PageId page, double now) const;
  Priority PriorityOf(PageId page, double now) const;
  bool Eligible(PageId page, double now, const HostGate& host_open) const;

  // The model the value function reads (truth or estimate).
  PageParams Params(PageId page) const;
  // P(the page's copy is fresh at `now`) under Params(page), given the
  // signals received since its last fetch (sched/crawl_value.h
  // FreshProbability; signals count only for policies that estimate their
  // quality, or in oracle mode); 0 before its first fetch.
  double FreshProbability(PageId page, double now) const;

  // The whole copy at `now`, in one pass over the pages that evaluates no
  // value function (~21 ms at 1M pages; a status endpoint's figures):
  // estimated_freshness = Σμ·FreshProbability / Σμ over every page (a
  // never-fetched page counts as stale), overdue = pages past their deadline
  // (the max_interval floor or a policy clamp: PriorityOf().overdue),
  // unfetched = pages never fetched nor failed (never attempted, or the first
  // attempt in flight), failed = pages whose latest attempt failed (a 404, a
  // robots.txt denial, a timeout...; retried after a back-off), fetched
  // before or not.
  struct Summary {
    double estimated_freshness = 0;
    uint64_t overdue = 0;
    uint64_t unfetched = 0;
    uint64_t failed = 0;
  };
  Summary Summarize(double now) const;

  // The same pass in slices, for a caller that must not hold its thread
  // for a whole pass (~170 ms at 10M pages): SummarizeSome adds up to
  // `max_pages` pages from pass->next on, each at the `now` it is given,
  // and returns true once the pass has covered every page; summary() is
  // then the figures of the pass (before: of the pages covered so far).
  // Pages added during a pass are covered if the pass reaches them.
  class SummaryPass {
   public:
    PageId next() const { return next_; }
    Summary summary() const;

   private:
    friend class Scheduler;
    PageId next_ = 0;
    double weight_ = 0, fresh_ = 0;
    Summary counts_;
  };
  bool SummarizeSome(double now, size_t max_pages, SummaryPass* pass) const;

  // Base times of the page's change profiles, oldest first (longevity).
  std::vector<double> ProfileBaseTimes(PageId page) const;
  // The page's divergence curve (true in oracle mode, else fitted; "never
  // changes" before the first fetch); nullptr for policies without curves.
  const DivergenceModel* Model(PageId page) const;

  const PageState& page(PageId id) const { return pages_[id]; }
  // The page's whole state, with what is kept beside its PageState (the
  // signal policies' PageSignals): what EncodeSavedPage saves and
  // RestorePage takes. REQUIRES: id < size().
  PageSnapshot Snapshot(PageId id) const;
  // The page's change profiles (longevity policies); nullptr otherwise.
  const ProfileSet* Profiles(PageId id) const {
    return policy_->uses_profiles() && id < profiles_.size() ? &profiles_[id]
                                                             : nullptr;
  }
  const HostPool& hosts() const { return hosts_; }
  HostPool& mutable_hosts() { return hosts_; }
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
  size_t last_evaluations() const { return selector_.last_evaluations(); }
  uint64_t horizon_refreshes() const { return horizon_refreshes_; }
  // Horizon moves whose bounds were not staged in time: all computed in one
  // Select (the first, after a pause longer than a horizon, or with
  // refresh_slice_pages 0), or the staging finished in the Select that
  // swapped it in (late).
  uint64_t full_refreshes() const { return full_refreshes_; }
  uint64_t late_refreshes() const { return late_refreshes_; }
  // Index bounds computed so far (refreshes, staging, re-indexing): the
  // work a Select's share of the refresh costs (tests bound it).
  uint64_t bound_evaluations() const { return bound_evaluations_; }
  // The current horizon's length in sqrt(N) token intervals.
  double horizon_scale() const { return horizon_scale_; }

 private:
  Scheduler(const SchedulerOptions& options, std::unique_ptr<Policy> policy);

  PolicyInput Input(PageId page) const;
  double Deadline(PageId page) const;
  // The selector's upper bound of the page's value over a horizon [start,
  // end]; IndexBound: over the current one.
  double IndexBound(PageId page, double start, double end) const;
  double IndexBound(PageId page) const {
    return IndexBound(page, horizon_start_, horizon_);
  }
  void Reindex(PageId page);
  // Moves the horizon at `now` (> horizon_): swaps the staged one in, or
  // refreshes every bound when none is staged for `now`; then starts staging
  // the next.
  void AdvanceHorizon(double now);
  // A horizon's length: the adapted scale, lengthened so that the next
  // one's staging fits in it.
  double HorizonSpan() const;
  // The fewest Selects a staging horizon holds (0 when not staging).
  double StagingFloor() const;
  void RescaleHorizon();
  // A Select's share of the staging: bounds of at most refresh_slice_pages
  // pages, or ordering; `all`: the rest at once.
  void StageSlice(double now, bool all);
  // Whether the next horizon is staged: a refresh of more pages than a slice
  // (one of at most a slice is done in the Select that needs it, as before).
  bool Stages() const {
    return options_.refresh_slice_pages > 0 &&
           pages_.size() > options_.refresh_slice_pages;
  }
  void OnContent(PageId page, double now, const FetchedObs* fetched);
  void OnFailure(PageId page, double now, FailureClass failure);
  // Re-estimates the page's (Δ, α, ν) under its host's priors; returns the
  // rate prior used.
  RatePrior RefreshEstimates(PageId page);
  void Sweep(PageId skip);
  bool KeepsTruth() const { return options_.oracle || options_.oracle_rate; }
  // Longevity, estimated mode: the page's curve (ProfileSet::fitted()) from
  // its change profiles under the host prior (sched/divergence_prior.h).
  void Refit(PageId page);
  // Re-reports the page's P(static) under `prior` to its host
  // (HostPool::AdjustStatic); `counted`: the page is already among the
  // host's pages with evidence.
  void UpdateStaticShare(PageId page, bool counted, const RatePrior& prior);

  // The page's rule, nullptr when none.
  const PageRule* RuleFor(PageId page) const {
    const uint8_t r = RuleOf(page);
    return r > 0 ? &rules_[r - 1] : nullptr;
  }

  SchedulerOptions options_;
  std::unique_ptr<Policy> policy_;
  std::vector<PageState> pages_;
  std::vector<PageRule> rules_;
  // By page: its rule (0: none). Empty until a page is given a rule, then
  // one byte a page.
  std::vector<uint8_t> page_rule_;
  std::vector<PageParams> truth_;  // oracle and oracle_rate only
  // SetTruthMixture's sets, by page (oracle only; empty: none set).
  std::vector<std::vector<WeightedParams>> truth_mixtures_;
  // The policy's value for `in`: over the page's truth mixture when it has
  // one, else over its rate draws when they apply, else at Params().
  double PolicyValue(const PolicyInput& in, PageId page, double tau) const;
  bool HasMixture(PageId page) const {
    return page < truth_mixtures_.size() && !truth_mixtures_[page].empty();
  }
  // SchedulerOptions::value_over_rate_uncertainty's draws for a fetched
  // page; false when they do not apply (oracle or oracle_rate, other
  // policies, option off).
  bool RateDraws(PageId page, const PolicyInput& in,
                 std::array<WeightedParams, 3>* draws) const;
  // SchedulerOptions::rate_mixture's three draws for a fetched page
  // (estimated mode); false when there are none.
  bool MixtureDraws(PageId page, const PolicyInput& in,
                    std::array<WeightedParams, 3>* draws) const;
  // The average of the policy's value over `draws` at τ, each weighted by
  // its weight × σⁿe^{−στ} for the signal policies.
  double MixtureValue(PolicyInput in, std::span<const WeightedParams> draws,
                      double tau) const;
  // An upper bound of dValue(page, now)/dnow while the page's state stays
  // as it is (+inf: none): Policy::MaxValueGrowth, over the draws when the
  // value is averaged over them.
  double ValueGrowth(PageId page) const;
  // The last Select's work, in values: those evaluated, and the candidates
  // passed over by lazy re-valuation at a fraction of one.
  double SelectionWork() const;
  // A bound on MixtureValue until the horizon (see IndexBound).
  double MixtureBound(PolicyInput in, std::span<const WeightedParams> draws,
                      double start, double end) const;
  // Longevity: the true curves in oracle mode; estimated curves live in
  // ProfileSet::fitted() (saved with the profiles).
  std::vector<DivergenceModel> truth_models_;
  DivergencePrior divergence_prior_;           // longevity, estimated mode
  std::vector<ProfileSet> profiles_;           // longevity only
  std::vector<RecentSignals> recent_signals_;  // signal policies only
  std::vector<PageSignals> signals_;           // signal policies only
  // By host: ObserveSignalCoverage's time (+inf: never reported); empty
  // until a host reports.
  std::vector<double> signal_coverage_;
  // The part of τ (the time since the page's last fetch) its signal sources
  // covered: τ_s = clamp(SignalCoverage(host) − last_fetch, 0, τ).
  double CoveredTau(const PageState& s, double tau) const;
  HostPool hosts_;
  RateMixture rate_mixture_;              // rate_mixture only
  std::vector<RateTerciles> rate_draws_;  // rate_mixture only, by page
  // explore only, by page: the second fetch's interval (s) of a page
  // fetched once, fixed at that fetch (so its deadline stays put); 0: none.
  std::vector<float> explore_interval_;
  Selector selector_;
  // Lazy re-valuation (policies with a finite Policy::MaxValueGrowth): the
  // value of each page Select valued since the horizon moved, when, and its
  // growth bound, so that a later Select passes over a page whose value
  // cannot have risen to the running best since (Selector::Select's
  // value_bound). Erased by Reindex (any change to the page), cleared when
  // the horizon moves (so it holds at most the pages valued in a horizon).
  struct ValueMemo {
    double time;
    double value;
    double growth;
  };
  bool memo_values_ = false;
  std::unordered_map<PageId, ValueMemo> value_memo_;
  TokenBucket bucket_;
  double threshold_ = 0;
  double marginal_sum_ = 0;
  uint64_t marginal_count_ = 0;
  // Selection bounds hold until this time (see Reindex); -inf: none yet.
  double horizon_ = -std::numeric_limits<double>::infinity();
  // When the horizon was set: no value is asked for before it.
  double horizon_start_ = -std::numeric_limits<double>::infinity();
  // The horizon's length in units of sqrt(N) token intervals, and the
  // values evaluated by selections since it was last refreshed (see
  // AdvanceHorizon).
  double horizon_scale_ = kMinHorizonScale;
  double horizon_evaluations_ = 0;
  uint64_t horizon_refreshes_ = 0;
  // The staged next horizon [horizon_, next_horizon_] (Selector::stage()).
  double next_horizon_ = -std::numeric_limits<double>::infinity();
  uint64_t full_refreshes_ = 0;
  uint64_t late_refreshes_ = 0;
  uint64_t bound_evaluations_ = 0;
  uint64_t selections_ = 0;
  uint64_t overdue_selections_ = 0;
  size_t sweep_cursor_ = 0;
  bool restoring_ = false;  // BeginRestore .. FinishRestore: no Reindex
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SCHEDULER_H_
