// Crawl values: the Lagrangian marginal gain of crawling one page now
// (docs/MATH.md Paper 2).
//
// V(θ) = μ[G(θ) − e^{−κθ}L(θ)] for the threshold policy "crawl when τ_eff ≥ θ",
// with the special cases GREEDY (no signals), GREEDY-CIS (ν = 0) and α = 1 (κ =
// 0); plus the crawl value under Cho & Garcia-Molina's age metric. Pure
// functions: no clock, no I/O, no state; thread-safe. Rates are per unit time,
// times in the same unit. Invalid inputs (negative rates, NaN) yield NaN; Δ = 0
// (a page that never changes) gives value 0.
#ifndef FRESHD_SCHED_CRAWL_VALUE_H_
#define FRESHD_SCHED_CRAWL_VALUE_H_

namespace freshd::sched {

// One page's model parameters (docs/MATH.md Paper 2 (a)).
struct PageParams {
  double delta;      // Δ: Poisson change rate (> 0).
  double mu;         // μ: importance / request rate (≥ 0).
  double alpha = 0;  // α: signal recall, in [0, 1].
  double nu = 0;     // ν: false-signal rate (≥ 0).
};

// GREEDY value (docs/MATH.md Paper 2 (b)): (μ/Δ)(1 − (1+Δτ)e^{−Δτ}) for τ time
// since the last crawl. 0 at τ = 0, increasing to μ/Δ. Equals μ·∂F̄/∂f of Cho &
// Garcia-Molina at f = 1/τ.
double GreedyValue(double delta, double mu, double tau);

// Crawl value under the (time-averaged) age metric, fixed-order refresh: the
// Lagrangian marginal gain −μ·∂Ā/∂f at f = 1/τ = μ[τ²/2 − (1−e^{−Δτ})/Δ² +
// τe^{−Δτ}/Δ] = μ∫₀^τ s(1−e^{−Δs})ds (derivation in crawl_value.cc). 0 at τ =
// 0, strictly increasing and unbounded, so no page is ever abandoned. The
// threshold policy "crawl when AgeValue ≥ λ" with Σ1/τ_i = R is the age-optimal
// allocation of Cho & Garcia-Molina (Tables IV/V, age). Δ = 0 gives 0 (the page
// never ages).
double AgeValue(double delta, double mu, double tau);

// τ_s = ln((αΔ+ν)/ν)/((1−α)Δ): the elapsed time one signal is worth. +∞ when ν
// == 0 and α > 0 (a signal proves a change, CIS) or when α == 1 (κ = 0); 0 when
// α == 0.
double SignalTimeEquivalent(const PageParams& p);

// P(fresh | τ, n) = e^{−κτ}·q^n, κ = (1−α)Δ, q = ν/(αΔ+ν) (docs/MATH.md Paper 2
// (a)): the probability that a page copied τ ago, with n signals received
// since, has not changed (n may be fractional: signals weighted by their
// source's quality, sched/signal_estimator.h). α = 0 gives GREEDY's e^{−Δτ}
// (signals carry no information); ν = 0 with n ≥ 1 gives 0 (a signal proves a
// change); Δ = 0 gives 1. When σ = αΔ + ν = 0 the model emits no signals, so n
// is ignored.
double FreshProbability(const PageParams& p, double tau, double n_signals);

// Expected cycle length L(θ) and expected fresh time per cycle G(θ) of the
// threshold policy with threshold θ on effective time (docs/MATH.md Paper 2
// (c)). max_terms > 0 keeps only the terms j < max_terms (APPROX-m); 0 = exact
// (MATH's truncation rule).
double NcisCycleLength(const PageParams& p, double theta, int max_terms = 0);
double NcisFreshTime(const PageParams& p, double theta, int max_terms = 0);

// V(θ) = μ[G(θ) − e^{−κθ}L(θ)] evaluated at θ = τ_eff = τ + n·τ_s (exact when
// max_terms == 0, APPROX-m otherwise). Handles ν = 0 (GREEDY-CIS), α = 0
// (GREEDY) and α = 1 (κ = 0: V = μ[(1−q^n)/Δ − n q^n/σ]).
double NcisValue(const PageParams& p, double tau, double n_signals,
                 int max_terms = 0);

// V as a function of the effective time θ (the threshold form used by the
// Lagrangian). Not defined for α == 1 (κ = 0), where the value depends on n
// only: returns NaN then.
double NcisValueAtTheta(const PageParams& p, double theta, int max_terms = 0);

// Whether NcisValueAtTheta(p, θ) sums L and G in closed form (O(1): a signal
// worth little time, θ many τ_s long; crawl_value.cc) instead of term by
// term. Exposed for tests and benchmarks; false for invalid input.
bool NcisSumsInClosedForm(const PageParams& p, double theta);

// GREEDY-CIS: trusts signals (ν treated as 0): μ/Δ once n ≥ 1, else
// (μ/Δ)[1 − e^{−Δτ} − (e^{−(1−α)Δτ} − e^{−Δτ})/α] (GREEDY when α = 0).
double CisValue(const PageParams& p, double tau, int n_signals);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_CRAWL_VALUE_H_
