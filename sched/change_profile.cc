#include "sched/change_profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

uint16_t Quantize(double d) {
  if (!std::isfinite(d)) d = 0;
  return static_cast<uint16_t>(std::lround(std::clamp(d, 0.0, 1.0) * 65535));
}

// A usable D_max: positive and finite, else 1 (fragment staleness).
double ValidDMax(double d_max) {
  return d_max > 0 && std::isfinite(d_max) ? d_max : 1;
}

// Risk bound ρT/D_max (+∞ when it does not apply).
double RiskBound(const LongevityParams& p) {
  if (p.d_max > 0 && p.threshold > 0 && p.rho > 0) {
    return p.rho * p.threshold / p.d_max;
  }
  return kInf;
}

// The largest offset observed by any profile.
double LongestSpan(const ChangeProfiles& profiles) {
  double span = 0;
  for (int i = 0; i < profiles.size(); ++i) {
    const CompactProfile& p = profiles.profile(i);
    for (int j = 0; j < p.size; ++j) span = std::max<double>(span, p.dt[j]);
  }
  return span;
}

}  // namespace

ChangeProfiles::ChangeProfiles(int history)
    : history_(std::clamp(history, 1, kMaxHistory)) {
  profiles_.reserve(history_);
}

int ChangeProfiles::OnRefresh(double t, std::span<const double> divergences) {
  if (!std::isfinite(t) || divergences.size() != profiles_.size()) return -1;
  if (!profiles_.empty() && t < profiles_.back().base_time) return -1;
  for (size_t i = 0; i < profiles_.size(); ++i) {
    CompactProfile& p = profiles_[i];
    const double dt = t - p.base_time;
    if (!(dt > 0) || p.size >= kMaxHistory) continue;
    p.dt[p.size] = static_cast<float>(dt);
    p.d[p.size] = Quantize(divergences[i]);
    ++p.size;
  }
  int slot;
  if (static_cast<int>(profiles_.size()) == history_) {
    slot = profiles_.front().slot;
    profiles_.erase(profiles_.begin());
  } else {
    slot = 0;  // smallest slot not in use
    while (
        std::any_of(profiles_.begin(), profiles_.end(),
                    [&](const CompactProfile& p) { return p.slot == slot; })) {
      ++slot;
    }
  }
  CompactProfile fresh;
  fresh.base_time = t;
  fresh.slot = static_cast<uint8_t>(slot);
  profiles_.push_back(fresh);
  ++refreshes_;
  return slot;
}

std::vector<ProfilePoint> ChangeProfiles::Pooled() const {
  std::vector<ProfilePoint> all;
  for (const CompactProfile& p : profiles_) {
    for (int i = 0; i < p.size; ++i) all.push_back(p.point(i));
  }
  std::sort(
      all.begin(), all.end(),
      [](const ProfilePoint& a, const ProfilePoint& b) { return a.t < b.t; });
  std::vector<ProfilePoint> out;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    double sum = 0;
    while (j < all.size() && all[j].t == all[i].t) sum += all[j++].d;
    out.push_back({all[i].t, sum / static_cast<double>(j - i)});
    i = j;
  }
  return out;
}

double CurveFitInterval(const DivergenceModel& model, uint32_t refreshes,
                        const LongevityParams& params) {
  double phi = UtilityInverse(model, params.threshold);
  if (!(phi >= 0)) phi = 0;  // NaN from a malformed model: refresh now.
  const double n = std::max<uint32_t>(refreshes, 1);
  if (params.learning_l > 0) phi = std::min(phi, params.learning_l * n);
  phi = std::min(phi, RiskBound(params));
  return std::isfinite(phi) ? phi : std::numeric_limits<double>::max();
}

double CurveFitStep(const ChangeProfiles& profiles,
                    const LongevityParams& params,
                    const DivergenceFitOptions& options,
                    DivergenceFit* fit_out) {
  std::vector<ProfilePoint> pooled = profiles.Pooled();
  DivergenceFit fit = FitDivergence(pooled, options);
  if (fit_out != nullptr) *fit_out = fit;
  if (fit.points == 0) {  // nothing learned yet: stay in the learning phase
    double n = std::max<uint32_t>(profiles.refreshes(), 1);
    double phi =
        std::min(std::max(params.learning_l, 0.0) * n, RiskBound(params));
    return std::isfinite(phi) ? phi : std::numeric_limits<double>::max();
  }
  return CurveFitInterval(fit.model, profiles.refreshes(), params);
}

