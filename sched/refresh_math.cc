#include "sched/refresh_math.h"

#include <cmath>
#include <limits>

#include "sched/math_constants.h"
#include "sched/special_functions.h"

namespace freshd::sched {
namespace {

bool BadRate(double x) { return std::isnan(x) || x < 0; }

// (1−e^{−r})/r, 1 at r = 0.
double Fixed(double r) { return r == 0 ? 1.0 : -std::expm1(-r) / r; }

// f·Ā_fixed = 1/2 − 1/r + (1−e^{−r})/r² = −R₃(−r)/r², r/6 near 0.
double FixedAgeScaled(double r) {
  return r == 0 ? 0.0 : -ExpRemainder(3, -r) / (r * r);
}

// f·Ā_random = 1/3 + (1/2 − 1/r)² − ((1−e^{−r})/r²)² = 1/3 + (a−b)(a+b).
double RandomAgeScaled(double r) {
  if (r < 0.02) {  // Series (cancellation otherwise); truncation error < 1e-16
                   // relative.
    const double c[] = {1.0 / 4,        -31.0 / 360,  1.0 / 40,
                        -127.0 / 20160, 17.0 / 12096, -73.0 / 259200};
    double sum = 0, p = r;
    for (double ci : c) {
      sum += ci * p;
      p *= r;
    }
    return sum;
  }
  const double a_plus_b = FixedAgeScaled(r);
  const double a_minus_b = 0.5 - 1 / r + std::expm1(-r) / (r * r);
  return 1.0 / 3 + a_minus_b * a_plus_b;
}

}  // namespace

double ExpectedFreshness(double lambda, double t) {
  if (BadRate(lambda) || BadRate(t)) return kNaN;
  return std::exp(-lambda * t);
}

double ExpectedAge(double lambda, double t) {
  if (BadRate(lambda) || BadRate(t)) return kNaN;
  if (lambda == 0) return 0;
  if (std::isinf(t)) return kInf;
  const double x = lambda * t;
  if (x == 0) return 0;
  return t * ExpRemainder(2, -x) / x;  // t·(1 − (1−e^{−x})/x)
}

double TimeAveragedFreshness(SyncOrder order, double lambda, double f) {
  if (BadRate(lambda) || BadRate(f)) return kNaN;
  if (lambda == 0) return 1;
  if (f == 0) return 0;
  const double r = lambda / f;
  switch (order) {
    case SyncOrder::kFixed:
      return Fixed(r);
    case SyncOrder::kRandom: {
      if (r == 0) return 1;
      const double p = Fixed(r);
      const double one_minus_p = ExpRemainder(2, -r) / r;
      return one_minus_p * (1 + p) / r;
    }
    case SyncOrder::kPurelyRandom:
      return 1 / (1 + r);
  }
  return kNaN;
}

double TimeAveragedAge(SyncOrder order, double lambda, double f) {
  if (BadRate(lambda) || BadRate(f)) return kNaN;
  if (lambda == 0) return 0;
  if (f == 0) return kInf;
  const double r = lambda / f;
  switch (order) {
    case SyncOrder::kFixed:
      return FixedAgeScaled(r) / f;
    case SyncOrder::kRandom:
      return RandomAgeScaled(r) / f;
    case SyncOrder::kPurelyRandom:
      return r / (1 + r) / f;
  }
  return kNaN;
}

double FreshnessDerivative(double lambda, double f) {
  if (BadRate(lambda) || BadRate(f)) return kNaN;
  if (lambda == 0) return 0;
  if (f == 0) return 1 / lambda;
  return GammaJ(1, lambda / f) / lambda;
}

double AgeDerivative(double lambda, double f) {
  if (BadRate(lambda) || BadRate(f)) return kNaN;
  if (lambda == 0) return 0;
  if (f == 0) return -kInf;
  return -AgeIntegral(lambda / f) / (lambda * lambda);
}

}  // namespace freshd::sched
