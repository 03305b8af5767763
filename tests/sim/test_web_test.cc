// The simulated web over HTTP: answers as pure functions of (model, time),
// checked against the simulator's own page process and parsed back with
// freshd's HTML and sitemap parsers; then the real Beast server on loopback.

#include "sim/test_web.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "parse/feed.h"
#include "parse/html_extract.h"
#include "parse/sitemap.h"
#include "sim/test_web_server.h"

namespace freshd::sim {
namespace {

constexpr double kStart = 1.7e9;  // wall time of virtual time 0

WebModel SmallWeb(bool last_modified = true) {
  auto spec = ParseWebSpec(std::string(R"(
name = "small"
hosts = 3
pages_per_host = 20
[[class]]
name = "news"
share = 1.0
static_words = 30
last_modified = )") + (last_modified ? "true" : "false") +
                               R"(
[class.churn]
words = 10
rate = { dist = "uniform", min = 0.5, max = 2.0 }
[class.scroll]
items = 4
words_per_item = 5
rate = 1.0
[class.signals]
recall = 0.7
false_rate = 0.3
delay_days = 0.1
)",
                           "small.toml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return WebModel::Build(spec.value(), 7);
}

TestWeb MakeWeb() {
  TestWebOptions o;
  o.day_seconds = 10;  // 10 wall seconds per virtual day
  o.start_unix = kStart;
  return TestWeb(SmallWeb(), o);
}

std::string Header(const WebResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(TestWebTest, PagesFollowThePageProcessAndChangeOverTime) {
  TestWeb web = MakeWeb();
  const uint32_t page = 25;  // host 1
  int changed = 0;
  std::string previous_etag;
  for (int day = 0; day < 30; ++day) {
    double unix_now = kStart + day * 10.0;
    WebResponse r = web.Respond("h1.test:8080", "/p/25", "", unix_now);
    ASSERT_EQ(r.status, 200);
    Version v = VersionAt(web.model(), page, day * kDay);
    EXPECT_NE(r.body.find(PageText(web.model(), page, v)), std::string::npos);
    std::string etag = Header(r, "ETag");
    if (!previous_etag.empty() && etag != previous_etag) ++changed;
    previous_etag = etag;
    // Last-Modified is the wall time of the latest event, not later.
    PageTimeline tl = web.PageAt(page, day * kDay);
    if (tl.last_change >= 0) {
      EXPECT_EQ(Header(r, "Last-Modified"),
                HttpDate(web.UnixTime(tl.last_change)));
      EXPECT_LE(web.UnixTime(tl.last_change), unix_now);
    }
  }
  // Rate >= 1.5/day over 30 days: it changed on most days.
  EXPECT_GT(changed, 15);
  EXPECT_LT(changed, 30);
}

// As in the simulator, only a class with last_modified = true has servers
// that report the latest change; the others send no Last-Modified.
TEST(TestWebTest, LastModifiedOnlyWhereTheClassServesIt) {
  TestWebOptions o;
  o.day_seconds = 10;
  o.start_unix = kStart;
  TestWeb with(SmallWeb(true), o), without(SmallWeb(false), o);
  WebResponse a = with.Respond("h1.test", "/p/25", "", kStart + 100);
  WebResponse b = without.Respond("h1.test", "/p/25", "", kStart + 100);
  ASSERT_EQ(a.status, 200);
  ASSERT_EQ(b.status, 200);
  EXPECT_FALSE(Header(a, "Last-Modified").empty());
  EXPECT_EQ(Header(b, "Last-Modified"), "");
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(Header(a, "ETag"), Header(b, "ETag"));
}

TEST(TestWebTest, ConditionalGetAnswers304OnlyForTheCurrentEtag) {
  TestWeb web = MakeWeb();
  WebResponse r = web.Respond("h0.test", "/p/3", "", kStart + 50);
  std::string etag = Header(r, "ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(web.Respond("h0.test", "/p/3", etag, kStart + 50).status, 304);
  EXPECT_EQ(web.Respond("h0.test", "/p/3", "W/" + etag, kStart + 50).status,
            304);
  EXPECT_EQ(
      web.Respond("h0.test", "/p/3", "\"x\", " + etag, kStart + 50).status,
      304);
  EXPECT_EQ(web.Respond("h0.test", "/p/3", "\"v999-0\"", kStart + 50).status,
            200);
  // Much later the page has changed: the old validator gets the new body.
  WebResponse later = web.Respond("h0.test", "/p/3", etag, kStart + 500);
  EXPECT_EQ(later.status, 200);
  EXPECT_NE(Header(later, "ETag"), etag);
}

// With feeds on, every page links /feed.xml (html_extract finds it as a
// feed), and the feed lists the host's feed_entries most recently changed
// pages, newest first, each dated exactly by its latest true change; it
// answers 304 to its own ETag. With feeds off (the default) there is no
// feed and no feed link.
TEST(TestWebTest, FeedListsTheLatestChangesWithTrueDates) {
  TestWebOptions o;
  o.day_seconds = 10;
  o.start_unix = kStart;
  o.feeds = true;
  o.feed_entries = 5;
  TestWeb web(SmallWeb(), o);
  const double now = kStart + 100;  // virtual day 10
  WebResponse page = web.Respond("h1.test:8080", "/p/25", "", now);
  ASSERT_EQ(page.status, 200);
  auto links =
      parse::ExtractHtml(page.body, "text/html", "http://h1.test:8080/p/25");
  ASSERT_TRUE(links.ok());
  size_t feeds = 0;
  for (const auto& l : links->links) {
    if (l.kind == parse::LinkKind::kFeed) {
      ++feeds;
      EXPECT_EQ(l.url, "http://h1.test:8080/feed.xml");
    }
  }
  EXPECT_EQ(feeds, 1u);

  WebResponse f = web.Respond("h1.test:8080", "/feed.xml", "", now);
  ASSERT_EQ(f.status, 200);
  EXPECT_EQ(Header(f, "Content-Type"), "application/atom+xml");
  parse::FeedOptions fo;
  fo.feed_url = "http://h1.test:8080/feed.xml";
  auto feed = parse::ParseFeed(f.body, fo);
  ASSERT_TRUE(feed.ok()) << feed.status().ToString();
  ASSERT_TRUE(feed->status.ok());
  ASSERT_EQ(feed->entries.size(), 5u);
  // The truth: host 1's pages (20..39) by latest change, newest first.
  std::vector<std::pair<double, uint32_t>> truth;
  for (uint32_t p = 20; p < 40; ++p) {
    PageTimeline tl = web.PageAt(p, web.VirtualTime(now));
    if (tl.last_change >= 0) truth.emplace_back(tl.last_change, p);
  }
  std::sort(truth.rbegin(), truth.rend());
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(feed->entries[i].url,
              "http://h1.test:8080/p/" + std::to_string(truth[i].second));
    EXPECT_EQ(feed->entries[i].updated,
              static_cast<int64_t>(std::floor(web.UnixTime(truth[i].first))));
  }
  const std::string etag = Header(f, "ETag");
  EXPECT_EQ(web.Respond("h1.test:8080", "/feed.xml", etag, now).status, 304);
  EXPECT_EQ(web.Respond("h1.test:8080", "/feed.xml", etag, now + 200).status,
            200);  // 20 virtual days later the latest changes are others

  TestWeb plain = MakeWeb();
  EXPECT_EQ(plain.Respond("h1.test", "/feed.xml", "", now).status, 404);
  EXPECT_EQ(plain.Respond("h1.test", "/p/25", "", now).body.find("feed.xml"),
            std::string::npos);
}

TEST(TestWebTest, HostsOwnTheirPagesOnly) {
  TestWeb web = MakeWeb();
  EXPECT_EQ(web.Respond("h0.test", "/p/3", "", kStart).status, 200);
  EXPECT_EQ(web.Respond("h1.test", "/p/3", "", kStart).status, 404);
  EXPECT_EQ(web.Respond("h3.test", "/p/3", "", kStart).status, 404);
  EXPECT_EQ(web.Respond("example.com", "/", "", kStart).status, 404);
  EXPECT_EQ(web.Respond("h0.test", "/p/60", "", kStart).status, 404);
  EXPECT_EQ(web.Respond("h0.test", "/p/3x", "", kStart).status, 404);
  EXPECT_EQ(web.Respond("h0.test", "/p/", "", kStart).status, 404);
  EXPECT_EQ(web.HostId("h2.test:1234"), 2u);
  EXPECT_FALSE(web.HostId("h2.test.evil").has_value());
  EXPECT_FALSE(web.HostId("h.test").has_value());
}

TEST(TestWebTest, IndexAndPageLinksReachEveryPageOfTheHost) {
  TestWeb web = MakeWeb();
  WebResponse index = web.Respond("h2.test", "/", "", kStart);
  auto page = parse::ExtractHtml(index.body, "text/html", "http://h2.test/");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page.value().links.size(), 20u);
  WebResponse p = web.Respond("h2.test", "/p/59", "", kStart);
  auto links = parse::ExtractHtml(p.body, "text/html", "http://h2.test/p/59");
  ASSERT_TRUE(links.ok());
  std::vector<std::string> urls;
  for (const auto& l : links.value().links) urls.push_back(l.url);
  // The ring wraps within the host: 59 -> 40, 41.
  EXPECT_NE(std::find(urls.begin(), urls.end(), "http://h2.test/p/40"),
            urls.end());
  EXPECT_NE(std::find(urls.begin(), urls.end(), "http://h2.test/p/41"),
            urls.end());
}

TEST(TestWebTest, SitemapLastmodIsTheLatestSignalAndNeverInTheFuture) {
  TestWeb web = MakeWeb();
  double unix_now = kStart + 200;  // virtual day 20
  WebResponse r = web.Respond("h1.test:9", "/sitemap.xml", "", unix_now);
  ASSERT_EQ(r.status, 200);
  parse::SitemapOptions o;
  o.sitemap_url = "http://h1.test:9/sitemap.xml";
  auto parsed = parse::ParseSitemap(r.body, o);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed.value().status.ok());
  ASSERT_EQ(parsed.value().entries.size(), 20u);
  int with_lastmod = 0;
  for (const auto& e : parsed.value().entries) {
    uint32_t id =
        static_cast<uint32_t>(std::stoul(e.loc.substr(e.loc.rfind('/') + 1)));
    PageTimeline tl = web.PageAt(id, web.VirtualTime(unix_now));
    if (tl.last_signal < 0) {
      EXPECT_FALSE(e.lastmod.has_value()) << e.loc;
      continue;
    }
    ++with_lastmod;
    ASSERT_TRUE(e.lastmod.has_value()) << e.loc;
    EXPECT_EQ(*e.lastmod,
              static_cast<int64_t>(std::floor(web.UnixTime(tl.last_signal))));
    EXPECT_LE(*e.lastmod, unix_now);
  }
  // Recall 0.7 of ~2.5 changes/day plus 0.3 false signals/day, 20 days.
  EXPECT_EQ(with_lastmod, 20);
  WebResponse robots = web.Respond("h1.test:9", "/robots.txt", "", unix_now);
  EXPECT_NE(robots.body.find("Sitemap: http://h1.test:9/sitemap.xml"),
            std::string::npos);
}

TEST(TestWebTest, TruthReportsTheVersionServed) {
  TestWeb web = MakeWeb();
  double unix_now = kStart + 123;
  WebResponse page = web.Respond("h0.test", "/p/7", "", unix_now);
  WebResponse truth = web.Respond("anything", "/truth?page=7", "", unix_now);
  ASSERT_EQ(truth.status, 200);
  auto j = nlohmann::json::parse(truth.body);
  EXPECT_EQ(j["etag"], Header(page, "ETag"));
  EXPECT_EQ(j["host"], "h0.test");
  EXPECT_NEAR(j["virtual_days"].get<double>(), 12.3, 1e-9);
  EXPECT_EQ(web.Respond("x", "/truth?page=60", "", unix_now).status, 400);
  EXPECT_EQ(web.Respond("x", "/truth", "", unix_now).status, 400);
}

namespace asio = boost::asio;
namespace http = boost::beast::http;

TEST(TestWebServerTest, ServesKeepAliveRequestsOnLoopbackAndStops) {
  TestWebOptions o;
  o.day_seconds = 86400;  // real time: no change between the requests
  o.start_unix = std::chrono::duration<double>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  auto web = std::make_shared<const TestWeb>(SmallWeb(), o);
  auto server = TestWebServer::Start(web, "127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  uint16_t port = server.value()->port();

  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  boost::beast::flat_buffer buffer;
  std::string etag;
  for (int i = 0; i < 3; ++i) {  // one connection, three requests
    http::request<http::empty_body> req(http::verb::get, "/p/4", 11);
    req.set(http::field::host, "h0.test");
    if (i == 2) req.set(http::field::if_none_match, etag);
    http::write(socket, req);
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    if (i < 2) {
      EXPECT_EQ(res.result_int(), 200u);
      EXPECT_NE(res.body().find("<title>page 4</title>"), std::string::npos);
      etag = std::string(res[http::field::etag]);
    } else {
      EXPECT_EQ(res.result_int(), 304u);
      EXPECT_TRUE(res.body().empty());
    }
  }
  EXPECT_EQ(server.value()->requests(), 3u);
  server.value()->Stop();
  server.value()->Stop();  // idempotent
  asio::ip::tcp::socket again(io);
  boost::system::error_code ec;
  again.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  EXPECT_TRUE(ec) << "still accepting after Stop()";
}

TEST(TestWebServerTest, BadAddressAndBusyPortAreErrors) {
  auto web = std::make_shared<const TestWeb>(SmallWeb(), TestWebOptions{});
  EXPECT_EQ(TestWebServer::Start(web, "not-an-ip", 0).status().code(),
            Status::Code::kInvalidArgument);
  auto first = TestWebServer::Start(web, "127.0.0.1", 0);
  ASSERT_TRUE(first.ok());
  auto second = TestWebServer::Start(web, "127.0.0.1", first.value()->port());
  EXPECT_EQ(second.status().code(), Status::Code::kIOError);
}

}  // namespace
}  // namespace freshd::sim
