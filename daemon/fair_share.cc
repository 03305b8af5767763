#include "daemon/fair_share.h"

namespace freshd::daemon {

FairShare::FairShare(size_t max_connections, int max_in_flight_per_host)
    : max_connections_(std::max<size_t>(1, max_connections)),
      max_in_flight_(std::max(1, max_in_flight_per_host)) {}

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

void FairShare::NoteOutcome(sched::HostId host, bool found) {
  if (yield_.size() <= host) yield_.resize(static_cast<size_t>(host) + 1, 1);
  float& y = yield_[host];
  y += ((found ? 1.0f : 0.0f) - y) * kYieldStep;
}

double FairShare::WaterFill() const {
  // Connections the window's hosts would hold at `level`.
  auto filled = [&](double level) {
    size_t sum = 0;
    for (sched::HostId h : touched_) {
      const Seen& s = seen_[h];
      const int demand = s.delayed ? std::max(1, s.most_held) : max_in_flight_;
      sum += static_cast<size_t>(std::min(demand, CapAt(Weight(h), level)));
      if (sum >= max_connections_) return sum;
    }
    return sum;
  };
  // Levels in steps of 1/8, from 1/8 to the level at which a host of the
  // least weight (the least yield at the least parse factor) may use its
  // whole allowance.
  constexpr int kSteps = 8;
  constexpr double kLeastWeight =
      static_cast<double>(kMinWeight) * ParseCost::kMinFairShare;
  const int top =
      static_cast<int>(std::ceil(max_in_flight_ * kSteps / kLeastWeight));
  if (filled(static_cast<double>(top) / kSteps) < max_connections_) return 0;
  int lo = 1, hi = top;  // the least step that fills them is in [lo, hi]
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (filled(static_cast<double>(mid) / kSteps) >= max_connections_) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return static_cast<double>(lo) / kSteps;
}

void FairShare::Roll(double now,
                     const std::function<int(sched::HostId)>& in_flight) {
  parse_.Roll(now);
  if (now < window_end_) return;
  level_ = contended_ ? WaterFill() : 0;
  capped_ = level_ > 0;
  hosts_last_window_ = touched_.size();
  contended_last_window_ = contended_;
  low_yield_last_window_ = 0;
  for (sched::HostId h : touched_) {
    if (Yield(h) < 0.5f) ++low_yield_last_window_;
  }
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
}

}  // namespace freshd::daemon
