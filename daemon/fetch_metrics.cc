#include "daemon/fetch_metrics.h"

#include <algorithm>
#include <cstdio>

namespace freshd::daemon {
namespace {

using fetch::OutcomeClass;

// Outcomes that never touched the network: no latency to count.
bool Contacted(OutcomeClass c) {
  return c != OutcomeClass::kRobotsDenied && c != OutcomeClass::kBadUrl &&
         c != OutcomeClass::kBlockedAddress;
}

bool IsError(OutcomeClass c) {
  return c != OutcomeClass::kOk && c != OutcomeClass::kNotModified &&
         c != OutcomeClass::kRedirect;
}

}  // namespace

bool FetchMetrics::Record(sched::HostId host, const fetch::FetchResult& r,
                          double now) {
  if (Contacted(r.outcome)) {
    const size_t b = static_cast<size_t>(
        std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(),
                         r.elapsed_s) -
        kLatencyBuckets.begin());
    ++buckets_[b];
    latency_sum_ += r.elapsed_s;
    ++latency_count_;
  }
  bytes_total_ += r.bytes;
  if (r.status != 0) {
    ++codes_[r.status >= 100 && r.status < 600 ? r.status : 0];
  }
  if (host >= hosts_.size()) hosts_.resize(host + 1);
  HostCounters& h = hosts_[host];
  ++h.fetches;
  h.bytes += r.bytes;
  h.last_host_error = fetch::IsHostError(r.outcome, r.status);
  bool first = false;
  if (IsError(r.outcome)) {
    ++h.errors;
    const uint32_t bit = 1u << static_cast<int>(r.outcome);
    first = (h.error_classes & bit) == 0;
    h.error_classes |= bit;
  }
  recent_.push_back(RecentFetch{now, r.url,
                                std::string(fetch::OutcomeName(r.outcome)),
                                r.status, r.elapsed_s, r.bytes});
  if (recent_.size() > kRecentFetches) recent_.pop_front();
  return first;
}

void FetchMetrics::AppendText(PrometheusText& out) const {
  constexpr const char* kLatency = "freshd_fetch_duration_seconds";
  out.Family(kLatency, "histogram",
             "Time from a request's start to its completion (last hop), "
             "fetches that reached the network.");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cumulative += buckets_[i];
    char le[32];
    std::snprintf(le, sizeof le, "%g", kLatencyBuckets[i]);
    out.Sample("freshd_fetch_duration_seconds_bucket", {{"le", le}},
               static_cast<double>(cumulative));
  }
  cumulative += buckets_.back();
  out.Sample("freshd_fetch_duration_seconds_bucket", {{"le", "+Inf"}},
             static_cast<double>(cumulative));
  out.Sample("freshd_fetch_duration_seconds_sum", {}, latency_sum_);
  out.Sample("freshd_fetch_duration_seconds_count", {},
             static_cast<double>(latency_count_));
  out.Counter("freshd_fetched_bytes_total",
              "Body bytes received on the wire (before decoding).",
              static_cast<double>(bytes_total_));
  out.Family("freshd_http_responses_total", "counter",
             "HTTP responses by status code (the last hop's).");
  bool any = false;
  for (size_t code = 100; code < codes_.size(); ++code) {
    if (codes_[code] == 0) continue;
    out.Sample("freshd_http_responses_total", {{"code", std::to_string(code)}},
               static_cast<double>(codes_[code]));
    any = true;
  }
  if (codes_[0] != 0 || !any) {
    out.Sample("freshd_http_responses_total", {{"code", "other"}},
               static_cast<double>(codes_[0]));
  }
}

}  // namespace freshd::daemon
