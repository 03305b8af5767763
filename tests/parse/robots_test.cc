// Tests of parse/robots that read as the spec: Rfc9309_* cite the section
// of RFC 9309 (https://www.rfc-editor.org/rfc/rfc9309) they check;
// Freshd_* cover freshd's own choices (limits, leniency, Crawl-delay).
// The external suites run in robots_conformance_test.cc.

#include "parse/robots.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "parse/robots_parser.h"
#include "parse/url.h"

namespace freshd::parse {
namespace {

bool Allowed(std::string_view body, std::string_view agent,
             std::string_view path) {
  return ParseRobotsTxt(body).IsAllowed(agent, path);
}

// 2.2.1: product tokens match case-insensitively; groups naming the same
// token are merged; "*" applies only when no group names the crawler.
TEST(RobotsTest, Rfc9309_2_2_1_UserAgentMatchingAndMerging) {
  const char* body =
      "User-agent: FreshD\nDisallow: /a\n\n"
      "User-agent: other\nDisallow: /\n\n"
      "user-agent: freshd\nDisallow: /b\n\n"
      "User-agent: *\nDisallow: /c\n";
  EXPECT_FALSE(Allowed(body, "freshd", "/a"));
  EXPECT_FALSE(Allowed(body, "FRESHD", "/b"));
  EXPECT_TRUE(Allowed(body, "freshd", "/c"));  // "*" does not apply
  EXPECT_FALSE(Allowed(body, "unknown", "/c"));
  EXPECT_TRUE(Allowed(body, "unknown", "/a"));
}

TEST(RobotsTest, Rfc9309_2_2_1_SeveralAgentsShareOneGroup) {
  const char* body = "User-agent: a\nUser-agent: b\nDisallow: /x\n";
  EXPECT_FALSE(Allowed(body, "a", "/x"));
  EXPECT_FALSE(Allowed(body, "b", "/x"));
  EXPECT_TRUE(Allowed(body, "c", "/x"));
}

TEST(RobotsTest, Rfc9309_2_2_1_ProductTokenIsPrefixOfValue) {
  EXPECT_FALSE(Allowed("User-agent: freshd/0.1 (+http://x)\nDisallow: /\n",
                       "freshd", "/"));
  EXPECT_FALSE(Allowed("User-agent: MJ12bot\nDisallow: /\n", "mj12bot", "/"));
}

// 2.2.2: longest match wins; Allow wins a tie; no match means allowed.
TEST(RobotsTest, Rfc9309_2_2_2_LongestMatchAndTies) {
  const char* body =
      "User-agent: *\nDisallow: /shop\nAllow: /shop/cart\n"
      "Disallow: /tie\nAllow: /tie\n";
  EXPECT_FALSE(Allowed(body, "x", "/shop/list"));
  EXPECT_TRUE(Allowed(body, "x", "/shop/cart/1"));
  EXPECT_TRUE(Allowed(body, "x", "/tie"));
  EXPECT_TRUE(Allowed(body, "x", "/elsewhere"));
}

TEST(RobotsTest, Rfc9309_2_2_2_RobotsTxtIsImplicitlyAllowed) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /\n", "x", "/robots.txt"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /\n", "x", "/robots.txt2"));
}

TEST(RobotsTest, Rfc9309_2_2_2_EmptyDisallowAllowsAll) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow:\n", "x", "/any"));
}

// 2.2.2: octets outside US-ASCII in patterns are percent-encoded before
// comparison; escapes compare case-insensitively in their hex digits.
TEST(RobotsTest, Rfc9309_2_2_2_PercentEncodingOfPatterns) {
  const char* body = "User-agent: *\nDisallow: /foo/ツ\nDisallow: /%aa\n";
  EXPECT_FALSE(Allowed(body, "x", "/foo/%E3%83%84"));
  EXPECT_FALSE(Allowed(body, "x", "/%AA"));
  EXPECT_TRUE(Allowed(body, "x", "/foo/bar"));
}

// 2.2.3: '*' matches any octets, '$' anchors the end.
TEST(RobotsTest, Rfc9309_2_2_3_SpecialCharacters) {
  const char* body =
      "User-agent: *\nDisallow: /*.gif$\nDisallow: /a*b*c\nAllow: /x$\n"
      "Disallow: /x\n";
  EXPECT_FALSE(Allowed(body, "x", "/img/one.gif"));
  EXPECT_TRUE(Allowed(body, "x", "/img/one.gif?size=2"));
  EXPECT_FALSE(Allowed(body, "x", "/a-1-b-2-c-3"));
  EXPECT_TRUE(Allowed(body, "x", "/a-1-c-2-b"));
  EXPECT_TRUE(Allowed(body, "x", "/x"));
  EXPECT_FALSE(Allowed(body, "x", "/xy"));
}

