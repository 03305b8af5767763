// A change-rate estimate against the truth: measured at the end of an
// estimated run (MeasureRateError: SimResult::rate_log_error, slope,
// scatter and each class's bias) and imitated for an oracle run
// (DistortedRate, declared in sim/simulator.h: the true Δ distorted as an
// estimator might). Pure functions.

#ifndef FRESHD_SIM_RATE_ERROR_H_
#define FRESHD_SIM_RATE_ERROR_H_

#include <cstdint>
#include <functional>

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {

// Median over changing pages of |ln(Δ̂/Δ)|, Δ̂ = estimated_rate(page) (a
// page with no estimate counts as infinitely wrong), and the slope and
// residual scatter of ln Δ̂ on ln Δ over the pages with an estimate; each
// class's median ln(Δ̂/Δ). Into r (r.per_class sized by class).
void MeasureRateError(const WebModel& model,
                      const std::function<double(uint32_t)>& estimated_rate,
                      SimResult& r);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_RATE_ERROR_H_
