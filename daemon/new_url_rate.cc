#include "daemon/new_url_rate.h"

#include <algorithm>

namespace freshd::daemon {

NewUrlRate::NewUrlRate(uint64_t per_minute) : per_minute_(per_minute) {}

bool NewUrlRate::Allows(sched::HostId host, double now) {
  if (per_minute_ == 0) return true;
  if (start_ < 0) start_ = now;
  const auto at = static_cast<uint32_t>(
      std::clamp((now - start_) * 10, 0.0, static_cast<double>(UINT32_MAX)));
  const auto capacity = static_cast<float>(per_minute_);
  // Hosts not seen yet start full (a full bucket stays full).
  if (hosts_.size() <= host) {
    hosts_.resize(static_cast<size_t>(host) + 1, Bucket{capacity, at});
  }
  Bucket& b = hosts_[host];
  if (at > b.at) {
    const float refill = static_cast<float>(at - b.at) / 600.0f * capacity;
    b.tokens = std::min(capacity, b.tokens + refill);
    b.at = at;
  }
  return b.tokens >= 1.0f;
}

void NewUrlRate::Take(sched::HostId host) {
  if (host < hosts_.size()) hosts_[host].tokens -= 1.0f;
}

}  // namespace freshd::daemon
