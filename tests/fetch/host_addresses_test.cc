// HostAddresses: authority splitting, the [fetch] resolve table and IP
// literals answered at once, real asynchronous lookups (localhost, and an
// RFC 6761 .invalid name that never resolves) and the pending state.

#include "fetch/host_addresses.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

namespace freshd::fetch {
namespace {

TEST(HostAddressesTest, SplitAuthority) {
  struct Case {
    std::string in, name, port;
  };
  for (const Case& c : std::vector<Case>{{"a.test", "a.test", "80"},
                                         {"a.test:8080", "a.test", "8080"},
                                         {"[::1]:443", "::1", "443"},
                                         {"[::1]", "::1", "80"},
                                         {"127.0.0.1:9", "127.0.0.1", "9"}}) {
    std::string name, port;
    SplitAuthority(c.in, &name, &port);
    EXPECT_EQ(name, c.name) << c.in;
    EXPECT_EQ(port, c.port) << c.in;
  }
}

TEST(HostAddressesTest, TableAndLiteralsAnswerAtOnce) {
  boost::asio::io_context io;
  int ready = 0;
  HostAddresses a(io, {{"a.test", "10.1.2.3"}},
                  [&](const std::string&) { ++ready; });
  EXPECT_EQ(a.Lookup("a.test:8080"), "10.1.2.3");
  EXPECT_EQ(a.Lookup("192.0.2.7:80"), "192.0.2.7");
  EXPECT_EQ(a.Lookup("[2001:db8::1]:443"), "2001:db8::1");
  EXPECT_FALSE(a.Pending("a.test:8080"));
  io.run();
  EXPECT_EQ(ready, 0);  // nothing was looked up asynchronously
}

TEST(HostAddressesTest, DnsLookupsReportWhenReady) {
  boost::asio::io_context io;
  std::vector<std::string> ready;
  HostAddresses a(io, {},
                  [&](const std::string& host) { ready.push_back(host); });
  EXPECT_EQ(a.Lookup("localhost:80"), std::nullopt);
  EXPECT_TRUE(a.Pending("localhost:80"));
  EXPECT_EQ(a.Lookup("localhost:80"), std::nullopt);  // one lookup only
  EXPECT_EQ(a.Lookup("no-such-host.invalid"), std::nullopt);
  io.run();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_FALSE(a.Pending("localhost:80"));
  std::optional<std::string> ip = a.Lookup("localhost:80");
  ASSERT_TRUE(ip.has_value());
  EXPECT_TRUE(*ip == "127.0.0.1" || *ip == "::1") << *ip;
  EXPECT_EQ(a.Lookup("no-such-host.invalid"), "");  // known: unresolvable
}

}  // namespace
}  // namespace freshd::fetch
