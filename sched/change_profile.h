// Olston & Pandey change profiles and the two online longevity policies
// (docs/MATH.md Paper 3 (b); paper §4): curve fitting and bound-based.
//
// A profile is a base time t_B plus (t − t_B, D(base, version at t)) points.
// On each refresh at t, every live profile gets a point and a new profile is
// started with base t; the newest h are kept. Divergences are inputs: the
// caller keeps one base sketch per profile in slot profile(i).slot and passes
// D(sketch[slot], new version) — this file never sees a sketch type. Points
// store d quantized to 1/65535 (far below min-hash noise). Time unit is the
// caller's (seconds in the daemon). Plain values; not thread-safe.
#ifndef FRESHD_SCHED_CHANGE_PROFILE_H_
#define FRESHD_SCHED_CHANGE_PROFILE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sched/divergence_fit.h"
#include "sched/divergence_model.h"

namespace freshd::sched {

inline constexpr int kMaxHistory = 8;  // largest h; a profile holds ≤ h points.

// One profile, 64 bytes (named Compact: it holds no base sketch, see above).
struct CompactProfile {
  double base_time = 0;
  uint8_t slot = 0;  // which of the caller's h base sketches is this base.
  uint8_t size = 0;  // points after the implicit (0, 0).
  float dt[kMaxHistory] = {};        // t − t_B, increasing.
  uint16_t d[kMaxHistory] = {};      // divergence · 65535.
  ProfilePoint point(int i) const {  // REQUIRES: 0 ≤ i < size.
    return {dt[i], d[i] / 65535.0};
  }
};

class ChangeProfiles {
 public:
  explicit ChangeProfiles(int history = 4);  // h clamped to [1, kMaxHistory].

  // A refresh at time t. divergences[i] = D(base of profile(i), new version)
  // for each live profile, oldest first (size() values; d clamped to [0,1]).
  // Returns the slot in [0, h) where the caller stores the new version's
  // sketch (the evicted profile's slot, or a fresh one), or −1 without any
  // change when divergences.size() != size() or t precedes the newest base.
  int OnRefresh(double t, std::span<const double> divergences);

  int size() const { return static_cast<int>(profiles_.size()); }
  int history() const { return history_; }
  const CompactProfile& profile(int i) const { return profiles_[i]; }
  uint32_t refreshes() const { return refreshes_; }  // OnRefresh successes.

  // Curve-fitting step 1: all points with t normalized to the base, the d of
  // equal t averaged, sorted by t (the (0, 0) bases are omitted).
  std::vector<ProfilePoint> Pooled() const;

