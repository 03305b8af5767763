// Numerical building blocks of sched/: the regularized incomplete gamma γ_j for
// integer j, Taylor remainders of exp, and a bracketed root finder. Accurate to
// a few ulps times the number of terms; never throw; thread-safe.
#ifndef FRESHD_SCHED_SPECIAL_FUNCTIONS_H_
#define FRESHD_SCHED_SPECIAL_FUNCTIONS_H_

#include <functional>

namespace freshd::sched {

// γ_j(x) = 1 − e^{−x} Σ_{i≤j} x^i/i! = P(j+1, x) = P(Poisson(x) > j), for j ≥
// 0, x ≥ 0. Returns 0 for x ≤ 0, NaN for NaN x; 1 for x = +∞. Cost O(j + √x)
// without cancellation.
double GammaJ(int j, double x);

// e^x − Σ_{i<n} x^i/i! (the Taylor remainder of exp), accurate also for small
// |x|; n ≥ 0.
double ExpRemainder(int n, double x);

// h(x) = ∫₀^x s(1−e^{−s})ds = x²/2 − 1 + (1+x)e^{−x}, x ≥ 0 (the age-metric
// kernel: x³/3 near 0, x²/2 − 1 for large x). +∞ for x = +∞.
double AgeIntegral(double x);

// A root of f in [lo, hi] where f(lo) and f(hi) differ in sign (or one is 0),
// by TOMS 748 (Boost.Math) to |hi − lo| ≤ rel_tol·|x| + abs_tol. Returns NaN if
// the bracket is invalid or f returns NaN.
double FindRoot(const std::function<double(double)>& f, double lo, double hi,
                double rel_tol = 1e-14, double abs_tol = 0, int max_iter = 200);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SPECIAL_FUNCTIONS_H_
