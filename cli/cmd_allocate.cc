// freshd allocate --lambda L1,L2,... [--weight W1,...] --total F --metric
// freshness|age: Cho & Garcia-Molina's optimal synchronization frequencies
// (fixed-order sync; the solver is sched/allocation.h, stable for any total).
// Prints one frequency per line, in input order, to 10 significant digits
// (so a total of 1e-9 still reads), and exits 0; on bad input
// (non-positive change rate, negative weight, length mismatch, total ≤ 0, more
// than kMaxAllocationPages values) prints the reason on stderr and exits 2.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "sched/allocation.h"

namespace freshd::cli {

void AddAllocateCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub =
      app.add_subcommand("allocate",
                         "Cho & Garcia-Molina optimal sync frequencies for "
                         "change rates and a total budget, "
                         "one per line");
  struct Options {
    std::vector<double> lambda;
    std::vector<double> weight;
    double total = 0;
    std::string metric;
  };
  auto opts = std::make_shared<Options>();
  sub->add_option("--lambda", opts->lambda,
                  "change rates λ_i > 0, comma-separated")
      ->required()
      ->delimiter(',');
  sub->add_option("--weight", opts->weight,
                  "weights w_i ≥ 0 (default all 1), comma-separated")
      ->delimiter(',');
  sub->add_option("--total", opts->total,
                  "total sync frequency Σf_i > 0 (same time unit)")
      ->required();
  sub->add_option("--metric", opts->metric,
                  "objective: freshness (maximize) or age (minimize)")
      ->required()
      ->check(CLI::IsMember({"freshness", "age"}));
  sub->callback([exit_code, opts] {
    const sched::SyncMetric metric = opts->metric == "age"
                                         ? sched::SyncMetric::kAge
                                         : sched::SyncMetric::kFreshness;
    const Result<sched::SyncAllocation> a = sched::OptimalSyncAllocation(
        opts->lambda, opts->weight, opts->total, metric);
    if (!a.ok()) {
      std::fprintf(stderr, "freshd allocate: %s\n",
                   a.status().ToString().c_str());
      *exit_code = a.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
      return;
    }
    for (double f : a->frequencies) std::printf("%.10g\n", f);
    *exit_code = 0;
  });
}

}  // namespace freshd::cli
