#include "sched/divergence_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

constexpr int kMaxK = 64;

bool GivenChange(const DivergenceFitOptions& o) {
  return o.given_change && o.event_rate > 0 && std::isfinite(o.event_rate);
}

// A point the fit uses (under given_change: only one that changed).
bool Usable(const ProfilePoint& p, bool changed_only) {
  return p.t > 0 && std::isfinite(p.t) && std::isfinite(p.d) &&
         (!changed_only || p.d > 0);
}

std::vector<ProfilePoint> Clean(std::span<const ProfilePoint> points,
                                const DivergenceFitOptions& o) {
  const bool changed_only = GivenChange(o);
  std::vector<ProfilePoint> out;
  out.reserve(points.size());
  for (const ProfilePoint& p : points) {
    if (Usable(p, changed_only)) {
      out.push_back({p.t, std::clamp(p.d, 0.0, 1.0)});
    }
  }
  return out;
}

// P(≥1 event by t) for the conditional fit, 1 when not conditioning.
double EventShare(bool given_change, double rate, double t) {
  return given_change ? -std::expm1(-rate * t) : 1;
}

// Range of λ worth searching for these points: from the linear regime of
// the longest gap to saturation at the shortest, within the options.
void RateRange(const std::vector<ProfilePoint>& pts,
               const DivergenceFitOptions& o, double* lo, double* hi) {
  double t_min = kInf, t_max = 0;
  for (const ProfilePoint& p : pts) {
    t_min = std::min(t_min, p.t);
    t_max = std::max(t_max, p.t);
  }
  if (o.event_rate > 0 && std::isfinite(o.event_rate)) {
    *lo = *hi = o.event_rate;
    return;
  }
  *lo = std::max(o.rate_min, 0.01 / t_max);
  *hi = std::min(o.rate_max, 100 / t_min);
  if (!(*lo < *hi)) {
    *lo = o.rate_min;
    *hi = o.rate_max;
  }
}

// The saturation pseudo-point of the options for one family, sanitized
// (weight 0: none).
struct SaturationPrior {
  double d = 0;
  double weight = 0;
};

SaturationPrior PriorOf(const DivergenceFitOptions& o, bool scroll) {
  const double d = scroll && o.scroll_saturation_prior >= 0
                       ? o.scroll_saturation_prior
                       : o.saturation_prior;
  if (!(o.saturation_weight > 0) || !std::isfinite(o.saturation_weight) ||
      !std::isfinite(d)) {
    return {};
  }
  return {std::clamp(d, 0.0, 1.0), std::min(o.saturation_weight, 1e6)};
}

// The pseudo-point's share of a fit's SSE.
double PriorTerm(const DivergenceFit& fit, const DivergenceFitOptions& o) {
  const SaturationPrior prior = PriorOf(o, fit.scroll);
  if (prior.weight == 0) return 0;
  const double miss = prior.d - SaturationDivergence(fit.model);
  return std::isfinite(miss) ? prior.weight * miss * miss : 0;
}

// Churn SSE at rate λ with the best a (closed form); *a_out gets a.
// With the saturation pseudo-point (d0, w): a = (Σφd + w·d0)/(Σφ² + w).
// Given change, every point predicts a itself (φ = 1).
double ChurnSse(const std::vector<ProfilePoint>& pts, double rate,
                bool given_change, double* a_out, double d0 = 0, double w = 0) {
  auto phi = [&](double t) {
    return given_change ? 1.0 : -std::expm1(-rate * t);
  };
  double sfd = w * d0, sff = w;
  for (const ProfilePoint& p : pts) {
    double f = phi(p.t);
    sfd += f * p.d;
    sff += f * f;
  }
  double a = sff > 0 ? std::clamp(sfd / sff, 0.0, 1.0) : 0;
  double sse = 0;
  for (const ProfilePoint& p : pts) {
    double r = p.d - a * phi(p.t);
    sse += r * r;
  }
  sse += w * (d0 - a) * (d0 - a);
  if (a_out != nullptr) *a_out = a;
  return sse;
}

