#include "sched/signal_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace freshd::sched {
namespace {

constexpr double kTiny = 1e-300;
// Bounds on outsider-controlled magnitudes (products stay far below float
// range in the aggregates): rates, interval lengths, signals per interval.
constexpr double kMaxRate = 1e9;
constexpr double kMaxTau = 1e12;
constexpr int kMaxSignals = 1 << 20;

SignalParams Clamp(const SignalParams& p) {
  SignalParams c;
  c.delta = std::clamp(std::isnan(p.delta) ? 0.0 : p.delta, kTiny, kMaxRate);
  c.alpha = std::clamp(std::isnan(p.alpha) ? 0.5 : p.alpha, 1e-9, 1 - 1e-9);
  c.nu = std::clamp(std::isnan(p.nu) ? 0.0 : p.nu, kTiny, kMaxRate);
  return c;
}

// A usable triple with τ and n clamped; false when it carries no evidence.
bool Sanitize(const SignalTriple& in, SignalTriple* out) {
  if (!(in.tau > 0) || in.signals < 0) return false;  // NaN τ: false
  *out = {std::min(in.tau, kMaxTau), std::min(in.signals, kMaxSignals),
          in.changed};
  return true;
}

// ln(1 − e^{−x}) for x > 0, accurate at both ends.
double Log1mExp(double x) {
  if (x <= 0) return -std::numeric_limits<double>::infinity();
  return x < 0.6931 ? std::log(-std::expm1(-x)) : std::log1p(-std::exp(-x));
}

// Expected latent counts of one triple (the E-step).
struct Latent {
  double signalled = 0, unsignalled = 0, false_signals = 0;
};

Latent EStep(const SignalParams& clamped, const SignalTriple& x) {
  Latent l;
  const double n = x.signals;
  if (!x.changed) {
    l.false_signals = n;
    return l;
  }
  const SignalParams& p = clamped;
  const double kappa_tau = (1 - p.alpha) * p.delta * x.tau;
  const double signal_part = p.alpha * p.delta;  // αΔ
  const double sigma = signal_part + p.nu;
  // P(changed | n) = 1 − e^{−κτ}q^n = 1 − e^{−z}, z = κτ + n·ln(σ/ν).
  const double z = kappa_tau + n * std::log1p(signal_part / p.nu);
  const double p_changed = -std::expm1(-z);
  if (!(p_changed > 0)) {  // degenerate: a change must have happened.
    l.unsignalled = 1;
    return l;
  }
  l.signalled = n * (signal_part / sigma) / p_changed;
  l.unsignalled = kappa_tau / p_changed;
  l.false_signals = std::max(0.0, n - l.signalled);
  return l;
}

struct Totals {
  double signalled = 0, unsignalled = 0, false_signals = 0, exposure = 0;
};

SignalParams MStep(const Totals& t, const SignalPrior& prior, double delta) {
  constexpr double kMaxWeight = 1e12;
  const SignalParams c = Clamp(prior.center);
  // NaN weights count as 0 (std::clamp would pass NaN through).
  const double a =
      prior.change_weight > 0 ? std::min(prior.change_weight, kMaxWeight) : 0;
  const double e = prior.exposure_weight > 0
                       ? std::min(prior.exposure_weight, kMaxWeight)
                       : 0;
  SignalParams out;
  const double s = t.signalled + a * c.alpha;
  const double u = t.unsignalled + a * (1 - c.alpha);
  out.alpha = s + u > 0 ? s / (s + u) : c.alpha;
  const double time = t.exposure + e;
  out.nu = time > 0 ? (t.false_signals + e * c.nu) / time : c.nu;
  if (delta > 0) {
    out.delta = std::min(delta, kMaxRate);
  } else {
    out.delta =
        time > 0 ? (t.signalled + t.unsignalled + e * c.delta) / time : c.delta;
  }
  return out;
}

}  // namespace

