// IndexNowReceiver: what freshd does with an IndexNow ping (indexnow.org)
// that passed the push listener's per-client limit and the parser
// (parse/indexnow_request.h). In order:
//   1. scope: the ping's URLs the crawl would take (Hooks::in_scope); none:
//      403, and nothing fetched (freshd never fetches KEY.txt of a host it
//      does not crawl);
//   2. the key's verdict for (key file URL, key), cached key_cache_s (at
//      most kMaxKeyVerdicts, proven or not):
//        proven: the host's limit (host_requests_per_minute, verified
//          pings only: nobody spends a victim host's allowance) or 429;
//          then 200 and the URLs go to Hooks::signal (change hints as
//          POST /signal's: unknown URLs in scope added, a cluster's routed
//          to their owners);
//        wrong or not found: 403;
//        being checked, or unknown: the URLs wait in the host's queue (at
//          most max_pending_per_host URLs; past it 429), 202; an unknown
//          key's file is fetched (Hooks::fetch: freshd's fetcher, robots,
//          politeness, the SSRF guard; outside the crawl budget), at most
//          kMaxKeyChecksPerHost at once per host. When it ends, the waiting
//          URLs are accepted (the file's body, trimmed, or its first line,
//          is the key) or dropped.
// Counters (/status "indexnow", /metrics freshd_indexnow_*) are atomics,
// so the push listener's thread counts what it refuses itself (Refused).
// Thread: one (the crawl loop's scheduler thread); Hooks::fetch's `done`
// must be called on it. Refused() and Json() (reads only) are safe from any
// thread.

#ifndef FRESHD_DAEMON_INDEXNOW_RECEIVER_H_
#define FRESHD_DAEMON_INDEXNOW_RECEIVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/prometheus_text.h"
#include "daemon/push_clients.h"
#include "fetch/outcome.h"
#include "parse/indexnow_request.h"

namespace freshd::daemon {

inline constexpr size_t kMaxKeyVerdicts = 10000;
inline constexpr size_t kMaxKeyChecksPerHost = 4;

class IndexNowReceiver {
 public:
  // Why a ping (or its URLs) was refused; /status and /metrics name them.
  enum class Refusal {
    kMalformed,    // 400 (push listener)
    kClientRate,   // 429, per client (push listener)
    kNotOnHost,    // 422: key form, URL not on host or keyLocation folder
    kOutOfScope,   // 403, no fetch
    kWrongKey,     // 403: key file missing or not the key
    kHostRate,     // 429, per verified host
    kPendingFull,  // 429: the host's queue or key checks are full
  };
  static constexpr int kRefusals = 7;

  struct Hooks {
    // Whether the crawl takes `normalized_url` (its host in scope).
    std::function<bool(const std::string&)> in_scope;
    // Fetches `url` through the crawler; `done` on the receiver's thread.
    std::function<void(std::string url,
                       std::function<void(fetch::FetchResult)> done)>
        fetch;
    // Accepted URLs (normalized, in scope): change hints.
    std::function<void(std::vector<std::string>)> signal;
    // Seconds on a monotonic clock (verdict lifetimes, the host limit).
    std::function<double()> now;
  };
  struct Options {
    double key_cache_s = 3600;
    int host_requests_per_minute = 600;
    int max_pending_per_host = 10000;
  };
  struct Reply {
    int status = 200;
    nlohmann::json body;
  };

  IndexNowReceiver(Options options, Hooks hooks);
  ~IndexNowReceiver();
  IndexNowReceiver(const IndexNowReceiver&) = delete;
  IndexNowReceiver& operator=(const IndexNowReceiver&) = delete;

  // A parsed ping.
  Reply Receive(parse::IndexNowRequest request);

  // False once the receiver is destroyed: read on its thread, by what was
  // posted there before.
  const std::shared_ptr<bool>& alive() const { return alive_; }

  // Counts a ping refused before Receive (any thread).
  void Refused(Refusal why) {
    refused_[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
    received_.fetch_add(1, std::memory_order_relaxed);
  }

  // /status "indexnow": {"received", "urls_received", "accepted",
  // "pending", "dropped", "key_fetches", "refused": {reason: n}}.
  nlohmann::json Json() const;
  void AppendMetrics(PrometheusText& out) const;

 private:
  struct Verdict;
  void KeyFileFetched(const std::string& id, const fetch::FetchResult& r);
  // Forgets expired verdicts that wait for nothing; true if there is room.
  bool MakeRoom(double now);
  void Count(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.fetch_add(n, std::memory_order_relaxed);
  }

  const Options options_;
  const Hooks hooks_;
  std::map<std::string, Verdict> verdicts_;         // by key file URL '\n' key
  std::map<std::string, size_t> pending_per_host_;  // URLs waiting
  std::map<std::string, size_t> checks_per_host_;   // key fetches running
  ClientRateLimiter host_limits_;                   // keyed by host
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  std::atomic<uint64_t> received_{0}, urls_received_{0}, accepted_{0},
      pending_{0}, dropped_{0}, key_fetches_{0};
  std::atomic<uint64_t> refused_[kRefusals] = {};
};

// The name /status and /metrics give `why`.
const char* RefusalName(IndexNowReceiver::Refusal why);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_INDEXNOW_RECEIVER_H_
