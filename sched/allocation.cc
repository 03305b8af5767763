#include "sched/allocation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "sched/math_constants.h"
#include "sched/refresh_math.h"
#include "sched/special_functions.h"

namespace freshd::sched {
namespace {

constexpr double kRelTol = 1e-15;

bool Finite(double x) { return std::isfinite(x); }

// Smallest x > 0 with h(x) ≥ p for an increasing h with h(0) = 0, h(∞) > p > 0,
// by bracketing from `start` and TOMS 748.
template <typename H>
double InverseIncreasing(const H& h, double p, double start) {
  double lo = start, hi = start;
  while (h(lo) > p) lo *= 0.5;
  while (h(hi) < p) hi *= 2;
  return FindRoot([&](double x) { return h(x) - p; }, lo, hi, kRelTol);
}

// x > 0 with γ₁(x) = 1 − (1+x)e^{−x} = p, given p and ln q for q = 1 − p,
// each computed by the caller without cancellation. Below p = 1/2 from p
// (γ₁ is accurate near 0); above it from the complement in log form,
// x − ln(1+x) = −ln q, which holds its precision for q far below the double
// epsilon (q = 1e−300 is x ≈ 700; ln q = −1e6 is x ≈ 1e6). +∞ for q = 0.
double InverseGammaOne(double p, double log_q) {
  if (p <= 0.5) {
    return InverseIncreasing([](double y) { return GammaJ(1, y); }, p,
                             std::sqrt(2 * p));
  }
  const double l = -log_q;
  if (!Finite(l)) return kInf;
  if (l > 1e250) return l;  // ln(1+x) ≤ 576 is below l's last bit
  // g(x) = x − ln(1+x) is increasing, g(l) < l and g(2l + 2) > l.
  return FindRoot([l](double x) { return x - std::log1p(x) - l; }, l, 2 * l + 2,
                  kRelTol);
}

// Where the freshness multiplier μ is, for the stable solver below. The KKT
// condition of page i with m_i = w_i/λ_i is γ₁(λ_i/f_i) = μ/m_i (abandoned
// when m_i ≤ μ), so p_i = μ/m_i approaches 1 and q_i = 1 − p_i must not be
// formed by subtraction when μ is just below some m_g. With the distinct
// m's sorted descending, M_1 > M_2 > …, μ is represented either
//  - anchored at a = M_g: μ = a·(1 − e^y), y ≤ ln ½, so q_i = e^y exactly for
//    pages with m_i = a and (m_i − a)/m_i + (a/m_i)e^y for m_i > a, or
//  - directly (anchor 0): μ = e^y ≤ M_g/2, where every active page has
//    p_i ≤ ½.
inline constexpr double kMinLogMultiplier = -700;  // e^y stays a normal double

struct MuPoint {
  double anchor;  // M_g, or 0 when y = ln μ
  double y;
};

// f_i at `at` for a page with change rate λ, weight w (> 0) and m = w/λ.
double FreshnessFrequencyAt(double lambda, double m, const MuPoint& at) {
  double p, log_q;
  if (at.anchor == 0) {
    p = std::exp(at.y) / m;
    if (p >= 1) return 0;
    log_q = std::log1p(-p);
  } else {
    const double a = at.anchor;
    if (m < a) return 0;  // μ ≥ M_{g+1} ≥ m: abandoned
    const double one_minus_eps = -std::expm1(at.y);
    if (m == a) {
      p = one_minus_eps;
      log_q = at.y;
    } else {
      p = (a / m) * one_minus_eps;
      log_q = std::log((m - a) / m + (a / m) * std::exp(at.y));
    }
  }
  const double x = InverseGammaOne(p, log_q);
  return Finite(x) ? lambda / x : 0;
}

// The multiplier of the freshness allocation with Σf_i = total, found
// without forming 1 − μ/m_i by subtraction, so any total > 0 is met (the
// plain inversion of γ₁(x) = μ/m_i in double precision cannot give x beyond
// ≈ 37, so no page got less than λ_i/40 and small totals were overspent 2.5×).
class FreshnessSolver {
 public:
  FreshnessSolver(std::span<const double> lambdas, std::span<const double> w)
      : lambdas_(lambdas) {
    m_.resize(lambdas.size());
    for (size_t i = 0; i < lambdas.size(); ++i) {
      m_[i] = w[i] > 0 ? w[i] / lambdas[i] : 0;
      if (m_[i] > 0) levels_.push_back(m_[i]);
    }
    std::sort(levels_.begin(), levels_.end(), std::greater<>());
    levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
  }

  double Total(const MuPoint& at) const {
    double s = 0;
    for (size_t i = 0; i < m_.size(); ++i) {
      if (m_[i] > 0) s += FreshnessFrequencyAt(lambdas_[i], m_[i], at);
    }
    return s;
  }

