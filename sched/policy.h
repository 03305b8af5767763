// Recrawl policies as value functions over one page's state (docs/DESIGN.md
// "the one idea"): Value(τ) is what one fetch of the page buys now, τ seconds
// after its last fetch. The selector fetches the highest value; the budget
// sets the implied threshold. Policies: uniform, nutch, stormcrawler,
// freshness (GREEDY), age, ncis, ncis1, ncis2, cis, longevity,
// longevity-bound.
//
// Each policy reads the page's model through PolicyInput: in oracle mode the
// simulator's true parameters, otherwise the scheduler's estimates. Policies
// are stateless objects (per-page scratch lives in PageState::interval and
// ::forced); const methods are thread-safe.

#ifndef FRESHD_SCHED_POLICY_H_
#define FRESHD_SCHED_POLICY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sched/crawl_value.h"
#include "sched/divergence_model.h"
#include "sched/page_state.h"

namespace freshd::sched {

// What a value function may read about one page. Rates per second.
struct PolicyInput {
  const PageState* state = nullptr;
  PageParams params;  // Δ, μ, α, ν
  // The signals since the last fetch, each weighted by its source's
  // quality on the host (sched/signal_estimator.h, "Several sources"); < 0:
  // state->signals, each worth one (SignalCount).
  double signals = -1;
  const DivergenceModel* model = nullptr;  // longevity (fitted or true)
  const ProfileSet* profiles = nullptr;    // longevity-bound
  bool oracle = false;  // params/model are the truth: no learning clamps
  // Pages / budget rate: the mean refresh interval (s; +inf at rate 0).
  double mean_interval = 0;
};

// The signal count a value function reads: in.signals, or the state's.
inline double SignalCount(const PolicyInput& in) {
  return in.signals >= 0 ? in.signals : in.state->signals;
}

// Tunables shared by the policies (seconds).
struct PolicyOptions {
  double nutch_initial_interval = 30 * 86400.0;  // db.fetch.interval.default
  double nutch_inc = 0.4;                        // ...adaptive.inc_rate
  double nutch_dec = 0.2;                        // ...adaptive.dec_rate
  double nutch_min_interval = 60;                // ...adaptive.min_interval
  double nutch_max_interval = 365 * 86400.0;     // ...adaptive.max_interval
  double nutch_sync_delta_rate = 0.3;  // ...adaptive.sync_delta_rate (0: off)
  // StormCrawler AdaptiveScheduler defaults (crawler-default.yaml).
  double storm_initial_interval = 86400.0;  // fetchInterval.default 1440 min
  double storm_inc = 0.5;              // ...adaptive.fetchInterval.rate.incr
  double storm_dec = 0.5;              // ...adaptive.fetchInterval.rate.decr
  double storm_min_interval = 3600.0;  // ...fetchInterval.min 60 min
  double storm_max_interval = 14 * 86400.0;  // ...fetchInterval.max 2 weeks
  // Longevity learning phase φ <= l·n, l in seconds per refresh; 0: auto,
  // l = kAutoLearningShare × the mean refresh interval, so learning costs a
  // fixed share of the budget whatever its size (Olston & Pandey §5.1 tune
  // l "such that the investment in learning is proportional to the refresh
  // cost"; docs/RESULTS.md has the measurements behind the share).
  double learning_l = 0;
  // Longevity risk bound φ <= ρ·T/D_max (Olston & Pandey §4.5); 0: auto, the
  // policy's own default below (none for longevity-bound with h >= 3).
  double risk_rho = 0;
};

inline constexpr double kAutoLearningShare = 0.5;
// Auto ρ. The paper ran its bound-based policy at ρ = 10 (§5.1), where the
// bound is what refreshes a page whose profiles saw no change. Ours values
// such a page by its model instead (policy_longevity.cc), and then every
// finite ρ only forces refreshes that value would not buy (fragment
// staleness, 5 seeds, 60 days, scroll.toml R = 50/100/200/400 and
// scroll-paper R = 100: ρ = 20 0.391/0.291/0.206/0.137/0.093; 40 0.392/
// 0.290/0.204/0.138/0.093; 80 0.392/0.289/0.204/0.139/0.093; ∞ 0.391/
// 0.289/0.203/0.138/0.092; issue 4 notes), so by default it has none; the
// daemon's max_interval floor still bounds every page. Except with h <= 2,
// where a profile holds a single point: too little to value pages by (no
// bound starves scroll pages: scroll.toml R = 200 0.293 against 0.244 at
// ρ = 20), so kAutoRiskRhoBound applies there. The curve-fitting
// policy has a model of when content goes stale, so a tighter bound only
// forces refreshes the model would not buy (3 seeds, 120 days, same webs
// and budgets: ρ = 10 0.386/0.297/0.208/0.139/0.103; 20 0.385/0.291/0.205/
// 0.136/0.097; 30 0.384/0.291/0.205/0.136/0.095; 45 0.384/0.292/0.206/
// 0.136/0.094; issue 4 notes).
inline constexpr double kAutoRiskRhoBound = 20;
inline constexpr double kAutoRiskRhoCurveFit = 30;

class Policy {
 public:
  virtual ~Policy() = default;

  virtual std::string_view name() const = 0;

  // Crawl value of fetching now, τ >= 0 seconds since the last fetch, for a
  // page fetched at least once. Finite, >= 0, nondecreasing in τ between
  // observations (the selector relies on it only through UpperBound).
  virtual double Value(const PolicyInput& in, double tau) const = 0;

  // An upper bound of Value(in, τ) over all τ >= 0 (+inf if unbounded).
  virtual double UpperBound(const PolicyInput& in) const = 0;

  // An upper bound of dValue(in, τ)/dτ over all τ >= 0 (value units a
  // second) while the page's state and model stay as they are: Value(in,
  // τ + d) <= Value(in, τ) + d·MaxValueGrowth(in). +inf (the default): none
  // known. The scheduler uses it to pass over, unvalued, a page valued a
  // moment ago too far below the running best (Scheduler::Select).
  virtual double MaxValueGrowth(const PolicyInput&) const;

  // True for a policy whose PageState::forced is a deadline interval (the
  // scheduler fetches the page once it has passed); others may keep other
  // scratch there.
  virtual bool forced_is_deadline() const { return false; }

  // True for a policy that refreshes a known page only while its value is
  // positive (nutch: only pages whose fetch time is due): the scheduler then
  // leaves a token unused rather than spend it on a page of value 0.
  virtual bool due_only() const { return false; }

  // False for a policy whose Value and UpperBound read only τ and the
  // page's state (uniform, nutch), never its model (rate, signal
  // parameters): the valuer then does not average them over rate draws.
  virtual bool value_reads_model() const { return true; }

  // Which parts of the model the policy reads (so estimates are kept).
  virtual bool uses_signals() const { return false; }
  virtual bool uses_profiles() const { return false; }

  // Called after each fetch outcome of the page (changed is false for a 304
  // or failure), with τ the interval since the previous fetch and
  // `threshold` the selector's current implied threshold (value units).
  // Updates the page's policy scratch (state.interval, state.forced).
  virtual void OnFetched(const PolicyInput& in, PageState& state, bool changed,
                         double tau, double threshold) const;
};

// The policy named `name` (config [sched] policy). InvalidArgument for an
// unknown name.
Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                           const PolicyOptions& options);

// The names MakePolicy accepts, in a stable order.
const std::vector<std::string>& PolicyNames();

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_POLICY_H_
