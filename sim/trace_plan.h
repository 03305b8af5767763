// The budget planner (issue 42 item 5): for each policy, the smallest budget
// at which a replay of a change history (sim/trace_replay.h) reaches a target
// freshness, and the freshness a grid of budgets buys. Each figure is one
// ReplayTrace run; the search evaluates the grid, then bisects the log budget
// between the last grid budget below the target and the first above it
// (freshness is taken to grow with the budget; where an estimated policy's
// does not, the answer is a budget that reaches it, not always the least).
// Not thread-safe; independent plans may go in parallel.

#ifndef FRESHD_SIM_TRACE_PLAN_H_
#define FRESHD_SIM_TRACE_PLAN_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "sim/trace.h"
#include "sim/trace_replay.h"

namespace freshd::sim {

struct PlanOptions {
  TraceReplayOptions replay;  // all but policy and rate
  std::vector<std::string> policies = {"uniform", "freshness", "ncis"};
  double target = 0.95;  // freshness, in (0, 1)
  // Budgets of the grid, as R/n (fetches per page per day), increasing.
  std::vector<double> grid = {1.0 / 365, 1.0 / 90, 1.0 / 30, 1.0 / 7, 1, 4};
  int bisections = 8;  // halvings of the log-budget bracket
};

struct PolicyPlan {
  std::string policy;
  // The least budget found reaching the target, pages per day (and per
  // second, the config's `[budget] rate`); < 0: not reached on the grid.
  double pages_per_day = -1;
  double rate_per_second = -1;
  double freshness_at_budget = -1;
  std::vector<double> grid_freshness;  // by PlanOptions::grid
};

struct Plan {
  uint64_t pages = 0;  // pages counted in the replay (n of R/n)
  std::vector<double> grid_pages_per_day;
  std::vector<PolicyPlan> policies;
  uint64_t replays = 0;
};

// InvalidArgument for a target outside (0, 1), an empty or non-increasing
// grid, no policies, or what ReplayTrace refuses.
[[nodiscard]] Result<Plan> PlanBudgets(const Trace& trace,
                                       const PlanOptions& options);

// The plan as JSON (freshd plan --json) and as an SVG plot of freshness
// against budget, one line per policy, the target dashed (freshd plan
// --svg): self-contained text, no dependency.
std::string PlanToJson(const PlanOptions& options, const Plan& plan);
std::string PlanToSvg(const PlanOptions& options, const Plan& plan);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TRACE_PLAN_H_