// Brent's minimization on [a, b] (golden section + parabolic steps).
template <typename F>
double BrentMin(F f, double a, double b, double tol, int max_iter,
                double* fx_out) {
  constexpr double kGold = 0.3819660112501051;
  double x = a + kGold * (b - a), w = x, v = x;
  double fx = f(x), fw = fx, fv = fx;
  double d = 0, e = 0;
  for (int i = 0; i < max_iter; ++i) {
    double m = 0.5 * (a + b);
    double tol1 = tol * std::abs(x) + 1e-12, tol2 = 2 * tol1;
    if (std::abs(x - m) <= tol2 - 0.5 * (b - a)) break;
    bool golden = true;
    if (std::abs(e) > tol1) {
      double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw);
      double p = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      q = std::abs(q);
      double e_prev = e;
      e = d;
      if (std::abs(p) < std::abs(0.5 * q * e_prev) && p > q * (a - x) &&
          p < q * (b - x)) {
        d = p / q;
        double u = x + d;
        if (u - a < tol2 || b - u < tol2) d = x < m ? tol1 : -tol1;
        golden = false;
      }
    }
    if (golden) {
      e = (x >= m ? a : b) - x;
      d = kGold * e;
    }
    double u = std::abs(d) >= tol1 ? x + d : x + (d > 0 ? tol1 : -tol1);
    double fu = f(u);
    if (fu <= fx) {
      (u >= x ? a : b) = x;
      v = w, fv = fw, w = x, fw = fx, x = u, fx = fu;
    } else {
      (u < x ? a : b) = u;
      if (fu <= fw || w == x) {
        v = w, fv = fw, w = u, fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u, fv = fu;
      }
    }
  }
  *fx_out = fx;
  return x;
}

// Scroll SSE for (s, K, λ); g_j precomputed by the caller.
double ScrollSse(const std::vector<ProfilePoint>& pts, const double* dg, int k,
                 double rate, bool given_change) {
  double sse = 0;
  for (const ProfilePoint& p : pts) {
    double x = rate * p.t;
    double term = std::exp(-x), cum = term, d = 0;
    for (int j = 0; j < k; ++j) {
      d += dg[j] * (1 - cum);
      term *= x / (j + 1);
      cum += term;
    }
    double share = EventShare(given_change, rate, p.t);
    double r = p.d - (share > 0 ? d / share : 0);
    sse += r * r;
  }
  return sse;
}

double Logistic(double x) { return 1 / (1 + std::exp(-x)); }

// Nelder–Mead in 2-D, standard coefficients; returns the best vertex.
template <typename F>
std::array<double, 2> NelderMead(F f, std::array<double, 2> start,
                                 std::array<double, 2> step, int max_evals,
                                 double* f_out) {
  std::array<std::array<double, 2>, 3> x = {
      start, {start[0] + step[0], start[1]}, {start[0], start[1] + step[1]}};
  std::array<double, 3> fx = {f(x[0]), f(x[1]), f(x[2])};
  int evals = 3;
  while (evals < max_evals) {
    // Order: best 0, worst 2.
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2 - i; ++j) {
        if (fx[j] > fx[j + 1]) {
          std::swap(fx[j], fx[j + 1]);
          std::swap(x[j], x[j + 1]);
        }
      }
    }
    // Converged when the values agree or the simplex has collapsed.
    double size = 0;
    for (int i = 1; i < 3; ++i) {
      size = std::max(
          {size, std::abs(x[i][0] - x[0][0]), std::abs(x[i][1] - x[0][1])});
    }
    if (fx[2] - fx[0] <= 1e-10 * fx[0] + 1e-15 || size < 1e-6) break;
    std::array<double, 2> c = {(x[0][0] + x[1][0]) / 2,
                               (x[0][1] + x[1][1]) / 2};
    auto along = [&](double coef) {
      return std::array<double, 2>{c[0] + coef * (x[2][0] - c[0]),
                                   c[1] + coef * (x[2][1] - c[1])};
    };
    std::array<double, 2> r = along(-1);
    double fr = f(r);
    ++evals;
    if (fr < fx[0]) {
      std::array<double, 2> e = along(-2);
      double fe = f(e);
      ++evals;
      if (fe < fr) {
        x[2] = e, fx[2] = fe;
      } else {
        x[2] = r, fx[2] = fr;
      }
    } else if (fr < fx[1]) {
      x[2] = r, fx[2] = fr;
    } else {
      std::array<double, 2> k = fr < fx[2] ? along(-0.5) : along(0.5);
      double fk = f(k);
      ++evals;
      if (fk < std::min(fr, fx[2])) {
        x[2] = k, fx[2] = fk;
      } else {  // shrink toward the best vertex
        for (int i = 1; i < 3; ++i) {
          x[i] = {(x[i][0] + x[0][0]) / 2, (x[i][1] + x[0][1]) / 2};
          fx[i] = f(x[i]);
        }
        evals += 2;
      }
    }
  }
  int best = 0;
  for (int i = 1; i < 3; ++i) {
    if (fx[i] < fx[best]) best = i;
  }
  *f_out = fx[best];
  return x[best];
}

