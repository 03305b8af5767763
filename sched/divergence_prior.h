// Host-pooled prior for the divergence curves of young pages (longevity).
//
// A page fetched once or twice has too few change-profile points for a curve
// fit: with none it would be "static forever" (value 0, never refetched), and
// points taken after the content saturated cannot tell how fast it changes.
// So a page's fit gets (1) its rate fixed to the page's change rate as
// estimated from changed bits (which carries its own host prior), and (2) a
// pseudo-point pulling the saturation level D(∞) toward the level typical of
// its host's fitted pages (kDefaultSaturation before any; the scroll family
// toward the level of the host's scroll fits, which saturate higher than
// churn: a whole list of items turns over, not one block), and (3) only its
// changed points shape the curve (DivergenceFitOptions::given_change). A page
// without a fit uses Model(): churn at its change rate, saturating at the
// host's level.
// In memory only: at a restart the scheduler re-observes the restored pages'
// saved fits (Scheduler::RestorePage), then refits move it on.
// Not thread-safe (the scheduler's owner thread).
#ifndef FRESHD_SCHED_DIVERGENCE_PRIOR_H_
#define FRESHD_SCHED_DIVERGENCE_PRIOR_H_

#include <cstddef>
#include <vector>

#include "sched/divergence_fit.h"
#include "sched/divergence_model.h"
#include "sched/observation.h"

namespace freshd::sched {

class DivergencePrior {
 public:
  static constexpr double kDefaultSaturation = 0.5;
  static constexpr double kPseudoPoints = 1;    // weight of the prior point
  static constexpr double kDecay = 0.99;        // per observed fit, per host
  static constexpr size_t kMaxHosts = 1 << 22;  // beyond: the global level

  // Typical saturation level D(∞) of the host's fitted pages, in [0, 1].
  double Saturation(HostId host) const;
  // The same over the host's scroll fits only (falls back to the global
  // scroll level, then to Saturation(host)).
  double ScrollSaturation(HostId host) const;

  // Records the fit of one of the host's pages (only fits from ≥ 3 points
  // are informative; the caller decides).
  void Observe(HostId host, const DivergenceModel& fitted);

  // Fit options for a page of `host` whose change rate is estimated at
  // `rate` (per unit time; ≤ 0 or non-finite: the rate is fitted freely).
  DivergenceFitOptions FitOptions(HostId host, double rate) const;

  // The model of a page with no fit yet.
  DivergenceModel Model(HostId host, double rate) const;

 private:
  struct Level {
    float sum = 0;     // decayed Σ saturation levels
    float weight = 0;  // decayed count
  };
  static void Add(Level& level, double value);
  static double Mean(const Level& level, double fallback);

  struct Levels {
    Level all;     // every fit
    Level scroll;  // scroll fits
  };

  Levels global_;
  std::vector<Levels> hosts_;  // by host id, grown on demand
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_DIVERGENCE_PRIOR_H_
