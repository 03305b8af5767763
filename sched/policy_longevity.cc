// Olston & Pandey longevity policies (MATH.md Paper 3 (b)).
//
// longevity: value μ·U(τ) of the page's divergence model (fitted by the
// scheduler from change profiles, or the simulator's truth in oracle mode).
// longevity-bound: value μ·(U_min + w·(U_max − U_min)) from the bound curves
// of the change profiles (no divergence model; w from the estimated change
// rate, UpperShare below). The paper's period doubling/halving is how a
// per-page period policy searches for U(τ) = T; under a shared budget the
// selector compares values directly, so we use that point between the bounds
// as the value estimate (stated in docs/RESULTS.md).
// Both: learning phase φ <= l·n (l auto-scaled to the budget unless set)
// and risk bound φ <= ρ·T/D_max (T = implied threshold / μ, D_max = 1)
// become the page's forced deadline.

#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/policy.h"

namespace freshd::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Forced interval after a fetch: learning phase and risk bound.
// auto_rho: the policy's ρ when o.risk_rho is 0 (auto).
float ForcedInterval(const PolicyInput& in, const PageState& state,
                     double threshold, const PolicyOptions& o,
                     double auto_rho) {
  if (in.oracle) return 0;
  double l =
      o.learning_l > 0 ? o.learning_l : kAutoLearningShare * in.mean_interval;
  double limit = l * std::max<int>(1, state.fetches);
  double mu = in.params.mu;
  if (threshold > 0 && mu > 0) {
    double rho = o.risk_rho > 0 ? o.risk_rho : auto_rho;
    limit = std::min(limit, rho * threshold / mu);
  }
  return static_cast<float>(std::max(limit, 1.0));
}

// Where between its bounds the step curve of a profile sits. The bounds put
// each jump at one end of the interval between two observations; under the
// page's estimated Poisson rate λ̂, the first change within an interval of
// length L falls on average at L·(1/x − 1/(eˣ − 1)), x = λ̂L, so the curve is
// at the upper bound for a share w(x) = 1 − 1/x + 1/(eˣ − 1) of it: 1/2 for
// slow pages (the paper's even treatment), → 1 for pages that change many
// times per interval. x: λ̂ × the mean refresh interval.
double UpperShare(double x) {
  if (!(x > 1e-6)) return 0.5;
  if (x > 700) return 1 - 1 / x;  // 1/(eˣ − 1) underflows; x = ∞: 1
  return 1 - 1 / x + 1 / std::expm1(x);
}

class LongevityPolicy final : public Policy {
 public:
  explicit LongevityPolicy(const PolicyOptions& o) : o_(o) {}
  std::string_view name() const override { return "longevity"; }
  double Value(const PolicyInput& in, double tau) const override {
    if (in.model == nullptr) return 0;
    double u = Utility(*in.model, tau);
    return std::isfinite(u) && u > 0 ? in.params.mu * u : 0;
  }
  double UpperBound(const PolicyInput& in) const override {
    if (in.model == nullptr) return 0;
    double sup = SupUtility(*in.model);
    return std::isfinite(sup) ? in.params.mu * sup : kInf;
  }
  bool uses_profiles() const override { return true; }
  void OnFetched(const PolicyInput& in, PageState& state, bool, double,
                 double threshold) const override {
    state.forced =
        ForcedInterval(in, state, threshold, o_, kAutoRiskRhoCurveFit);
  }

 private:
  PolicyOptions o_;
};

class LongevityBoundPolicy final : public Policy {
 public:
  explicit LongevityBoundPolicy(const PolicyOptions& o) : o_(o) {}
  std::string_view name() const override { return "longevity-bound"; }
  double Value(const PolicyInput& in, double tau) const override {
    if (in.profiles == nullptr) return 0;
    UtilityBounds b = AveragedBounds(in.profiles->profiles(), tau, 1.0);
    if (b.profiles == 0) return 0;
    double w = UpperShare(in.params.delta * in.mean_interval);
    double u = b.u_min + w * (b.u_max - b.u_min);
    return u > 0 ? in.params.mu * u : 0;
  }
  double UpperBound(const PolicyInput&) const override { return kInf; }
  bool uses_profiles() const override { return true; }
  void OnFetched(const PolicyInput& in, PageState& state, bool, double,
                 double threshold) const override {
    state.forced = ForcedInterval(in, state, threshold, o_, kAutoRiskRhoBound);
  }

 private:
  PolicyOptions o_;
};

}  // namespace

std::unique_ptr<Policy> MakeLongevityPolicy(const PolicyOptions& options) {
  return std::make_unique<LongevityPolicy>(options);
}

std::unique_ptr<Policy> MakeLongevityBoundPolicy(const PolicyOptions& options) {
  return std::make_unique<LongevityBoundPolicy>(options);
}

}  // namespace freshd::sched
