#include "sim/rate_error.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sched/math_constants.h"
#include "sim/random.h"

namespace freshd::sim {

void MeasureRateError(const WebModel& model,
                      const std::function<double(uint32_t)>& estimated_rate,
                      SimResult& r) {
  std::vector<double> errors;
  std::vector<std::vector<double>> bias(r.per_class.size());
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  for (uint32_t p = 0; p < model.pages.size(); ++p) {
    const double truth = model.TrueParams(p).delta;
    if (!(truth > 0)) continue;
    const double estimate = estimated_rate(p);
    if (!(estimate > 0)) {
      errors.push_back(sched::kInf);
      continue;
    }
    const double x = std::log(truth), y = std::log(estimate);
    errors.push_back(std::abs(y - x));
    const uint32_t cls = model.pages[p].cls;
    if (cls < bias.size()) bias[cls].push_back(y - x);
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    syy += y * y;
  }
  for (size_t c = 0; c < bias.size(); ++c) {
    std::vector<double>& b = bias[c];
    if (b.empty()) continue;
    auto m = b.begin() + b.size() / 2;
    std::nth_element(b.begin(), m, b.end());
    r.per_class[c].rate_log_bias = *m;
  }
  if (errors.empty()) return;
  auto mid = errors.begin() + errors.size() / 2;
  std::nth_element(errors.begin(), mid, errors.end());
  r.rate_log_error = *mid;
  const double vx = sxx - sx * sx / n, cxy = sxy - sx * sy / n;
  const double vy = syy - sy * sy / n;
  if (n < 3 || !(vx > 0)) return;
  r.rate_log_slope = cxy / vx;
  const double residual = std::max(0.0, vy - cxy * cxy / vx);
  r.rate_log_scatter = std::sqrt(residual / (n - 2));
}

double DistortedRate(uint64_t seed, uint32_t page, double delta,
                     double host_log_mean, double slope, double noise) {
  if (!(delta > 0)) return delta;
  constexpr uint64_t kDistortionStream = 50;  // page_process uses 10–40
  Rng rng(HashKey(seed, page, kDistortionStream));
  const double z = noise != 0 ? rng.Normal() : 0;
  return std::exp(host_log_mean + slope * (std::log(delta) - host_log_mean) +
                  noise * z);
}

}  // namespace freshd::sim
