// SSRF guard ranges (v4, v6, v4-mapped, NAT64, 6to4) and the exemption list.

#include "fetch/address_guard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace freshd::fetch {
namespace {

TEST(AddressGuardTest, RefusesNonPublicV4) {
  for (const char* ip :
       {"127.0.0.1",       "127.255.255.254", "10.1.2.3",        "172.16.0.1",
        "172.31.255.255",  "192.168.1.1",     "169.254.169.254", "100.64.0.1",
        "100.127.255.255", "0.0.0.0",         "0.1.2.3",         "224.0.0.1",
        "239.1.1.1",       "255.255.255.255", "240.0.0.1",       "192.0.2.5",
        "198.18.0.1",      "198.51.100.7",    "203.0.113.9",     "192.0.0.8"}) {
    EXPECT_TRUE(IsNonPublicAddress(ip)) << ip;
  }
}

TEST(AddressGuardTest, AllowsPublicV4) {
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1",
                         "100.128.0.1", "172.15.255.255", "11.0.0.1"}) {
    EXPECT_FALSE(IsNonPublicAddress(ip)) << ip;
  }
}

TEST(AddressGuardTest, RefusesNonPublicV6IncludingEmbeddedV4) {
  for (const char* ip :
       {"::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
        "64:ff9b::7f00:1", "2002:7f00:1::1", "2001:db8::1", "fec0::1",
        "::127.0.0.1"}) {
    EXPECT_TRUE(IsNonPublicAddress(ip)) << ip;
  }
  for (const char* ip : {"2606:4700:4700::1111", "::ffff:8.8.8.8",
                         "64:ff9b::808:808", "2a00:1450:4001::200e"}) {
    EXPECT_FALSE(IsNonPublicAddress(ip)) << ip;
  }
  EXPECT_TRUE(IsNonPublicAddress("not an ip"));
}

sockaddr_in V4(const char* ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

TEST(AddressGuardTest, ExemptionIsExactIpAndPort) {
  AddressGuard guard(false, {"127.0.0.1:8080"});
  sockaddr_in ok = V4("127.0.0.1", 8080);
  sockaddr_in other_port = V4("127.0.0.1", 8081);
  sockaddr_in other_ip = V4("127.0.0.2", 8080);
  sockaddr_in pub = V4("8.8.8.8", 80);
  auto allows = [&](const sockaddr_in& a) {
    return guard.Allows(reinterpret_cast<const sockaddr*>(&a), sizeof(a));
  };
  EXPECT_TRUE(allows(ok));
  EXPECT_FALSE(allows(other_port));
  EXPECT_FALSE(allows(other_ip));
  EXPECT_TRUE(allows(pub));
  AddressGuard open(true);
  EXPECT_TRUE(open.Allows(reinterpret_cast<const sockaddr*>(&other_ip),
                          sizeof(other_ip)));
}

TEST(AddressGuardTest, FormatsV6WithBrackets) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(443);
  inet_pton(AF_INET6, "::1", &a.sin6_addr);
  EXPECT_EQ(
      FormatSocketAddress(reinterpret_cast<const sockaddr*>(&a), sizeof(a)),
      "[::1]:443");
}

}  // namespace
}  // namespace freshd::fetch