  double Frequency(size_t i, const MuPoint& at) const {
    return m_[i] > 0 ? FreshnessFrequencyAt(lambdas_[i], m_[i], at) : 0;
  }

  static double Multiplier(const MuPoint& at) {
    return at.anchor == 0 ? std::exp(at.y) : at.anchor * -std::expm1(at.y);
  }

  // The point with Total = target; nullopt if it is out of reach (a total
  // beyond ≈ 1e150 × the change rates).
  std::optional<MuPoint> Solve(double target) const {
    // Total at μ = M_g (page group g just abandoned) grows with g: the
    // solution lies below the last level whose total is ≤ target.
    auto at_level = [&](size_t g) { return Total(MuPoint{levels_[g], -kInf}); };
    size_t lo = 0, hi = levels_.size();  // at_level(lo) ≤ target < at hi
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      (at_level(mid) <= target ? lo : hi) = mid;
    }
    const double a = levels_[lo];
    const double next = lo + 1 < levels_.size() ? levels_[lo + 1] : 0;
    auto excess_anchored = [&](double y) {
      return Total(MuPoint{a, y}) - target;
    };
    const double y_half = std::log(0.5);
    if (next >= a / 2 || excess_anchored(y_half) >= 0) {
      const double y_hi = next >= a / 2 ? std::log1p(-next / a) : y_half;
      double y_lo = std::min(y_hi, -1.0);
      while (excess_anchored(y_lo) >= 0) {
        if (y_lo < -1e300) return MuPoint{a, y_lo};  // f below 1e−300·λ
        y_lo *= 2;
      }
      if (excess_anchored(y_hi) <= 0) return MuPoint{a, y_hi};
      return MuPoint{a, FindRoot(excess_anchored, y_lo, y_hi, kRelTol)};
    }
    auto excess_direct = [&](double y) {
      return Total(MuPoint{0, y}) - target;
    };
    const double y_hi = std::log(a / 2);
    double y_lo = next > 0 ? std::log(next) : y_hi - 1;
    while (next == 0 && excess_direct(y_lo) < 0) {
      y_lo = y_hi - 2 * (y_hi - y_lo);
      if (y_lo < kMinLogMultiplier) return std::nullopt;
    }
    const double y = FindRoot(excess_direct, y_lo, y_hi, 0, 1e-15);
    if (!Finite(y)) return std::nullopt;
    return MuPoint{0, y};
  }

 private:
  std::span<const double> lambdas_;
  std::vector<double> m_;       // w_i/λ_i, 0 for weight 0
  std::vector<double> levels_;  // distinct m_i > 0, descending
};

// f_i(μ) of the Cho & Garcia-Molina age KKT condition for one page:
// w·∂Ā/∂f = −w·h(λ/f)/λ² = −μ ⇔ h(x) = μλ²/w (h is unbounded: no page is
// abandoned and no subtraction nears 1).
double AgeFrequency(double lambda, double w, double mu) {
  if (w <= 0) return 0;
  const double p = mu * lambda * lambda / w;
  const double x = InverseIncreasing(AgeIntegral, p, std::cbrt(3 * p));
  return lambda / x;
}

// Finds the multiplier m with total(m) = target for a total decreasing in m, by
// TOMS 748 on log m, starting from the bracket [lo, hi] (expanded as needed; hi
// may be where total = 0).
template <typename Total>
double SolveMultiplier(const Total& total, double target, double lo,
                       double hi) {
  for (int i = 0; i < 2000 && total(lo) <= target; ++i) lo *= 0.5;
  for (int i = 0; i < 2000 && total(hi) > target; ++i) hi *= 2;
  const double log_m =
      FindRoot([&](double y) { return total(std::exp(y)) - target; },
               std::log(lo), std::log(hi), 0, 1e-15);
  return std::exp(log_m);
}

// The multiplier of a threshold policy whose per-page rates sum to
// total(λ), decreasing in λ and 0 from lam_hi on: total(λ) = target.
template <typename Total>
Result<double> ThresholdMultiplier(const Total& total, double target,
                                   double lam_hi) {
  const double lam = SolveMultiplier(total, target, 0.5 * lam_hi, lam_hi);
  if (!(lam > 0) || !Finite(lam))
    return Status::Internal("allocation did not converge");
  return lam;
}

Status CheckCommon(size_t n, double total) {
  if (n == 0) return Status::InvalidArgument("no pages");
  if (n > kMaxAllocationPages) return Status::InvalidArgument("too many pages");
  if (!(total > 0) || !Finite(total))
    return Status::InvalidArgument("total must be positive and finite");
  return Status::OK();
}

}  // namespace

