// Crawler against real servers on 127.0.0.1: robots.txt first and its RFC
// 9309 status rules, per-host spacing measured at the server, Retry-After
// and back-off, redirects (loops, limits, schemes) and the SSRF guard on a
// redirect to loopback.

#include "fetch/crawler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <thread>

#include "parse/url.h"
#include "tests/fetch/fetch_helpers.h"
#include "tests/fetch/test_server.h"

namespace freshd::fetch {
namespace {

using testing::FastFetchConfig;
using testing::Reply;
using testing::ServerRequest;
using testing::TestServer;
using Seconds = std::chrono::duration<double>;

CrawlerOptions Opts(double min_delay = 0.0) {
  CrawlerOptions o;
  o.fetcher.config = FastFetchConfig();
  o.fetcher.user_agent = "freshd-test/1.0";
  o.product_token = "freshd-test";
  o.politeness.min_delay_s = min_delay;
  o.politeness.backoff_initial_s = 0.1;
  o.politeness.backoff_max_s = 1.0;
  o.politeness.robots_cache_s = 3600;
  return o;
}

// Fetches all `urls` (handed in at once) and returns results by URL.
std::map<std::string, FetchResult> CrawlAll(
    const CrawlerOptions& o, const std::vector<std::string>& urls,
    std::vector<std::string>* sitemaps = nullptr) {
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, o);
  std::map<std::string, FetchResult> out;
  EXPECT_TRUE(crawler.ok()) << crawler.status().ToString();
  if (!crawler.ok()) return out;
  if (sitemaps != nullptr) {
    (*crawler)->set_sitemap_handler(
        [sitemaps](const std::string&, const std::vector<std::string>& maps) {
          sitemaps->insert(sitemaps->end(), maps.begin(), maps.end());
        });
  }
  for (const std::string& u : urls) {
    CrawlRequest req;
    req.url = u;
    (*crawler)->Fetch(req, [&out, u](FetchResult r) { out[u] = std::move(r); });
  }
  io.run();
  return out;
}

Reply RobotsReply(const std::string& body) {
  Reply r = Reply::Status(200, body);
  return r;
}

TEST(CrawlerTest, Rfc9309_RobotsTxtIsFetchedFirstAndCached) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") {
      return RobotsReply(
          "User-agent: *\nDisallow: /private\nSitemap: /sitemap.xml\n");
    }
    return Reply::Html("page " + req.target);
  });
  std::vector<std::string> sitemaps;
  auto res = CrawlAll(
      Opts(), {server.Url("/a"), server.Url("/b"), server.Url("/private/x")},
      &sitemaps);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].target, "/robots.txt");
  EXPECT_EQ(reqs[0].Header("user-agent"), "freshd-test/1.0");
  EXPECT_EQ(server.CountTarget("/robots.txt"), 1u);
  EXPECT_EQ(server.CountTarget("/private/x"), 0u);  // never contacted
  EXPECT_EQ(res[server.Url("/a")].outcome, OutcomeClass::kOk);
  EXPECT_EQ(res[server.Url("/a")].body, "page /a");
  EXPECT_EQ(res[server.Url("/private/x")].outcome, OutcomeClass::kRobotsDenied);
  ASSERT_EQ(sitemaps.size(), 1u);
  EXPECT_EQ(sitemaps[0], server.Url("/sitemap.xml"));
}

// RefreshRobots re-reads robots.txt (and reports its sitemaps again) once
// the cached copy has expired, with no URL handed in; not while it is
// fresh, and once however often it is asked while that fetch is on its way.
TEST(CrawlerTest, RefreshRobotsRereadsAnExpiredCopyOnce) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") {
      return RobotsReply("User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n");
    }
    return Reply::Html("page " + req.target);
  });
  CrawlerOptions o = Opts();
  o.politeness.robots_cache_s = 0.3;
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, o);
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  int reports = 0;
  (*crawler)->set_sitemap_handler(
      [&](const std::string&, const std::vector<std::string>&) { ++reports; });
  CrawlRequest req;
  req.url = server.Url("/a");
  FetchResult first;
  (*crawler)->Fetch(req, [&](FetchResult r) { first = std::move(r); });
  io.run();
  ASSERT_EQ(first.outcome, OutcomeClass::kOk);
  ASSERT_EQ(server.CountTarget("/robots.txt"), 1u);
  const std::string origin = parse::UrlOrigin(server.Url("/a"));

  (*crawler)->RefreshRobots(origin);  // fresh: nothing to do
  io.restart();
  io.run();
  EXPECT_EQ(server.CountTarget("/robots.txt"), 1u);

  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // expired
  for (int i = 0; i < 3; ++i) (*crawler)->RefreshRobots(origin);
  io.restart();
  io.run();
  EXPECT_EQ(server.CountTarget("/robots.txt"), 2u);
  EXPECT_EQ(server.CountTarget("/a"), 1u);  // no page fetched with it
  EXPECT_EQ(reports, 2);
}

