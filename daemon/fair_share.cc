#include "daemon/fair_share.h"

#include <algorithm>

namespace freshd::daemon {

FairShare::FairShare(size_t max_connections, int max_in_flight_per_host)
    : max_connections_(std::max<size_t>(1, max_connections)),
      max_in_flight_(std::max(1, max_in_flight_per_host)),
      cap_(max_in_flight_) {}

FairShare::Seen& FairShare::Touch(sched::HostId host) {
  if (seen_.size() <= host) seen_.resize(static_cast<size_t>(host) + 1);
  Seen& s = seen_[host];
  if (s.window != window_ + 1) {
    s = Seen{window_ + 1, 0, false};
    touched_.push_back(host);
  }
  return s;
}

void FairShare::NoteHeld(sched::HostId host, int in_flight) {
  Seen& s = Touch(host);
  s.most_held = std::max(s.most_held, in_flight);
}

void FairShare::NoteDelayed(sched::HostId host) { Touch(host).delayed = true; }

int FairShare::WaterFill() const {
  auto fits = [&](int c) {
    size_t sum = 0;
    for (sched::HostId h : touched_) {
      const Seen& s = seen_[h];
      const int demand = s.delayed ? std::max(1, s.most_held) : max_in_flight_;
      sum += static_cast<size_t>(std::min(demand, c));
      if (sum > max_connections_) return false;
    }
    return true;
  };
  int lo = 1, hi = max_in_flight_;  // the answer is in [lo, hi]
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

bool FairShare::Roll(double now,
                     const std::function<int(sched::HostId)>& in_flight) {
  if (now < window_end_) return false;
  const int before = cap_;
  cap_ = contended_ ? WaterFill() : max_in_flight_;
  hosts_last_window_ = touched_.size();
  contended_last_window_ = contended_;
  // The next window starts with the hosts still holding connections.
  std::vector<sched::HostId> ended;
  ended.swap(touched_);
  ++window_;
  contended_ = false;
  window_end_ = now + kWindowS;
  for (sched::HostId h : ended) {
    const int held = in_flight(h);
    if (held <= 0) continue;
    const bool delayed = seen_[h].delayed;  // likely still so
    NoteHeld(h, held);
    if (delayed) NoteDelayed(h);
  }
  return cap_ != before;
}

}  // namespace freshd::daemon
