// FetchMetrics: what the operator sees of fetches — a latency histogram,
// bytes fetched, responses by HTTP status code, per-host counters (fetches,
// errors, bytes, which error classes the host has shown) and the most recent
// fetches. Owned by the scheduler's thread and updated once per completion
// (a few array increments), so the hot path takes no lock; /metrics, /hosts
// and the status page read it there too.
// Memory is bounded: the histogram and code table are fixed (codes outside
// 100..599 count as "other"), per-host counters grow with host ids (bounded
// by [crawler] max_urls), the recent list holds kRecentFetches.
// Not thread-safe: the scheduler's thread.

#ifndef FRESHD_DAEMON_FETCH_METRICS_H_
#define FRESHD_DAEMON_FETCH_METRICS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "daemon/prometheus_text.h"
#include "fetch/outcome.h"
#include "sched/observation.h"

namespace freshd::daemon {

inline constexpr size_t kRecentFetches = 50;
// Upper bounds (seconds) of the fetch latency histogram's buckets.
inline constexpr std::array<double, 12> kLatencyBuckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

struct HostCounters {
  uint64_t fetches = 0;  // completions, any outcome
  uint64_t errors = 0;   // outcomes other than ok, not-modified, redirect
  uint64_t bytes = 0;
  uint32_t error_classes = 0;    // bit per fetch::OutcomeClass seen
  bool last_host_error = false;  // fetch::IsHostError of the last outcome
};

struct RecentFetch {
  double unix_time = 0;
  std::string url;
  std::string outcome;
  int status = 0;
  double elapsed_s = 0;
  uint64_t bytes = 0;
};

class FetchMetrics {
 public:
  // Counts one completed fetch of a page on `host` at `now` (Unix seconds).
  // Returns true when `r` is an error whose class `host` had not shown
  // before (what the log reports: the first error of each class per host).
  bool Record(sched::HostId host, const fetch::FetchResult& r, double now);

  // The host's counters; all zero for a host never fetched.
  HostCounters host(sched::HostId host) const {
    return host < hosts_.size() ? hosts_[host] : HostCounters{};
  }
  const std::deque<RecentFetch>& recent() const { return recent_; }
  uint64_t bytes_total() const { return bytes_total_; }

  // freshd_fetch_duration_seconds (histogram), freshd_fetched_bytes_total,
  // freshd_http_responses_total{code}.
  void AppendText(PrometheusText& out) const;

 private:
  std::array<uint64_t, kLatencyBuckets.size() + 1> buckets_{};  // last: +Inf
  double latency_sum_ = 0;
  uint64_t latency_count_ = 0;
  uint64_t bytes_total_ = 0;
  std::array<uint64_t, 600> codes_{};  // by HTTP status; [0]: other
  std::vector<HostCounters> hosts_;    // by host id
  std::deque<RecentFetch> recent_;     // newest last
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_FETCH_METRICS_H_