TEST(CrawlerTest, Rfc9309_ProductTokenGroupWins) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") {
      return RobotsReply(
          "User-agent: *\nAllow: /\n\nUser-agent: freshd-test\nDisallow: /\n");
    }
    return Reply::Html("x");
  });
  auto res = CrawlAll(Opts(), {server.Url("/page")});
  EXPECT_EQ(res[server.Url("/page")].outcome, OutcomeClass::kRobotsDenied);
  CrawlerOptions other = Opts();
  other.product_token = "otherbot";
  res = CrawlAll(other, {server.Url("/page")});
  EXPECT_EQ(res[server.Url("/page")].outcome, OutcomeClass::kOk);
}

TEST(CrawlerTest, Rfc9309_Robots4xxMeansAllowAll) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Html("x");
  });
  auto res = CrawlAll(Opts(), {server.Url("/anything")});
  EXPECT_EQ(res[server.Url("/anything")].outcome, OutcomeClass::kOk);
}

TEST(CrawlerTest, Rfc9309_Robots5xxAnd429MeanDisallowAll) {
  for (int status : {500, 503, 429}) {
    TestServer server([status](const ServerRequest& req) {
      if (req.target == "/robots.txt") return Reply::Status(status);
      return Reply::Html("x");
    });
    auto res = CrawlAll(Opts(), {server.Url("/p")});
    EXPECT_EQ(res[server.Url("/p")].outcome, OutcomeClass::kRobotsDenied)
        << status;
    EXPECT_EQ(server.CountTarget("/p"), 0u) << status;
  }
}

TEST(CrawlerTest, Rfc9309_UnreachableRobotsIsRetriedAfterBackOff) {
  int robots_calls = 0;
  TestServer server([&](const ServerRequest& req) {
    if (req.target == "/robots.txt") {
      return ++robots_calls == 1 ? Reply::Status(503) : Reply::Status(404);
    }
    return Reply::Html("x");
  });
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, Opts());
  ASSERT_TRUE(crawler.ok());
  std::vector<OutcomeClass> got;
  CrawlRequest req;
  req.url = server.Url("/p");
  (*crawler)->Fetch(req, [&](FetchResult r) { got.push_back(r.outcome); });
  io.run();
  (*crawler)->Fetch(req, [&](FetchResult r) { got.push_back(r.outcome); });
  io.restart();
  io.run();  // still within back-off: the cached "disallow all" answers
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  (*crawler)->Fetch(req, [&](FetchResult r) { got.push_back(r.outcome); });
  io.restart();
  io.run();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], OutcomeClass::kRobotsDenied);
  EXPECT_EQ(got[1], OutcomeClass::kRobotsDenied);
  EXPECT_EQ(got[2], OutcomeClass::kOk);
  EXPECT_EQ(server.CountTarget("/robots.txt"), 2u);
}

TEST(CrawlerTest, Rfc9309_RobotsRedirectsAreFollowedUpToFive) {
  TestServer server([](const ServerRequest& req) {
    const std::string& t = req.target;
    if (t == "/robots.txt") return Reply::Redirect(301, "/r1");
    if (t == "/r1") return Reply::Redirect(302, "/real-robots");
    if (t == "/real-robots")
      return RobotsReply("User-agent: *\nDisallow: /no\n");
    if (t.rfind("/loop/robots.txt", 0) == 0) return Reply::Html("");
    return Reply::Html("x");
  });
  auto res = CrawlAll(Opts(), {server.Url("/no"), server.Url("/yes")});
  EXPECT_EQ(res[server.Url("/no")].outcome, OutcomeClass::kRobotsDenied);
  EXPECT_EQ(res[server.Url("/yes")].outcome, OutcomeClass::kOk);

  // An endless robots.txt redirect chain counts as "unavailable": allow.
  TestServer loop([](const ServerRequest& req) {
    if (req.target.rfind("/robots", 0) == 0) {
      return Reply::Redirect(301, req.target + "x");
    }
    return Reply::Html("x");
  });
  res = CrawlAll(Opts(), {loop.Url("/page")});
  EXPECT_EQ(res[loop.Url("/page")].outcome, OutcomeClass::kOk);
  EXPECT_EQ(loop.request_count(), 1u + 5u + 1u);  // robots + 5 hops + page
}

