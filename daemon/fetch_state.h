// The fetcher's per-host state as stored in HostRecord::fetch_state: the
// host's politeness-gate snapshot and the robots.txt cache entries of its
// origins (http and https on the same authority), so a restarted daemon
// neither refetches robots.txt early nor forgets a back-off or a
// Retry-After. Times are stored as Unix seconds (the caller shifts them
// from and to the Crawler's steady clock).
// Encoding: version byte 1, then fields in a fixed order with base/coding.h
// primitives; decoding any bytes is safe (Corruption, never a crash), and
// decoded values are checked (finite times, bounded counts and sizes).
// Pure functions; thread-safe.

#ifndef FRESHD_DAEMON_FETCH_STATE_H_
#define FRESHD_DAEMON_FETCH_STATE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fetch/crawler.h"
#include "fetch/politeness_gate.h"
#include "fetch/robots_cache.h"

namespace freshd::daemon {

struct HostFetchState {
  std::optional<fetch::GateHostSnapshot> gate;
  std::vector<fetch::RobotsSnapshot> robots;  // at most kMaxOrigins
  bool operator==(const HostFetchState&) const = default;
};

inline constexpr size_t kMaxOrigins = 4;

std::string EncodeHostFetchState(const HostFetchState& state);
Result<HostFetchState> DecodeHostFetchState(std::string_view bytes);

// Groups a crawler's exported state by host authority ("host:port").
std::vector<std::pair<std::string, HostFetchState>> GroupByHost(
    const fetch::CrawlerState& state);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_FETCH_STATE_H_