Result<SyncAllocation> OptimalSyncAllocation(std::span<const double> lambdas,
                                             std::span<const double> weights,
                                             double total, SyncMetric metric) {
  const size_t n = lambdas.size();
  if (Status s = CheckCommon(n, total); !s.ok()) return s;
  if (!weights.empty() && weights.size() != n)
    return Status::InvalidArgument("weights and lambdas differ in length");
  std::vector<double> w(n, 1.0);
  if (!weights.empty()) w.assign(weights.begin(), weights.end());
  double w_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(lambdas[i] > 0) || !Finite(lambdas[i]))
      return Status::InvalidArgument("change rate " + std::to_string(i) +
                                     " must be > 0");
    if (!(w[i] >= 0) || !Finite(w[i]))
      return Status::InvalidArgument("weight " + std::to_string(i) +
                                     " must be >= 0");
    w_sum += w[i];
  }
  if (!(w_sum > 0)) return Status::InvalidArgument("all weights are 0");

  SyncAllocation out;
  out.frequencies.resize(n);
  if (metric == SyncMetric::kFreshness) {
    const FreshnessSolver solver(lambdas, w);
    const std::optional<MuPoint> at = solver.Solve(total);
    if (!at) return Status::InvalidArgument("total is too large to allocate");
    out.multiplier = FreshnessSolver::Multiplier(*at);
    for (size_t i = 0; i < n; ++i)
      out.frequencies[i] = solver.Frequency(i, *at);
  } else {
    auto sum_f = [&](double mu) {
      double s = 0;
      for (size_t i = 0; i < n; ++i) s += AgeFrequency(lambdas[i], w[i], mu);
      return s;
    };
    out.multiplier = SolveMultiplier(sum_f, total, 0.5, 1.0);
    for (size_t i = 0; i < n; ++i)
      out.frequencies[i] = AgeFrequency(lambdas[i], w[i], out.multiplier);
  }
  if (!(out.multiplier > 0) || !Finite(out.multiplier))
    return Status::Internal("allocation did not converge");
  double obj = 0;
  for (size_t i = 0; i < n; ++i) {
    const double f = out.frequencies[i];
    if (w[i] == 0) continue;
    obj += w[i] * (metric == SyncMetric::kFreshness
                       ? TimeAveragedFreshness(SyncOrder::kFixed, lambdas[i], f)
                       : TimeAveragedAge(SyncOrder::kFixed, lambdas[i], f));
  }
  out.objective = obj / w_sum;
  return out;
}

Result<ContinuousOptimum> GreedyContinuousOptimum(std::span<const double> delta,
                                                  std::span<const double> mu,
                                                  double total_rate) {
  if (delta.size() != mu.size())
    return Status::InvalidArgument("delta and mu differ in length");
  Result<SyncAllocation> a =
      OptimalSyncAllocation(delta, mu, total_rate, SyncMetric::kFreshness);
  if (!a.ok()) return a.status();
  ContinuousOptimum out;
  out.multiplier = a->multiplier;
  out.accuracy = a->objective;
  out.rates = a->frequencies;
  out.theta.resize(delta.size());
  for (size_t i = 0; i < delta.size(); ++i) {
    out.theta[i] = out.rates[i] > 0 ? 1 / out.rates[i] : kInf;
    if (out.rates[i] == 0) ++out.abandoned;
  }
  return out;
}

Result<ContinuousOptimum> NcisContinuousOptimum(
    std::span<const PageParams> pages, double total_rate) {
  const size_t n = pages.size();
  if (Status s = CheckCommon(n, total_rate); !s.ok()) return s;
  std::vector<PageParams> p(pages.begin(), pages.end());
  double mu_sum = 0, lam_hi = 0;
  for (size_t i = 0; i < n; ++i) {
    const PageParams& q = p[i];
    if (!(q.delta > 0) || !Finite(q.delta) || !(q.mu >= 0) || !Finite(q.mu) ||
        !(q.alpha >= 0 && q.alpha <= 1) || !(q.nu >= 0) || !Finite(q.nu))
      return Status::InvalidArgument("invalid parameters for page " +
                                     std::to_string(i));
    p[i].alpha = std::min(q.alpha, 1 - 1e-6);
    mu_sum += q.mu;
    lam_hi = std::max(lam_hi, q.mu / q.delta);
  }
  if (!(mu_sum > 0)) return Status::InvalidArgument("all importances are 0");

  // θ_i(λ): V_i(θ) = λ, +∞ when the page is abandoned (μ/Δ ≤ λ).
  auto theta_of = [&](size_t i, double lam) {
    if (p[i].mu / p[i].delta <= lam) return kInf;
    return InverseIncreasing(
        [&](double t) { return NcisValueAtTheta(p[i], t); }, lam,
        1 / p[i].delta);
  };
  auto sum_r = [&](double lam) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      const double t = theta_of(i, lam);
      if (Finite(t)) s += 1 / NcisCycleLength(p[i], t);
    }
    return s;
  };
  const Result<double> multiplier =
      ThresholdMultiplier(sum_r, total_rate, lam_hi);
  if (!multiplier.ok()) return multiplier.status();
  const double lam = *multiplier;

  ContinuousOptimum out;
  out.multiplier = lam;
  out.theta.resize(n);
  out.rates.resize(n);
  double fresh = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = theta_of(i, lam);
    out.theta[i] = t;
    if (!Finite(t)) {
      ++out.abandoned;
      continue;
    }
    const double l = NcisCycleLength(p[i], t);
    out.rates[i] = 1 / l;
    fresh += p[i].mu * NcisFreshTime(p[i], t) / l;
  }
  out.accuracy = fresh / mu_sum;
  return out;
}