DivergenceModel NeverChanges() { return DivergenceModel{}; }

DivergenceFit FitChurnClean(const std::vector<ProfilePoint>& pts,
                            const DivergenceFitOptions& o) {
  DivergenceFit fit;
  fit.points = static_cast<int>(pts.size());
  fit.scroll_sse = kInf;
  fit.model = NeverChanges();
  if (pts.empty()) return fit;
  const SaturationPrior prior = PriorOf(o, false);
  auto sse_at = [&](double rate, double* a) {
    return ChurnSse(pts, rate, GivenChange(o), a, prior.d, prior.weight);
  };
  double lo, hi;
  RateRange(pts, o, &lo, &hi);
  double rate = lo;
  if (lo < hi) {
    const int grid = std::clamp(o.grid, 3, 1000);
    const double llo = std::log(lo), lhi = std::log(hi);
    const double step = (lhi - llo) / (grid - 1);
    int best = 0;
    double best_sse = kInf;
    for (int i = 0; i < grid; ++i) {
      double sse = sse_at(std::exp(llo + i * step), nullptr);
      if (sse < best_sse) best_sse = sse, best = i;
    }
    double a0 = llo + std::max(0, best - 1) * step;
    double b0 = llo + std::min(grid - 1, best + 1) * step;
    double sse = best_sse;
    double log_rate =
        BrentMin([&](double lr) { return sse_at(std::exp(lr), nullptr); }, a0,
                 b0, 1e-10, 200, &sse);
    if (!(sse <= best_sse)) log_rate = llo + best * step;
    rate = std::exp(log_rate);
  }
  double a = 0;
  double sse = sse_at(rate, &a);
  fit.model = ChurnModelAtLevel(a, a > 0 ? rate : 0);
  fit.sse = fit.churn_sse = sse;
  return fit;
}

DivergenceFit FitScrollClean(const std::vector<ProfilePoint>& pts,
                             const DivergenceFitOptions& o) {
  DivergenceFit fit;
  fit.points = static_cast<int>(pts.size());
  fit.scroll = true;
  fit.churn_sse = kInf;
  fit.sse = fit.scroll_sse = kInf;
  fit.model = NeverChanges();
  if (pts.empty()) return fit;
  const SaturationPrior prior = PriorOf(o, true);
  double lo, hi;
  RateRange(pts, o, &lo, &hi);
  std::vector<double> ts;
  for (const ProfilePoint& p : pts) ts.push_back(p.t);
  std::nth_element(ts.begin(), ts.begin() + ts.size() / 2, ts.end());
  const double t_med = ts[ts.size() / 2];
  const int per_axis = o.starts >= 9 ? 3 : o.starts >= 4 ? 2 : 1;
  static constexpr double kS[3][3] = {
      {0.5, 0, 0}, {0.3, 0.7, 0}, {0.2, 0.5, 0.8}};
  static constexpr double kR[3][3] = {{1, 0, 0}, {0.5, 2, 0}, {0.3, 1, 3}};
  const double llo = std::log(lo), lhi = std::log(hi);
  const int k_max = std::clamp(o.k_max, 2, kMaxK);
  const int evals = std::clamp(o.max_evaluations, 10, 100000);
  double dg[kMaxK];
  std::array<double, 2> prev_best = {0, 0};
  int worse_in_a_row = 0;
  for (int k = 2; k <= k_max; ++k) {
    auto sse_at = [&](const std::array<double, 2>& x) {
      double s = Logistic(std::clamp(x[0], -30.0, 30.0));
      double rate = std::exp(std::clamp(x[1], llo, lhi));
      for (int j = 0; j < k; ++j) {
        dg[j] = JaccardDistanceOfReplaced((1 - s) * (j + 1) / k) -
                JaccardDistanceOfReplaced((1 - s) * j / k);
      }
      double miss = prior.d - JaccardDistanceOfReplaced(
                                  1 - s);  // the pseudo-point at t = ∞
      return ScrollSse(pts, dg, k, rate, GivenChange(o)) +
             prior.weight * miss * miss;
    };
    double k_best = kInf;
    std::array<double, 2> k_best_x = {0, 0};
    auto run = [&](std::array<double, 2> start) {
      double f = kInf;
      std::array<double, 2> x =
          NelderMead(sse_at, start, {0.5, 0.5}, evals, &f);
      if (f < k_best) k_best = f, k_best_x = x;
    };
    if (o.warm_start && k > 2) {
      // Same s; λ scaled so that K/λ (the time to scroll out) is kept.
      run({prev_best[0], prev_best[1] + std::log(k / (k - 1.0))});
      run({0, std::log(std::clamp(k / (2 * t_med), lo, hi))});
    } else {
      for (int i = 0; i < per_axis; ++i) {
        for (int j = 0; j < per_axis; ++j) {
          double s0 = kS[per_axis - 1][i];
          double r0 = std::clamp(kR[per_axis - 1][j] / t_med, lo, hi);
          run({std::log(s0 / (1 - s0)), std::log(r0)});
        }
      }
    }
    prev_best = k_best_x;
    if (k_best < fit.scroll_sse) {
      worse_in_a_row = 0;
      fit.scroll_sse = fit.sse = k_best;
      fit.model.static_share = Logistic(std::clamp(k_best_x[0], -30.0, 30.0));
      fit.model.churn_share = 0;
      fit.model.churn_rate = 0;
      fit.model.scroll_k = k;
      fit.model.scroll_rate = std::exp(std::clamp(k_best_x[1], llo, lhi));
    } else if (o.patience > 0 && ++worse_in_a_row >= o.patience) {
      break;
    }
  }
  return fit;
}

}  // namespace