TEST(CrawlerTest, PerHostSpacingMeasuredAtTheServer) {
  TestServer a([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Html("a");
  });
  TestServer b([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Html("b");
  });
  const double delay = 0.15;
  std::vector<std::string> urls;
  for (int i = 0; i < 4; ++i) {
    urls.push_back(a.Url("/" + std::to_string(i)));
    urls.push_back(b.Url("/" + std::to_string(i)));
  }
  auto start = std::chrono::steady_clock::now();
  auto res = CrawlAll(Opts(delay), urls);
  double took = Seconds(std::chrono::steady_clock::now() - start).count();
  for (const auto& u : urls) EXPECT_EQ(res[u].outcome, OutcomeClass::kOk) << u;
  for (TestServer* s : {&a, &b}) {
    auto reqs = s->requests();
    ASSERT_EQ(reqs.size(), 5u);  // robots + 4
    for (size_t i = 1; i < reqs.size(); ++i) {
      double gap = Seconds(reqs[i].arrival - reqs[i - 1].arrival).count();
      EXPECT_GE(gap, delay) << "request " << i;
    }
  }
  // Hosts are independent: both run in parallel, not one after the other.
  EXPECT_LT(took, 2 * 4 * delay);
}

// Two names on one IP ([fetch] resolve maps both to 127.0.0.1, one server):
// with per_ip the server sees them spaced as one host; without, the two
// names are independent and their requests overlap in time.
std::vector<double> GapsForTwoNamesOnOneIp(bool per_ip, double delay,
                                           size_t* requests) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    Reply r = Reply::Html("x");
    r.delay = std::chrono::milliseconds(20);  // overlap shows if allowed
    return r;
  });
  CrawlerOptions o = Opts(delay);
  o.politeness.per_ip = per_ip;
  o.fetcher.config.resolve["a.test"] = "127.0.0.1";
  o.fetcher.config.resolve["b.test"] = "127.0.0.1";
  std::vector<std::string> urls;
  std::string port = std::to_string(server.port());
  for (int i = 0; i < 3; ++i) {
    urls.push_back("http://a.test:" + port + "/" + std::to_string(i));
    urls.push_back("http://b.test:" + port + "/" + std::to_string(i));
  }
  auto res = CrawlAll(o, urls);
  for (const auto& u : urls) {
    EXPECT_EQ(res[u].outcome, OutcomeClass::kOk) << u << res[u].detail;
  }
  auto reqs = server.requests();
  *requests = reqs.size();
  std::vector<double> gaps;
  for (size_t i = 1; i < reqs.size(); ++i) {
    gaps.push_back(Seconds(reqs[i].arrival - reqs[i - 1].arrival).count());
  }
  return gaps;
}

TEST(CrawlerTest, PerIpSpacingAppliesAcrossHostNames) {
  const double delay = 0.1;
  size_t n = 0;
  std::vector<double> gaps = GapsForTwoNamesOnOneIp(true, delay, &n);
  EXPECT_EQ(n, 8u);  // 2 robots.txt + 6 pages
  for (size_t i = 0; i < gaps.size(); ++i) {
    // Spacing runs from the end of the previous request (20 ms each).
    EXPECT_GE(gaps[i], delay) << "gap " << i;
  }
  // Control: per host only, a.test and b.test go side by side.
  std::vector<double> free_gaps = GapsForTwoNamesOnOneIp(false, delay, &n);
  EXPECT_EQ(n, 8u);
  ASSERT_FALSE(free_gaps.empty());
  EXPECT_LT(*std::min_element(free_gaps.begin(), free_gaps.end()), delay / 2);
}

TEST(CrawlerTest, PerIpLooksUpAddressesThroughDns) {
  // "localhost" is not in [fetch] resolve: the Crawler resolves it itself
  // (asynchronously) before the first request and gives the gate the IP.
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Html("x");
  });
  CrawlerOptions o = Opts(0.01);
  o.politeness.per_ip = true;
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, o);
  ASSERT_TRUE(crawler.ok());
  std::string host = "localhost:" + std::to_string(server.port());
  FetchResult got;
  CrawlRequest req;
  req.url = "http://" + host + "/";
  (*crawler)->Fetch(req, [&](FetchResult r) { got = std::move(r); });
  io.run();
  // curl may try ::1 first and fall back; the server is on 127.0.0.1.
  EXPECT_EQ(got.outcome, OutcomeClass::kOk) << got.detail;
  std::string ip = (*crawler)->gate().Address(host);
  EXPECT_TRUE(ip == "127.0.0.1" || ip == "::1") << ip;
}

