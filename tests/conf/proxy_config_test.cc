// [fetch] proxy, proxy_credentials_file and [[rule]] proxy (issue #44
// item 5): what is accepted and the message for each refusal.

#include <string>

#include "conf/config.h"
#include "gtest/gtest.h"

namespace freshd {
namespace {

std::string LoadError(const std::string& toml) {
  Result<Config> c = LoadConfigString(toml, "test.toml");
  EXPECT_FALSE(c.ok()) << "accepted:\n" << toml;
  return c.ok() ? "" : c.status().message();
}

TEST(ProxyConfigTest, AcceptsHttpHttpsAndSocks5AndRuleOverrides) {
  for (const std::string url :
       {"http://proxy.internal:3128", "https://10.0.0.5:8443/",
        "socks5://[::1]:1080", "socks5://127.0.0.1:1080"}) {
    Result<Config> c = LoadConfigString(R"(
[fetch]
proxy = ")" + url + R"("
proxy_credentials_file = "/run/credentials/freshd.service/proxy"
[[rule]]
name = "intranet"
host = "*.corp.example"
proxy = "direct"
[[rule]]
name = "eu"
host = "shop.example.eu"
proxy = "http://eu-proxy.internal:3128"
min_interval = "1h"
)",
                                        "test.toml");
    ASSERT_TRUE(c.ok()) << url << ": " << c.status().ToString();
    EXPECT_EQ(c->fetch.proxy, url);
    EXPECT_EQ(c->fetch.proxy_credentials_file,
              "/run/credentials/freshd.service/proxy");
    ASSERT_EQ(c->rules.size(), 2u);
    EXPECT_EQ(c->rules[0].proxy, "direct");
    EXPECT_EQ(c->rules[1].proxy, "http://eu-proxy.internal:3128");
  }
}

TEST(ProxyConfigTest, RefusesCredentialsInTheUrlAndProxyResolvingSchemes) {
  std::string e = LoadError(
      "[fetch]\nproxy = \"http://user:secret@proxy.internal:3128\"\n");
  EXPECT_NE(e.find("proxy_credentials_file"), std::string::npos) << e;
  EXPECT_NE(e.find("[fetch] proxy"), std::string::npos) << e;
  e = LoadError("[fetch]\nproxy = \"socks5h://127.0.0.1:1080\"\n");
  EXPECT_NE(e.find("use socks5://"), std::string::npos) << e;
  e = LoadError("[fetch]\nproxy = \"ftp://proxy.internal:21\"\n");
  EXPECT_NE(e.find("http://, https:// or socks5://"), std::string::npos) << e;
  e = LoadError("[fetch]\nproxy = \"http://proxy.internal\"\n");
  EXPECT_NE(e.find("host:port"), std::string::npos) << e;
  e = LoadError("[fetch]\nproxy = \"http://proxy.internal:3128/path\"\n");
  EXPECT_NE(e.find("no path"), std::string::npos) << e;
  e = LoadError("[fetch]\nproxy = \"http://proxy.internal:99999\"\n");
  EXPECT_NE(e.find("host:port"), std::string::npos) << e;
}

TEST(ProxyConfigTest, RuleProxyNeedsAHostRuleAndAValidValue) {
  std::string e = LoadError(R"(
[[rule]]
name = "by-url"
url = "^https://a\\.example/"
proxy = "direct"
)");
  EXPECT_NE(e.find("needs a host rule"), std::string::npos) << e;
  EXPECT_NE(e.find("by-url"), std::string::npos) << e;
  e = LoadError(R"(
[[rule]]
name = "bad"
host = "a.example"
proxy = "indirect"
)");
  EXPECT_NE(e.find("\"direct\" or a proxy URL"), std::string::npos) << e;
  e = LoadError(R"(
[[rule]]
name = "leaky"
host = "a.example"
proxy = "http://u:p@proxy.internal:3128"
)");
  EXPECT_NE(e.find("proxy_credentials_file"), std::string::npos) << e;
}

}  // namespace
}  // namespace freshd
