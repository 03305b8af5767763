// The budget planner (issue 42 item 5): for each policy, the smallest budget
// at which a replay of a change history (sim/trace_replay.h) reaches a target
// freshness, and the freshness a grid of budgets buys. Each figure is one
// ReplayTrace run, whose cost grows with the fetches it makes, so the search
// spends few of them at high budgets: it replays the grid upward, budget by
// budget, and (unless full_grid) stops one budget past the first at which
// every policy reaches the target (the table's higher budgets, the costliest
// replays, would only say "more than the target"); when the target
// lies above the grid it doubles the budget past the grid's top, up to
// max_budget; then it narrows the bracket [last budget below the target,
// first at or above it] by regula falsi on (log budget, freshness) (the
// Illinois variant, which keeps a bracket and moves both of its ends) until
// hi/lo <= 1 + precision or max_probes more replays. Freshness is taken to
// grow with the budget; where an estimated policy's does not, the answer is
// a budget that reaches the target, not always the least. Independent
// replays (the grid, and the policies' searches) run on `threads` threads;
// the result does not depend on how many.
// PlanBudgets is thread-safe (it owns its threads); independent plans may go
// in parallel.
#ifndef FRESHD_SIM_TRACE_PLAN_H_
#define FRESHD_SIM_TRACE_PLAN_H_

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "sim/trace.h"
#include "sim/trace_replay.h"

namespace freshd::sim {

struct PlanOptions {
  TraceReplayOptions replay;  // all but policy and rate
  std::vector<std::string> policies = {"uniform", "freshness", "ncis"};
  double target = 0.95;  // freshness, in (0, 1)
  // Budgets of the grid, as R/n (fetches per page per day), increasing: the
  // budgets of the question, 1/365 to 1/7 a day.
  std::vector<double> grid = {1.0 / 365, 1.0 / 180, 1.0 / 90,
                              1.0 / 30,  1.0 / 14,  1.0 / 7};
  // Above the grid, the budget doubles up to this R/n before a target is
  // called unreachable (0 or below the grid's top: never above the grid).
  double max_budget = 4;
  double precision = 0.01;  // stop once hi/lo <= 1 + precision
  int max_probes = 8;       // replays narrowing the bracket, at most
  int threads = 2;          // replays in parallel, >= 1
  bool full_grid = false;   // replay every grid budget, past the target too
};

struct PolicyPlan {
  std::string policy;
  // The least budget found reaching the target, pages per day (and per
  // second, the config's `[budget] rate`); < 0: not reached up to
  // max_budget.
  double pages_per_day = -1;
  double rate_per_second = -1;
  double freshness_at_budget = -1;
  std::vector<double> grid_freshness;  // by Plan::grid
  // Every replay of the policy: (pages per day, freshness), by budget.
  std::vector<std::pair<double, double>> probes;
};

struct Plan {
  uint64_t pages = 0;  // pages counted in the replay (n of R/n)
  // The grid budgets replayed (a prefix of PlanOptions::grid), as R/n and
  // in pages per day; PolicyPlan::grid_freshness is by these.
  std::vector<double> grid;
  std::vector<double> grid_pages_per_day;
  std::vector<PolicyPlan> policies;
  uint64_t replays = 0;
};

// InvalidArgument for a target outside (0, 1), an empty or non-increasing
// grid, no policies, a precision <= 0, threads < 1, or what ReplayTrace
// refuses.
[[nodiscard]] Result<Plan> PlanBudgets(const Trace& trace,
                                       const PlanOptions& options);

// The plan as JSON (freshd plan --json) and as an SVG plot of freshness
// against budget, one line per policy, the target dashed (freshd plan
// --svg): self-contained text, no dependency.
std::string PlanToJson(const PlanOptions& options, const Plan& plan);
std::string PlanToSvg(const PlanOptions& options, const Plan& plan);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TRACE_PLAN_H_
