#include "sched/crawl_value.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <optional>

#include "sched/math_constants.h"
#include "sched/special_functions.h"

// Age value (the crawl value of the age metric), derived.
// Cho & Garcia-Molina minimize Σ w_i Ā(λ_i, f_i) subject to Σ f_i = B,
// fixed-order sync. The Lagrangian stationarity condition is w_i ∂Ā/∂f(λ_i,
// f_i) = −μ. A threshold policy "crawl page i when its value V_i(τ) reaches the
// multiplier λ" crawls page i at interval τ_i = V_i^{-1}(λ), i.e. at frequency
// f_i = 1/τ_i; it solves the KKT system exactly when V_i(τ) = −w_i ∂Ā/∂f(λ_i,
// 1/τ) (the same construction that turns ∂F̄/∂f into the GREEDY value,
// docs/MATH.md Paper 2 (b)). With x = Δτ:
//   −∂Ā/∂f|_{f=1/τ} = τ²/2 − (1−e^{−x})/Δ² + τe^{−x}/Δ = h(x)/Δ²,
//   h(x) = x²/2 − 1 + (1+x)e^{−x} = ∫₀^x s(1−e^{−s})ds,
// so AgeValue = μ h(Δτ)/Δ², with dV/dτ = μτ(1−e^{−Δτ}) > 0, V(0) = 0 and V → ∞:
// every page is crawled (matching "age always gives f_i > 0"). Equivalently it
// is Olston & Pandey's U = tD − ∫D with D(t) = E[A(t)] the expected age.
// allocation_test.cc checks that solving AgeValue_i(1/f_i) = λ, Σf_i = B
// reproduces Tables IV and V (age).

