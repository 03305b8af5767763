// Cho & Garcia-Molina (TODS 2003) freshness and age of one element
// (docs/MATH.md Paper 1 (a)).
//
// An element changes as a Poisson process of rate λ and is synchronized f times
// per unit time in fixed, random or purely random order; r = λ/f. Time-averaged
// freshness F̄ and age Ā, the expectations at time t since a sync, and the
// derivatives the optimal allocation uses. Pure functions, accurate for small
// and large r (series where closed forms cancel). Thread-safe. Invalid inputs
// (negative or NaN rates) give NaN.
#ifndef FRESHD_SCHED_REFRESH_MATH_H_
#define FRESHD_SCHED_REFRESH_MATH_H_

namespace freshd::sched {

enum class SyncOrder { kFixed, kRandom, kPurelyRandom };

// E[F(t)] = e^{−λt}: probability an element synced t ago is fresh.
double ExpectedFreshness(double lambda, double t);
// E[A(t)] = t − (1−e^{−λt})/λ: expected age t after a sync.
double ExpectedAge(double lambda, double t);

// Time-averaged freshness F̄(λ, f) ∈ [0, 1]. f = 0 gives 0 (never synced); λ = 0
// gives 1.
double TimeAveragedFreshness(SyncOrder order, double lambda, double f);
// Time-averaged age Ā(λ, f) ≥ 0. f = 0 gives +∞ (unless λ = 0: 0).
double TimeAveragedAge(SyncOrder order, double lambda, double f);

// Fixed order: ∂F̄/∂f = (1−e^{−λ/f})/λ − e^{−λ/f}/f, falling from 1/λ (f→0) to
// 0.
double FreshnessDerivative(double lambda, double f);
// Fixed order: ∂Ā/∂f = −1/(2f²) + (1−e^{−λ/f})/λ² − e^{−λ/f}/(λf) < 0.
double AgeDerivative(double lambda, double f);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_REFRESH_MATH_H_
