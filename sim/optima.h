// The continuous optima of a web's true parameters at a budget, computed
// without simulation, to set a run's result against (SimResult::
// continuous_optimum, continuous_optimum_ncis and, for longevity policies,
// the staleness optima): the best any schedule of fixed per-page rates
// achieves. Pure functions of the model.

#ifndef FRESHD_SIM_OPTIMA_H_
#define FRESHD_SIM_OPTIMA_H_

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {

// Fills r's continuous_optimum (Azar) and, when the web has signals,
// continuous_optimum_ncis, at `rate_per_day`; with `staleness`, also the
// staleness optimum, the freshness optimum's staleness and the budget at
// which they meet (SimResult). Webs over 200,000 pages (staleness: 20,000)
// are left out.
void ContinuousOptima(const WebModel& m, double rate_per_day, bool staleness,
                      SimResult& r);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_OPTIMA_H_
