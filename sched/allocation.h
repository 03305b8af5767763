// Optimal allocation of a crawl budget (docs/MATH.md Paper 1 Solver, Paper 2
// (c) KKT).
//
// Cho & Garcia-Molina: weighted sync frequencies f_i maximizing Σw_iF̄_i (or
// minimizing Σw_iĀ_i) under Σf_i = total, fixed-order refresh. Continuous
// Lagrangian optima of the threshold policies: GREEDY/Azar (no signals), NCIS
// (signals) and longevity (fragment staleness, Olston & Pandey), the
// "continuous optimum" the simulator is compared with. Pure
// functions of their inputs; thread-safe. Inputs are validated; bad input
// yields Status::InvalidArgument, never a crash.
#ifndef FRESHD_SCHED_ALLOCATION_H_
#define FRESHD_SCHED_ALLOCATION_H_

#include <span>
#include <vector>

#include "base/status.h"
#include "sched/crawl_value.h"
#include "sched/divergence_model.h"

namespace freshd::sched {

enum class SyncMetric { kFreshness, kAge };

struct SyncAllocation {
  double multiplier =
      0;  // μ of MATH Paper 1 (w_i ∂F̄/∂f = μ, or w_i ∂Ā/∂f = −μ).
  std::vector<double>
      frequencies;       // f_i ≥ 0, Σ f_i = total (to ~1e-10 relative).
  double objective = 0;  // Σw_iF̄_i/Σw_i (freshness) or Σw_iĀ_i/Σw_i (age).
};

// Cho & Garcia-Molina optimal allocation (fixed-order sync). lambdas > 0,
// weights ≥ 0 (empty = all 1; else same size as lambdas, Σw > 0), total > 0, at
// most kMaxAllocationPages pages. Fails with InvalidArgument on bad input.
// Freshness: any total > 0 is met (Σf_i = total to ~1e-12 relative, down to
// totals far below every λ_i: the KKT condition γ₁(λ_i/f_i) = μλ_i/w_i is
// solved without forming 1 − μλ_i/w_i by subtraction; see allocation.cc);
// a total beyond ≈ 1e150·Σλ_i is InvalidArgument.
inline constexpr size_t kMaxAllocationPages = 10'000'000;
Result<SyncAllocation> OptimalSyncAllocation(std::span<const double> lambdas,
                                             std::span<const double> weights,
                                             double total, SyncMetric metric);

// Continuous Lagrangian optimum of a threshold policy: every crawled page i is
// crawled when its value reaches `multiplier` (V_i(θ_i) = λ), Σ rates =
// total_rate.
struct ContinuousOptimum {
  double multiplier = 0;  // λ.
  std::vector<double>
      theta;  // θ_i threshold (effective time); +∞ for abandoned pages.
  std::vector<double>
      rates;  // r_i = 1/L_i(θ_i) crawls per unit time; 0 if abandoned.
  double accuracy =
      0;  // Σμ_i G_i/L_i / Σμ_i: μ-weighted fraction of time fresh.
  int abandoned = 0;  // pages with μ_i/Δ_i ≤ λ (rate 0).
};

// GREEDY/Azar: pages with change rates delta (> 0), importance mu (≥ 0), total
// rate > 0. θ_i = crawl interval, G_i/L_i = (1 − e^{−Δθ})/(Δθ).
Result<ContinuousOptimum> GreedyContinuousOptimum(std::span<const double> delta,
                                                  std::span<const double> mu,
                                                  double total_rate);

// NCIS: the same with signals (MATH Paper 2 (c)); pages with α = 1 are clamped
// to 1 − 1e-6.
Result<ContinuousOptimum> NcisContinuousOptimum(
    std::span<const PageParams> pages, double total_rate);

// Continuous optimum of fragment staleness (Olston & Pandey, periodic
// refresh): page i refreshed every τ_i where μ_i·U_i(τ_i) = λ (the longevity
// policy's threshold rule; U = t·D − ∫D, divergence_model.h), Σ 1/τ_i =
// total_rate; pages with μ_i·sup U_i ≤ λ are never refreshed. Staleness is
// Σμ_i S_i/Σμ_i, S(τ) = (1/τ)∫₀^τ D = D(τ) − U(τ)/τ, D(∞) for a page never
// refreshed. models: valid (IsValid), mu ≥ 0 (Σμ > 0), the same length.
struct StalenessOptimum {
  double multiplier = 0;      // λ.
  std::vector<double> rates;  // 1/τ_i; 0 for pages never refreshed.
  double staleness = 0;       // μ-weighted time-averaged fragment staleness.
  int abandoned = 0;          // pages never refreshed.
};
Result<StalenessOptimum> LongevityContinuousOptimum(
    std::span<const DivergenceModel> models, std::span<const double> mu,
    double total_rate);

// The same staleness for given periodic rates r_i ≥ 0 (0: never refreshed),
// e.g. the GREEDY optimum's rates, to compare what each objective buys.
Result<double> PeriodicStaleness(std::span<const DivergenceModel> models,
                                 std::span<const double> mu,
                                 std::span<const double> rates);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_ALLOCATION_H_
