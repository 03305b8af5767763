#include "sched/allocation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sched/refresh_math.h"
#include "sched/special_functions.h"

namespace freshd::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
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

// f_i(μ) of the Cho & Garcia-Molina KKT condition for one page.
double SyncFrequency(double lambda, double w, double mu, SyncMetric metric) {
  if (w <= 0) return 0;
  if (metric == SyncMetric::kFreshness) {
    // w·∂F̄/∂f = w·γ₁(λ/f)/λ = μ ⇔ γ₁(x) = μλ/w with x = λ/f = λτ.
    const double p = mu * lambda / w;
    if (p >= 1) return 0;  // w/λ ≤ μ: abandoned
    const double x = InverseIncreasing([](double y) { return GammaJ(1, y); }, p,
                                       std::sqrt(2 * p));
    return lambda / x;
  }
  // w·∂Ā/∂f = −w·h(λ/f)/λ² = −μ ⇔ h(x) = μλ²/w.
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
  double w_sum = 0, m_hi = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(lambdas[i] > 0) || !Finite(lambdas[i]))
      return Status::InvalidArgument("change rate " + std::to_string(i) +
                                     " must be > 0");
    if (!(w[i] >= 0) || !Finite(w[i]))
      return Status::InvalidArgument("weight " + std::to_string(i) +
                                     " must be >= 0");
    w_sum += w[i];
    m_hi = std::max(m_hi, w[i] / lambdas[i]);
  }
  if (!(w_sum > 0)) return Status::InvalidArgument("all weights are 0");

  auto sum_f = [&](double mu) {
    double s = 0;
    for (size_t i = 0; i < n; ++i)
      s += SyncFrequency(lambdas[i], w[i], mu, metric);
    return s;
  };
  const double hi = metric == SyncMetric::kFreshness ? m_hi : 1.0;
  const double mu = SolveMultiplier(sum_f, total, 0.5 * hi, hi);
  if (!(mu > 0) || !Finite(mu))
    return Status::Internal("allocation did not converge");

  SyncAllocation out;
  out.multiplier = mu;
  out.frequencies.resize(n);
  double obj = 0;
  for (size_t i = 0; i < n; ++i) {
    const double f = SyncFrequency(lambdas[i], w[i], mu, metric);
    out.frequencies[i] = f;
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
