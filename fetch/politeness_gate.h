// PolitenessGate: per-host (authority "host:port") admission control that
// answers "when may this host be contacted next?". Pure and clock-free: the
// caller passes `now` (seconds on any monotonic scale) to every call, so the
// scheduler's selector, the Crawler and tests drive it with their own time.
//
// Rules (issue #5, [politeness] config):
//  * at most max_in_flight_per_host requests at once;
//  * after a request finishes, the next starts no sooner than
//    max(min_delay_s, min(robots Crawl-delay, max_crawl_delay_s),
//        adaptive_delay_factor * last response time); request starts are
//    also spaced by that delay (for max_in_flight_per_host > 1);
//  * 429 and 503 with Retry-After wait that long (capped at backoff_max_s);
//  * 5xx, 429, timeouts, network/dns/tls errors back off exponentially
//    (backoff_initial_s doubling up to backoff_max_s); any success resets;
//  * with [politeness] per_ip, a host whose address was given (SetAddress)
//    is also limited by its IP: hosts sharing an IP share the in-flight
//    limit and the spacing (each start and finish also moves the IP's
//    next-allowed time, back-off and Retry-After included).
// Export()/Import() carry the per-host state across restarts as plain
// values (times on the caller's clock; ShiftTimes converts clocks).
// Memory is bounded by the caller via PruneIdle().
// Not thread-safe: use from one thread (the event loop or the selector).

#ifndef FRESHD_FETCH_POLITENESS_GATE_H_
#define FRESHD_FETCH_POLITENESS_GATE_H_

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "conf/config.h"
#include "fetch/outcome.h"

namespace freshd::fetch {

// The persistent state of one host (nothing in flight after a restart).
struct GateHostSnapshot {
  std::string host;         // authority "host:port"
  double next_allowed = 0;  // earliest next start, on the gate's clock
  double last_response_s = 0;
  int consecutive_errors = 0;
  std::optional<double> crawl_delay_s;

  bool operator==(const GateHostSnapshot&) const = default;
};

// Adds `delta` to every absolute time (e.g. steady -> Unix seconds).
void ShiftTimes(std::vector<GateHostSnapshot>* hosts, double delta);

class PolitenessGate {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit PolitenessGate(const PolitenessConfig& config);

  // Earliest time >= now at which a request to `host` may start, ignoring
  // the in-flight limit; `now` for an unknown host.
  double NextAllowed(std::string_view host, double now) const;

  // True if a request may start now: in-flight below the limit and
  // NextAllowed(host, now) <= now.
  bool MayStart(std::string_view host, double now) const;

  // Records a request start. REQUIRES: MayStart(host, now) (not enforced:
  // callers that must bypass the gate, e.g. benchmarks, may call it anyway).
  void OnStart(std::string_view host, double now);

  // For a caller that can tell when a request reaches the wire: the request
  // just started (OnStart) will report OnSent; until it does, no other
  // request to `host` may start. OnSent then makes the next start wait the
  // spacing delay from the moment it was sent, so the delay between two
  // requests holds at the server even when the first reached the wire late
  // (a busy thread, a slow connect, SIGSTOP). One OnSent per AwaitSent,
  // before the request's OnFinish.
  void AwaitSent(std::string_view host);
  void OnSent(std::string_view host, double now);

  // Records the end of a request started with OnStart. `response_time_s` is
  // the request's duration; `retry_after_s` the parsed Retry-After, if any.
  void OnFinish(std::string_view host, double now, OutcomeClass outcome,
                int http_status, double response_time_s,
                std::optional<double> retry_after_s);

  // Sets (or clears) the robots.txt Crawl-delay for `host`; values above
  // max_crawl_delay_s are capped, negative ones ignored.
  void SetCrawlDelay(std::string_view host, std::optional<double> delay_s);

  // Per-IP mode only (no-op otherwise): `host` resolves to `ip`. Ignored
  // while the host has requests in flight (their IP accounting stays with
  // the address they started under); "" forgets the address.
  void SetAddress(std::string_view host, std::string_view ip);
  // The address set for `host`, "" if none.
  std::string Address(std::string_view host) const;

  // True if `host` (or, per IP, its address) is at the in-flight limit.
  bool AtInFlightLimit(std::string_view host) const;

  int InFlight(std::string_view host) const;
  int ConsecutiveErrors(std::string_view host) const;
  // The delay imposed after a successful request to `host` right now.
  double SpacingDelay(std::string_view host) const;

  // Drops state of hosts with nothing in flight whose NextAllowed has passed
  // and that have no errors recorded; returns how many were dropped.
  size_t PruneIdle(double now);
  size_t size() const { return hosts_.size(); }

  // Every known host (PruneIdle first to leave out idle ones), by name.
  std::vector<GateHostSnapshot> Export() const;
  // The same for the listed hosts only (unknown ones are left out).
  std::vector<GateHostSnapshot> Export(
      const std::vector<std::string>& hosts) const;
  // Sets the state of each listed host (in-flight counts are kept; the
  // address is not part of a snapshot). Negative or non-finite values are
  // clamped to the defaults.
  void Import(const std::vector<GateHostSnapshot>& hosts);

  // No host, known or not, may start before `until` (after a restart: the
  // last contacts since the state was last saved are not known).
  void HoldAll(double until) { hold_until_ = std::max(hold_until_, until); }

 private:
  struct Host {
    int in_flight = 0;
    int unsent = 0;           // started, not yet on the wire (OnSent)
    double next_allowed = 0;  // earliest next start
    double last_response_s = 0;
    int errors = 0;  // consecutive host errors
    std::optional<double> crawl_delay_s;
    std::string ip;  // per_ip: address its IP accounting uses
  };
  struct Ip {
    int in_flight = 0;
    double next_allowed = 0;
  };
  double Spacing(const Host& h) const;
  static GateHostSnapshot Snapshot(const std::string& name, const Host& h);
  Host& Get(std::string_view host);
  const Host* Find(std::string_view host) const;
  const Ip* FindIp(const Host* h) const;

  const PolitenessConfig config_;
  std::unordered_map<std::string, Host> hosts_;
  std::unordered_map<std::string, Ip> ips_;
  double hold_until_ = 0;  // HoldAll
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_POLITENESS_GATE_H_
