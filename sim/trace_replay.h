// Trace replay (issue 42): runs the production sched::Scheduler on a real
// change history (sim/trace.h) in virtual time, as RunSimulation does on a
// generated web, and measures the μ-weighted freshness it achieves.
//
// Time: t0 = the trace's earliest time (or TraceReplayOptions::start); the
// run lasts SimOptions::days (<= 0: the trace's span). Every page existing
// at t0 starts fetched and fresh (a change at t0 is in its copy); a page
// created later is added to the scheduler at its creation (as if its
// sitemap listed it; never fetched, so first in line) and counts from then,
// stale until fetched; a deleted page stops counting (the scheduler keeps
// it, as the daemon would until its 404, and fetches spent on it are lost).
// Content changes are holistic: a fetch finds the page changed when a change
// happened since the previous fetch. Tokens arrive at the budget rate; a
// fetch is instant; hosts have no crawl delay. One scheduler, one shard;
// SimOptions fields that need a generated web (rules, shards, cluster
// events, posterior and distortion diagnostics, rate changes) are refused.
// With SimOptions::oracle each page is valued at its true mean rate within
// the run (sim::TraceMeanRate: the stationary oracle). Deterministic. Not
// thread-safe; independent runs may go in parallel.

#ifndef FRESHD_SIM_TRACE_REPLAY_H_
#define FRESHD_SIM_TRACE_REPLAY_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "base/status.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace freshd::sim {

// Sitemap signals drawn from the trace (off while recall is 0): each host's
// sitemap lists each page's true last change, read as the simulator's
// lastmod signals are (sched::SignalObs with changed_at). A change is listed
// with probability `recall` and seen U(0, delay_days) after it (a sitemap
// polled every delay_days); for `precision` < 1 each listed change brings on
// average (1 − precision)/precision false ones, at uniform times in the
// page's life within the run, each claiming its own time. Deterministic in
// (page, change). A deleted page is no longer listed.
struct TraceSignals {
  double recall = 0;      // in [0, 1]
  double precision = 1;   // in (0, 1]
  double delay_days = 0;  // >= 0
};

struct TraceReplayOptions {
  SimOptions sim;  // policy, oracle, rate, days (<= 0: span), warm-up, ...
  double start = std::numeric_limits<double>::quiet_NaN();  // t0; NaN: first
  TraceSignals signals;
  // The refresh phases: the pages existing at t0 all start fetched at t0,
  // so which of them a policy refetches first among equals follows the
  // order they were added in: URL order (nullopt), or an order shuffled by
  // this seed. Low budgets' figures depend on those phases (one refresh a
  // year: before or after a mass change decides a page's year), so policies
  // are compared over several seeds (docs/real-histories.md).
  std::optional<uint64_t> seed;
};

struct TraceReplayResult {
  SimResult result;  // total metrics, crawls, changes; per_class empty
  double start = 0;  // t0, Unix seconds
  double days = 0;   // the run's length
};

// InvalidArgument for an empty trace, one with no time and no --days, a
// non-positive rate, or an option replay does not support.
[[nodiscard]] Result<TraceReplayResult> ReplayTrace(
    const Trace& trace, const TraceReplayOptions& options);

// The `freshd sim` JSON for a replay: the keys RunSimulation's JSON has,
// those meaningless for a trace null (sim/README.md, "Traces").
std::string TraceReplayToJson(const Trace& trace,
                              const TraceReplayOptions& options,
                              const TraceReplayResult& r);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TRACE_REPLAY_H_
