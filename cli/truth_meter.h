// TruthMeter: how fresh a daemon::CrawlLoop's copy of a simulated web
// (sim::TestWeb) really is, from the web's ground truth, in the simulator's
// two metrics: freshness, the importance-weighted share of the web's pages
// whose copy is current (the page has not changed since its last fetch;
// every fetch gets the version of its moment), and fragment staleness, the
// importance-weighted mean of the exact word-set distance between each
// copy and its page now (sim::VersionDivergence). A never-fetched page is
// stale (distance 1). URLs that are not one of the web's pages (/p/N on its
// host; e.g. the hosts' index pages) are not counted. Alongside, what the
// loop believes the freshness is (Truth::estimated_freshness). Sample()
// integrates all three over time, for the time averages the simulator
// reports. Times are
// wall-clock Unix seconds and must not go backwards between calls. Not
// thread-safe: call it on the loop's thread.

#ifndef FRESHD_CLI_TRUTH_METER_H_
#define FRESHD_CLI_TRUTH_METER_H_

#include <cstdint>
#include <vector>

#include "daemon/crawl_loop.h"
#include "sim/page_process.h"
#include "sim/test_web.h"

namespace freshd::cli {

struct Truth {
  double freshness = 0;  // in [0, 1], higher is better
  double staleness = 0;  // in [0, 1], lower is better
  // Not truth: what the loop believes `freshness` is, the scheduler's
  // P(fresh) of each page's copy (sched::Scheduler::FreshProbability),
  // weighted alike (never fetched: 0). /status's estimated_freshness, less
  // the URLs that are not web pages.
  double estimated_freshness = 0;
};

class TruthMeter {
 public:
  // `web` must outlive the meter.
  explicit TruthMeter(const sim::TestWeb& web);

  // The truth of `loop`'s copy at `unix_now`.
  Truth Measure(const daemon::CrawlLoop& loop, double unix_now);

  // Measure(), also added to the running integrals as the value over the
  // time since the previous sample (the first sample only starts them).
  // Sample often compared with the pages' change and fetch intervals.
  Truth Sample(const daemon::CrawlLoop& loop, double unix_now);
  // Forgets the integrals (e.g. at the end of a warm-up); the next Sample
  // starts them again.
  void ResetAverage();
  // Time averages since the integrals started; both -1 before two samples.
  Truth Average() const;
  // Wall seconds the averages cover.
  double averaged_seconds() const { return span_; }

 private:
  // The web's page behind the loop's URL id, or -1 (cached per id).
  int64_t PageOf(const daemon::CrawlLoop& loop, size_t id);

  const sim::TestWeb& web_;
  // Per web page: its change streams advanced to the last virtual time asked
  // and the latest change time seen (virtual seconds; -1: none yet); the
  // version of its copy and the fetch time it was computed for.
  std::vector<sim::EventStream> churn_, scroll_;
  std::vector<double> last_change_;
  std::vector<sim::Version> copy_;
  std::vector<double> copy_fetched_;
  std::vector<int64_t> page_of_id_;  // by URL id
  std::vector<double> fetched_at_;   // scratch, by web page
  std::vector<size_t> newest_id_;    // scratch: the URL id of that copy
  double total_importance_ = 0;
  Truth integral_;
  double span_ = 0;
  double last_sample_ = -1;  // -1: the integrals have not started
};

}  // namespace freshd::cli

#endif  // FRESHD_CLI_TRUTH_METER_H_
