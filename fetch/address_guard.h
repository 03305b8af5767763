// SSRF guard: decides whether the fetcher may connect to a resolved socket
// address. Refused unless allow_private_networks: loopback, RFC 1918
// private, link-local, CGNAT (100.64/10), multicast, unspecified, broadcast,
// "this network" (0/8), benchmarking, reserved and documentation ranges, and
// the IPv6 equivalents (::1, ::, fc00::/7, fe80::/10, ff00::/8, 2001:db8::/32)
// including IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) forms of a
// refused IPv4 address. The fetcher calls Allows() from
// CURLOPT_OPENSOCKETFUNCTION, i.e. on the address actually being connected
// to, so DNS rebinding and redirects cannot route around it.
// Immutable after construction: safe for concurrent use.

#ifndef FRESHD_FETCH_ADDRESS_GUARD_H_
#define FRESHD_FETCH_ADDRESS_GUARD_H_

#include <sys/socket.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::fetch {

// True if the IP address text (v4 dotted quad or v6) is in a refused range.
// Unparsable text counts as refused.
bool IsNonPublicAddress(std::string_view ip);

// The same for a socket address (AF_INET / AF_INET6; other families are
// refused).
bool IsNonPublicAddress(const sockaddr* addr, socklen_t len);

// "a.b.c.d:port" or "[v6]:port" for a socket address; "" for other families.
std::string FormatSocketAddress(const sockaddr* addr, socklen_t len);

class AddressGuard {
 public:
  // `exempt` lists exact "ip:port" / "[ip6]:port" endpoints allowed even when
  // private networks are not (for tests that need one reachable loopback
  // server while every other loopback endpoint stays refused).
  explicit AddressGuard(bool allow_private_networks,
                        std::vector<std::string> exempt = {});

  // True if a connection to `addr` is allowed.
  bool Allows(const sockaddr* addr, socklen_t len) const;

 private:
  const bool allow_private_;
  const std::set<std::string> exempt_;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_ADDRESS_GUARD_H_