UtilityBounds ProfileBounds(const CompactProfile& profile, double tau,
                            double d_max) {
  UtilityBounds b;
  if (profile.size == 0 || !(tau > 0) || !std::isfinite(tau)) return b;
  d_max = ValidDMax(d_max);
  b.profiles = 1;
  // Walk the segments [x_i, x_{i+1}] with x_0 = 0, d_0 = 0.
  double x_prev = 0, d_prev = 0;
  b.upper = b.lower = 0;
  bool done = false;
  for (int i = 0; i < profile.size && !done; ++i) {
    ProfilePoint p = profile.point(i);
    if (p.t <= x_prev) {  // defensive: non-increasing offsets
      d_prev = std::max(d_prev, p.d);
      continue;
    }
    double end = std::min(tau, p.t);
    b.a_max += (end - x_prev) * p.d;
    b.a_min += (end - x_prev) * d_prev;
    if (tau <= p.t) {
      b.upper = p.d;                       // on (x_i, x_{i+1}]
      b.lower = tau < p.t ? d_prev : p.d;  // on [x_i, x_{i+1})
      done = true;
    }
    x_prev = p.t;
    d_prev = p.d;
  }
  if (!done) {  // beyond the last observation
    b.a_max += (tau - x_prev) * d_max;
    b.a_min += (tau - x_prev) * d_prev;
    b.upper = d_max;
    b.lower = d_prev;
  }
  b.u_max = tau * b.upper - b.a_min;
  b.u_min = tau * b.lower - b.a_max;
  return b;
}

namespace {

// A profile's step curves at x > 0 (see ProfileBounds); REQUIRES size > 0.
double UpperAt(const CompactProfile& p, double x, double d_max) {
  for (int i = 0; i < p.size; ++i) {
    if (x <= p.dt[i]) return p.point(i).d;  // on (x_{i−1}, x_i]
  }
  return d_max;
}
double LowerAt(const CompactProfile& p, double x) {
  double d = 0;
  for (int i = 0; i < p.size && p.dt[i] <= x; ++i) d = p.point(i).d;
  return d;  // on [x_i, x_{i+1})
}
double Span(const CompactProfile& p) { return p.size ? p.dt[p.size - 1] : 0; }

// The profiles with a point, and where their averaged curves may change on
// (0, τ]: every point offset inside (0, τ), sorted and distinct, then τ.
struct CurveGrid {
  std::vector<const CompactProfile*> live;
  std::vector<double> breaks;
};
CurveGrid GridTo(const ChangeProfiles& profiles, double tau) {
  CurveGrid grid;
  for (int i = 0; i < profiles.size(); ++i) {
    const CompactProfile& p = profiles.profile(i);
    if (p.size == 0) continue;
    grid.live.push_back(&p);
    for (int j = 0; j < p.size; ++j) {
      if (p.dt[j] > 0 && p.dt[j] < tau) grid.breaks.push_back(p.dt[j]);
    }
  }
  grid.breaks.push_back(tau);
  std::sort(grid.breaks.begin(), grid.breaks.end());
  grid.breaks.erase(std::unique(grid.breaks.begin(), grid.breaks.end()),
                    grid.breaks.end());
  return grid;
}

}  // namespace

UtilityBounds AveragedBounds(const ChangeProfiles& profiles, double tau,
                             double d_max) {
  UtilityBounds out;
  const CurveGrid grid = GridTo(profiles, tau);
  const std::vector<const CompactProfile*>& live = grid.live;
  out.profiles = static_cast<int>(live.size());
  if (live.empty() || !(tau > 0) || !std::isfinite(tau)) {
    return UtilityBounds{};
  }
  d_max = ValidDMax(d_max);
  // The curves at x: mean over the profiles that reach x; past every
  // profile, upper = D_max and lower = the mean last divergence.
  auto curves = [&](double x, double* upper, double* lower) {
    double u = 0, l = 0, last = 0;
    int n = 0;
    for (const CompactProfile* p : live) {
      last += p->point(p->size - 1).d;
      if (Span(*p) < x) continue;
      u += UpperAt(*p, x, d_max);
      l += LowerAt(*p, x);
      ++n;
    }
    *upper = n ? u / n : d_max;
    *lower = n ? l / n : last / live.size();
  };
  double prev = 0, upper = 0, lower = 0;
  for (double b : grid.breaks) {
    curves(0.5 * (prev + b), &upper, &lower);  // constant on (prev, b)
    out.a_max += (b - prev) * upper;
    out.a_min += (b - prev) * lower;
    prev = b;
  }
  curves(tau, &out.upper, &out.lower);
  out.u_max = tau * out.upper - out.a_min;
  out.u_min = tau * out.lower - out.a_max;
  return out;
}