namespace freshd::sched {
namespace {

// Bound on the number of terms of the L and G sums (inputs are
// outsider-controlled).
constexpr int kMaxTerms = 1 << 20;
// A Poisson lower tail P(X ≤ j) with mean y is below e^{−40.5} when y − j > 9√y
// (Chernoff: P(X ≤ y − a) ≤ e^{−a²/(2y)}); then γ_j(y) = 1 to double precision.
bool GammaIsOne(int j, double y) { return y - j > 9 * std::sqrt(y) + 1; }

double Gamma(int j, double y) { return GammaIsOne(j, y) ? 1.0 : GammaJ(j, y); }

// The upper tail γ_j(y) = P(X > j) is below e^{−40} when j + 1 − y > 27 + 9√y
// (Bernstein: P(X ≥ y + a) ≤ exp(−a²/(2(y + a/3)))). γ_j(y_j) falls as j grows
// (y_j = ·(θ − jτ_s) falls too), so once this holds for the larger argument
// every later term is negligible.
bool GammaIsZeroFromHere(int j, double y) {
  return j + 1 - y > 27 + 9 * std::sqrt(y);
}

bool Invalid(const PageParams& p) {
  return !(p.delta >= 0) || !(p.mu >= 0) || !(p.alpha >= 0) ||
         !(p.alpha <= 1) || !(p.nu >= 0) || std::isinf(p.delta) ||
         std::isinf(p.nu);
}

struct Sums {
  double l = 0;
  double g = 0;
};

// Whether the complex roots' share of a closed form below is under
// e^{log_limit}, for the
// renewal process of gaps τ_s + Exp(rate) discounted by r per epoch (r = 1
// for L): w = (rate + s)τ_s solves we^w = z, z = r·rate·τ_s·e^{rate·τ_s};
// every complex root has |w| ≥ |W_1(z)| > π and Im w ≥ Im W_1(z) (the
// branches' roots grow with k), so e^{sT} < (r·rate·τ_s/|W_1|)^{T/τ_s} and
// the residue is below 1/(r·Im W_1·(1 − 1/|W_1|)); 2.2 covers the conjugates
// and the branches past the first. π stands for |W_1| and Im W_1 first;
// only if that bound is not enough is W_1 found, by Newton's method on
// w + Log w = ln z + 2πi.
bool RootTermsNegligible(double rate, double r, double ts, double periods,
                         double log_limit) {
  const double rcts = r * rate * ts;
  auto log_bound = [&](double modulus, double imag) {
    return periods * std::log(rcts / modulus) +
           std::log(2.2 / (r * imag * (1 - 1 / modulus)));
  };
  if (log_bound(std::numbers::pi, std::numbers::pi) < log_limit) return true;
  const double log_z = std::log(rcts) + rate * ts;
  if (!std::isfinite(log_z)) return false;
  const std::complex<double> target(log_z, 2 * std::numbers::pi);
  std::complex<double> w = target - std::log(target);
  for (int i = 0; i < 30; ++i) {
    const std::complex<double> step =
        (w + std::log(w) - target) / (1.0 + 1.0 / w);
    w -= step;
    if (std::abs(step) <= 1e-12 * std::abs(w)) break;
  }
  return std::abs(w + std::log(w) - target) < 1e-9 &&
         std::abs(w) > std::numbers::pi && w.imag() > std::numbers::pi &&
         log_bound(std::abs(w), w.imag()) < log_limit;
}

// Closed forms of the two sums, for when θ spans many τ_s (the time a signal
// is worth): then the sums below have hundreds of terms that each cost
// O(√((Δ+ν)θ)) (a long-neglected page with weak signals cost up to 0.3 ms a
// value), and the closed forms O(1). Term j of cG (c = Δ+ν, r = ν/c) is
// r^j·P(S_{j+1} ≤ T), T = θ + τ_s, S_k the k-th epoch of a renewal process
// whose gaps are τ_s + Exp(c); term j of σL is the same with gaps τ_s +
// Exp(σ) and r = 1. The transforms F̂/(1 − rF̂), F̂(s) = e^{−sτ_s}c/(c+s),
// invert to residues at s = 0, at one real root s_0 in (−Δ, 0) of (c+s)e^{sτ_s}
// = rc (for r < 1) and at complex roots (RootTermsNegligible). So
//   G = (1 − K e^{s_0T})/Δ,  K = Δ/(ν|s_0|(τ_s + 1/(c+s_0))),
//   σL = T/m + 1/(2σ²m²) − 1/2,  m = τ_s + 1/σ (the renewal function),
// each used when the complex roots' share is below 1e-18 of its sum
// (crawl_value_test checks both against the sums). nullopt when either does
// not qualify.
std::optional<Sums> ClosedFormSums(const PageParams& p, double theta, double ts,
                                   bool need_l) {
  const double c = p.delta + p.nu;
  const double sigma = p.alpha * p.delta + p.nu;
  const double ratio = p.nu / c;
  const double periods = (theta + ts) / ts;  // T/τ_s
  const double log_tolerance = std::log(1e-18);
  if (!(ratio > 0)) return std::nullopt;
  // s_0 = ε − Δ with ln(1 + ε/ν) = (Δ − ε)τ_s, ε in (0, Δ): Newton from 0
  // (the left side less the right is increasing and concave, so the steps
  // stay below the root); then |s_0| = ln(1 + ε/ν)/τ_s and c + s_0 = ν + ε,
  // both free of cancellation.
  double eps = 0;
  for (int i = 0; i < 100; ++i) {
    const double f = std::log1p(eps / p.nu) - (p.delta - eps) * ts;
    const double step = -f / (1 / (p.nu + eps) + ts);
    if (!(step > 0)) break;
    eps += step;
    if (step <= 1e-17 * eps) break;
  }
  const double rate0 = std::log1p(eps / p.nu) / ts;  // −s_0
  if (!(rate0 > 0) || !(eps < p.delta)) return std::nullopt;
  // ln K = ln(Δ/|s_0|) + ln(1 + ε/ν) − ln(1 + τ_s(ν+ε)), each term
  // accurate (K is near 1 when τ_s is small, where a young page's G is the
  // small difference 1 − Ke^{s_0T}).
  const double log_k = (eps < 0.5 * p.delta ? -std::log1p(-eps / p.delta)
                                            : std::log(p.delta / rate0)) +
                       std::log1p(eps / p.nu) - std::log1p(ts * (p.nu + eps));
  Sums s;
  s.g = -std::expm1(log_k - rate0 * (theta + ts)) / p.delta;
  if (!(s.g > 0) || !RootTermsNegligible(c, ratio, ts, periods,
                                         log_tolerance + std::log(c * s.g))) {
    return std::nullopt;
  }
  if (!need_l) return s;
  const double m = ts + 1 / sigma;
  const double renewals =
      (theta + ts) / m + 1 / (2 * sigma * sigma * m * m) - 0.5;
  if (!(renewals > 0) ||
      !RootTermsNegligible(sigma, 1, ts, periods,
                           log_tolerance + std::log(renewals))) {
    return std::nullopt;
  }
  s.l = renewals / sigma;
  return s;
}

// Whether the exact sums try the closed forms: τ_s finite and positive, and
// more than ~8 terms (x_j > 0 needs j < θ/τ_s; the terms past (Δ+ν)θ fall
// fast); fewer cost less than the closed forms' root and logarithms.
bool WorthClosedForm(const PageParams& p, double theta, double ts) {
  return ts > 0 && std::isfinite(ts) &&
         std::min(theta / ts, (p.delta + p.nu) * theta) > 8;
}

// L(θ) and G(θ) for Δ > 0, 0 ≤ α < 1, finite θ ≥ 0. need_l = false skips L
// (returns 0).
Sums CycleSums(const PageParams& p, double theta, int max_terms, bool need_l) {
  const double sigma = p.alpha * p.delta + p.nu;
  const double ts = SignalTimeEquivalent(p);
  if (sigma == 0 || (max_terms <= 0 && ts == 0)) {
    // No signals, or α = 0 (signals carry no information): GREEDY, L = θ.
    return {theta, -std::expm1(-p.delta * theta) / p.delta};
  }
  if (max_terms <= 0 && WorthClosedForm(p, theta, ts)) {
    if (std::optional<Sums> closed = ClosedFormSums(p, theta, ts, need_l)) {
      return *closed;
    }
  }
  const double c = p.delta + p.nu;
  const double ratio = p.nu / c;
  // docs/MATH.md truncation: j ≤ (Δ+ν)θ + 8√((Δ+ν)θ) + 12 (and x_j > 0, j <
  // max_terms).
  const double rule = c * theta + 8 * std::sqrt(c * theta) + 12;
  int last = static_cast<int>(std::min(rule, static_cast<double>(kMaxTerms)));
  if (max_terms > 0) last = std::min(last, max_terms - 1);
  Sums s;
  double w = 1;  // ratio^j
  for (int j = 0; j <= last; ++j) {
    const double x = j == 0 ? theta : theta - j * ts;
    if (!(x > 0) || GammaIsZeroFromHere(j, c * x)) break;
    const bool l_done = !need_l;
    const double gc = Gamma(j, c * x);  // ≥ γ_j(σx), and γ_j(cx_j) falls with j
    const double gl = l_done ? 0.0 : (sigma == c ? gc : Gamma(j, sigma * x));
    s.l += gl;
    s.g += w * gc;
    w *= ratio;
    // Every later term of either sum is below this one's gc: stop once that is
    // negligible (≤ 1e-19 of both partial sums; at most ~1e6 more terms could
    // follow).
    if (j > 0 && gc < 1e-19 * (l_done ? s.g : std::min(s.l, s.g))) break;
    // G's tail is ≤ w·c/Δ (γ ≤ 1): with L not needed, stop once that is
    // negligible.
    if (l_done && w * c < 1e-18 * p.delta * s.g) break;
  }
  s.l /= sigma;
  s.g /= c;
  return s;
}

// L ≤ θ (a cycle ends by real time θ), so e^{−κθ}L is negligible in V(θ)
// when θe^{−κθ} is.
bool NeedL(const PageParams& p, double theta) {
  return std::exp(-(1 - p.alpha) * p.delta * theta) * theta * p.delta > 1e-17;
}

// V(θ) = μ[G − e^{−κθ}L] for Δ > 0, 0 ≤ α < 1, θ ≥ 0 (θ = +∞ allowed).
double ValueAtTheta(const PageParams& p, double theta, int max_terms) {
  if (theta <= 0) return 0;
  const double c = p.delta + p.nu;
  if (std::isinf(theta)) {
    if (max_terms <= 0) return p.mu / p.delta;
    return p.mu / p.delta * (1 - std::pow(p.nu / c, max_terms));
  }
  const double decay = std::exp(-(1 - p.alpha) * p.delta * theta);
  const Sums s = CycleSums(p, theta, max_terms, NeedL(p, theta));
  return p.mu * (s.g - decay * s.l);
}

}  // namespace

double GreedyValue(double delta, double mu, double tau) {
  if (!(delta >= 0) || !(mu >= 0) || !(tau >= 0) || std::isinf(delta))
    return kNaN;
  if (delta == 0 || mu == 0) return 0;
  if (std::isinf(tau)) return mu / delta;
  return mu / delta * GammaJ(1, delta * tau);
}

double AgeValue(double delta, double mu, double tau) {
  if (!(delta >= 0) || !(mu >= 0) || !(tau >= 0) || std::isinf(delta))
    return kNaN;
  if (delta == 0 || mu == 0) return 0;
  return mu * AgeIntegral(delta * tau) / (delta * delta);
}

double SignalTimeEquivalent(const PageParams& p) {
  if (Invalid(p)) return kNaN;
  if (p.alpha == 0 || p.delta == 0) return 0;
  if (p.alpha == 1 || p.nu == 0) return kInf;
  return std::log1p(p.alpha * p.delta / p.nu) / ((1 - p.alpha) * p.delta);
}

double NcisCycleLength(const PageParams& p, double theta, int max_terms) {
  if (Invalid(p) || !(theta >= 0) || p.alpha == 1 || p.delta == 0) return kNaN;
  if (std::isinf(theta)) return kInf;
  return CycleSums(p, theta, max_terms, true).l;
}

double NcisFreshTime(const PageParams& p, double theta, int max_terms) {
  if (Invalid(p) || !(theta >= 0) || p.alpha == 1 || p.delta == 0) return kNaN;
  if (std::isinf(theta)) {
    const double c = p.delta + p.nu;
    return max_terms <= 0 ? 1 / p.delta
                          : (1 - std::pow(p.nu / c, max_terms)) / p.delta;
  }
  return CycleSums(p, theta, max_terms, false).g;
}

bool NcisSumsInClosedForm(const PageParams& p, double theta) {
  if (Invalid(p) || !(theta > 0) || std::isinf(theta) || p.alpha == 1 ||
      p.delta == 0 || p.alpha * p.delta + p.nu == 0) {
    return false;
  }
  const double ts = SignalTimeEquivalent(p);
  return WorthClosedForm(p, theta, ts) &&
         ClosedFormSums(p, theta, ts, NeedL(p, theta)).has_value();
}

double NcisValueAtTheta(const PageParams& p, double theta, int max_terms) {
  if (Invalid(p) || !(theta >= 0) || p.alpha == 1) return kNaN;
  if (p.delta == 0 || p.mu == 0) return 0;
  return ValueAtTheta(p, theta, max_terms);
}

double NcisValue(const PageParams& p, double tau, double n_signals,
                 int max_terms) {
  if (Invalid(p) || !(tau >= 0) || !(n_signals >= 0)) return kNaN;
  if (p.delta == 0 || p.mu == 0) return 0;
  if (p.alpha == 1) {
    // κ = 0 (docs/MATH.md): V = μ[(1−q^n)/Δ − n·q^n/σ], P(fresh) = q^n.
    // APPROX-m keeps the terms j < k = min(n, m): V = μ[(1−q^k)/Δ − k·q^n/σ]
    // (the α → 1 limit of the sums).
    const double sigma = p.delta + p.nu;
    const double q = p.nu / sigma;
    const double k = max_terms > 0
                         ? std::min(n_signals, static_cast<double>(max_terms))
                         : n_signals;
    const double qn = std::pow(q, n_signals);
    return p.mu * ((1 - std::pow(q, k)) / p.delta - k * qn / sigma);
  }
  double theta = tau;
  if (n_signals > 0) {
    const double ts = SignalTimeEquivalent(p);
    if (ts > 0)
      theta += n_signals * ts;  // ts = +∞ (ν = 0): a signal proves a change.
  }
  return ValueAtTheta(p, theta, max_terms);
}

double FreshProbability(const PageParams& p, double tau, double n_signals) {
  if (Invalid(p) || !(tau >= 0) || !(n_signals >= 0)) return kNaN;
  if (p.delta == 0) return 1;
  double fresh = std::exp(-(1 - p.alpha) * p.delta * tau);
  const double sigma = p.alpha * p.delta + p.nu;
  if (n_signals > 0 && sigma > 0) fresh *= std::pow(p.nu / sigma, n_signals);
  return fresh;
}

double CisValue(const PageParams& p, double tau, int n_signals) {
  if (Invalid(p) || !(tau >= 0) || n_signals < 0) return kNaN;
  if (p.delta == 0 || p.mu == 0) return 0;
  if (n_signals > 0) return p.mu / p.delta;
  PageParams trusting = p;
  trusting.nu = 0;
  return NcisValue(trusting, tau, 0);
}

}  // namespace freshd::sched
