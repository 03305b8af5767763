#include "daemon/host_slots.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace freshd::daemon {

HostSlots::HostSlots(int max_in_flight_per_host)
    : max_in_flight_(std::max(1, max_in_flight_per_host)) {}

HostSlots::Host& HostSlots::Get(sched::HostId host) {
  if (hosts_.size() <= host) hosts_.resize(static_cast<size_t>(host) + 1);
  return hosts_[host];
}

double HostSlots::OpensAt(sched::HostId host) const {
  if (host >= hosts_.size()) return hold_all_until_;
  const Host& h = hosts_[host];
  const int cap = share_ != nullptr
                      ? std::min(max_in_flight_, share_->CapOf(host))
                      : max_in_flight_;
  if (h.in_flight >= cap) {
    return std::numeric_limits<double>::infinity();
  }
  return std::max(h.next_allowed, hold_all_until_);
}

void HostSlots::Start(sched::HostId host) {
  ++Get(host).in_flight;
  ++total_in_flight_;
}

void HostSlots::Finish(sched::HostId host, double next_allowed) {
  Host& h = Get(host);
  if (h.in_flight > 0) {
    --h.in_flight;
    --total_in_flight_;
  }
  h.next_allowed = next_allowed;
  if (std::isfinite(next_allowed)) openings_.emplace(next_allowed, host);
}

void HostSlots::HoldUntil(sched::HostId host, double next_allowed) {
  Host& h = Get(host);
  h.next_allowed = next_allowed;
  if (std::isfinite(next_allowed)) openings_.emplace(next_allowed, host);
}

double HostSlots::NextOpening(double now) {
  // Every host opens when a hold on all ends (those without a later time).
  if (hold_all_until_ > now) return hold_all_until_;
  while (!openings_.empty()) {
    const auto [at, host] = openings_.top();
    if (at > now && hosts_[host].next_allowed == at) return at;
    openings_.pop();  // passed, or superseded by a later Finish
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace freshd::daemon