namespace {

// The expected rise on a gap of length L, as a share of d_{i+1} − d_i: its
// value at s ∈ [0, L] and its integral over [0, s] (ExpectedUtility).
struct RiseShape {
  double rate;
  double Share(double s, double gap) const {
    if (s >= gap) return 1;
    if (!(rate * gap > 1e-9)) return s / gap;
    if (!std::isfinite(rate)) return s > 0 ? 1 : 0;
    return std::expm1(-rate * s) / std::expm1(-rate * gap);
  }
  double Area(double s, double gap) const {
    if (!(rate * gap > 1e-9)) return 0.5 * s * (s / gap);  // s ≤ gap
    if (!std::isfinite(rate)) return s;
    return (s + std::expm1(-rate * s) / rate) / -std::expm1(-rate * gap);
  }
};

// One profile's expected curve: its value at x and ∫₀^x (x ≤ its span). A
// rise ending below `saturated` is spread linearly (given how many changes
// fell in the gap, Poisson changes are uniform in it, so an accumulating
// region's expected rise is linear); a rise that reaches it comes with the
// first change, `shape`.
struct CurvePoint {
  double value = 0, area = 0;
};
CurvePoint ExpectedCurveAt(const CompactProfile& p, const RiseShape& shape,
                           double saturated, double x) {
  const RiseShape linear{0};
  CurvePoint out;
  double x_prev = 0, d_prev = 0;
  for (int i = 0; i < p.size; ++i) {
    ProfilePoint q = p.point(i);
    if (q.t <= x_prev) {  // defensive, as in ProfileBounds
      d_prev = std::max(d_prev, q.d);
      continue;
    }
    const double gap = q.t - x_prev;
    const double s = std::min(x, q.t) - x_prev;
    const double rise = q.d - d_prev;
    const RiseShape& placed = q.d < saturated ? linear : shape;
    out.area += d_prev * s + rise * placed.Area(s, gap);
    if (x <= q.t) {
      out.value = d_prev + rise * placed.Share(s, gap);
      return out;
    }
    x_prev = q.t;
    d_prev = q.d;
  }
  out.area += d_prev * (x - x_prev);
  out.value = d_prev;
  return out;
}

}  // namespace

CurveUtility ExpectedUtility(const ChangeProfiles& profiles, double tau,
                             double rate) {
  CurveUtility out;
  if (!(tau > 0) || !std::isfinite(tau)) return out;
  RiseShape shape{rate > 0 ? rate : 0};
  const CurveGrid grid = GridTo(profiles, tau);
  const std::vector<const CompactProfile*>& live = grid.live;
  out.profiles = static_cast<int>(live.size());
  if (live.empty()) return out;
  double mean_last = 0;
  for (const CompactProfile* p : live) mean_last += p->point(p->size - 1).d;
  mean_last /= live.size();
  const double ceiling = MaxDivergence(profiles);
  const double saturated = (1 - kSaturationTolerance) * ceiling;
  // Between two breaks the same profiles reach x: integrate their mean. U is
  // monotone there (C' is a constant-signed multiple of e^{−λx}), so its sup
  // is at the ends; C, and with it U, can jump at a break where a profile
  // ends. at_prev: each profile's curve at the previous break (a profile
  // that reaches an interval reached every one before it).
  std::vector<CurvePoint> at_prev;
  for (const CompactProfile* p : live) {
    at_prev.push_back(ExpectedCurveAt(*p, shape, saturated, 0));
  }
  double prev = 0, area = 0, value = 0;
  for (double b : grid.breaks) {
    const double mid = 0.5 * (prev + b);
    double start = 0, gain = 0;  // C(prev+), ∫ over (prev, b]
    value = 0;
    int n = 0;
    for (size_t i = 0; i < live.size(); ++i) {
      if (Span(*live[i]) < mid) continue;
      const CurvePoint at_b = ExpectedCurveAt(*live[i], shape, saturated, b);
      start += at_prev[i].value;
      value += at_b.value;
      gain += at_b.area - at_prev[i].area;
      at_prev[i] = at_b;
      ++n;
    }
    if (n > 0) {
      start /= n;
      value /= n;
      gain /= n;
    } else {  // past every profile: flat at the mean last divergence
      start = value = mean_last;
      gain = (b - prev) * mean_last;
    }
    out.u_sup = std::max(out.u_sup, prev * start - area);
    area += gain;
    out.u_sup = std::max(out.u_sup, b * value - area);
    prev = b;
  }
  out.u = tau * value - area;
  return out;
}

double MaxDivergence(const ChangeProfiles& profiles) {
  double max = 0;
  for (int i = 0; i < profiles.size(); ++i) {
    const CompactProfile& p = profiles.profile(i);
    for (int j = 0; j < p.size; ++j) max = std::max(max, p.point(j).d);
  }
  return max;
}

double BoundBasedStep(const ChangeProfiles& profiles, BoundState& state,
                      double t, double initial_phi,
                      const LongevityParams& params) {
  const double risk = RiskBound(params);
  if (!(state.phi > 0)) {
    state.t_ref = t;
    state.phi = initial_phi > 0 ? initial_phi : 1;
  } else {
    const double tau = t - state.t_ref;
    UtilityBounds b = AveragedBounds(profiles, tau, params.d_max);
    if (b.profiles > 0 && tau > 0) {
      if (b.u_max < params.threshold) {
        state.phi = 2 * tau;
      } else if (b.u_min >= params.threshold) {
        state.t_ref = t;
        state.phi /= 2;
      } else if (tau > LongestSpan(profiles)) {
        // Straddling with nothing observed as far back as t_R: with upper =
        // D_max beyond the data, U_max ≥ T and U_min falls as τ grows, so the
        // search would freeze. Restart it from the present, keeping φ.
        state.t_ref = t;
      }
    }
  }
  state.phi = std::min(state.phi, risk);
  if (!(state.phi > 0) || !std::isfinite(state.phi)) {
    state.phi = std::isfinite(risk) && risk > 0 ? risk : 1;
  }
  return state.phi;
}

}  // namespace freshd::sched
