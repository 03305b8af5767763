#include "sched/rate_mixture.h"

#include <algorithm>
#include <cmath>

namespace freshd::sched {

RateMixture::RateMixture(const RateMixtureOptions& options)
    : options_(options) {
  if (!(options_.min_rate > 0)) options_.min_rate = 1e-12;
  if (!(options_.max_rate > options_.min_rate)) {
    options_.max_rate = options_.min_rate * 1e6;
  }
  log_min_ = std::log(options_.min_rate);
  log_step_ = (std::log(options_.max_rate) - log_min_) / (kRateGridPoints - 1);
  for (int k = 0; k < kRateGridPoints; ++k) {
    grid_[k] = std::exp(log_min_ + k * log_step_);
  }
  std::array<double, kRateGridPoints> shaped{};
  double shaped_total = 0;
  if (options_.prior_rate > 0 && std::isfinite(options_.prior_rate)) {
    for (int k = 0; k < kRateGridPoints; ++k) {
      const double x = grid_[k] / options_.prior_rate;
      shaped[k] = x * std::exp(-x);
      shaped_total += shaped[k];
    }
  }
  for (int k = 0; k < kRateGridPoints; ++k) {
    pseudo_[k] =
        shaped_total > 0
            ? options_.global_pages *
                  (options_.uniform_share / kRateGridPoints +
                   (1 - options_.uniform_share) * shaped[k] / shaped_total)
            : options_.global_pages / kRateGridPoints;
  }
}

void RateMixture::Add(Histogram* h, const RateTerciles& draws, int sign) const {
  if (draws.empty() || !draws.counted) return;
  for (float r : draws.rate) {
    const double x = std::clamp(
        (std::log(std::max<double>(r, 1e-300)) - log_min_) / log_step_, 0.0,
        kRateGridPoints - 1.0);
    const int k = std::min(static_cast<int>(x), kRateGridPoints - 2);
    const int64_t upper = std::llround((x - k) * kUnitsPerDraw);
    (*h)[k] += sign * (kUnitsPerDraw - upper);
    (*h)[k + 1] += sign * upper;
  }
}

void RateMixture::Move(uint32_t host, const RateTerciles& before,
                       const RateTerciles& after) {
  Add(&global_, before, -1);
  Add(&global_, after, 1);
  if (host >= options_.max_hosts) return;
  if (hosts_.size() <= host) hosts_.resize(host + 1, Histogram{});
  Add(&hosts_[host], before, -1);
  Add(&hosts_[host], after, 1);
}

std::array<double, kRateGridPoints> RateMixture::Prior(
    uint32_t host, const RateTerciles& own) const {
  Histogram mine = {};
  Add(&mine, own, 1);
  // Global, leaving the page out, shrunk toward uniform.
  std::array<double, kRateGridPoints> global;
  double global_total = 0;
  for (int k = 0; k < kRateGridPoints; ++k) {
    global[k] = Pages(std::max<int64_t>(0, global_[k] - mine[k])) + pseudo_[k];
    global_total += global[k];
  }
  const bool known = host < hosts_.size();
  std::array<double, kRateGridPoints> prior;
  double total = 0;
  for (int k = 0; k < kRateGridPoints; ++k) {
    const double own_host =
        known ? Pages(std::max<int64_t>(0, hosts_[host][k] - mine[k])) : 0.0;
    prior[k] = own_host + options_.host_pages * global[k] / global_total;
    total += prior[k];
  }
  for (double& p : prior) p /= total;
  return prior;
}

RateTerciles RateMixture::Posterior(uint32_t host,
                                    const ChangeRateStats& evidence,
                                    const RateTerciles& own) const {
  const std::array<double, kRateGridPoints> prior = Prior(host, own);
  std::array<double, kRateGridPoints> log_post;
  double top = -INFINITY;
  for (int k = 0; k < kRateGridPoints; ++k) {
    log_post[k] = std::log(prior[k]) + evidence.LogLikelihood(grid_[k]);
    if (!std::isnan(log_post[k])) top = std::max(top, log_post[k]);
  }
  std::array<double, kRateGridPoints> mass;
  double total = 0;
  for (int k = 0; k < kRateGridPoints; ++k) {
    mass[k] = std::isnan(log_post[k]) ? 0 : std::exp(log_post[k] - top);
    total += mass[k];
  }
  RateTerciles out;
  if (!(total > 0) || !std::isfinite(total)) return out;
  // Walk the grid once, pouring each point's mass into the terciles in
  // order; each tercile's draw is the mean log rate of what it received.
  double sum_log[3] = {0, 0, 0}, got[3] = {0, 0, 0};
  int t = 0;
  for (int k = 0; k < kRateGridPoints; ++k) {
    double m = mass[k] / total * 3;  // in thirds
    const double log_rate = log_min_ + k * log_step_;
    while (m > 1e-15 && t < 3) {
      const double take = std::min(m, 1 - got[t]);
      sum_log[t] += take * log_rate;
      got[t] += take;
      m -= take;
      if (got[t] >= 1 - 1e-12) ++t;
    }
  }
  for (int i = 0; i < 3; ++i) {
    const double log_rate = got[i] > 0
                                ? sum_log[i] / got[i]
                                : log_min_ + (kRateGridPoints - 1) * log_step_;
    out.rate[i] = static_cast<float>(std::exp(log_rate));
  }
  return out;
}

}  // namespace freshd::sched
