#include "fetch/address_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace freshd::fetch {
namespace {

struct V4Range {
  uint32_t base;
  int prefix;
};

constexpr uint32_t Ip4(int a, int b, int c, int d) {
  return (static_cast<uint32_t>(a) << 24) | (static_cast<uint32_t>(b) << 16) |
         (static_cast<uint32_t>(c) << 8) | static_cast<uint32_t>(d);
}

// IANA special-purpose IPv4 registry entries that are not globally
// reachable, plus multicast and the reserved class E space.
constexpr std::array<V4Range, 15> kRefusedV4 = {{
    {Ip4(0, 0, 0, 0), 8},        // "this network", includes unspecified
    {Ip4(10, 0, 0, 0), 8},       // private
    {Ip4(100, 64, 0, 0), 10},    // CGNAT shared address space
    {Ip4(127, 0, 0, 0), 8},      // loopback
    {Ip4(169, 254, 0, 0), 16},   // link-local (cloud metadata lives here)
    {Ip4(172, 16, 0, 0), 12},    // private
    {Ip4(192, 0, 0, 0), 24},     // IETF protocol assignments
    {Ip4(192, 0, 2, 0), 24},     // TEST-NET-1
    {Ip4(192, 88, 99, 0), 24},   // 6to4 relay anycast (deprecated)
    {Ip4(192, 168, 0, 0), 16},   // private
    {Ip4(198, 18, 0, 0), 15},    // benchmarking
    {Ip4(198, 51, 100, 0), 24},  // TEST-NET-2
    {Ip4(203, 0, 113, 0), 24},   // TEST-NET-3
    {Ip4(224, 0, 0, 0), 4},      // multicast
    {Ip4(240, 0, 0, 0), 4},      // reserved, includes 255.255.255.255
}};

bool V4Refused(uint32_t ip) {
  for (const V4Range& r : kRefusedV4) {
    uint32_t mask = r.prefix == 0 ? 0 : ~uint32_t{0} << (32 - r.prefix);
    if ((ip & mask) == r.base) return true;
  }
  return false;
}

uint32_t V4FromBytes(const uint8_t* b) { return Ip4(b[0], b[1], b[2], b[3]); }

bool V6Refused(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  static constexpr uint8_t kZero[16] = {};
  // :: and ::1.
  if (std::memcmp(b, kZero, 15) == 0 && (b[15] == 0 || b[15] == 1)) {
    return true;
  }
  // ::ffff:a.b.c.d (v4-mapped) and ::a.b.c.d (deprecated v4-compatible).
  if (std::memcmp(b, kZero, 10) == 0 &&
      ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0))) {
    return V4Refused(V4FromBytes(b + 12));
  }
  // 64:ff9b::/96 NAT64 well-known prefix embeds an IPv4 address.
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0,
                                         0, 0,    0,    0,    0, 0};
  if (std::memcmp(b, kNat64, 12) == 0) return V4Refused(V4FromBytes(b + 12));
  if ((b[0] & 0xfe) == 0xfc) return true;                  // fc00::/7 ULA
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;  // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return true;  // fec0::/10
  if (b[0] == 0xff) return true;                           // multicast
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) {
    return true;  // 2001:db8::/32 documentation
  }
  if (b[0] == 0x01 && b[1] == 0 && std::memcmp(b + 2, kZero, 6) == 0) {
    return true;  // 100::/64 discard-only
  }
  if (b[0] == 0x20 && b[1] == 0x02) {  // 6to4: 2002:V4ADDR::/48
    return V4Refused(V4FromBytes(b + 2));
  }
  return false;
}

}  // namespace

bool IsNonPublicAddress(std::string_view ip) {
  std::string text(ip);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return V4Refused(ntohl(v4.s_addr));
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return V6Refused(v6);
  return true;
}

bool IsNonPublicAddress(const sockaddr* addr, socklen_t len) {
  if (addr == nullptr) return true;
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return V4Refused(ntohl(in->sin_addr.s_addr));
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    return V6Refused(in6->sin6_addr);
  }
  return true;
}

std::string FormatSocketAddress(const sockaddr* addr, socklen_t len) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr == nullptr) return "";
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    return "[" + std::string(buf) +
           "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "";
}

AddressGuard::AddressGuard(bool allow_private_networks,
                           std::vector<std::string> exempt)
    : allow_private_(allow_private_networks),
      exempt_(exempt.begin(), exempt.end()) {}

bool AddressGuard::Allows(const sockaddr* addr, socklen_t len) const {
  if (addr == nullptr) return false;
  if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) return false;
  if (allow_private_) return true;
  if (!IsNonPublicAddress(addr, len)) return true;
  return !exempt_.empty() && exempt_.count(FormatSocketAddress(addr, len)) > 0;
}

}  // namespace freshd::fetch
