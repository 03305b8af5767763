// HostSlots: the scheduler thread's view of each host's politeness, so the
// selector hands out a page only when its host may be contacted now. The
// fetcher's PolitenessGate (on the network thread) stays the authority; this
// mirror is fed by what the scheduler thread sees: a dispatch takes one of
// the host's in-flight slots (at most [politeness] max_in_flight_per_host),
// a completion frees it and reports when the gate will next let the host go
// (its delay, Crawl-delay, back-off or Retry-After). So the per-host limit
// holds at the scheduler, not only on the wire, and no page waits in the
// fetcher's per-host queue behind another of its host.
// NextOpening() is when the earliest closed host reopens: the dispatcher's
// wake-up time when every eligible page's host is closed.
// Times are the fetcher's clock (steady seconds). Not thread-safe: the
// scheduler's thread.

#ifndef FRESHD_DAEMON_HOST_SLOTS_H_
#define FRESHD_DAEMON_HOST_SLOTS_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "daemon/fair_share.h"
#include "sched/observation.h"

namespace freshd::daemon {

class HostSlots {
 public:
  explicit HostSlots(int max_in_flight_per_host);

  // May a request to `host` start at `now`?
  bool Open(sched::HostId host, double now) const {
    return OpensAt(host) <= now;
  }
  // When a request to `host` may start: its next_allowed, or +inf while its
  // in-flight slots are full (until a Finish): it holds
  // min(max_in_flight_per_host, its fair share) requests. The scheduler's host
  // gate (sched::Scheduler::HostGate): a Finish must be followed by
  // Scheduler::ReopenHost.
  double OpensAt(sched::HostId host) const;
  // A request to `host` was dispatched.
  void Start(sched::HostId host);
  // A request to `host` ended; the gate lets the host go again at
  // `next_allowed` (≤ now: at once).
  void Finish(sched::HostId host, double next_allowed);

  // A restart: the fetcher's gate restored `host`'s next allowed start
  // (its delay, Crawl-delay, back-off or Retry-After, saved before the
  // stop); the host stays closed until then. Its in-flight count is
  // untouched.
  void HoldUntil(sched::HostId host, double next_allowed);
  // A restart: the gate holds every host until `until` (a host contacted
  // after the last save must still get its delay); so does this mirror.
  void HoldAll(double until) { hold_all_until_ = until; }

  // The earliest reopening time after `now` of a host closed by time only
  // (not by its in-flight slots); +inf if none.
  double NextOpening(double now);

  // The fair share of the connections a host may hold while hosts contend
  // for them (FairShare::CapOf; it outlives this); null: none. A host over
  // a lowered cap starts nothing until it is under it.
  void set_share(const FairShare* share) { share_ = share; }

  int in_flight(sched::HostId host) const {
    return host < hosts_.size() ? hosts_[host].in_flight : 0;
  }
  uint64_t total_in_flight() const { return total_in_flight_; }
  // When `host` may next be contacted, as last reported (0: never), or the
  // hold on every host if later.
  double next_allowed(sched::HostId host) const {
    return std::max(hold_all_until_,
                    host < hosts_.size() ? hosts_[host].next_allowed : 0);
  }

 private:
  struct Host {
    int in_flight = 0;
    double next_allowed = 0;
  };
  Host& Get(sched::HostId host);

  const int max_in_flight_;
  const FairShare* share_ = nullptr;  // FairShare caps; null: none
  std::vector<Host> hosts_;           // by host id
  uint64_t total_in_flight_ = 0;
  double hold_all_until_ = 0;  // HoldAll
  // (next_allowed, host) of hosts that finished with a future opening;
  // stale entries (the host moved on) are dropped as they surface.
  std::priority_queue<std::pair<double, sched::HostId>,
                      std::vector<std::pair<double, sched::HostId>>,
                      std::greater<>>
      openings_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_HOST_SLOTS_H_
