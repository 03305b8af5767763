// Olston & Pandey longevity policies (MATH.md Paper 3 (b)).
//
// longevity: value μ·U(τ) of the page's divergence model (fitted by the
// scheduler from change profiles, or the simulator's truth in oracle mode).
// longevity-bound: value μ·sup_{τ'≤τ} U(τ') of the expected curve between
// the change profiles' bound curves: a rise to the page's saturation level
// at the first change at its estimated rate, an accumulating rise linear
// (ExpectedUtility in change_profile.h; no divergence model).
// The paper's period doubling/halving is how a per-page period policy searches
// for U(τ) = T; under a shared budget the selector compares values directly,
// so we use that curve as the value estimate (stated in docs/RESULTS.md; a
// faithful port of the search scored far worse, issue 4 notes).
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
    double u =
        ExpectedUtility(in.profiles->profiles(), tau, in.params.delta).u_sup;
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