double SignalLogLikelihood(const SignalParams& params,
                           const SignalTriple& triple) {
  if (triple.signals < 0) return -std::numeric_limits<double>::infinity();
  SignalTriple x;
  if (!Sanitize(triple, &x)) return 0;
  const SignalParams p = Clamp(params);
  const double n = x.signals;
  if (!x.changed) return -(p.delta + p.nu) * x.tau + n * std::log(p.nu);
  const double signal_part = p.alpha * p.delta;
  const double sigma = signal_part + p.nu;
  const double kappa_tau = (1 - p.alpha) * p.delta * x.tau;
  const double z = kappa_tau + n * std::log1p(signal_part / p.nu);
  return -sigma * x.tau + n * std::log(sigma) + Log1mExp(z);
}

SignalFit FitSignals(std::span<const SignalTriple> input,
                     const SignalParams& start, const SignalPrior& prior,
                     const SignalFitOptions& options) {
  SignalFit fit;
  std::vector<SignalTriple> data;
  data.reserve(input.size());
  Totals raw;  // for the initial point: crude moments of the data
  double changed = 0;
  for (const SignalTriple& in : input) {
    SignalTriple x;
    if (!Sanitize(in, &x)) continue;
    data.push_back(x);
    raw.exposure += x.tau;
    raw.false_signals += x.signals;
    changed += x.changed ? 1 : 0;
  }
  SignalParams p = Clamp(start);
  if (!(start.delta > 0)) {
    p.delta = changed > 0 ? changed / raw.exposure : Clamp(prior.center).delta;
  }
  if (!(start.alpha > 0 && start.alpha < 1)) p.alpha = 0.5;
  if (!(start.nu > 0)) {
    p.nu = raw.false_signals > 0 ? 0.5 * raw.false_signals / raw.exposure
                                 : 1e-3 * p.delta;
  }
  if (data.empty()) {
    fit.params = prior.change_weight > 0 || prior.exposure_weight > 0
                     ? prior.center
                     : start;
    return fit;
  }
  const double fixed_delta = options.fix_delta ? Clamp(start).delta : -1;
  if (options.fix_delta) p.delta = fixed_delta;
  const int max_iterations = std::clamp(options.max_iterations, 1, 1000000);
  for (int it = 0; it < max_iterations; ++it) {
    const SignalParams c = Clamp(p);
    Totals t;
    for (const SignalTriple& x : data) {
      Latent l = EStep(c, x);
      t.signalled += l.signalled;
      t.unsignalled += l.unsignalled;
      t.false_signals += l.false_signals;
      t.exposure += x.tau;
    }
    SignalParams next = MStep(t, prior, fixed_delta);
    double change = std::max({std::abs(next.delta - p.delta) / p.delta,
                              std::abs(next.alpha - p.alpha),
                              std::abs(next.nu - p.nu) / p.nu});
    p = next;
    fit.iterations = it + 1;
    if (!(change > options.tolerance)) break;
  }
  fit.params = p;
  for (const SignalTriple& x : data) {
    fit.log_likelihood += SignalLogLikelihood(p, x);
  }
  return fit;
}

void SignalStats::Observe(const SignalTriple& triple,
                          const SignalParams& current, double decay) {
  SignalTriple x;
  if (!Sanitize(triple, &x)) return;
  if (!(decay >= 0 && decay <= 1)) decay = kDefaultSignalDecay;
  const Latent l = EStep(Clamp(current), x);
  const float d = static_cast<float>(decay);
  signalled_ = signalled_ * d + static_cast<float>(l.signalled);
  unsignalled_ = unsignalled_ * d + static_cast<float>(l.unsignalled);
  false_ = false_ * d + static_cast<float>(l.false_signals);
  exposure_ = exposure_ * d + static_cast<float>(x.tau);
}

SignalParams SignalStats::Estimate(const SignalPrior& prior,
                                   double delta) const {
  Totals t{signalled_, unsignalled_, false_, exposure_};
  return MStep(t, prior, delta);
}

void SignalStats::Merge(const SignalStats& other, double weight) {
  if (!(weight >= 0) || !std::isfinite(weight)) return;
  const float w = static_cast<float>(weight);
  signalled_ += w * other.signalled_;
  unsignalled_ += w * other.unsignalled_;
  false_ += w * other.false_;
  exposure_ += w * other.exposure_;
}

}  // namespace freshd::sched
