// RobotsCache in virtual time: RFC 9309 §2.3.1 status handling, §2.4
// caching, back-off of unreachable robots.txt and the 30-day rule.

#include "fetch/robots_cache.h"

#include <gtest/gtest.h>

namespace freshd::fetch {
namespace {

using V = RobotsCache::Verdict;
constexpr const char* kOrigin = "http://example.com";

PolitenessConfig Cfg() {
  PolitenessConfig c;
  c.robots_cache_s = 86400;
  c.backoff_initial_s = 60;
  c.backoff_max_s = 3600;
  return c;
}

FetchResult Result(OutcomeClass c, int status, std::string body = "") {
  FetchResult r;
  r.outcome = c;
  r.status = status;
  r.body = std::move(body);
  r.final_url = std::string(kOrigin) + "/robots.txt";
  return r;
}

TEST(RobotsCacheTest, UnknownOriginNeedsAFetch) {
  RobotsCache cache(Cfg(), "freshd");
  EXPECT_EQ(cache.Check(kOrigin, "/", 0), V::kFetchRobots);
}

TEST(RobotsCacheTest, Rfc9309_2xxRulesAreObeyedAndCached) {
  RobotsCache cache(Cfg(), "freshd");
  cache.Record(kOrigin,
               Result(OutcomeClass::kOk, 200,
                      "User-agent: *\nDisallow: /x\nCrawl-delay: 5\n"
                      "Sitemap: http://example.com/sm.xml\n"),
               100);
  EXPECT_EQ(cache.Check(kOrigin, "/x/1", 100), V::kDisallowed);
  EXPECT_EQ(cache.Check(kOrigin, "/y", 100), V::kAllowed);
  EXPECT_EQ(cache.CrawlDelay(kOrigin), 5.0);
  ASSERT_EQ(cache.Sitemaps(kOrigin).size(), 1u);
  EXPECT_EQ(cache.Check(kOrigin, "/y", 100 + 86400), V::kFetchRobots);
  EXPECT_EQ(cache.CheckCached(kOrigin, "/x"), V::kDisallowed);
}

TEST(RobotsCacheTest, Rfc9309_4xxIsAllowAllBut429IsNot) {
  RobotsCache cache(Cfg(), "freshd");
  cache.Record(kOrigin, Result(OutcomeClass::kHttp4xx, 404), 0);
  EXPECT_EQ(cache.Check(kOrigin, "/anything", 1), V::kAllowed);
  RobotsCache busy(Cfg(), "freshd");
  busy.Record(kOrigin, Result(OutcomeClass::kHttp4xx, 429), 0);
  EXPECT_EQ(busy.Check(kOrigin, "/anything", 1), V::kDisallowed);
}

TEST(RobotsCacheTest, Rfc9309_UnreachableIsDisallowAllWithBackOff) {
  RobotsCache cache(Cfg(), "freshd");
  cache.Record(kOrigin, Result(OutcomeClass::kHttp5xx, 503), 0);
  EXPECT_EQ(cache.Check(kOrigin, "/", 59), V::kDisallowed);
  EXPECT_EQ(cache.Check(kOrigin, "/", 60), V::kFetchRobots);
  cache.Record(kOrigin, Result(OutcomeClass::kTimeout, 0), 60);
  EXPECT_EQ(cache.Check(kOrigin, "/", 60 + 119), V::kDisallowed);
  EXPECT_EQ(cache.Check(kOrigin, "/", 60 + 120), V::kFetchRobots);
}

TEST(RobotsCacheTest, Rfc9309_UnreachableKeepsAnEarlierCopy) {
  RobotsCache cache(Cfg(), "freshd");
  cache.Record(kOrigin,
               Result(OutcomeClass::kOk, 200, "User-agent: *\nDisallow: /x\n"),
               0);
  cache.Record(kOrigin, Result(OutcomeClass::kNetwork, 0), 90000);
  EXPECT_EQ(cache.Check(kOrigin, "/y", 90001), V::kAllowed);
  EXPECT_EQ(cache.Check(kOrigin, "/x", 90001), V::kDisallowed);
}

TEST(RobotsCacheTest, Rfc9309_UnreachableFor30DaysBecomesAllowAll) {
  RobotsCache cache(Cfg(), "freshd");
  double t = 0;
  while (t < 30 * 86400.0) {
    cache.Record(kOrigin, Result(OutcomeClass::kHttp5xx, 500), t);
    EXPECT_EQ(cache.Check(kOrigin, "/", t), V::kDisallowed) << t;
    t += 3600;
  }
  cache.Record(kOrigin, Result(OutcomeClass::kHttp5xx, 500), t);
  EXPECT_EQ(cache.Check(kOrigin, "/", t), V::kAllowed);
  // Success afterwards resets the clock.
  cache.Record(kOrigin,
               Result(OutcomeClass::kOk, 200, "User-agent: *\nDisallow: /\n"),
               t);
  cache.Record(kOrigin, Result(OutcomeClass::kHttp5xx, 500), t + 1);
  EXPECT_EQ(cache.Check(kOrigin, "/", t + 2), V::kDisallowed);
}

TEST(RobotsCacheTest, BlockedOriginIsNotCachedAndPruneDropsExpired) {
  RobotsCache cache(Cfg(), "freshd");
  cache.Record(kOrigin, Result(OutcomeClass::kBlockedAddress, 0), 0);
  EXPECT_EQ(cache.size(), 0u);
  cache.Record(kOrigin, Result(OutcomeClass::kHttp4xx, 404), 0);
  EXPECT_EQ(cache.PruneExpired(10), 0u);
  EXPECT_EQ(cache.PruneExpired(86401), 1u);
}

}  // namespace
}  // namespace freshd::fetch
