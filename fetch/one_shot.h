// FetchAll: the one-shot fetch behind `freshd fetch`: every URL goes through
// a fresh Crawler (robots.txt, politeness gate, limits, SSRF guard) on a
// private io_context that runs until all have an outcome. No state is kept
// between runs (no conditional GET validators, no robots cache).
// Thread-safety: reentrant; each call owns everything it uses.

#ifndef FRESHD_FETCH_ONE_SHOT_H_
#define FRESHD_FETCH_ONE_SHOT_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "fetch/crawler.h"
#include "fetch/outcome.h"

namespace freshd::fetch {

struct OneShotResult {
  FetchResult fetch;
  double started_unix = 0;  // wall-clock time the URL was handed in
};

// Results are in the order of `urls`, one per URL (errors are outcomes).
// `keep_raw` keeps raw headers and body for archiving; then, with `robots`,
// each robots.txt exchange the fetches needed (with its redirect hops) is
// appended there in the order it completed. `sitemaps` receives the
// sitemaps robots.txt files name. Fails only if the fetcher cannot be
// created (Internal).
Result<std::vector<OneShotResult>> FetchAll(
    const CrawlerOptions& options, const std::vector<std::string>& urls,
    bool keep_raw, std::vector<std::string>* sitemaps = nullptr,
    std::vector<OneShotResult>* robots = nullptr);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_ONE_SHOT_H_
