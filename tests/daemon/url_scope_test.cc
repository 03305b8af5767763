// UrlScope: the crawl's admission rule ([crawler] scope, include, exclude).
// Regexes are RE2: the catastrophic-backtracking pattern of issue #26,
// "(a+)+$", against a URL crafted to make a backtracking engine take
// exponential time, is decided within a fixed time bound.

#include "daemon/url_scope.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace freshd::daemon {
namespace {

CrawlerConfig Crawler(std::string scope, std::vector<std::string> include = {},
                      std::vector<std::string> exclude = {}) {
  CrawlerConfig c;
  c.scope = std::move(scope);
  c.include = std::move(include);
  c.exclude = std::move(exclude);
  return c;
}

TEST(UrlScopeTest, SeedHostsAdmitsOnlySeedAuthorities) {
  auto scope = UrlScope::Create(Crawler("seed-hosts"));
  ASSERT_TRUE(scope.ok()) << scope.status().ToString();
  EXPECT_FALSE(scope->Contains("http://a.example/x"));
  scope->Add("http://a.example/");
  EXPECT_TRUE(scope->Contains("http://a.example/x"));
  EXPECT_FALSE(scope->Contains("http://b.a.example/x"));
  EXPECT_FALSE(scope->Contains("http://a.example:8080/x"));  // authority
}

TEST(UrlScopeTest, SeedDomainsAdmitsTheRegistrableDomain) {
  auto scope = UrlScope::Create(Crawler("seed-domains"));
  ASSERT_TRUE(scope.ok()) << scope.status().ToString();
  scope->Add("https://news.bbc.co.uk/");
  EXPECT_TRUE(scope->Contains("https://www.bbc.co.uk/a"));
  EXPECT_FALSE(scope->Contains("https://other.co.uk/a"));  // not all co.uk
}

TEST(UrlScopeTest, AnyAdmitsEveryHost) {
  auto scope = UrlScope::Create(Crawler("any"));
  ASSERT_TRUE(scope.ok());
  EXPECT_TRUE(scope->Contains("http://never.seen/"));
}

TEST(UrlScopeTest, IncludeIsASearchAndExcludeWins) {
  auto scope =
      UrlScope::Create(Crawler("any", {"/news/", "^https://"}, {"\\.pdf$"}));
  ASSERT_TRUE(scope.ok());
  EXPECT_TRUE(scope->Contains("http://h/news/1"));  // search, not full match
  EXPECT_TRUE(scope->Contains("https://h/other"));  // second include
  EXPECT_FALSE(scope->Contains("http://h/other"));  // no include matched
  EXPECT_FALSE(scope->Contains("http://h/news/a.pdf"));  // excluded
}

TEST(UrlScopeTest, PatternRe2CannotCompileIsAnError) {
  // Backreferences and lookahead are ECMAScript, not RE2.
  for (const char* bad : {"(a)\\1", "a(?=b)", "a**", "("}) {
    auto scope = UrlScope::Create(Crawler("any", {bad}));
    ASSERT_FALSE(scope.ok()) << bad;
    EXPECT_NE(scope.status().message().find(bad), std::string::npos)
        << scope.status().message();
  }
}

TEST(UrlScopeTest, CatastrophicPatternIsDecidedInBoundedTime) {
  // std::regex needs about 2^n steps for "(a+)+$" on n 'a's followed by a
  // non-matching byte; n = 40 would not finish in a day. 8,000 such URLs
  // (each near the 8 KiB URL limit) through RE2 take well under a second.
  auto scope = UrlScope::Create(Crawler("any", {"(a+)+$"}, {"(x+x+)+y"}));
  ASSERT_TRUE(scope.ok()) << scope.status().ToString();
  const std::string url = "http://h/" + std::string(8000, 'a') + "!";
  const std::string url_x = "http://h/" + std::string(8000, 'x');
  const auto start = std::chrono::steady_clock::now();
  int admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    admitted += scope->Contains(url) ? 1 : 0;
    admitted += scope->Contains(url_x) ? 1 : 0;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(admitted, 0);  // '!' ends the first, no 'y' in the second
  EXPECT_TRUE(scope->Contains("http://h/aaaa"));
  EXPECT_LT(seconds, 5.0) << "2,000 matches of 8 KB URLs took " << seconds;
  std::printf("2,000 catastrophic-pattern matches on 8 KB URLs: %.3f s\n",
              seconds);
}

}  // namespace
}  // namespace freshd::daemon
