// Olston & Pandey longevity policies (docs/MATH.md Paper 3 (b)).
//
// longevity: value μ·U(τ) of the page's divergence model (fitted by the
// scheduler from change profiles, or the simulator's truth in oracle mode).
// longevity-bound: value μ·sup_{τ'≤τ} U(τ') of the expected curve between
// the change profiles' bound curves: a rise to the page's saturation level
// at the first change at its estimated rate, an accumulating rise linear
// (ExpectedUtility in change_profile.h; no divergence model). A page whose
// profiles never saw it change has no curve there: it is valued by its
// model instead (the fit, i.e. its host's level at its estimated rate).
// The paper's period doubling/halving is how a per-page period policy searches
// for U(τ) = T; under a shared budget the selector compares values directly,
// so we use that curve as the value estimate (stated in docs/RESULTS.md; a
// faithful port of the search scored far worse, issue 4 notes).
// Both: the page's forced deadline is its learning phase φ <= l·n (l
// auto-scaled to the budget unless set) until a profile holds 3 points, and
// the risk bound φ <= ρ·T/D_max (T = implied threshold / μ, D_max = 1) where
// ρ is finite (auto: 30 for longevity; for longevity-bound none, 20 with
// h <= 2).

#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/math_constants.h"
#include "sched/policy.h"

namespace freshd::sched {
namespace {

// Whether a profile holds kLearnedPoints points: the page was refreshed that
// many times since one base (with h ≤ kLearnedPoints never: a profile holds at
// most h − 1 points).
constexpr int kLearnedPoints = 3;
bool HasLearned(const ChangeProfiles& profiles) {
  for (int i = 0; i < profiles.size(); ++i) {
    if (profiles.profile(i).size >= kLearnedPoints) return true;
  }
  return false;
}

// Forced interval after a fetch (0: none): the learning phase until the
// page has learned (the paper's "initial" phase: once it ends, a page that
// value alone would abandon is no longer refreshed at l·n forever), and the
// risk bound (auto_rho: the policy's ρ when o.risk_rho is 0, auto).
float ForcedInterval(const PolicyInput& in, const PageState& state,
                     double threshold, const PolicyOptions& o,
                     double auto_rho) {
  if (in.oracle) return 0;
  double limit = kInf;
  if (in.profiles == nullptr || !HasLearned(in.profiles->profiles())) {
    double l =
        o.learning_l > 0 ? o.learning_l : kAutoLearningShare * in.mean_interval;
    limit = l * std::max<int>(1, state.fetches);
  }
  const double mu = in.params.mu;
  const double rho = o.risk_rho > 0 ? o.risk_rho : auto_rho;
  if (threshold > 0 && mu > 0 && std::isfinite(rho)) {
    limit = std::min(limit, rho * threshold / mu);
  }
  if (!(limit < kInf)) return 0;  // also NaN: no deadline rather than 1 s
  return static_cast<float>(std::max(limit, 1.0));
}

// longevity-bound's auto ρ: none when its profiles can hold two points or
// more (h ≥ 3); with h ≤ 2 a profile's single point is too little to value
// a page by, and the paper's bound keeps such pages refreshed (policy.h).
double BoundAutoRho(const PolicyInput& in) {
  const bool one_point =
      in.profiles == nullptr || in.profiles->profiles().history() <= 2;
  return one_point ? kAutoRiskRhoBound : kInf;
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
  bool forced_is_deadline() const override { return true; }
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
    const ChangeProfiles& profiles = in.profiles->profiles();
    double u = 0;
    if (MaxDivergence(profiles) > 0) {
      u = ExpectedUtility(profiles, tau, in.params.delta).u_sup;
    } else if (in.model != nullptr) {
      u = Utility(*in.model, tau);
    }
    return std::isfinite(u) && u > 0 ? in.params.mu * u : 0;
  }
  double UpperBound(const PolicyInput&) const override { return kInf; }
  bool uses_profiles() const override { return true; }
  bool forced_is_deadline() const override { return true; }
  void OnFetched(const PolicyInput& in, PageState& state, bool, double,
                 double threshold) const override {
    state.forced = ForcedInterval(in, state, threshold, o_, BoundAutoRho(in));
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