 private:
  int history_;
  uint32_t refreshes_ = 0;
  std::vector<CompactProfile> profiles_;  // oldest first, ≤ history_.
};

// Longevity policy parameters (Olston & Pandey §4.2-4.5).
struct LongevityParams {
  double threshold = 1;       // T, in divergence × time.
  double d_max = 1;           // D_max of the divergence metric.
  double rho = 2;             // risk bound: φ ≤ ρT/D_max.
  double learning_l = 86400;  // learning phase: φ ≤ l·n (time per refresh).
};

// Curve fitting, steps 5-6: φ = U⁻¹(T) under `model`, clamped to l·n and
// ρT/D_max (n = refreshes so far, ≥ 1 counted). Finite and ≥ 0.
double CurveFitInterval(const DivergenceModel& model, uint32_t refreshes,
                        const LongevityParams& params);

// Fit the pooled profiles (steps 1-4) and return CurveFitInterval of it.
// With no usable point: l·n clamped by ρT/D_max (keep learning).
double CurveFitStep(const ChangeProfiles& profiles,
                    const LongevityParams& params,
                    const DivergenceFitOptions& options = {},
                    DivergenceFit* fit_out = nullptr);

// Bound-based policy: bounds at elapsed τ over the averaged step curves.
struct UtilityBounds {
  double upper = 0, lower = 0;  // averaged curves at τ.
  double a_max = 0, a_min = 0;  // ∫₀^τ upper, ∫₀^τ lower.
  double u_max = 0, u_min = 0;  // τ·upper(τ) − A_min, τ·lower(τ) − A_max.
  int profiles = 0;             // profiles averaged (those with points).
};
// Upper = d_{i+1} on (x_i, x_{i+1}], lower = d_i on [x_i, x_{i+1}); beyond
// the last point upper = D_max and lower = d_last. τ must be finite and > 0
// (else all zeros); an invalid D_max (≤ 0, NaN, ∞) is taken as 1.
UtilityBounds ProfileBounds(const CompactProfile& profile, double tau,
                            double d_max);
// Averaged over the profiles (with at least one point) that reach x — our
// reading of "average the h curves": profiles differ in span, and averaging
// the D_max extrapolation of the short ones would keep U_min < T forever.
// Past every profile: upper = D_max, lower = mean last d. One profile: the
// same as ProfileBounds. profiles == 0 (all zeros) when none has a point.
UtilityBounds AveragedBounds(const ChangeProfiles& profiles, double tau,
                             double d_max);

// The longevity-bound policy's value (our addition: the paper uses the
// bounds only to steer its period search): U(τ) = τ·C(τ) − ∫₀^τ C of the
// expected curve C between the bounds when the page changes as Poisson
// events at `rate`. In each gap (x_i, x_{i+1}] of a profile (length L):
//  - a rise that reaches the page's saturation level (its largest observed
//    divergence, less kSaturationTolerance of it) comes with the first
//    event, given one fell in the gap: C = d_i + (d_{i+1} − d_i)·(1 −
//    e^{−λs})/(1 − e^{−λL}), s = x − x_i. Exact for a churn region (one
//    change replaces it); the bounds' midpoint as λL → 0, a step at x_i as
//    λL → ∞. A scroll region that fills up in the gap rises later than that.
//  - a rise that ends below it is still accumulating (a scroll region not
//    yet turned over): given how many changes fell in the gap they are
//    uniform in it, so C rises linearly, whatever λ.
// Curves are averaged over the profiles that reach x, as in AveragedBounds;
// past every profile C stays at the mean last divergence (the lower bound),
// so U stops growing there.
struct CurveUtility {
  double u = 0;  // U(τ); within [u_min, u_max] of AveragedBounds when every
                 // profile's divergence is nondecreasing.
  // sup of U over (0, τ]: nondecreasing in τ, as a crawl value must be (the
  // averaged C drops where a profile with more divergence ends).
  double u_sup = 0;
  int profiles = 0;  // profiles with a point.
};
// All zeros when no profile has a point or τ is not finite and > 0; a rate
// ≤ 0 or NaN is taken as → 0 (linear rises). u and u_sup are 0 when no
// profile saw a change (MaxDivergence 0): the profiles know nothing of its
// curve (longevity-bound then values the page by its model).
// kSaturationTolerance: min-hash noise (sd ≈ 0.06 at D = 0.3, m = 64) spreads
// the points of a saturated churn region by about 20% of its level; 0.03 to
// 0.35 score within 0.2% of each other (issue 4 notes).
inline constexpr double kSaturationTolerance = 0.25;
CurveUtility ExpectedUtility(const ChangeProfiles& profiles, double tau,
                             double rate);

// The largest divergence of any point of the profiles; 0 when none saw the
// page change (or none has a point).
double MaxDivergence(const ChangeProfiles& profiles);

struct BoundState {
  double t_ref = 0;  // t_R.
  double phi = 0;    // current period; 0 = not started.
};

// One bound-based step at refresh time t (after OnRefresh). First call
// (phi == 0): t_R = t, φ = initial_phi. Then with τ = t − t_R: U_max < T ⇒
// φ = 2τ; else U_min ≥ T ⇒ t_R = t, φ = φ/2; else φ unchanged — and if no
// profile reaches back to τ, t_R = t (our addition: with upper = D_max past
// the data the search would otherwise freeze). Always clamped to ρT/D_max
// and > 0. Returns φ; the next refresh is at t + φ.
double BoundBasedStep(const ChangeProfiles& profiles, BoundState& state,
                      double t, double initial_phi,
                      const LongevityParams& params);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_CHANGE_PROFILE_H_
