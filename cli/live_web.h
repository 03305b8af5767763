// RunOnLiveWeb: the real daemon loop (daemon::CrawlLoop: fetcher, parser,
// scheduler, LevelDB store in a temporary directory) crawling a simulated
// web served over HTTP on 127.0.0.1 (sim::TestWebServer) in compressed
// time, measured against the web's ground truth (cli/truth_meter.h). It
// is what `freshd demo` runs, and how the end-to-end harness (bench/e2e,
// tests/harness/live_web_test.cc) compares what the daemon achieves with
// what `freshd sim` predicts for the same web, policy and budget.
//
// The daemon is configured as the simulator's scheduler is, with its times
// scaled by day_seconds / 86400: the same budget per virtual day, minimum
// interval (60 virtual s), prior change interval (1 day), max_interval
// floor (90 days), per-host delay (the web's largest crawl delay); sitemaps
// (the signals), and feeds when asked for, are polled once a virtual day.
// Blocks for days * day_seconds wall seconds, running its own io_context.

#ifndef FRESHD_CLI_LIVE_WEB_H_
#define FRESHD_CLI_LIVE_WEB_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "daemon/crawl_loop.h"
#include "sim/test_web.h"
#include "sim/web_model.h"

namespace freshd::cli {

// What a report callback sees, on the loop's thread.
struct LiveWebProgress {
  double unix_time = 0;       // the instant reported
  double wall_s = 0;          // since the crawl started
  double virtual_days = 0;    // the web's clock
  double true_freshness = 0;  // at this instant (cli/truth_meter.h)
  double true_staleness = 0;  // fragment staleness, at this instant
  uint64_t testweb_requests = 0;
  bool final = false;  // the last report, at the end
  const daemon::CrawlLoop* loop = nullptr;
  const sim::TestWeb* web = nullptr;
};

// Where the run listens, told once before the crawl starts.
struct LiveWebStart {
  uint16_t web_port = 0;     // the test web, http://h<N>.test:PORT/
  uint16_t status_port = 0;  // the status endpoint; 0 when not served
};

struct LiveWebOptions {
  std::string policy = "ncis";
  // [sched] rate_model ("gamma" or "mixture") and explore.
  std::string rate_model = "gamma";
  bool explore = false;
  double rate_per_day = 100;  // budget, pages per virtual day
  double burst = 5;           // token bucket depth, pages
  double days = 60;           // virtual days to crawl
  double warmup_days = 0;     // the average covers [warmup_days, days]
  double day_seconds = 1;     // wall seconds per virtual day, >= 1
  // true: every page of the web is a seed, weighted by its importance (an
  // operator's seed list with weights), so the daemon knows what the
  // simulator's scheduler knows; false: each host's root page, weight 1, and
  // the rest is discovered through links and sitemaps.
  bool seed_pages = true;
  // true: the test web serves an Atom feed of each host's feed_entries
  // latest changes, linked from every page (sim::TestWebOptions::feeds), and
  // the daemon polls it ([site_feeds]) once a virtual day, as its sitemaps.
  bool feeds = false;
  uint32_t feed_entries = 20;
  bool serve_status = false;     // the status endpoint on 127.0.0.1:ephemeral
  double sample_days = 0.01;     // ground-truth sampling period
  double report_every_days = 0;  // 0: only the final report
  std::function<void(const LiveWebProgress&)> on_report;  // may be empty
  std::function<void(const LiveWebStart&)> on_start;      // may be empty
};

struct LiveWebResult {
  double true_freshness = 0;      // time average over [warmup_days, days]
  double fragment_staleness = 0;  // likewise (cli/truth_meter.h)
  double measured_days = 0;       // virtual days that average covers
  uint64_t fetches = 0;           // pages fetched within that window
  double fetches_per_day = 0;
  uint64_t testweb_requests = 0;  // every request the web answered
  nlohmann::json status;          // the loop's final /status
  // The daemon's own estimate of true_freshness (Truth::
  // estimated_freshness), time-averaged over the same window.
  double estimated_freshness = 0;
  // How late the harness's sampling timer fired, on the loop's thread, over
  // the whole run (seconds; one sample per wake, every sample_days): how
  // long other work (fetch completions, parses handed back, sitemaps,
  // status requests) held the io thread. Sorted ascending.
  std::vector<double> loop_lag_s;
};

// InvalidArgument for bad options (non-positive budget or days, warm-up not
// below days, day_seconds < 1: the config's smallest robots_cache and prior
// change interval are 1 s); the loop's or the server's errors otherwise.
Result<LiveWebResult> RunOnLiveWeb(const sim::WebModel& model,
                                   const LiveWebOptions& options);

}  // namespace freshd::cli

#endif  // FRESHD_CLI_LIVE_WEB_H_
