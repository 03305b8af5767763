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
// Timed evidence that contradicts itself (quiet outside [0, τ), more signals
// placed than received, a timed unchanged interval) is dropped: the triple
// then counts as count-only evidence.
bool Sanitize(const SignalTriple& in, SignalTriple* out) {
  if (!(in.tau > 0) || in.signals < 0) return false;  // NaN τ: false
  *out = {std::min(in.tau, kMaxTau), std::min(in.signals, kMaxSignals),
          in.changed};
  const int placed = in.signals_after + (in.signal_at_change ? 1 : 0);
  if (in.changed && in.quiet >= 0 && in.quiet < in.tau &&
      in.signals_after >= 0 && placed <= in.signals) {
    out->quiet = std::min(in.quiet, kMaxTau);
    out->signals_after = in.signals_after;
    out->signal_at_change = in.signal_at_change;
  }
  return true;
}

bool Timed(const SignalTriple& sanitized) { return sanitized.quiet >= 0; }

// Signals received before the timed change (unlabelled).
int SignalsBefore(const SignalTriple& x) {
  return x.signals - x.signals_after - (x.signal_at_change ? 1 : 0);
}

// ln(1 − e^{−x}) for x > 0, accurate at both ends.
double Log1mExp(double x) {
  if (x <= 0) return -std::numeric_limits<double>::infinity();
  return x < 0.6931 ? std::log(-std::expm1(-x)) : std::log1p(-std::exp(-x));
}

// Expected latent counts of one triple (the E-step).
// `quiet`: the time in which unsignalled changes were seen (τ for
// count-only evidence, whose E-step counts the hidden ones; s when timed).
struct Latent {
  double signalled = 0, unsignalled = 0, false_signals = 0, quiet = 0;
};

Latent EStep(const SignalParams& clamped, const SignalTriple& x) {
  Latent l;
  const double n = x.signals;
  l.quiet = x.tau;
  if (!x.changed) {
    l.false_signals = n;
    return l;
  }
  const SignalParams& p = clamped;
  const double kappa_tau = (1 - p.alpha) * p.delta * x.tau;
  const double signal_part = p.alpha * p.delta;  // αΔ
  const double sigma = signal_part + p.nu;
  if (Timed(x)) {
    const double before = SignalsBefore(x);
    const double p_true = signal_part / sigma;
    l.signalled = (x.signal_at_change ? 1 : 0) + before * p_true;
    l.false_signals = x.signals_after + before * (1 - p_true);
    l.unsignalled = x.signal_at_change ? 0 : 1;
    l.quiet = x.quiet;
    return l;
  }
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
  double quiet = 0;
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
  const double time = t.exposure + e;
  out.nu = time > 0 ? (t.false_signals + e * c.nu) / time : c.nu;
  if (t.quiet >= 0 && t.quiet < t.exposure) {
    // Timed evidence: unsignalled changes were seen in `quiet` only, so the
    // signalled rate αΔ and κ = (1−α)Δ have their own exposures (the prior's
    // split the same way; with quiet = exposure this is the branch below
    // whenever the prior's change_weight = exposure_weight·Δ).
    const double signalled_rate = time > 0 ? s / time : c.alpha * c.delta;
    const double quiet = t.quiet + e;
    const double kappa = quiet > 0 ? u / quiet : (1 - c.alpha) * c.delta;
    const double joint = signalled_rate + kappa;
    out.alpha = joint > 0 ? signalled_rate / joint : c.alpha;
    out.delta = delta > 0 ? std::min(delta, kMaxRate)
                          : std::min(joint > 0 ? joint : c.delta, kMaxRate);
    return out;
  }
  out.alpha = s + u > 0 ? s / (s + u) : c.alpha;
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
  const double kappa = (1 - p.alpha) * p.delta;
  if (Timed(x)) {
    return -sigma * x.tau + SignalsBefore(x) * std::log(sigma) +
           x.signals_after * std::log(p.nu) - kappa * x.quiet +
           std::log(x.signal_at_change ? signal_part : kappa);
  }
  const double kappa_tau = kappa * x.tau;
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
      t.quiet += l.quiet;
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
  quiet_ = quiet_ * d + static_cast<float>(l.quiet);
}

SignalParams SignalStats::Estimate(const SignalPrior& prior,
                                   double delta) const {
  Totals t{signalled_, unsignalled_, false_, exposure_, quiet_};
  return MStep(t, prior, delta);
}

void SignalStats::Merge(const SignalStats& other, double weight) {
  if (!(weight >= 0) || !std::isfinite(weight)) return;
  const float w = static_cast<float>(weight);
  signalled_ += w * other.signalled_;
  unsignalled_ += w * other.unsignalled_;
  false_ += w * other.false_;
  exposure_ += w * other.exposure_;
  quiet_ += w * other.quiet_;
}

}  // namespace freshd::sched
