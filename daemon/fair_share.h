// FairShare: how many connections one host may hold while hosts contend for
// them — max-min fairness over the connection slots (issue #43 item 3). A
// host with thousands of cheap pages (404s, a link farm) otherwise takes
// every slot politeness allows it ([politeness] max_in_flight_per_host)
// and the other hosts' share of the crawl falls by as much.
//
// Over each window (kWindowS of the fetcher's clock) it notes the hosts
// that held a connection (their most at once), the hosts a delay turned
// away (Crawl-delay, back-off: what politeness lets them use is what they
// held), and whether the connections were contended: every one taken at
// some point, or a host held back by the cap (lifting it would let that
// host take the slack, and the connections fill again). At the end
// of a window the cap for the next is water-filled: the largest c with
//   sum over hosts of min(demand(h), c) <= connections,
// demand(h) = the most h held if a delay limited it, else (the
// connections were contended) max_in_flight_per_host. Without contention
// the cap is max_in_flight_per_host: nobody waited for a slot. A host
// still holding connections at the end of a window counts in the next.
// The cap is never below 1.
//
// Work: O(1) per note, O(hosts active in the window) per window.
// Not thread-safe: the scheduler's thread (the Dispatcher owns it).

#ifndef FRESHD_DAEMON_FAIR_SHARE_H_
#define FRESHD_DAEMON_FAIR_SHARE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class FairShare {
 public:
  static constexpr double kWindowS = 0.5;

  FairShare(size_t max_connections, int max_in_flight_per_host);

  // `host` now holds `in_flight` connections (after a dispatch).
  void NoteHeld(sched::HostId host, int in_flight);
  // A delay (not its slots) kept `host` from starting a request.
  void NoteDelayed(sched::HostId host);
  // Every connection was taken, or a host the cap held back wanted more.
  void NoteContended() { contended_ = true; }

  // Ends the window if `now` (fetcher's clock) is past it; `in_flight(h)`
  // says what a host holds now (those still holding carry over). Returns
  // whether the cap changed.
  bool Roll(double now, const std::function<int(sched::HostId)>& in_flight);

  // Connections one host may hold now.
  int cap() const { return cap_; }
  // Hosts counted in the last window, and whether it was contended.
  size_t hosts_last_window() const { return hosts_last_window_; }
  bool contended_last_window() const { return contended_last_window_; }

 private:
  struct Seen {
    uint32_t window = 0;  // window_ + 1 when seen in the current one
    int most_held = 0;
    bool delayed = false;
  };
  Seen& Touch(sched::HostId host);
  int WaterFill() const;

  const size_t max_connections_;
  const int max_in_flight_;
  int cap_;
  uint32_t window_ = 0;
  double window_end_ = 0;
  bool contended_ = false;
  size_t hosts_last_window_ = 0;
  bool contended_last_window_ = false;
  std::vector<Seen> seen_;              // by host id
  std::vector<sched::HostId> touched_;  // hosts seen in the current window
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_FAIR_SHARE_H_
