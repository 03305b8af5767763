#include "sched/divergence_model.h"

#include <boost/container/small_vector.hpp>
#include <cmath>
#include <limits>

#include "sched/math_constants.h"
#include "sched/special_functions.h"

// Derivation (docs/MATH.md Paper 3 (a)). u = c·B + k·min(J,K)/K with B ~
// Bernoulli(p), p = 1 − e^{−λ_c t}, J ~ Poisson(λ_s t); D = g(u) = 2u/(1+u).
// Writing Δg_{b,j} = g(cb + k(j+1)/K) − g(cb + kj/K) and P(J > j) = γ_j(λ_s t):
//   D(t) = p·C + Σ_j A_j γ_j(λ_s t) + e^{−λ_c t} Σ_j B_j γ_j(λ_s t),
// with C = g(c), A_j = Δg_{1,j}, B_j = Δg_{0,j} − A_j. U = tD − ∫D is linear in
// D and
//   U[p] = γ₁(λ_c t)/λ_c,  U[γ_j(λ_s t)] = ((j+1)/λ_s)·γ_{j+1}(λ_s t),
//   U[e^{−at}γ_j(bt)] = t e^{−at}γ_j(bt) − (1−e^{−at})/a + Σ_{i≤j}
//   b^i/Λ^{i+1}·γ_i(Λt),
// Λ = a + b. As t → ∞ the last bracket tends to −(1/a)(b/Λ)^{j+1}.

