// `freshd demo`: the daemon's main job on an embedded default. Serves an
// embedded synthetic web (kDemoWebToml: 4 hosts x 50 pages; news pages with
// a scrolling region and good sitemap signals, churning pages, slow pages)
// on 127.0.0.1 in compressed time, runs the real CrawlLoop against it from
// the hosts' root pages (cli/live_web.h: a temporary LevelDB store,
// private networks allowed for loopback only through [fetch] resolve) with
// the status endpoint on an ephemeral loopback port, and prints a JSON line
// every few seconds: what the daemon reports (pages, fetches, estimated
// freshness) and the true freshness of its copy computed from the web's
// ground truth. Exit 0 after --seconds.

#ifndef FRESHD_CLI_DEMO_WEB_H_
#define FRESHD_CLI_DEMO_WEB_H_

#include <string>

namespace freshd::cli {

struct DemoOptions {
  double seconds = 30;        // wall time to crawl
  double rate = 8;            // budget, pages per second
  double day_seconds = 10;    // wall seconds per simulated day
  double report_every_s = 5;  // status line interval
  std::string policy = "ncis";
  bool feeds = false;  // a feed per host, polled by the daemon
};

extern const char kDemoWebToml[];

int RunDemo(const DemoOptions& options);

}  // namespace freshd::cli

#endif  // FRESHD_CLI_DEMO_WEB_H_
