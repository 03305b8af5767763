// Empirical-Bayes change-rate posteriors on a fixed grid of rates.
//
// A host's prior is a distribution of rates, not one rate: a histogram over
// a log-spaced grid of the posteriors of the host's pages, shrunk toward the
// global histogram (which is shrunk toward uniform over the grid). A page's
// posterior is that prior, leaving the page itself out, times the exact
// likelihood of its evidence (ChangeRateStats::LogLikelihood). So a page on
// a host of mostly slow pages whose intervals all changed is read as one of
// the host's fast pages, its rate bounded below by its intervals (censored)
// rather than pulled to the host's one rate; and a page with little evidence
// carries the host's spread of rates instead of a point. A posterior is
// summarised by three equal-mass draws (the mean log rate of each tercile),
// which is what the scheduler values a page over and what the page
// contributes back to its host's histogram.
// Not thread-safe (the scheduler's owner thread).
#ifndef FRESHD_SCHED_RATE_MIXTURE_H_
#define FRESHD_SCHED_RATE_MIXTURE_H_

#include <array>
#include <cstdint>
#include <vector>

#include "sched/change_rate_estimator.h"

namespace freshd::sched {

inline constexpr int kRateGridPoints = 24;

// Three equal-mass draws of a page's rate (per unit time), ascending; all
// 0 when the page has no posterior (no evidence contributed yet).
struct RateTerciles {
  std::array<float, 3> rate = {0, 0, 0};
  // In its host's histogram (a page with evidence of its own; one without
  // takes the prior's terciles and gives nothing back).
  bool counted = false;
  bool empty() const { return !(rate[1] > 0); }
};

// What a page keeps beyond its PageState when the rate posterior
// (rate_mixture) or exploration is on: its draws and its exploration
// interval (s; 0: none). Saved with the page so a restart restores the
// draws (and their share of the host's histogram) instead of recomputing
// them against a histogram rebuilt in restore order.
struct RateMemory {
  RateTerciles draws;
  float explore_interval = 0;
};

struct RateMixtureOptions {
  // The grid spans [min_rate, max_rate] (per unit time: seconds in the
  // daemon): about once in ten years to once in ten minutes by default.
  // Evidence beyond either end is read as that end.
  double min_rate = 1.0 / (10 * 365 * 86400.0);
  double max_rate = 1.0 / 600;
  double host_pages = 4;     // pseudo-pages of the global histogram a host
                             // borrows (its histogram's shrinkage).
  double global_pages = 12;  // pseudo-pages spread over the grid:
  // half uniformly, half as the configured prior (prior_rate > 0): the
  // Gamma(1, prior_rate) density the gamma model starts from, on the log
  // grid (∝ λ e^{−λ/prior_rate}); all uniformly when prior_rate < 0. The
  // scheduler gives 0 its host pool's global prior rate.
  double prior_rate = 0;
  double uniform_share = 0.5;  // of global_pages, with a prior_rate
  size_t max_hosts = 1 << 22;  // ids ≥ this use the global histogram.
};

class RateMixture {
 public:
  explicit RateMixture(const RateMixtureOptions& options = {});

  double grid(int k) const { return grid_[k]; }

  // The posterior of a page on `host` with `evidence` (no observations:
  // the prior), leaving out `own` if counted.
  RateTerciles Posterior(uint32_t host, const ChangeRateStats& evidence,
                         const RateTerciles& own) const;

  // Moves a page's contribution to its host's (and the global) histogram
  // from `before` to `after` (each only if counted).
  void Move(uint32_t host, const RateTerciles& before,
            const RateTerciles& after);

  // The host's prior as grid weights summing to 1 (for tests and status).
  std::array<double, kRateGridPoints> Prior(uint32_t host,
                                            const RateTerciles& own) const;

 private:
  // Whole units, kUnitsPerDraw a draw (three a page): sums are exact, so a
  // histogram is the same whatever order its pages were moved in (a
  // restart rebuilds it from the saved draws) and never drifts.
  static constexpr int64_t kUnitsPerDraw = int64_t{1} << 20;
  using Histogram = std::array<int64_t, kRateGridPoints>;
  static double Pages(int64_t units) {
    return static_cast<double>(units) / (3 * kUnitsPerDraw);
  }
  // Adds `sign` (±1) × a draw (a third of a page) at each draw to `h`,
  // split linearly (in log rate) between the two nearest grid points;
  // nothing unless counted.
  void Add(Histogram* h, const RateTerciles& draws, int sign) const;

  RateMixtureOptions options_;
  std::array<double, kRateGridPoints> grid_;
  double log_min_ = 0, log_step_ = 1;
  std::array<double, kRateGridPoints> pseudo_;  // global pseudo-pages
  Histogram global_ = {};
  std::vector<Histogram> hosts_;  // by host id, grown on demand
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_RATE_MIXTURE_H_
