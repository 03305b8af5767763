// RobotsCache in virtual time: RFC 9309 §2.3.1 status handling, §2.4
// caching, back-off of unreachable robots.txt and the 30-day rule.

#include "fetch/robots_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(RobotsCacheTest, ExportImportRoundTripKeepsVerdicts) {
  PolitenessConfig cfg = Cfg();
  RobotsCache cache(cfg, "freshd");
  const std::string rules_origin = "https://rules.example";
  FetchResult ok = Result(OutcomeClass::kOk, 200,
                          "User-agent: freshd\nDisallow: /private\n"
                          "Crawl-delay: 3\nSitemap: /map.xml\n");
  ok.final_url = rules_origin + "/robots.txt";
  cache.Record(rules_origin, ok, 1000);
  cache.Record("http://gone.example", Result(OutcomeClass::kHttp4xx, 404),
               1000);
  cache.Record("http://down.example", Result(OutcomeClass::kHttp5xx, 503),
               1000);
  cache.Record("http://down.example", Result(OutcomeClass::kHttp5xx, 500),
               1100);
  // Was fetched fine, now unreachable: keeps obeying the old copy.
  cache.Record("http://flaky.example", ok, 900);
  cache.Record("http://flaky.example", Result(OutcomeClass::kTimeout, 0), 1000);

  std::vector<RobotsSnapshot> snap = cache.Export();
  ASSERT_EQ(snap.size(), 4u);
  EXPECT_EQ(snap[0].origin, "http://down.example");
  EXPECT_EQ(snap[0].mode, RobotsSnapshot::Mode::kDisallowAll);
  EXPECT_EQ(snap[0].failures, 2);
  EXPECT_EQ(snap[0].status, 500);
  EXPECT_EQ(snap[0].unreachable_since, 1000.0);
  EXPECT_EQ(snap[0].fetched_at, 1100.0);
  EXPECT_EQ(snap[3].origin, rules_origin);
  EXPECT_EQ(snap[3].body, ok.body);
  EXPECT_EQ(snap[3].expires, 1000 + cfg.robots_cache_s);

  ShiftTimes(&snap, 1.7e9);  // e.g. steady clock -> Unix seconds
  EXPECT_EQ(snap[0].unreachable_since, 1.7e9 + 1000);
  ShiftTimes(&snap, -1.7e9);
  RobotsCache restored(cfg, "freshd");
  restored.Import(snap);
  EXPECT_EQ(restored.Export(), snap);
  for (const std::string& origin :
       {rules_origin, std::string("http://gone.example"),
        std::string("http://down.example"), std::string("http://flaky.example"),
        std::string("http://new.example")}) {
    for (const char* path : {"/", "/private/x", "/public"}) {
      for (double now : {1000.0, 1200.0, 1000 + 86400.0 + 1}) {
        EXPECT_EQ(restored.Check(origin, path, now),
                  cache.Check(origin, path, now))
            << origin << path << " at " << now;
      }
    }
    EXPECT_EQ(restored.CrawlDelay(origin), cache.CrawlDelay(origin)) << origin;
    EXPECT_EQ(restored.Sitemaps(origin), cache.Sitemaps(origin)) << origin;
    EXPECT_EQ(restored.DisallowAllReason(origin),
              cache.DisallowAllReason(origin));
  }
  EXPECT_EQ(restored.Check(rules_origin, "/private/x", 1000), V::kDisallowed);
  EXPECT_EQ(restored.CrawlDelay(rules_origin), 3.0);
  EXPECT_EQ(restored.Sitemaps(rules_origin),
            std::vector<std::string>{rules_origin + "/map.xml"});
  // The 30-day clock of an unreachable robots.txt survives the restart.
  restored.Record("http://down.example", Result(OutcomeClass::kHttp5xx, 503),
                  1000 + kRobotsUnreachableAllowAfterS);
  EXPECT_EQ(restored.CheckCached("http://down.example", "/"), V::kAllowed);
}

TEST(RobotsCacheTest, ImportDistrustsInconsistentSnapshots) {
  RobotsCache cache(Cfg(), "freshd");
  RobotsSnapshot s;
  s.origin = "http://x.example";
  s.mode = RobotsSnapshot::Mode::kRules;  // but no rules: disallow, not crash
  s.has_rules = false;
  s.expires = 1e12;
  s.failures = -5;
  cache.Import({s});
  EXPECT_EQ(cache.Check("http://x.example", "/", 0), V::kDisallowed);
  EXPECT_EQ(cache.Export()[0].failures, 0);
}

}  // namespace
}  // namespace freshd::fetch
