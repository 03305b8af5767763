#include "sched/special_functions.h"

#include <boost/math/policies/policy.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

constexpr double kEps = 1e-17;
// Beyond these, the forward products e^{-x}·x^i/i! may underflow: use log
// space. Above kMaxDirectJ the O(j) products cost more than exp/log/lgamma plus
// the O(√x) terms that matter, so large j also takes the log-space route.
constexpr double kMaxDirectX = 700.0;
constexpr int kMaxDirectJ = 40;

// e^{-x} Σ_{i≤j} x^i/i! for x ≥ j+1, summed from the largest term (i = j)
// downwards.
double PoissonCdfLogSpace(int j, double x) {
  double term = std::exp(-x + j * std::log(x) - std::lgamma(j + 1.0));
  double sum = 0;
  for (int i = j; i >= 0 && term > 0; --i) {
    sum += term;
    if (term < kEps * sum) break;
    term *= i / x;
  }
  return sum;
}

}  // namespace

double GammaJ(int j, double x) {
  if (std::isnan(x) || j < 0) return kNaN;
  if (x <= 0) return 0;
  if (std::isinf(x)) return 1;
  const double jp1 = j + 1.0;
  if (x < jp1) {
    // Tail series: e^{-x} x^{j+1}/(j+1)! · Σ_k x^k/((j+2)…(j+1+k)); no
    // cancellation.
    double first;
    if (j <= kMaxDirectJ && x <= kMaxDirectX) {
      first = std::exp(-x);
      for (int i = 1; i <= j + 1; ++i) first *= x / i;
    } else {
      first = std::exp(-x + jp1 * std::log(x) - std::lgamma(j + 2.0));
    }
    if (first == 0) return 0;
    double sum = 1, term = 1;
    for (int k = 2;; ++k) {
      term *= x / (j + k);
      sum += term;
      if (term < kEps * sum) break;
    }
    return first * sum;
  }
  double cdf;
  if (j <= kMaxDirectJ && x <= kMaxDirectX) {
    double term = std::exp(-x);
    cdf = term;
    for (int i = 1; i <= j; ++i) {
      term *= x / i;
      cdf += term;
    }
  } else {
    cdf = PoissonCdfLogSpace(j, x);
  }
  return 1 - cdf;
}

double ExpRemainder(int n, double x) {
  if (std::isnan(x) || n < 0) return kNaN;
  if (std::fabs(x) < 0.5 * (n + 1)) {
    double term = 1;
    for (int i = 1; i <= n; ++i) term *= x / i;
    double sum = 0;
    for (int i = n + 1; term != 0; ++i) {
      sum += term;
      if (std::fabs(term) < kEps * std::fabs(sum)) break;
      term *= x / i;
    }
    return sum;
  }
  double poly = 0, term = 1;
  for (int i = 0; i < n; ++i) {
    poly += term;
    term *= x / (i + 1);
  }
  return std::exp(x) - poly;
}

double AgeIntegral(double x) {
  if (std::isnan(x)) return kNaN;
  if (x <= 0) return 0;
  if (std::isinf(x)) return x;
  return ExpRemainder(3, -x) + x * ExpRemainder(2, -x);
}

double FindRoot(const std::function<double(double)>& f, double lo, double hi,
                double rel_tol, double abs_tol, int max_iter) {
  if (!(lo <= hi)) return kNaN;
  const double flo = f(lo), fhi = f(hi);
  if (std::isnan(flo) || std::isnan(fhi)) return kNaN;
  if (flo == 0) return lo;
  if (fhi == 0) return hi;
  if ((flo > 0) == (fhi > 0)) return kNaN;
  using Policy = boost::math::policies::policy<
      boost::math::policies::domain_error<boost::math::policies::ignore_error>,
      boost::math::policies::evaluation_error<
          boost::math::policies::ignore_error>>;
  auto tol = [rel_tol, abs_tol](double a, double b) {
    return std::fabs(b - a) <=
           rel_tol * std::fmin(std::fabs(a), std::fabs(b)) + abs_tol;
  };
  std::uintmax_t iters =
      max_iter > 0 ? static_cast<std::uintmax_t>(max_iter) : 1;
  bool bad = false;
  auto g = [&f, &bad](double x) {
    const double v = f(x);
    if (std::isnan(v)) bad = true;
    return std::isnan(v) ? 0.0 : v;
  };
  const auto [a, b] = boost::math::tools::toms748_solve(g, lo, hi, flo, fhi,
                                                        tol, iters, Policy());
  if (bad) return kNaN;
  return 0.5 * (a + b);
}

}  // namespace freshd::sched
