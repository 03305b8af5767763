// freshd plan --trace FILE [--target F] [--policies P...] [--json]
// [--svg FILE]: the budget a site needs (issue 42 item 5). For each policy,
// the least budget at which a replay of the change history reaches the
// target freshness (sim/trace_plan.h), in pages per day and in `[budget]
// rate` units (pages per second), and the freshness a grid of budgets buys:
// a table, or JSON with --json; --svg also writes a plot. Exit 0 ok, 1 a
// file that cannot be read or written, 2 bad usage or a malformed trace.

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "sim/trace.h"
#include "sim/trace_plan.h"

namespace freshd::cli {
namespace {

struct PlanArgs {
  std::string trace;
  std::string start;
  std::string svg;
  bool json = false;
  sim::PlanOptions options;
};

int RunPlan(PlanArgs& a) {
  if (!a.start.empty()) {
    double start = 0;
    if (!sim::ParseTraceTime(a.start, &start)) {
      std::fprintf(stderr, "freshd plan: bad --start '%s'\n", a.start.c_str());
      return 2;
    }
    a.options.replay.start = start;
  }
  Result<sim::Trace> trace = sim::LoadTrace(a.trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "freshd plan: %s\n", trace.status().message().c_str());
    return trace.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  Result<sim::Plan> plan = sim::PlanBudgets(*trace, a.options);
  if (!plan.ok()) {
    std::fprintf(stderr, "freshd plan: %s\n", plan.status().message().c_str());
    return plan.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  if (!a.svg.empty()) {
    std::ofstream out(a.svg, std::ios::binary | std::ios::trunc);
    out << sim::PlanToSvg(a.options, *plan);
    if (!out.flush()) {
      std::fprintf(stderr, "freshd plan: cannot write %s\n", a.svg.c_str());
      return 1;
    }
  }
  if (a.json) {
    std::puts(sim::PlanToJson(a.options, *plan).c_str());
    return 0;
  }
  std::printf("%llu pages; target freshness %.3f\n\n",
              static_cast<unsigned long long>(plan->pages), a.options.target);
  std::printf("%-16s %16s %16s %10s\n", "policy", "pages/day",
              "[budget] rate/s", "freshness");
  for (const sim::PolicyPlan& p : plan->policies) {
    if (p.pages_per_day > 0) {
      std::printf("%-16s %16.4g %16.4g %10.4f\n", p.policy.c_str(),
                  p.pages_per_day, p.rate_per_second, p.freshness_at_budget);
    } else {
      std::printf("%-16s %16s %16s %10s\n", p.policy.c_str(), "not reached",
                  "-", "-");
    }
  }
  std::printf("\nfreshness by budget (fetches per page per day):\n%-16s",
              "policy");
  for (double g : plan->grid) std::printf(" %9.4g", g);
  std::printf("\n");
  for (const sim::PolicyPlan& p : plan->policies) {
    std::printf("%-16s", p.policy.c_str());
    for (double f : p.grid_freshness) std::printf(" %9.4f", f);
    std::printf("\n");
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "plan",
      "The least budget reaching a target freshness on a change history, per "
      "policy");
  auto a = std::make_shared<PlanArgs>();
  sim::PlanOptions& o = a->options;
  o.replay.sim.days = -1;  // the trace's span
  o.replay.sim.estimate_samples = 0;
  sub->add_option("--trace", a->trace,
                  "change history CSV url,time[,importance,event] "
                  "(sim/README.md, Traces)")
      ->required();
  sub->add_option("--target", o.target, "freshness to reach, in (0, 1)")
      ->check(CLI::Range(1e-9, 1 - 1e-9));
  sub->add_option("--policies", o.policies,
                  "policies to plan for (as [sched] policy)");
  sub->add_option("--grid", o.grid,
                  "budgets of the table, fetches per page per day, "
                  "increasing");
  sub->add_option("--days", o.replay.sim.days,
                  "replayed days (default: the trace's span)")
      ->check(CLI::Range(1e-3, 1e6));
  sub->add_option("--start", a->start,
                  "t0, Unix seconds or RFC 3339 (default: the earliest time)");
  sub->add_option("--warmup-days", o.replay.sim.warmup_days,
                  "excluded from the freshness (default 10% of the days)");
  sub->add_flag("--oracle", o.replay.sim.oracle,
                "value pages at their true mean rates (the stationary oracle)");
  sub->add_option("--max-probes,--bisections", o.max_probes,
                  "replays narrowing the budget bracket, at most")
      ->check(CLI::Range(0, 30));
  sub->add_option("--precision", o.precision,
                  "stop narrowing once the bracket is within this ratio "
                  "(0.01: 1%)")
      ->check(CLI::Range(1e-6, 10.0));
  sub->add_option("--max-budget", o.max_budget,
                  "above the grid, try budgets up to this many fetches per "
                  "page per day before calling the target unreachable")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--threads", o.threads, "replays run in parallel")
      ->check(CLI::Range(1, 64));
  sub->add_flag("--full-grid", o.full_grid,
                "replay every grid budget (default: stop one past the first "
                "at which every policy reaches the target)");
  sub->add_flag("--json", a->json, "print JSON instead of a table");
  sub->add_option("--svg", a->svg, "also write an SVG plot to this file");
  sub->callback([exit_code, a] { *exit_code = RunPlan(*a); });
}

}  // namespace freshd::cli
