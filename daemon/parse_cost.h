// ParseCost: each host's share of the parse pool's time (issue #43 item 3).
// The parse pool measures the CPU time each body takes (ParseQueue: its
// decoding and its parse, pages, sitemaps and feeds alike) and the meter
// adds it to the body's host. Over windows of kWindowS (the fetcher's
// clock) it keeps each host's seconds; from the last whole window a host's
// share is its seconds over all hosts' seconds, and its fair share is
// 1 / (hosts that took parse time in that window), at least
// kMinFairShare. A host over its fair share weighs
//   Factor(h) = fair share / its share  (< 1; 1 otherwise)
// in FairShare, so while hosts contend it holds fewer connections and
// starts fewer fetches — 100,000-link pages and 50,000-URL sitemaps cost
// their host, not the other hosts. A window with less than kMinBusyS of
// parse time in all weighs nothing (Factor 1: too little to share).
//
// Memory: 12 bytes a host that took parse time (a vector by host id).
// Work: O(1) per note and per Factor; O(hosts of the window) per Roll.
// Not thread-safe: the scheduler's thread. The parse threads write nothing
// here: each job's time travels with its result to that thread
// (ParseQueue's cost sink), where FairShare (its owner) notes it.

#ifndef FRESHD_DAEMON_PARSE_COST_H_
#define FRESHD_DAEMON_PARSE_COST_H_

#include <cstdint>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class ParseCost {
 public:
  static constexpr double kWindowS = 2.0;
  static constexpr double kMinFairShare = 1.0 / 64;
  static constexpr double kMinBusyS = 0.01;

  // `host`'s body took `cpu_s` seconds of the parse pool.
  void Note(sched::HostId host, double cpu_s);
  // Ends the window if `now` is past it.
  void Roll(double now);

  // The weight `host`'s parse time gives it, in (0, 1] (see the contract).
  float Factor(sched::HostId host) const {
    const double share = ShareOf(host);
    return share > fair_share_ ? static_cast<float>(fair_share_ / share) : 1.0f;
  }
  // `host`'s share of the last window's parse time, in [0, 1].
  double ShareOf(sched::HostId host) const;

  // The last window: its fair share, the hosts that took parse time and
  // those over their fair share, the largest share, and the seconds in
  // all; the seconds noted since start.
  double fair_share() const { return fair_share_; }
  size_t hosts_last_window() const { return hosts_last_; }
  size_t hosts_over_last_window() const { return hosts_over_last_; }
  double max_share_last_window() const { return max_share_last_; }
  double seconds_last_window() const { return total_last_; }
  double seconds_total() const { return seconds_total_; }

 private:
  struct Host {
    uint32_t window = 0;  // window_ + 1 of `current`
    float current = 0;    // seconds in that window
    float last = 0;       // seconds in the window before it
  };
  // `host`'s seconds in the last whole window.
  double LastOf(const Host& h) const;

  uint32_t window_ = 0;
  double window_end_ = -1;
  double total_ = 0;       // the current window's seconds
  double total_last_ = 0;  // the last whole window's
  double fair_share_ = 1;  // 1: no window yet, nobody over it
  size_t hosts_last_ = 0;
  size_t hosts_over_last_ = 0;
  double max_share_last_ = 0;
  double seconds_total_ = 0;
  std::vector<Host> hosts_;             // by host id
  std::vector<sched::HostId> touched_;  // hosts noted in the current window
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PARSE_COST_H_
