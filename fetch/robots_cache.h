// RobotsCache: robots.txt state per origin ("scheme://host[:port]") under
// the status rules of RFC 9309 §2.3.1 and the caching rule of §2.4. Pure
// and clock-free: callers pass `now` (seconds, any monotonic scale).
//
//  * 2xx: the body (first 500 KiB, parse/robots.h) is obeyed; cached for
//    [politeness] robots_cache_s.
//  * 4xx other than 429, and more than 5 redirects: "unavailable", allow all.
//  * 429, 5xx, network/timeout/dns/tls errors: "unreachable", disallow all
//    (or keep obeying a previously fetched copy), retried with exponential
//    back-off (backoff_initial_s doubling to backoff_max_s); once unreachable
//    for 30 days, treated as unavailable (allow all) as §2.3.1.4 permits.
// Export()/Import() carry entries across restarts as plain values (the
// robots.txt body is kept and re-parsed; times on the caller's clock,
// ShiftTimes converts clocks).
// Not thread-safe: use from one thread.

#ifndef FRESHD_FETCH_ROBOTS_CACHE_H_
#define FRESHD_FETCH_ROBOTS_CACHE_H_

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "conf/config.h"
#include "fetch/outcome.h"
#include "parse/robots.h"

namespace freshd::fetch {

inline constexpr double kRobotsUnreachableAllowAfterS = 30 * 86400.0;
inline constexpr int kRobotsMaxRedirects = 5;  // RFC 9309 §2.3.1.2

// The persistent state of one origin's robots.txt.
struct RobotsSnapshot {
  enum class Mode { kRules, kAllowAll, kDisallowAll };
  std::string origin;  // "scheme://host[:port]"
  Mode mode = Mode::kDisallowAll;
  int status = 0;         // HTTP status of the last fetch, 0 if none
  double fetched_at = 0;  // time of the last fetch (any outcome)
  double expires = 0;     // refetch after this
  std::string body;       // the 2xx body obeyed (when has_rules)
  std::string final_url;  // where that body came from (sitemap base)
  bool has_rules = false;
  std::optional<double> unreachable_since;
  int failures = 0;          // consecutive unreachable fetches
  std::string last_failure;  // e.g. "5xx 503"

  bool operator==(const RobotsSnapshot&) const = default;
};

// Adds `delta` to every absolute time (e.g. steady -> Unix seconds).
void ShiftTimes(std::vector<RobotsSnapshot>* entries, double delta);

class RobotsCache {
 public:
  enum class Verdict { kFetchRobots, kAllowed, kDisallowed };

  RobotsCache(const PolitenessConfig& config, std::string product_token);

  // What to do with `path_and_query` on `origin` at `now`: fetch robots.txt
  // first (unknown or expired), or the cached decision.
  Verdict Check(std::string_view origin, std::string_view path_and_query,
                double now) const;

  // As Check, ignoring expiry: kFetchRobots only if `origin` has no entry.
  Verdict CheckCached(std::string_view origin,
                      std::string_view path_and_query) const;

  // Records the final outcome of fetching `origin`/robots.txt (after at most
  // kRobotsMaxRedirects hops; the caller reports a longer chain as
  // kRedirectLoop). kBlockedAddress, kBadUrl and kProxy are not recorded
  // (the host cannot be contacted at all, or was not asked because its
  // proxy failed; the caller reports that instead).
  void Record(std::string_view origin, const FetchResult& result, double now);

  // The Crawl-delay for our product token, if the cached rules give one.
  std::optional<double> CrawlDelay(std::string_view origin) const;

  // Sitemap URLs from the cached robots.txt (absolute, normalized).
  std::vector<std::string> Sitemaps(std::string_view origin) const;

  // Why URLs of `origin` are disallowed wholesale ("robots.txt unreachable
  // ..."), or "" when its rules (or nothing) decide.
  std::string DisallowAllReason(std::string_view origin) const;

  // Drops entries expired before `now`; returns how many.
  size_t PruneExpired(double now);
  size_t size() const { return entries_.size(); }

  // Every entry, sorted by origin.
  std::vector<RobotsSnapshot> Export() const;
  // The same for the listed origins only (unknown ones are left out).
  std::vector<RobotsSnapshot> Export(
      const std::vector<std::string>& origins) const;
  // Replaces the entries of the listed origins; bodies are re-parsed
  // (first kMaxRobotsBytes only), sitemaps resolved against final_url.
  void Import(const std::vector<RobotsSnapshot>& entries);

 private:
  using Mode = RobotsSnapshot::Mode;
  struct Entry {
    Mode mode = Mode::kDisallowAll;
    parse::RobotsTxt rules;
    bool has_rules = false;  // a 2xx copy exists (kept while unreachable)
    std::string body;        // the 2xx body the rules came from
    std::string final_url;
    int status = 0;
    double fetched_at = 0;
    double expires = 0;
    std::optional<double> unreachable_since;
    int failures = 0;
    std::vector<std::string> sitemaps;
    std::string last_failure;  // outcome of the last unreachable fetch
  };

  const PolitenessConfig config_;
  const std::string token_;
  static RobotsSnapshot Snapshot(const std::string& origin, const Entry& e);

  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_ROBOTS_CACHE_H_