// 2.2.4: other records (Sitemap) do not end a group.
TEST(RobotsTest, Rfc9309_2_2_4_OtherRecordsDoNotEndGroups) {
  RobotsTxt r = ParseRobotsTxt(
      "User-agent: a\nSitemap: https://x/s.xml\nUser-agent: b\n"
      "Disallow: /p\nSitemap: /relative.xml\n");
  EXPECT_FALSE(r.IsAllowed("a", "/p"));
  EXPECT_FALSE(r.IsAllowed("b", "/p"));
  ASSERT_EQ(r.sitemaps().size(), 2u);
  auto resolved = r.ResolvedSitemaps("https://Host.example/robots.txt");
  ASSERT_EQ(resolved.size(), 2u);
  EXPECT_EQ(resolved[0], "https://x/s.xml");
  EXPECT_EQ(resolved[1], "https://host.example/relative.xml");
}

// 2.5: crawlers must parse at least 500 KiB; freshd stops there, at a
// line boundary so a cut rule never widens an Allow.
TEST(RobotsTest, Rfc9309_2_5_ParseLimit) {
  std::string body = "User-agent: *\nDisallow: /early\n";
  while (body.size() < kMaxRobotsBytes - 10) body += "# padding padding\n";
  body += "Allow: /early/but-cut-off\n";  // straddles the limit
  body += "Disallow: /late\n";
  RobotsTxt r = ParseRobotsTxt(body);
  EXPECT_TRUE(r.truncated());
  EXPECT_FALSE(r.IsAllowed("x", "/early/but-cut-off"));
  EXPECT_TRUE(r.IsAllowed("x", "/late"));
}

TEST(RobotsTest, Freshd_LineEndingsAndBoms) {
  for (std::string body :
       {std::string("User-agent: *\r\nDisallow: /x\r\n"),
        std::string("User-agent: *\rDisallow: /x\r"),
        std::string("\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n"),
        std::string("\xEF\xBBUser-agent: *\nDisallow: /x\n")}) {
    EXPECT_FALSE(Allowed(body, "bot", "/x")) << body;
  }
  // UTF-16LE with BOM: "User-agent: *\nDisallow: /x\n".
  std::string ascii = "User-agent: *\nDisallow: /x\n";
  std::string le = "\xFF\xFE", be = "\xFE\xFF";
  for (char c : ascii) {
    le += c;
    le += '\0';
    be += '\0';
    be += c;
  }
  EXPECT_FALSE(Allowed(le, "bot", "/x"));
  EXPECT_FALSE(Allowed(be, "bot", "/x"));
}

TEST(RobotsTest, Freshd_CrawlDelayPerGroup) {
  // Crawl-delay does not end a group's agent list; rules do.
  RobotsTxt r = ParseRobotsTxt(
      "User-agent: slow\nCrawl-delay: 2.5\nDisallow: /x\n"
      "User-agent: *\nCrawl-delay: 1\nDisallow: /x\n"
      "User-agent: weird\nCrawl-delay: soon\nDisallow: /x\n"
      "User-agent: huge\nCrawl-delay: 1e12\nDisallow: /x\n"
      "User-agent: a\nCrawl-delay: 3\nUser-agent: b\nDisallow: /x\n");
  EXPECT_EQ(r.CrawlDelay("slow"), 2.5);
  EXPECT_EQ(r.CrawlDelay("anyone"), 1.0);
  EXPECT_FALSE(r.CrawlDelay("weird").has_value());
  EXPECT_EQ(r.CrawlDelay("huge"), 86400.0);
  EXPECT_EQ(r.CrawlDelay("b"), 3.0);
  bool saw = false;
  for (const auto& a : r.anomalies()) saw |= a.message == "invalid crawl-delay";
  EXPECT_TRUE(saw);
}