TEST(CrawlerTest, CrawlDelayFromRobotsSpacesRequests) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") {
      return RobotsReply("User-agent: *\nCrawl-delay: 0.3\n");
    }
    return Reply::Html("x");
  });
  auto res = CrawlAll(Opts(0.01),
                      {server.Url("/1"), server.Url("/2"), server.Url("/3")});
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  for (size_t i = 2; i < reqs.size(); ++i) {
    EXPECT_GE(Seconds(reqs[i].arrival - reqs[i - 1].arrival).count(), 0.3);
  }
}

TEST(CrawlerTest, RetryAfterIsHonouredAtTheServer) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    if (req.target == "/busy") {
      Reply r = Reply::Status(429);
      r.headers.emplace_back("Retry-After", "1");
      return r;
    }
    return Reply::Html("x");
  });
  auto res = CrawlAll(Opts(0.01), {server.Url("/busy"), server.Url("/next")});
  EXPECT_EQ(res[server.Url("/busy")].outcome, OutcomeClass::kHttp4xx);
  EXPECT_EQ(res[server.Url("/busy")].status, 429);
  EXPECT_EQ(res[server.Url("/next")].outcome, OutcomeClass::kOk);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_GE(Seconds(reqs[2].arrival - reqs[1].arrival).count(), 1.0);
}

TEST(CrawlerTest, A503StormBacksOffExponentially) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Status(503);
  });
  std::vector<std::string> urls;
  for (int i = 0; i < 4; ++i)
    urls.push_back(server.Url("/s" + std::to_string(i)));
  auto res = CrawlAll(Opts(0.01), urls);
  for (const auto& u : urls) EXPECT_EQ(res[u].outcome, OutcomeClass::kHttp5xx);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 5u);
  // Back-off 0.1, 0.2, 0.4 s after the 1st, 2nd, 3rd error.
  for (size_t i = 2; i < reqs.size(); ++i) {
    double want = 0.1 * (1 << (i - 2));
    EXPECT_GE(Seconds(reqs[i].arrival - reqs[i - 1].arrival).count(), want)
        << "gap " << i;
  }
}

TEST(CrawlerTest, RedirectsAreFollowedThroughTheGate) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    if (req.target == "/a") return Reply::Redirect(301, "/b");
    if (req.target == "/b") return Reply::Redirect(302, "/c");
    if (req.target == "/x") return Reply::Redirect(301, "/y");
    if (req.target == "/y") return Reply::Redirect(301, "/x");
    if (req.target == "/ftp")
      return Reply::Redirect(301, "ftp://example.com/f");
    if (req.target.rfind("/chain", 0) == 0) {
      return Reply::Redirect(301, req.target + "0");
    }
    return Reply::Html("end " + req.target);
  });
  CrawlerOptions o = Opts();
  o.fetcher.config.max_redirects = 3;
  auto res = CrawlAll(o, {server.Url("/a"), server.Url("/x"),
                          server.Url("/ftp"), server.Url("/chain")});
  FetchResult& a = res[server.Url("/a")];
  EXPECT_EQ(a.outcome, OutcomeClass::kOk);
  EXPECT_EQ(a.redirects, 2);
  EXPECT_EQ(a.final_url, server.Url("/c"));
  EXPECT_EQ(a.body, "end /c");
  EXPECT_EQ(res[server.Url("/x")].outcome, OutcomeClass::kRedirectLoop);
  EXPECT_EQ(res[server.Url("/ftp")].outcome, OutcomeClass::kBadRedirect);
  EXPECT_EQ(res[server.Url("/chain")].outcome, OutcomeClass::kRedirectLoop);
  EXPECT_EQ(server.CountTarget("/chain000"), 1u);  // 3 hops followed
  EXPECT_EQ(server.CountTarget("/chain0000"), 0u);
}

