// RuleMatcher (issue 31 item 7): host (exact, *.domain) and url (RE2
// search) rules, the first match winning. The [[rule]] config itself is
// tested in config_test.cc.

#include "conf/rules.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "conf/config.h"

namespace freshd {
namespace {

RuleConfig Rule(std::string name, std::string host, std::string url) {
  RuleConfig r;
  r.name = std::move(name);
  r.host = std::move(host);
  r.url = std::move(url);
  r.importance = 2;
  return r;
}

TEST(RuleMatcherTest, FirstMatchWins) {
  const std::vector<RuleConfig> rules = {
      Rule("news", "", "^https?://example\\.com/news/"),
      Rule("archive", "*.archive.example", ""),
      Rule("exact", "Example.com", "")};
  Result<RuleMatcher> m = RuleMatcher::Create(rules);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->Match("https://example.com/news/1", "example.com"), 1u);
  EXPECT_EQ(m->Match("https://example.com/about", "example.com"), 3u);
  EXPECT_EQ(m->Match("https://EXAMPLE.COM/about", "EXAMPLE.COM"), 3u);
  EXPECT_EQ(m->Match("https://a.archive.example/x", "a.archive.example"), 2u);
  EXPECT_EQ(m->Match("https://b.a.archive.example/", "b.a.archive.example"),
            2u);
  // *.domain is its subdomains, not the domain itself.
  EXPECT_EQ(m->Match("https://archive.example/x", "archive.example"), 0u);
  EXPECT_EQ(m->Match("https://xarchive.example/x", "xarchive.example"), 0u);
  EXPECT_EQ(m->Match("https://other.test/news/", "other.test"), 0u);
  // Bad rules are refused by Create as by the loader.
  RuleConfig bad;
  bad.name = "bad";
  bad.url = "(";
  bad.importance = 1;
  EXPECT_FALSE(RuleMatcher::Create({bad}).ok());
  EXPECT_TRUE(RuleMatcher::Create({}).ok());
}

}  // namespace
}  // namespace freshd
