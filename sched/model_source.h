// What an oracle knows of a page: its true parameters, its true divergence
// curve, and (a diagnostic) a weighted set of parameter draws standing for
// an uncertain model. The simulator implements it (sim/oracle_truth.h); the
// scheduler only reads it, in oracle mode (SchedulerOptions::oracle: values
// from the truth) and oracle_rate mode (only the true Δ), and never in the
// daemon. The scheduler holds a non-owning pointer: the source outlives it.
// A source that changes a page's truth tells the scheduler with
// Scheduler::ModelChanged(page), which re-indexes the page.
// Read on the scheduler's thread only.

#ifndef FRESHD_SCHED_MODEL_SOURCE_H_
#define FRESHD_SCHED_MODEL_SOURCE_H_

#include <span>

#include "sched/crawl_value.h"
#include "sched/divergence_model.h"
#include "sched/observation.h"

namespace freshd::sched {

// One draw of a page's parameters and its prior weight (>= 0, finite).
struct WeightedParams {
  PageParams params;
  double weight = 1;
};

class ModelSource {
 public:
  virtual ~ModelSource() = default;
  // The page's true parameters (rates per second); nullptr when the source
  // has none for it (the scheduler then values it as never changing, at
  // its own importance).
  virtual const PageParams* TrueParams(PageId page) const = 0;
  // The page's true divergence curve (longevity policies); nullptr: none
  // ("never changes").
  virtual const DivergenceModel* TrueModel(PageId page) const = 0;
  // The page's model as a weighted set of draws (empty: none). The weights
  // are valid (finite, >= 0, not all 0) when the set is not empty.
  virtual std::span<const WeightedParams> TrueMixture(PageId page) const = 0;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_MODEL_SOURCE_H_
