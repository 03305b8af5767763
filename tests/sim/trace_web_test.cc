// sim/trace_web: a change history served in compressed time (sim/trace_web.h):
// which content at which time, create and delete, pagination that reaches
// every page, large sitemaps.

#include "sim/trace_web.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "sim/trace.h"

namespace freshd::sim {
namespace {

constexpr double kDay = 86400;
constexpr double kT0 = 1'700'000'000;  // the trace's first event
constexpr double kStart = 1000;        // wall time of t0
constexpr double kDaySeconds = 10;     // a trace day lasts 10 wall seconds

Trace Parse(const std::string& text) {
  Result<Trace> t = ParseTraceText(text, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Trace{};
}

// Wall time at which the trace reaches t0 + `days`.
double WallAt(double days) { return kStart + days * kDaySeconds; }

std::string T(double days) {
  return std::to_string(static_cast<int64_t>(kT0 + days * kDay));
}

TraceWeb MakeWeb(const std::string& csv, uint32_t index_links = 1000) {
  TraceWebOptions o;
  o.day_seconds = kDaySeconds;
  o.start_unix = kStart;
  o.index_links = index_links;
  return TraceWeb(Parse(csv), o);
}

std::string Header(const WebResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(TraceWebTest, ContentChangesExactlyAtTheTracesChangeTimes) {
  TraceWeb web = MakeWeb(
      "url,time\n"
      "https://docs.example/a.html," +
      T(0) + "\n" + "https://docs.example/a.html," + T(2) + "\n" +
      "https://docs.example/a.html," + T(2.5) + "\n" +
      "https://docs.example/b.html,\n");
  EXPECT_EQ(web.options().t0, kT0);
  EXPECT_DOUBLE_EQ(web.TraceTime(WallAt(2)), kT0 + 2 * kDay);
  EXPECT_DOUBLE_EQ(web.UnixTime(kT0 + 3 * kDay), WallAt(3));
  auto body = [&](double days) {
    return web.Respond("docs.example:8080", "/a.html", "", WallAt(days)).body;
  };
  // The change at t0 is in the first copy; the next one at day 2 exactly.
  std::string v1 = body(0);
  EXPECT_NE(v1.find("version 1"), std::string::npos) << v1;
  EXPECT_EQ(body(1.999), v1);
  std::string v2 = body(2.0001);
  EXPECT_NE(v2, v1);
  EXPECT_EQ(body(2.49), v2);
  EXPECT_NE(body(2.51), v2);
  EXPECT_EQ(body(400), body(2.51));  // no change after the last
  // The page that never changes: one content throughout.
  EXPECT_EQ(web.Respond("docs.example", "/b.html", "", WallAt(0)).body,
            web.Respond("docs.example", "/b.html", "", WallAt(100)).body);

  // ETag names the version: 304 for the current one, 200 once it changed;
  // Last-Modified is the latest change, in wall time.
  WebResponse r = web.Respond("docs.example", "/a.html", "", WallAt(2.1));
  std::string etag = Header(r, "ETag");
  EXPECT_EQ(Header(r, "Last-Modified"), HttpDate(WallAt(2)));
  EXPECT_EQ(web.Respond("docs.example", "/a.html", etag, WallAt(2.2)).status,
            304);
  EXPECT_EQ(web.Respond("docs.example", "/a.html", etag, WallAt(2.6)).status,
            200);
  EXPECT_EQ(
      web.PageAt(*web.FindPage("docs.example", "/a.html"), kT0 + 2.5 * kDay)
          .version,
      3u);
}

TEST(TraceWebTest, CreatedPagesAppearAndDeletedPagesGo) {
  TraceWeb web = MakeWeb(
      "url,time,event\n"
      "https://docs.example/old.html," +
      T(0) + ",change\n" + "https://docs.example/new.html," + T(3) +
      ",create\n" + "https://docs.example/new.html," + T(4) + ",change\n" +
      "https://docs.example/gone.html,,\n" + "https://docs.example/gone.html," +
      T(5) + ",delete\n");
  auto status = [&](const char* path, double days) {
    return web.Respond("docs.example", path, "", WallAt(days)).status;
  };
  auto listed = [&](const char* where, const char* path, double days) {
    std::string body =
        web.Respond("docs.example", where, "", WallAt(days)).body;
    return body.find(path) != std::string::npos;
  };
  EXPECT_EQ(status("/new.html", 2.9), 404);
  EXPECT_FALSE(listed("/", "/new.html", 2.9));
  EXPECT_FALSE(listed("/sitemap.xml", "/new.html", 2.9));
  EXPECT_EQ(status("/new.html", 3.01), 200);
  EXPECT_TRUE(listed("/", "\"/new.html\"", 3.01));
  EXPECT_TRUE(
      listed("/sitemap.xml", "<loc>http://docs.example/new.html</loc>", 3.01));
  // Created with version 0, changed at day 4.
  EXPECT_NE(web.Respond("docs.example", "/new.html", "", WallAt(3.5)).body,
            web.Respond("docs.example", "/new.html", "", WallAt(4.5)).body);

  EXPECT_EQ(status("/gone.html", 4.99), 200);
  EXPECT_TRUE(listed("/", "/gone.html", 4.99));
  EXPECT_EQ(status("/gone.html", 5.01), 410);
  EXPECT_FALSE(listed("/", "/gone.html", 5.01));
  EXPECT_FALSE(listed("/sitemap.xml", "/gone.html", 5.01));

  EXPECT_EQ(status("/never.html", 1), 404);
  EXPECT_EQ(web.Respond("other.example", "/old.html", "", WallAt(1)).status,
            404);
  EXPECT_NE(web.Respond("docs.example:1", "/robots.txt", "", WallAt(1))
                .body.find("Sitemap: http://docs.example:1/sitemap.xml"),
            std::string::npos);
}

// Every page of a host with 2,345 pages is reachable from "/" by following
// index links, 100 to an index page; the hosts are told apart.
TEST(TraceWebTest, PaginatedIndexReachesEveryPage) {
  std::string csv = "url,time\n";
  for (int i = 0; i < 2345; ++i) {
    csv += "https://big.example/p/" + std::to_string(i) + "?x=1&y=2,\n";
  }
  csv += "http://small.example:8443/only,\n";
  TraceWeb web = MakeWeb(csv, 100);
  EXPECT_EQ(web.host_names(),
            (std::vector<std::string>{"big.example", "small.example"}));

  std::set<std::string> seen_pages;
  std::set<std::string> seen_index;
  std::vector<std::string> todo = {"/"};
  const std::regex href("href=\"([^\"]*)\"");
  while (!todo.empty()) {
    std::string target = todo.back();
    todo.pop_back();
    WebResponse r = web.Respond("big.example:9999", target, "", WallAt(1));
    ASSERT_EQ(r.status, 200) << target;
    for (std::sregex_iterator it(r.body.begin(), r.body.end(), href), end;
         it != end; ++it) {
      std::string link =
          std::regex_replace((*it)[1].str(), std::regex("&amp;"), "&");
      if (link.rfind("/_testweb/index/", 0) == 0) {
        if (seen_index.insert(link).second) todo.push_back(link);
      } else {
        seen_pages.insert(link);
      }
    }
  }
  EXPECT_EQ(seen_pages.size(), 2345u);
  EXPECT_EQ(seen_index.size(), 24u);  // ceil(2345 / 100)
  EXPECT_TRUE(seen_pages.count("/p/1234?x=1&y=2"));
  EXPECT_EQ(web.Respond("big.example", "/p/1234?x=1&y=2", "", WallAt(1)).status,
            200);
  EXPECT_EQ(
      web.Respond("big.example", "/_testweb/index/25", "", WallAt(1)).status,
      404);
  EXPECT_EQ(web.IndexPage(0, 24, kT0).size(), 45u);
  EXPECT_EQ(web.Respond("small.example", "/only", "", WallAt(1)).status, 200);
  EXPECT_EQ(web.Respond("small.example", "/p/1", "", WallAt(1)).status, 404);
}

// Above 50,000 pages a host's sitemap is an index of parts that together
// list every page once.
TEST(TraceWebTest, LargeSitemapIsSplitIntoParts) {
  std::string csv = "url,time\n";
  for (int i = 0; i < 50'001; ++i) {
    csv += "http://s.example/" + std::to_string(i) + ",\n";
  }
  TraceWeb web = MakeWeb(csv);
  WebResponse index = web.Respond("s.example", "/sitemap.xml", "", WallAt(0));
  EXPECT_NE(index.body.find("<sitemapindex"), std::string::npos);
  EXPECT_NE(index.body.find("http://s.example/_testweb/sitemap/2.xml"),
            std::string::npos);
  size_t urls = 0;
  for (const char* part :
       {"/_testweb/sitemap/1.xml", "/_testweb/sitemap/2.xml"}) {
    std::string body = web.Respond("s.example", part, "", WallAt(0)).body;
    for (size_t p = body.find("<loc>"); p != std::string::npos;
         p = body.find("<loc>", p + 1)) {
      ++urls;
    }
  }
  EXPECT_EQ(urls, 50'001u);
  EXPECT_EQ(
      web.Respond("s.example", "/_testweb/sitemap/3.xml", "", WallAt(0)).status,
      404);
}

// A trace page at "/" is served as the page (which links the index).
TEST(TraceWebTest, RootPageOfTheTraceWinsOverTheIndex) {
  TraceWeb web = MakeWeb(
      "url,time\nhttps://r.example/,\n"
      "https://r.example/x,\n");
  WebResponse r = web.Respond("r.example", "/", "", WallAt(0));
  EXPECT_NE(r.body.find("version 0"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("/_testweb/index/1"), std::string::npos);
  EXPECT_NE(web.Respond("r.example", "/_testweb/index/1", "", WallAt(0))
                .body.find("\"/x\""),
            std::string::npos);
}

}  // namespace
}  // namespace freshd::sim
