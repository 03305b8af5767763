#include "sim/optima.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sched/allocation.h"
#include "sched/special_functions.h"

namespace freshd::sim {
namespace {

// The staleness optimum and the freshness optimum's staleness (SimResult);
// delta (per day) and mu are ContinuousOptima's.
void StalenessOptima(const WebModel& m, const std::vector<double>& delta,
                     const std::vector<double>& mu, double rate_per_day,
                     SimResult& r) {
  if (m.pages.size() > 20000) return;
  std::vector<sched::DivergenceModel> models;
  for (uint32_t p = 0; p < m.pages.size(); ++p) {
    models.push_back(m.TrueModel(p));
  }
  auto best =
      sched::LongevityContinuousOptimum(models, mu, rate_per_day / kDay);
  if (!best.ok()) return;
  r.staleness_optimum = best->staleness;
  // Staleness of the Azar optimum at `rate` per day.
  auto azar_staleness = [&](double rate) -> double {
    auto g = sched::GreedyContinuousOptimum(delta, mu, rate);
    if (!g.ok()) return -1;
    std::vector<double> per_second(g->rates.size());
    for (size_t i = 0; i < per_second.size(); ++i) {
      per_second[i] = g->rates[i] / kDay;
    }
    auto s = sched::PeriodicStaleness(models, mu, per_second);
    return s.ok() ? *s : -1;
  };
  r.staleness_at_freshness_optimum = azar_staleness(rate_per_day);
  if (r.staleness_at_freshness_optimum < 0) return;
  // The budget whose Azar optimum is as stale as the staleness optimum:
  // bracket by doubling, then TOMS 748 on log rate (relative 1e-6).
  double lo = rate_per_day, hi = 2 * rate_per_day;
  for (int i = 0; azar_staleness(hi) > best->staleness; ++i) {
    if (i == 20) return;
    lo = hi;
    hi *= 2;
  }
  const double log_rate = sched::FindRoot(
      [&](double y) { return azar_staleness(std::exp(y)) - best->staleness; },
      std::log(lo), std::log(hi), 0, 1e-6);
  if (std::isfinite(log_rate)) {
    r.freshness_rate_for_staleness_optimum = std::exp(log_rate);
  }
}

}  // namespace

// The continuous optima of the web's true parameters at the budget; with
// `staleness`, also StalenessOptima.
void ContinuousOptima(const WebModel& m, double rate_per_day, bool staleness,
                      SimResult& r) {
  if (m.pages.size() > 200000) return;
  std::vector<double> delta, mu;
  std::vector<sched::PageParams> params;
  bool signals = false;
  for (uint32_t p = 0; p < m.pages.size(); ++p) {
    const SimPage& s = m.pages[p];
    delta.push_back(std::max(m.ChangeRate(p), 1e-12));
    mu.push_back(s.importance);
    params.push_back({delta.back(), s.importance, s.recall, s.false_rate});
    signals = signals || s.recall > 0 || s.false_rate > 0;
  }
  auto g = sched::GreedyContinuousOptimum(delta, mu, rate_per_day);
  if (g.ok()) r.continuous_optimum = g->accuracy;
  if (signals) {
    auto nc = sched::NcisContinuousOptimum(params, rate_per_day);
    if (nc.ok()) r.continuous_optimum_ncis = nc->accuracy;
  }
  if (staleness) StalenessOptima(m, delta, mu, rate_per_day, r);
}

}  // namespace freshd::sim
