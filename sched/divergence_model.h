// Olston & Pandey divergence curves and refresh utility (docs/MATH.md Paper 3
// (a)).
//
// A page of N fragments: a static share, a churn share replaced all at once at
// Poisson rate churn_rate, and a scroll share of scroll_k items shifted at
// Poisson rate scroll_rate. D(t) is the expected Jaccard distance between
// versions t apart (exact, D = 2u/(1+u)); U(t) = t·D(t) − ∫₀ᵗ D is the utility
// of refreshing at age t. Pure functions; thread-safe.
#ifndef FRESHD_SCHED_DIVERGENCE_MODEL_H_
#define FRESHD_SCHED_DIVERGENCE_MODEL_H_

namespace freshd::sched {

// g(u) = 2u/(1 + u): the Jaccard distance between two versions of a page
// when a share u of its fragments was replaced.
inline double JaccardDistanceOfReplaced(double u) { return 2 * u / (1 + u); }

// Largest K accepted (cost is O(K²) per evaluation); larger K gives NaN.
inline constexpr int kMaxScrollItems = 4096;

struct DivergenceModel {
  double static_share = 1;  // s ∈ [0, 1].
  double churn_share = 0;   // c ∈ [0, 1 − s].
  double churn_rate = 0;    // λ_c ≥ 0.
  int scroll_k = 1;  // K ≥ 1 items in the scroll region (share 1 − s − c).
  double scroll_rate = 0;  // λ_s ≥ 0.
};

// A model is valid when shares are in [0, 1] with s + c ≤ 1 (+1e-12), rates ≥ 0
// and finite, 1 ≤ K ≤ kMaxScrollItems; otherwise every function returns NaN. A
// region whose rate is 0 never changes (counts as static).

// True when the model is valid (above).
bool IsValid(const DivergenceModel& m);

// D*(t), t ≥ 0: expected divergence. 0 at t = 0, nondecreasing, limit g(1 − s).
double Divergence(const DivergenceModel& m, double t);

// lim_{t→∞} D(t) = g(share of fragments that ever change).
double SaturationDivergence(const DivergenceModel& m);

// The churn-only model that saturates at divergence a ∈ [0, 1]: a share
// c = g⁻¹(a) = a/(2 − a) of fragments churning at `rate`, the rest static.
DivergenceModel ChurnModelAtLevel(double a, double rate);

// U(t) = t·D(t) − ∫₀ᵗ D(x)dx (closed form). Nondecreasing since U′ = t·D′.
double Utility(const DivergenceModel& m, double t);

// lim_{t→∞} U(t). Always finite: a region with rate 0 never changes and counts
// as static.
double SupUtility(const DivergenceModel& m);

// φ ≥ 0 with U(φ) = T, by TOMS 748 to relative 1e-13. +∞ if SupUtility(m) ≤ T;
// 0 if T ≤ 0.
double UtilityInverse(const DivergenceModel& m, double target);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_DIVERGENCE_MODEL_H_
