// [[rule]] origin with headers, cookie, credentials_file and credential
// (issue #44 item 6): what is accepted, how an origin rule matches, and the
// message (naming the rule and the key) for each refusal.

#include <string>

#include "conf/config.h"
#include "conf/rules.h"
#include "gtest/gtest.h"

namespace freshd {
namespace {

std::string LoadError(const std::string& toml) {
  Result<Config> c = LoadConfigString(toml, "test.toml");
  EXPECT_FALSE(c.ok()) << "accepted:\n" << toml;
  return c.ok() ? "" : c.status().message();
}

std::string Rule(const std::string& keys) {
  return "[[rule]]\nname = \"members\"\n" + keys;
}

TEST(OriginRuleConfigTest, AcceptsAnOriginRuleWithItsRequestKeys) {
  Result<Config> c =
      LoadConfigString(Rule(R"(origin = "https://members.example.org"
headers = { "X-Api-Key" = "k-1", "Accept-Language" = "de" }
cookie = "session=abc; lang=de"
credentials_file = "/etc/freshd/members.cred"
)") + R"([[rule]]
name = "staging"
origin = "http://staging.example.org:8080/"
credential = "staging"
min_interval = "1h"
)",
                       "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->rules.size(), 2u);
  EXPECT_EQ(c->rules[0].origin, "https://members.example.org");
  EXPECT_EQ(c->rules[0].headers.at("X-Api-Key"), "k-1");
  EXPECT_EQ(c->rules[0].cookie, "session=abc; lang=de");
  EXPECT_EQ(c->rules[0].credentials_file, "/etc/freshd/members.cred");
  EXPECT_EQ(c->rules[1].credential, "staging");
  // What check-config --print writes reads back to the same config.
  Result<Config> again = LoadConfigString(ConfigToToml(*c), "printed.toml");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *c);
}

TEST(OriginRuleConfigTest, OriginOfUrlIsSchemeHostAndPortExactly) {
  EXPECT_EQ(OriginOfUrl("https://Members.Example.org/a?b#c"),
            "https://members.example.org:443");
  EXPECT_EQ(OriginOfUrl("http://u:p@example.org:8080"),
            "http://example.org:8080");
  EXPECT_EQ(OriginOfUrl("HTTP://[::1]:81/x"), "http://[::1]:81");
  EXPECT_EQ(OriginOfUrl("http://example.org:80/"),
            OriginOfUrl("http://example.org/"));
  EXPECT_EQ(OriginOfUrl("ftp://example.org/"), "");
  EXPECT_EQ(OriginOfUrl("http://example.org:0/"), "");
  EXPECT_EQ(OriginOfUrl("http://example.org:99999/"), "");
  EXPECT_EQ(OriginOfUrl("http:///path"), "");
}

TEST(OriginRuleConfigTest, AnOriginRuleMatchesOnlyItsOrigin) {
  RuleConfig members;
  members.name = "members";
  members.origin = "https://members.example.org";
  members.headers["X-Api-Key"] = "k";
  RuleConfig host;
  host.name = "host";
  host.host = "members.example.org";
  host.max_interval_s = 3600;
  Result<RuleMatcher> m = RuleMatcher::Create({members, host});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->Match("https://members.example.org/a", "members.example.org"),
            1u);
  EXPECT_EQ(
      m->Match("https://members.example.org:443/a", "members.example.org"), 1u);
  // Same host, another scheme or port: another origin.
  EXPECT_EQ(m->Match("http://members.example.org/a", "members.example.org"),
            2u);
  EXPECT_EQ(
      m->Match("https://members.example.org:8443/", "members.example.org"), 2u);
  EXPECT_EQ(m->Match("https://example.org/", "example.org"), 0u);
}

TEST(OriginRuleConfigTest, SameRequestKeysSeesOnlyWhatTheFetcherReads) {
  RuleConfig members;
  members.name = "members";
  members.origin = "https://members.example.org";
  members.cookie = "s=1";
  RuleConfig host;
  host.name = "host";
  host.host = "example.org";
  host.max_interval_s = 3600;
  std::vector<RuleConfig> before = {host, members};
  std::vector<RuleConfig> after = before;
  after[0].max_interval_s = 60;  // applied by a reload
  after[1].importance = 2;
  EXPECT_TRUE(SameRequestKeys(before, after));
  after[1].cookie = "s=2";  // needs a restart
  EXPECT_FALSE(SameRequestKeys(before, after));
  after = before;
  after[1].headers["X-A"] = "b";
  EXPECT_FALSE(SameRequestKeys(before, after));
  after = before;
  after[1].credential = "members";
  EXPECT_FALSE(SameRequestKeys(before, after));
  EXPECT_FALSE(SameRequestKeys(before, {host}));
}

TEST(OriginRuleConfigTest, RequestKeysNeedAnOriginRule) {
  std::string e = LoadError(
      Rule("host = \"members.example.org\"\nheaders = { \"X-A\" = \"b\" }\n"));
  EXPECT_NE(e.find("[rule \"members\"] headers"), std::string::npos) << e;
  EXPECT_NE(e.find("needs an origin rule"), std::string::npos) << e;
  e =
      LoadError(Rule("url = \"^https://m\\\\.example\\\\.org/\"\n"
                     "cookie = \"s=1\"\n"));
  EXPECT_NE(e.find("[rule \"members\"] cookie"), std::string::npos) << e;
  e = LoadError(Rule("credentials_file = \"/x\"\n"));
  EXPECT_NE(e.find("[rule \"members\"]"), std::string::npos) << e;
  e =
      LoadError(Rule("host = \"a.example\"\norigin = \"https://a.example\"\n"
                     "cookie = \"s=1\"\n"));
  EXPECT_NE(e.find("exactly one of host, url and origin"), std::string::npos)
      << e;
}

TEST(OriginRuleConfigTest, RefusesPatternsPathsAndCredentialsInTheOrigin) {
  for (const std::string origin :
       {"https://*.example.org", "members.example.org",
        "https://members.example.org/private", "ftp://members.example.org",
        "https://user:pw@members.example.org", "https://members.example.org:0",
        "https://members.example.org?x=1", "https://bad_host!/"}) {
    const std::string e =
        LoadError(Rule("origin = \"" + origin + "\"\ncookie = \"s=1\"\n"));
    EXPECT_NE(e.find("[rule \"members\"] origin: must be an origin"),
              std::string::npos)
        << origin << ": " << e;
  }
}

TEST(OriginRuleConfigTest, RefusesBadAndReservedHeaders) {
  const std::string origin = "origin = \"https://members.example.org\"\n";
  for (const std::string name :
       {"Host", "content-length", "Transfer-Encoding", "CONNECTION",
        "Authorization", "Cookie", "Proxy-Authorization", "User-Agent"}) {
    const std::string e =
        LoadError(Rule(origin + "headers = { \"" + name + "\" = \"v\" }\n"));
    EXPECT_NE(e.find("[rule \"members\"] headers: \"" + name +
                     "\" may not be set here"),
              std::string::npos)
        << e;
  }
  for (const std::string name : {"X Bad", "X:Bad", "", "X\\u0000"}) {
    const std::string e =
        LoadError(Rule(origin + "headers = { \"" + name + "\" = \"v\" }\n"));
    EXPECT_NE(e.find("is not a header name"), std::string::npos) << e;
  }
  for (const std::string value :
       {"a\\r\\nX-Injected: 1", "a\\nb", "a\\u0000"}) {
    std::string e =
        LoadError(Rule(origin + "headers = { \"X-A\" = \"" + value + "\" }\n"));
    EXPECT_NE(e.find("control character"), std::string::npos) << e;
    e = LoadError(Rule(origin + "cookie = \"" + value + "\"\n"));
    EXPECT_NE(e.find("[rule \"members\"] cookie: holds a control"),
              std::string::npos)
        << e;
  }
  EXPECT_NE(LoadError(Rule(origin +
                           "headers = { \"X-A\" = \"1\", \"x-a\" = \"2\" }\n"))
                .find("is set twice"),
            std::string::npos);
  std::string many = "headers = { ";
  for (size_t i = 0; i <= kMaxRuleHeaders; ++i) {
    many += (i ? ", " : "") + std::string("\"X-") + std::to_string(i) +
            "\" = \"v\"";
  }
  std::string e = LoadError(Rule(origin + many + " }\n"));
  EXPECT_NE(e.find("at most 16 headers"), std::string::npos) << e;
  e = LoadError(Rule(origin + "headers = { \"X-A\" = \"" +
                     std::string(kMaxRuleHeaderValueBytes + 1, 'v') +
                     "\" }\n"));
  EXPECT_NE(e.find("longer than"), std::string::npos) << e;
}

TEST(OriginRuleConfigTest, CredentialIsAFileNameAndExcludesCredentialsFile) {
  const std::string origin = "origin = \"https://members.example.org\"\n";
  std::string e = LoadError(Rule(origin + "credential = \"../etc/passwd\"\n"));
  EXPECT_NE(e.find("[rule \"members\"] credential: must be a file name"),
            std::string::npos)
      << e;
  e = LoadError(
      Rule(origin + "credential = \"a\"\ncredentials_file = \"/b\"\n"));
  EXPECT_NE(e.find("not both"), std::string::npos) << e;
}

}  // namespace
}  // namespace freshd
