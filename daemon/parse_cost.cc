#include "daemon/parse_cost.h"

#include <algorithm>

namespace freshd::daemon {

void ParseCost::Note(sched::HostId host, double cpu_s) {
  if (cpu_s <= 0) return;
  if (hosts_.size() <= host) hosts_.resize(static_cast<size_t>(host) + 1);
  Host& h = hosts_[host];
  if (h.window != window_ + 1) {
    h.last = h.window == window_ ? h.current : 0;  // the window before
    h.current = 0;
    h.window = window_ + 1;
    touched_.push_back(host);
  }
  h.current += static_cast<float>(cpu_s);
  total_ += cpu_s;
  seconds_total_ += cpu_s;
}

double ParseCost::LastOf(const Host& h) const {
  if (h.window == window_ + 1) return h.last;  // noted in this window
  if (h.window == window_) return h.current;   // in the last one only
  return 0;
}

double ParseCost::ShareOf(sched::HostId host) const {
  if (host >= hosts_.size() || total_last_ < kMinBusyS) return 0;
  return std::min(1.0, LastOf(hosts_[host]) / total_last_);
}

void ParseCost::Roll(double now) {
  if (window_end_ < 0) window_end_ = now + kWindowS;
  if (now < window_end_) return;
  // The current window becomes the last whole one.
  ++window_;
  window_end_ = now + kWindowS;
  total_last_ = total_;
  total_ = 0;
  hosts_last_ = touched_.size();
  fair_share_ =
      std::max(kMinFairShare,
               hosts_last_ > 0 ? 1.0 / static_cast<double>(hosts_last_) : 1.0);
  hosts_over_last_ = 0;
  max_share_last_ = 0;
  for (sched::HostId h : touched_) {
    const double share = ShareOf(h);
    max_share_last_ = std::max(max_share_last_, share);
    if (share > fair_share_) ++hosts_over_last_;
  }
  touched_.clear();
}

}  // namespace freshd::daemon
