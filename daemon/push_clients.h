// Who a push request comes from, and whether it may go on: the push
// listener's per-client limit, applied before anything else looks at a
// request (so a flood is answered 429 and costs neither the crawl loop's
// thread nor a fetch).
//   * TrustedProxies: the client is the connection's peer, unless the peer
//     is one of [push] trusted_proxies; then X-Forwarded-For names it (the
//     rightmost address that is not itself a trusted proxy: what the
//     proxies in front appended, not what the client wrote).
//   * ClientRateLimiter: a token bucket per client of `per_minute` requests
//     (a minute's worth at once, refilled evenly); at most `max_clients`
//     buckets: past that, full ones are forgotten (a sweep at most once a
//     second), and while none is, new
//     clients are refused (bounded memory under a spoofed-source flood).
// Not thread-safe: owned by the push listener's thread.

#ifndef FRESHD_DAEMON_PUSH_CLIENTS_H_
#define FRESHD_DAEMON_PUSH_CLIENTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::daemon {

class TrustedProxies {
 public:
  // Each entry an address or CIDR ("10.0.0.0/8", "::1", "fd00::/8");
  // InvalidArgument naming the first that is neither.
  [[nodiscard]] static Result<TrustedProxies> Create(
      const std::vector<std::string>& cidrs);

  // Whether `ip` (an address literal) lies in one of the ranges.
  bool Contains(std::string_view ip) const;

  // The client of a request from `peer` carrying `forwarded_for` (the
  // X-Forwarded-For value, possibly empty).
  std::string ClientOf(std::string_view peer,
                       std::string_view forwarded_for) const;

 private:
  struct Range {
    std::array<unsigned char, 16> bytes{};  // IPv4 as ::ffff:a.b.c.d
    int bits = 0;                           // of the 128
  };
  std::vector<Range> ranges_;
};

class ClientRateLimiter {
 public:
  ClientRateLimiter(double per_minute, size_t max_clients);

  // Takes one request of `client` at `now` (seconds, any monotonic clock);
  // false when its bucket is empty (or no bucket can be had).
  bool Allow(const std::string& client, double now);
  size_t clients() const { return buckets_.size(); }

 private:
  struct Bucket {
    double tokens = 0;
    double at = 0;  // when `tokens` was last brought up to date
  };
  double Refilled(const Bucket& b, double now) const;

  const double per_minute_;
  const size_t max_clients_;
  std::map<std::string, Bucket, std::less<>> buckets_;
  double last_sweep_ = -1e300;  // full buckets forgotten at most once a second
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PUSH_CLIENTS_H_