double ScrollDivergence(double s, int k, double rate, double t) {
  if (k < 1 || !(t > 0) || !(rate > 0)) return 0;
  k = std::min(k, 100000);
  s = std::clamp(s, 0.0, 1.0);
  double x = rate * t, term = std::exp(-x), cum = term, d = 0;
  for (int j = 0; j < k; ++j) {
    d += (JaccardDistanceOfReplaced((1 - s) * (j + 1) / k) -
          JaccardDistanceOfReplaced((1 - s) * j / k)) *
         (1 - cum);
    term *= x / (j + 1);
    cum += term;
  }
  return d;
}

int FitPoints(std::span<const ProfilePoint> points,
              const DivergenceFitOptions& options) {
  const bool changed_only = GivenChange(options);
  return static_cast<int>(std::count_if(
      points.begin(), points.end(),
      [&](const ProfilePoint& p) { return Usable(p, changed_only); }));
}

DivergenceFit FitChurn(std::span<const ProfilePoint> points,
                       const DivergenceFitOptions& options) {
  return FitChurnClean(Clean(points, options), options);
}

DivergenceFit FitScroll(std::span<const ProfilePoint> points,
                        const DivergenceFitOptions& options) {
  return FitScrollClean(Clean(points, options), options);
}

DivergenceFit FitDivergence(std::span<const ProfilePoint> points,
                            const DivergenceFitOptions& options) {
  std::vector<ProfilePoint> pts = Clean(points, options);
  DivergenceFit churn = FitChurnClean(pts, options);
  if (pts.size() < 3) return churn;
  DivergenceFit scroll = FitScrollClean(pts, options);
  // The family is chosen by the points alone: the pseudo-point regularizes
  // each family's parameters but must not vote (scroll, with more shape
  // freedom, could otherwise win by bending toward the prior level).
  const double churn_data = churn.churn_sse - PriorTerm(churn, options);
  const double scroll_data = scroll.scroll_sse - PriorTerm(scroll, options);
  DivergenceFit& best = scroll_data < churn_data ? scroll : churn;
  best.churn_sse = churn.churn_sse;
  best.scroll_sse = scroll.scroll_sse;
  return best;
}

DivergenceFit FitDivergence(std::span<const std::pair<double, double>> points,
                            const DivergenceFitOptions& options) {
  std::vector<ProfilePoint> pts;
  pts.reserve(points.size());
  for (const auto& [t, d] : points) pts.push_back({t, d});
  return FitDivergence(std::span<const ProfilePoint>(pts), options);
}

}  // namespace freshd::sched
