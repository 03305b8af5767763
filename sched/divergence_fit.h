// Least-squares fit of an Olston & Pandey divergence curve to pooled change-
// profile points (docs/MATH.md Paper 3 (b) "Curve fitting", steps 2-4).
//
// Churn: D = a(1−e^{−λt}); for fixed λ, a = clip(Σφd/Σφ², 0, 1) with
// φ = 1−e^{−λt}; log λ by a grid then Brent. Scroll: D = Σ_{j<K}(g_{j+1}−g_j)
// γ_j(λt), g_j = g((1−s)j/K), g(u) = 2u/(1+u); for each K in 2..k_max,
// Nelder–Mead over (logit s, log λ) from 9 starts. The fit with the smaller
// SSE wins. Rates are per unit of the points' t. Pure functions; thread-safe.
#ifndef FRESHD_SCHED_DIVERGENCE_FIT_H_
#define FRESHD_SCHED_DIVERGENCE_FIT_H_

#include <span>
#include <utility>

#include "sched/divergence_model.h"

namespace freshd::sched {

// One normalized profile observation: divergence d of the version t after
// the profile's base.
struct ProfilePoint {
  double t;
  double d;
};

struct DivergenceFitOptions {
  int k_max = 10;          // largest scroll K tried (≥ 2; capped at 64).
  int grid = 41;           // log-λ grid points for the churn fit.
  double rate_min = 1e-9;  // λ search range, per unit of t.
  double rate_max = 1e3;
  int max_evaluations = 400;  // per Nelder–Mead run, bounded.
  int starts = 9;             // Nelder–Mead starts (per K): 1, 4 or 9
                              // ({0.2,0.5,0.8} s × {0.3,1,3}/t_median λ).
  // Speed-ups for per-refresh use, on by default (warm_start = false and
  // patience = 0 is MATH's exact recipe: 9 starts for every K). Tests check
  // both give the same fits; the fast one is ~4-8x cheaper.
  bool warm_start = true;  // K > 2: 2 starts (K−1's best, rescaled; center)
  int patience = 3;        // stop after this many K without improvement
  // Prior knowledge for young pages (both 0: MATH's plain least squares).
  // event_rate > 0 fixes both families' rate λ to it, so only the shape is
  // fitted: under either model every event changes the page, so the page's
  // change rate estimated from changed bits (sched/change_rate_estimator.h,
  // with its prior) is λ; points already saturated cannot pin λ down, and
  // least squares then drifts to the fastest rate searched.
  double event_rate = 0;
  // A pseudo-point (t = ∞, d = saturation_prior) of weight saturation_weight
  // in both fits: pulls the saturation level D(∞) (churn: a; scroll:
  // g(1 − s)) toward it, so a page never yet seen changing is not "static
  // forever" (the host's typical level is the scheduler's choice).
  double saturation_prior = 0;
  double saturation_weight = 0;
  // The scroll family's pseudo-point level when ≥ 0 (else saturation_prior):
  // scroll pages saturate at their own typical level, not at one shared with
  // churn pages.
  double scroll_saturation_prior = -1;
  // With event_rate > 0: fit the shape to the points that changed (d > 0)
  // only, against E[D | ≥ 1 event by t] = D(t)/(1 − e^{−λt}); under churn
  // every such point is the level a, under scroll it rises with t. A point
  // with d = 0 says only "no event yet", which λ already accounts for. Plain
  // least squares fits one realization (few points) to the expected curve:
  // a slow page that happened to change early fits "a = 1", a churn page that
  // changed every time fits a slowly saturating scroll.
  bool given_change = false;
};

struct DivergenceFit {
  DivergenceModel model;  // churn: s = 1−c; scroll: c = 0, K, λ_s.
  double sse = 0;         // Σ (d − D(t))² of the chosen fit.
  double churn_sse = 0;   // of the best churn fit.
  double scroll_sse = 0;  // of the best scroll fit (+∞ if not tried).
  bool scroll = false;    // true when the scroll fit won.
  int points = 0;         // points used (see FitDivergence).
};

// Fits both families and keeps the one whose SSE over the points is smaller
// (the saturation pseudo-point's term is left out of that comparison, but
// included in sse). Points with t ≤ 0 or non-finite values are skipped (d
// is clamped to [0, 1]), under given_change also those with d = 0. No usable
// point: the model is "never changes" (static_share 1) with sse 0 and points
// 0. With fewer than 3 points only the churn family is fitted (scroll is
// over-parameterized).
DivergenceFit FitDivergence(std::span<const ProfilePoint> points,
                            const DivergenceFitOptions& options = {});
// The same for (t, d) pairs (e.g. ProfileSet::Pooled() of page_state.h).
DivergenceFit FitDivergence(std::span<const std::pair<double, double>> points,
                            const DivergenceFitOptions& options = {});

// How many of `points` FitDivergence would use under `options` (its result's
// `points`), without fitting.
int FitPoints(std::span<const ProfilePoint> points,
              const DivergenceFitOptions& options);

// The two families on their own (same conventions); sse in the result.
DivergenceFit FitChurn(std::span<const ProfilePoint> points,
                       const DivergenceFitOptions& options = {});
DivergenceFit FitScroll(std::span<const ProfilePoint> points,
                        const DivergenceFitOptions& options = {});

// Scroll-only divergence for share s static, K items, rate λ at time t
// (docs/MATH.md Paper 3 (a)); exposed for tests and the fit's callers.
double ScrollDivergence(double s, int k, double rate, double t);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_DIVERGENCE_FIT_H_