// For WARC output: with keep_raw, each redirect response followed is kept
// (URL, request head, response head, body) in order; robots.txt fetches go
// to the archive handler with their raw exchange.
TEST(CrawlerTest, KeepRawKeepsRedirectHopsAndRobotsGoToTheArchiveHandler) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt")
      return Reply::Status(200, "User-agent: *\n");
    if (req.target == "/a") return Reply::Redirect(301, "/b");
    if (req.target == "/b") return Reply::Redirect(302, "/c");
    return Reply::Html("end " + req.target);
  });
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, Opts());
  ASSERT_TRUE(crawler.ok());
  std::vector<FetchResult> archived;
  (*crawler)->set_archive_handler(
      [&](FetchResult r) { archived.push_back(std::move(r)); });
  FetchResult a, plain;
  CrawlRequest req;
  req.url = server.Url("/a");
  req.keep_raw = true;
  (*crawler)->Fetch(req, [&](FetchResult r) { a = std::move(r); });
  req.keep_raw = false;
  (*crawler)->Fetch(req, [&](FetchResult r) { plain = std::move(r); });
  io.run();
  ASSERT_EQ(a.outcome, OutcomeClass::kOk) << a.detail;
  EXPECT_EQ(a.raw_headers.rfind("HTTP/1.1 200", 0), 0u) << a.raw_headers;
  ASSERT_EQ(a.redirect_hops.size(), 2u);
  EXPECT_EQ(a.redirect_hops[0].url, server.Url("/a"));
  EXPECT_EQ(a.redirect_hops[1].url, server.Url("/b"));
  EXPECT_EQ(a.redirect_hops[0].raw_headers.rfind("HTTP/1.1 301", 0), 0u);
  EXPECT_EQ(a.redirect_hops[1].raw_headers.rfind("HTTP/1.1 302", 0), 0u);
  EXPECT_EQ(a.redirect_hops[0].raw_request.rfind("GET /a HTTP/1.1\r\n", 0), 0u);
  EXPECT_EQ(a.redirect_hops[1].remote_ip, "127.0.0.1");
  EXPECT_TRUE(plain.redirect_hops.empty());
  ASSERT_EQ(archived.size(), 1u);  // robots.txt, fetched once
  EXPECT_EQ(archived[0].url, server.Url("/robots.txt"));
  EXPECT_EQ(archived[0].final_url, server.Url("/robots.txt"));
  EXPECT_EQ(archived[0].raw_body, "User-agent: *\n");
  EXPECT_EQ(archived[0].raw_request.rfind("GET /robots.txt HTTP/1.1\r\n", 0),
            0u);
}

TEST(CrawlerTest, SsrfRedirectToLoopbackIsRefused) {
  // The first server is reachable only through an exact ip:port exemption;
  // private networks stay refused, so its redirect to another loopback
  // endpoint must be blocked at connect time, before any byte is sent.
  TestServer inner([](const ServerRequest&) { return Reply::Html("secret"); });
  TestServer outer([&](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Redirect(302, inner.Url("/admin"));
  });
  CrawlerOptions o = Opts();
  o.fetcher.config.allow_private_networks = false;
  o.fetcher.exempt_endpoints = {outer.endpoint()};
  auto res = CrawlAll(o, {outer.Url("/go")});
  FetchResult& r = res[outer.Url("/go")];
  EXPECT_EQ(r.outcome, OutcomeClass::kBlockedAddress) << r.detail;
  EXPECT_EQ(r.redirects, 1);
  EXPECT_EQ(inner.request_count(), 0u);
  EXPECT_EQ(outer.CountTarget("/go"), 1u);
}

TEST(CrawlerTest, BadUrlAndConditionalGet) {
  TestServer server([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    if (req.Header("if-none-match") == "\"e\"") return Reply::Status(304);
    return Reply::Html("x");
  });
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, Opts());
  ASSERT_TRUE(crawler.ok());
  std::vector<FetchResult> got;
  CrawlRequest bad;
  bad.url = "not a url";
  CrawlRequest cond;
  cond.url = server.Url("/c");
  cond.etag = "\"e\"";
  (*crawler)->Fetch(bad, [&](FetchResult r) { got.push_back(r); });
  (*crawler)->Fetch(cond, [&](FetchResult r) { got.push_back(r); });
  EXPECT_EQ((*crawler)->pending(), 2u);
  io.run();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].outcome, OutcomeClass::kBadUrl);
  EXPECT_EQ(got[1].outcome, OutcomeClass::kNotModified);
  EXPECT_EQ((*crawler)->pending(), 0u);
}

}  // namespace
}  // namespace freshd::fetch