namespace {

Status CheckModels(std::span<const DivergenceModel> models,
                   std::span<const double> mu, double* mu_sum) {
  if (models.size() != mu.size())
    return Status::InvalidArgument("models and mu differ in length");
  *mu_sum = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    if (!IsValid(models[i]))
      return Status::InvalidArgument("invalid divergence model for page " +
                                     std::to_string(i));
    if (!(mu[i] >= 0) || !Finite(mu[i]))
      return Status::InvalidArgument("invalid importance for page " +
                                     std::to_string(i));
    *mu_sum += mu[i];
  }
  if (!(*mu_sum > 0)) return Status::InvalidArgument("all importances are 0");
  return Status::OK();
}

// S(τ) = (1/τ)∫₀^τ D for refresh interval τ (+∞: D(∞)).
double TimeAveragedStaleness(const DivergenceModel& m, double tau) {
  if (!Finite(tau)) return SaturationDivergence(m);
  if (!(tau > 0)) return 0;
  return std::fmax(0.0, Divergence(m, tau) - Utility(m, tau) / tau);
}

}  // namespace

Result<StalenessOptimum> LongevityContinuousOptimum(
    std::span<const DivergenceModel> models, std::span<const double> mu,
    double total_rate) {
  const size_t n = models.size();
  if (Status s = CheckCommon(n, total_rate); !s.ok()) return s;
  double mu_sum = 0;
  if (Status s = CheckModels(models, mu, &mu_sum); !s.ok()) return s;
  std::vector<double> sup(n);
  double lam_hi = 0;
  for (size_t i = 0; i < n; ++i) {
    sup[i] = SupUtility(models[i]);
    lam_hi = std::max(lam_hi, mu[i] * sup[i]);
  }
  if (!(lam_hi > 0)) return Status::InvalidArgument("no page ever changes");

  // τ_i(λ): μ_i·U_i(τ) = λ, +∞ when μ_i·sup U_i ≤ λ.
  auto tau_of = [&](size_t i, double lam) {
    if (mu[i] * sup[i] <= lam) return kInf;
    return UtilityInverse(models[i], lam / mu[i]);
  };
  auto sum_r = [&](double lam) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      const double t = tau_of(i, lam);
      if (Finite(t) && t > 0) s += 1 / t;
    }
    return s;
  };
  const Result<double> multiplier =
      ThresholdMultiplier(sum_r, total_rate, lam_hi);
  if (!multiplier.ok()) return multiplier.status();
  const double lam = *multiplier;

  StalenessOptimum out;
  out.multiplier = lam;
  out.rates.resize(n);
  double stale = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = tau_of(i, lam);
    if (Finite(t) && t > 0) {
      out.rates[i] = 1 / t;
    } else {
      ++out.abandoned;
    }
    stale += mu[i] * TimeAveragedStaleness(models[i], t);
  }
  out.staleness = stale / mu_sum;
  return out;
}

Result<double> PeriodicStaleness(std::span<const DivergenceModel> models,
                                 std::span<const double> mu,
                                 std::span<const double> rates) {
  double mu_sum = 0;
  if (Status s = CheckModels(models, mu, &mu_sum); !s.ok()) return s;
  if (rates.size() != models.size())
    return Status::InvalidArgument("rates and models differ in length");
  double stale = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    if (!(rates[i] >= 0) || !Finite(rates[i]))
      return Status::InvalidArgument("invalid rate for page " +
                                     std::to_string(i));
    const double tau = rates[i] > 0 ? 1 / rates[i] : kInf;
    stale += mu[i] * TimeAveragedStaleness(models[i], tau);
  }
  return stale / mu_sum;
}

}  // namespace freshd::sched