TEST(RobotsTest, Freshd_AnomaliesAreRecordedNotFatal) {
  RobotsTxt r = ParseRobotsTxt(
      "Disallow: /before-any-group\nUseragent: a\nDisallow /x\nFoo: bar\n");
  EXPECT_FALSE(r.IsAllowed("a", "/x"));
  EXPECT_TRUE(r.IsAllowed("b", "/before-any-group"));
  EXPECT_GE(r.anomalies().size(), 4u);
  // Bounded: pathological files keep at most kMaxRobotsAnomalies.
  std::string junk;
  for (int i = 0; i < 1000; ++i) junk += "Junk: line\n";
  EXPECT_EQ(ParseRobotsTxt(junk).anomalies().size(), kMaxRobotsAnomalies);
}

TEST(RobotsTest, Freshd_IsUrlAllowedUsesPathAndQuery) {
  RobotsTxt r = ParseRobotsTxt("User-agent: *\nDisallow: /*?session=\n");
  EXPECT_FALSE(r.IsUrlAllowed("x", "http://h/a?session=1#frag"));
  EXPECT_TRUE(r.IsUrlAllowed("x", "http://h/a#?session=1"));
}

TEST(RobotsTest, Freshd_AnyBytesParse) {
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes.push_back(static_cast<char>(i * 37));
  RobotsTxt r = ParseRobotsTxt(bytes);
  EXPECT_TRUE(r.IsAllowed("x", "/"));
}

// Matching stays linear: a hostile pattern of many wildcards against a
// long path must not explode (backtracking matchers take exponential or
// quadratic time here).
TEST(RobotsTest, Freshd_WorstCaseMatchingIsFast) {
  std::string pattern = "/";
  for (int i = 0; i < 2000; ++i) pattern += "a*";
  pattern += "b";
  std::string body = "User-agent: *\n";
  for (int i = 0; i < 50; ++i) body += "Disallow: " + pattern + "\n";
  // Long literal segments defeat naive substring search (O(n*m)).
  for (int i = 0; i < 50; ++i)
    body += "Disallow: /*" + std::string(1000, 'a') + "b\n";
  std::string path = "/" + std::string(8000, 'a');
  RobotsTxt r = ParseRobotsTxt(body);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(r.IsAllowed("x", path));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start)
                .count();
  EXPECT_LT(ms, 1000);
}

TEST(RobotsTest, Freshd_ValidProductTokens) {
  EXPECT_TRUE(IsValidProductToken("freshd"));
  EXPECT_TRUE(IsValidProductToken("Foo_Bar-baz"));
  EXPECT_FALSE(IsValidProductToken(""));
  EXPECT_FALSE(IsValidProductToken("freshd/0.1"));
  EXPECT_FALSE(IsValidProductToken("two words"));
}

}  // namespace
}  // namespace freshd::parse

namespace freshd::parse {
namespace {

// Issue #26: the crawler matches normalized URLs (escapes of unreserved
// characters decoded), so rules are normalized the same way for IsAllowed;
// IsUrlAllowed keeps Google's literal comparison.
TEST(RobotsTest, NormalizedPathsMeetRulesWithTheSameEscapes) {
  RobotsTxt r = ParseRobotsTxt(
      "User-agent: *\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n"
      "Allow: /a%2fb\nAllow: /sp ace\nAllow: /pct%zz\n");
  auto url = NormalizeUrl("http://h/foo/bar/%62%61%7A");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(UrlPathAndQuery(*url), "/foo/bar/baz");
  EXPECT_TRUE(r.IsAllowed("x", UrlPathAndQuery(*url)));
  EXPECT_TRUE(r.IsUrlAllowed("x", "http://h/foo/bar/%62%61%7A"));
  EXPECT_FALSE(r.IsUrlAllowed("x", "http://h/foo/bar/baz"));  // Google 66
  // Reserved escapes stay escapes (uppercase); other bytes as NormalizeUrl.
  EXPECT_TRUE(r.IsAllowed("x", "/a%2Fb"));
  EXPECT_FALSE(r.IsAllowed("x", "/a/b"));
  EXPECT_EQ(r.groups()[0].rules[3].normalized, "/sp%20ace");
  EXPECT_EQ(r.groups()[0].rules[4].normalized, "/pct%25zz");
  for (const char* raw : {"http://h/sp ace", "http://h/pct%zz"}) {
    auto u = NormalizeUrl(raw);
    ASSERT_TRUE(u.ok());
    EXPECT_TRUE(r.IsAllowed("x", UrlPathAndQuery(*u))) << *u;
  }
}

}  // namespace
}  // namespace freshd::parse
