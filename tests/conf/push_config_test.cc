// [push] (issue #44, items 1 and 3): off by default, its keys (the WebSub
// ones too) parsed, bounded and written back; bad listen, public_url and
// trusted_proxies refused with a message naming the key.

#include <gtest/gtest.h>

#include <string>

#include "conf/config.h"

namespace freshd {
namespace {

TEST(PushConfigTest, OffByDefault) {
  Result<Config> c = LoadConfigString("", "p.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c.value().push.listen.empty());
}

TEST(PushConfigTest, KeysParseAndRoundTrip) {
  Result<Config> c = LoadConfigString(R"(
[push]
listen = "0.0.0.0:8932"
public_url = "https://crawler.example.org/"
trusted_proxies = ["127.0.0.1", "10.0.0.0/8", "fd00::/8"]
max_body_bytes = "2MiB"
max_connections = 100
max_connections_per_client = 4
client_requests_per_minute = 30
host_requests_per_minute = 120
header_timeout = "3s"
body_timeout = "5s"
key_cache = "30m"
max_pending_per_host = 500
websub_max_subscriptions = 50
websub_lease = "2d"
websub_min_renew_interval = "5m"
websub_poll_slowdown = 4.5
)",
                                      "p.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const PushConfig& p = c.value().push;
  EXPECT_EQ(p.listen, "0.0.0.0:8932");
  EXPECT_EQ(p.trusted_proxies.size(), 3u);
  EXPECT_EQ(p.max_body_bytes, 2u << 20);
  EXPECT_EQ(p.key_cache_s, 1800);
  EXPECT_EQ(p.max_pending_per_host, 500);
  EXPECT_EQ(p.websub_max_subscriptions, 50);
  EXPECT_EQ(p.websub_lease_s, 2 * 86400);
  EXPECT_EQ(p.websub_min_renew_interval_s, 300);
  EXPECT_EQ(p.websub_poll_slowdown, 4.5);
  Result<Config> back = LoadConfigString(ConfigToToml(c.value()), "back.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back.value(), c.value());
}

TEST(PushConfigTest, BadValuesNameTheirKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"listen = \"example.org:80\"", "[push] listen"},
      {"listen = \"127.0.0.1:8931\"", "[push] listen"},  // = [status] listen
      {"public_url = \"ftp://x\"", "[push] public_url"},
      {"trusted_proxies = [\"10.0.0.0/40\"]", "[push] trusted_proxies"},
      {"trusted_proxies = [\"proxy.internal\"]", "[push] trusted_proxies"},
      {"max_body_bytes = \"1TiB\"", "[push] max_body_bytes"},
      {"client_requests_per_minute = 0", "[push] client_requests_per_minute"},
      {"max_connections = 4\nmax_connections_per_client = 8",
       "[push] max_connections_per_client"},
      {"websub_max_subscriptions = -1", "[push] websub_max_subscriptions"},
      {"websub_lease = \"1s\"", "[push] websub_lease"},
      {"websub_min_renew_interval = \"0s\"",
       "[push] websub_min_renew_interval"},
      {"websub_poll_slowdown = 0.5", "[push] websub_poll_slowdown"},
      {"unknown_key = 1", "unknown_key"},
  };
  for (const auto& [line, want] : cases) {
    Result<Config> c =
        LoadConfigString(std::string("[push]\n") + line + "\n", "p.toml");
    ASSERT_FALSE(c.ok()) << line;
    EXPECT_NE(c.status().message().find(want), std::string::npos)
        << line << ": " << c.status().message();
  }
}

}  // namespace
}  // namespace freshd