namespace freshd::sched {
namespace {

// Per-call scratch: no heap allocation for K up to 32 (the common case).
using Row = boost::container::small_vector<double, 33>;

}  // namespace

bool IsValid(const DivergenceModel& m) {
  const auto share = [](double x) { return x >= 0 && x <= 1; };
  const auto rate = [](double x) { return x >= 0 && std::isfinite(x); };
  return share(m.static_share) && share(m.churn_share) &&
         m.static_share + m.churn_share <= 1 + 1e-12 && rate(m.churn_rate) &&
         rate(m.scroll_rate) && m.scroll_k >= 1 &&
         m.scroll_k <= kMaxScrollItems;
}

namespace {

// The model's coefficients with zero-rate regions folded into the static share.
struct Coefficients {
  double c = 0;   // effective churn share
  double k = 0;   // effective scroll share
  double cg = 0;  // C = g(c)
  Row a;          // A_j
  Row b;          // B_j
};

Coefficients Prepare(const DivergenceModel& m) {
  Coefficients co;
  co.c = m.churn_rate > 0 ? m.churn_share : 0;
  const double scroll = std::fmax(0.0, 1 - m.static_share - m.churn_share);
  co.k = m.scroll_rate > 0 ? scroll : 0;
  co.cg = JaccardDistanceOfReplaced(co.c);
  if (co.k > 0) {
    const int kk = m.scroll_k;
    co.a.resize(kk);
    co.b.resize(kk);
    for (int j = 0; j < kk; ++j) {
      const double lo = co.k * j / kk, hi = co.k * (j + 1) / kk;
      co.a[j] = JaccardDistanceOfReplaced(co.c + hi) -
                JaccardDistanceOfReplaced(co.c + lo);
      co.b[j] =
          (JaccardDistanceOfReplaced(hi) - JaccardDistanceOfReplaced(lo)) -
          co.a[j];
    }
  }
  return co;
}

// γ_j(y) for j = 0..n−1, incrementally: forward Poisson pmf terms give
// γ_j = 1 − cdf_j; where that has cancelled (γ_j < 1e-3) the upper tails are
// summed instead, γ_j = γ_{j+1} + pmf_{j+1} (positive terms, no cancellation),
// from one accurate γ_{n−1}. O(n) instead of O(n²) calls into GammaJ.
Row GammaRow(int n, double y) {
  Row out(n);
  if (n <= 0 || !(y > 0)) return out;  // γ_j(0) = 0
  if (y > 700) {                       // e^{−y} underflows
    for (int j = 0; j < n; ++j) out[j] = GammaJ(j, y);
    return out;
  }
  Row pmf(n);
  double p = std::exp(-y), cdf = 0;
  for (int j = 0; j < n; ++j) {
    if (j > 0) p *= y / j;
    pmf[j] = p;
    cdf += p;
    out[j] = std::fmax(0.0, 1 - cdf);
  }
  if (out[n - 1] >= 1e-3) return out;
  double tail = GammaJ(n - 1, y);
  out[n - 1] = tail;
  for (int j = n - 2; j >= 0 && out[j] < 1e-3; --j) {
    tail += pmf[j + 1];
    out[j] = tail;
  }
  return out;
}

// U(t) for a valid model, finite t > 0, with its coefficients prepared.
double PreparedUtility(const DivergenceModel& m, const Coefficients& co,
                       double t) {
  double u = 0;
  const double a = m.churn_rate, b = m.scroll_rate;
  if (co.c > 0) u += co.cg * GammaJ(1, a * t) / a;
  if (co.k > 0) {
    const int kk = m.scroll_k;
    const Row gb = GammaRow(kk + 1, b * t);
    for (int j = 0; j < kk; ++j) u += co.a[j] * (j + 1) / b * gb[j + 1];
    if (co.c > 0) {
      const double lam = a + b;
      const double e = std::exp(-a * t);
      const Row gl = GammaRow(kk, lam * t);
      double inner = 0, coef = 1 / lam;  // Σ_{i≤j} b^i/Λ^{i+1} γ_i(Λt)
      for (int j = 0; j < kk; ++j) {
        inner += coef * gl[j];
        coef *= b / lam;
        u += co.b[j] * (t * e * gb[j] + std::expm1(-a * t) / a + inner);
      }
    }
  }
  return u;
}

}  // namespace

double Divergence(const DivergenceModel& m, double t) {
  if (!IsValid(m) || !(t >= 0)) return kNaN;
  if (t == 0) return 0;
  const Coefficients co = Prepare(m);
  const double e = co.c > 0 ? std::exp(-m.churn_rate * t) : 1;
  double d = (1 - e) * co.cg;
  if (co.k > 0) {
    const Row gam = GammaRow(m.scroll_k, m.scroll_rate * t);
    for (int j = 0; j < m.scroll_k; ++j) d += (co.a[j] + e * co.b[j]) * gam[j];
  }
  return d;
}

double Utility(const DivergenceModel& m, double t) {
  if (!IsValid(m) || !(t >= 0)) return kNaN;
  if (t == 0) return 0;
  if (std::isinf(t)) return SupUtility(m);
  return PreparedUtility(m, Prepare(m), t);
}

double SaturationDivergence(const DivergenceModel& m) {
  if (!IsValid(m)) return kNaN;
  const double scroll = std::fmax(0.0, 1 - m.static_share - m.churn_share);
  return JaccardDistanceOfReplaced((m.churn_rate > 0 ? m.churn_share : 0) +
                                   (m.scroll_rate > 0 ? scroll : 0));
}

DivergenceModel ChurnModelAtLevel(double a, double rate) {
  DivergenceModel m;
  const double c = a / (2 - a);  // g(c) = 2c/(1 + c) = a
  m.static_share = 1 - c;
  m.churn_share = c;
  m.churn_rate = rate;
  return m;
}

double SupUtility(const DivergenceModel& m) {
  if (!IsValid(m)) return kNaN;
  const Coefficients co = Prepare(m);
  double u = 0;
  const double a = m.churn_rate, b = m.scroll_rate;
  if (co.c > 0) u += co.cg / a;
  if (co.k > 0) {
    double pw = co.c > 0 ? b / (a + b) : 0;
    for (int j = 0; j < m.scroll_k; ++j) {
      u += co.a[j] * (j + 1) / b;
      if (co.c > 0) {
        u -= co.b[j] * pw / a;
        pw *= b / (a + b);
      }
    }
  }
  return u;
}

double UtilityInverse(const DivergenceModel& m, double target) {
  if (!IsValid(m) || std::isnan(target)) return kNaN;
  if (target <= 0) return 0;
  if (!(SupUtility(m) > target)) return kInf;
  const Coefficients co = Prepare(m);
  auto excess = [&](double t) {
    return t > 0 ? PreparedUtility(m, co, t) - target : -target;
  };
  const double rate = std::fmax(m.churn_rate, m.scroll_rate);
  double lo = 0, hi = 1 / rate;
  for (int i = 0; excess(hi) < 0; ++i) {
    if (i > 2000) return kInf;  // target within rounding of sup U
    lo = hi;
    hi *= 2;
  }
  return FindRoot(excess, lo, hi, 1e-13);
}

}  // namespace freshd::sched
