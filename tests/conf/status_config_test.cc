// [status] allowed_hosts and token_file (issue #26, item 2): parsed,
// validated (a non-loopback listen needs a token file; names only), and
// written back by ConfigToToml.

#include <gtest/gtest.h>

#include <string>

#include "conf/config.h"

namespace freshd {
namespace {

TEST(StatusConfigTest, KeysParseAndRoundTrip) {
  Result<Config> c = LoadConfigString(R"(
[status]
listen = "[::1]:9000"
allowed_hosts = ["crawler.internal", "status-1.example.org"]
token_file = "/etc/freshd/token"
)",
                                      "s.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c.value().status.allowed_hosts.size(), 2u);
  EXPECT_EQ(c.value().status.token_file, "/etc/freshd/token");
  Result<Config> back = LoadConfigString(ConfigToToml(c.value()), "back.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back.value(), c.value());
}

TEST(StatusConfigTest, NonLoopbackListenNeedsTokenFile) {
  for (const char* listen : {"0.0.0.0:8931", "10.1.2.3:8931", "[::]:8931"}) {
    Result<Config> c = LoadConfigString(
        std::string("[status]\nlisten = \"") + listen + "\"\n", "s.toml");
    ASSERT_FALSE(c.ok()) << listen;
    EXPECT_NE(c.status().message().find("[status] token_file"),
              std::string::npos)
        << c.status().message();
    Result<Config> with =
        LoadConfigString(std::string("[status]\nlisten = \"") + listen +
                             "\"\ntoken_file = \"/etc/freshd/token\"\n",
                         "s.toml");
    EXPECT_TRUE(with.ok()) << with.status().ToString();
  }
  for (const char* listen : {"127.0.0.1:8931", "127.9.9.9:1", "[::1]:8931"}) {
    EXPECT_TRUE(
        LoadConfigString(std::string("[status]\nlisten = \"") + listen + "\"\n",
                         "s.toml")
            .ok())
        << listen;
  }
}

TEST(StatusConfigTest, AllowedHostsAreNamesOnly) {
  for (const char* bad :
       {"evil.example:80", "http://x.example", "*", "", "a..b", "a b", ".x"}) {
    Result<Config> c = LoadConfigString(
        std::string("[status]\nallowed_hosts = [\"") + bad + "\"]\n", "s.toml");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("[status] allowed_hosts"),
              std::string::npos)
        << c.status().message();
  }
}

}  // namespace
}  // namespace freshd
