// FairShare: how many connections one host may hold while hosts contend for
// them — weighted max-min fairness over the connection slots (issue #43
// item 3). A host with thousands of cheap pages (404s, a link farm, bombs
// cut off at a size limit) otherwise takes every slot politeness allows it
// ([politeness] max_in_flight_per_host) and the other hosts' share of the
// crawl falls by as much.
//
// A host's weight is its yield — the share of its recent fetches that found
// a page (2xx, 304, a redirect), an average over about its last 16
// fetches, starting at 1, never below kMinWeight — times its parse cost's
// factor (ParseCost: fair share of the parse pool's time over the host's
// share when above it, else 1), so a host whose bodies take more of the
// parse pool than its fair share gets as much fewer connections. Its cap
// at level c is ceil(weight * c), between 1 and max_in_flight_per_host.
//
// Over each window (kWindowS of the fetcher's clock) it notes the hosts
// that held a connection (their most at once), the hosts a delay turned
// away (Crawl-delay, back-off: what politeness lets them use is what they
// held), and whether the connections were contended: every one taken at
// some point, or a host held back by its cap (lifting it would let that
// host take the slack, and the connections fill again). At the end of a
// window the level for the next is water-filled: the least c (in steps of
// 1/8) with
//   sum over hosts of min(demand(h), cap(h, c)) >= connections,
// demand(h) = the most h held if a delay limited it, else
// max_in_flight_per_host — so the connections stay full, overcommitted by
// at most one step a host. Without contention, or when even the whole
// allowance does not fill them, there is no cap but max_in_flight_per_host.
// A host still holding connections at the end of a window counts in the
// next.
//
// Memory: 16 bytes a host (its yield, and what the window saw of it), and
// ParseCost's 12 for a host that took parse time. Work:
// O(1) per note, O(hosts active in the window x log(max_in_flight)) per window.
// Not thread-safe: the scheduler's thread (the Dispatcher owns it).

#ifndef FRESHD_DAEMON_FAIR_SHARE_H_
#define FRESHD_DAEMON_FAIR_SHARE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "daemon/parse_cost.h"
#include "sched/observation.h"

namespace freshd::daemon {

class FairShare {
 public:
  static constexpr double kWindowS = 0.5;
  static constexpr float kMinWeight = 0.125f;
  static constexpr float kYieldStep = 1.0f / 16;

  FairShare(size_t max_connections, int max_in_flight_per_host);

  // `host` now holds `in_flight` connections (after a dispatch).
  void NoteHeld(sched::HostId host, int in_flight);
  // A delay (not its slots) kept `host` from starting a request.
  void NoteDelayed(sched::HostId host);
  // Every connection was taken, or a host its cap held back wanted more.
  void NoteContended() { contended_ = true; }
  // A fetch of `host` ended; `found` whether it found a page.
  void NoteOutcome(sched::HostId host, bool found);
  // A body of `host` took `cpu_s` seconds of the parse pool.
  void NoteParseTime(sched::HostId host, double cpu_s) {
    parse_.Note(host, cpu_s);
  }

  // Ends the window if `now` (fetcher's clock) is past it; `in_flight(h)`
  // says what a host holds now (those still holding carry over).
  void Roll(double now, const std::function<int(sched::HostId)>& in_flight);

  // Connections `host` may hold now.
  int CapOf(sched::HostId host) const {
    return capped_ ? CapAt(Weight(host), level_) : max_in_flight_;
  }
  // A host of full weight's cap now.
  int cap() const { return capped_ ? CapAt(1.0f, level_) : max_in_flight_; }
  float Weight(sched::HostId host) const {
    return Yield(host) * parse_.Factor(host);
  }
  // Its yield alone, at least kMinWeight.
  float Yield(sched::HostId host) const {
    return host < yield_.size() ? std::max(kMinWeight, yield_[host]) : 1.0f;
  }
  const ParseCost& parse_cost() const { return parse_; }
  // The last window: hosts counted, whether they contended, and how many
  // weighed less than half.
  size_t hosts_last_window() const { return hosts_last_window_; }
  bool contended_last_window() const { return contended_last_window_; }
  size_t low_yield_last_window() const { return low_yield_last_window_; }

 private:
  struct Seen {
    uint32_t window = 0;  // window_ + 1 when seen in the current one
    int most_held = 0;
    bool delayed = false;
  };
  int CapAt(float weight, double level) const {
    return std::clamp(static_cast<int>(std::ceil(weight * level - 1e-9)), 1,
                      max_in_flight_);
  }
  Seen& Touch(sched::HostId host);
  // The level for the hosts of the window (see the contract); 0: none.
  double WaterFill() const;

  const size_t max_connections_;
  const int max_in_flight_;
  bool capped_ = false;
  double level_ = 0;
  uint32_t window_ = 0;
  double window_end_ = 0;
  bool contended_ = false;
  size_t hosts_last_window_ = 0;
  bool contended_last_window_ = false;
  size_t low_yield_last_window_ = 0;
  std::vector<float> yield_;            // by host id; 1 until fetched
  std::vector<Seen> seen_;              // by host id
  std::vector<sched::HostId> touched_;  // hosts seen in the current window
  ParseCost parse_;                     // its own, longer windows
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_FAIR_SHARE_H_
