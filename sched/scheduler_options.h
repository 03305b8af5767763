// The scheduler's options (sched/scheduler.h), read by each of its parts.
// Options from the daemon's config: daemon/scheduler_options.h.

#ifndef FRESHD_SCHED_SCHEDULER_OPTIONS_H_
#define FRESHD_SCHED_SCHEDULER_OPTIONS_H_

#include <cstddef>
#include <string>

#include "sched/host_pool.h"
#include "sched/policy.h"
#include "sched/rate_mixture.h"
#include "sched/selection_index.h"

namespace freshd::sched {

struct SchedulerOptions {
  std::string policy = "ncis";
  // Values from the truth (Scheduler::Create's ModelSource), not estimates.
  bool oracle = false;
  // Diagnostic (simulator): estimated mode, but every page's change rate Δ
  // is its true one (the ModelSource's); α, ν and the curves are still
  // estimated (given Δ). Separates the change-rate error from the rest
  // (docs/RESULTS.md).
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
  // How a Select walks the bound order (Selector::Scan; every scan chooses
  // the same page; benchmarks compare them).
  Selector::Scan selector_scan = Selector::Scan::kAuto;
  PolicyOptions policy_options;
  HostPoolOptions host_pool;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SCHEDULER_OPTIONS_H_
