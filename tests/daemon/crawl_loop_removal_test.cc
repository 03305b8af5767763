// Issue 43 item 7, what a large frontier accumulates, end to end: a real
// CrawlLoop crawling sites on 127.0.0.1. Pages gone for good leave the
// frontier and the store (daemon/page_book.h "Removal"): pages that start
// answering 410 and 404. Duplicate URLs collapse into one page ("Duplicates"):
// a rel=canonical and two URLs with the same body.

#include <map>
#include <mutex>
#include <set>

#include "store/page_store.h"
#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

// "/" links to /a, /b (while they exist) and /c; once `gone` is set, /a
// answers 410 and /b 404 and "/" no longer links to them (as a site that
// deleted them would). Counts each path's requests.
struct GoingSite {
  std::unique_ptr<HttpServer> server;
  std::string root;
  std::atomic<bool> gone{false};
  std::mutex mu;
  std::map<std::string, int> hits;  // guarded by mu
  int Hits(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu);
    return hits[path];
  }
};

std::unique_ptr<GoingSite> StartGoingSite(asio::io_context& io,
                                          Config* config) {
  auto site = std::make_unique<GoingSite>();
  GoingSite* raw = site.get();
  const bool ok = ListenAsSite(
      io, "g.test", config,
      [raw](const HttpRequest& r) {
        if (r.target == "/robots.txt") {
          return HttpReply{200, "text/plain", "User-agent: *\nAllow: /\n"};
        }
        {
          std::lock_guard<std::mutex> lock(raw->mu);
          ++raw->hits[r.target];
        }
        const bool gone = raw->gone.load();
        if (r.target == "/a" && gone) return HttpReply{410, "text/plain", ""};
        if (r.target == "/b" && gone) return HttpReply{404, "text/plain", ""};
        std::string html = "<html><body>";
        if (r.target == "/") {
          if (!gone) html += "<a href=\"/a\">a</a> <a href=\"/b\">b</a> ";
          html += "<a href=\"/c\">c</a>";
        } else {
          html += "page " + r.target;
        }
        return HttpReply{200, "text/html", html + "</body></html>"};
      },
      &site->server, &site->root);
  return ok ? std::move(site) : nullptr;
}

// The live page of `url` (a removed or collapsed page's id stays a
// tombstone, its URL still readable).
std::optional<sched::PageId> IdOf(const CrawlLoop& c, const std::string& url) {
  for (sched::PageId id = 0; id < c.urls().size(); ++id) {
    if (!c.scheduler().removed(id) && c.urls()[id] == url) return id;
  }
  return std::nullopt;
}

TEST_F(CrawlLoopTest, PagesGoneForGoodLeaveTheFrontierAndTheStore) {
  config_.crawler.gone_after_tries = 3;
  config_.sched.max_interval_s = 0.5;  // the 4xx back-off: tries 0.5 s apart
  config_.feed.enabled = true;
  asio::io_context io;
  auto site = StartGoingSite(io, &config_);
  ASSERT_NE(site, nullptr);
  const std::string a = site->root + "a", b = site->root + "b",
                    c_url = site->root + "c";
  {
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(loop.value()->AddSeed(site->root, 1).ok());
    const CrawlLoop& c = *loop.value();
    auto fetched = [&](const std::string& url) {
      auto id = IdOf(c, url);
      return id && c.scheduler().page(*id).fetched();
    };
    // One run: content first; then the pages go; then 2 s more.
    std::optional<sched::PageId> id_a, id_b;
    int content_a = 0, content_b = 0, c_at_removal = 0;
    std::optional<std::chrono::steady_clock::time_point> removed_at;
    RunUntil(io, *loop.value(), 0, 40, [&] {
      if (!site->gone) {
        if (!(fetched(a) && fetched(b) && fetched(c_url))) return false;
        id_a = IdOf(c, a);
        id_b = IdOf(c, b);
        content_a = site->Hits("/a");
        content_b = site->Hits("/b");
        site->gone = true;
        return false;
      }
      if (!removed_at) {
        if (!c.scheduler().removed(*id_a) || !c.scheduler().removed(*id_b)) {
          return false;
        }
        removed_at = std::chrono::steady_clock::now();
        c_at_removal = site->Hits("/c");
        return false;
      }
      return std::chrono::steady_clock::now() - *removed_at >
             std::chrono::seconds(2);
    });
    ASSERT_TRUE(id_a && id_b) << "never fetched with content";
    ASSERT_TRUE(removed_at) << "not removed";
    // Exactly gone_after_tries answers of 410 (404), then no more fetches,
    // while the rest of the site is still crawled.
    EXPECT_EQ(site->Hits("/a") - content_a, 3);
    EXPECT_EQ(site->Hits("/b") - content_b, 3);
    EXPECT_GT(site->Hits("/c"), c_at_removal);
    EXPECT_FALSE(c.scheduler().removed(*IdOf(c, c_url)));
    // Out of the URL index: neither is known any more.
    EXPECT_FALSE(loop.value()->PageJson(a).ok());
    EXPECT_EQ(c.scheduler().removed_pages(), 2u);

    const nlohmann::json status = c.StatusJson();
    EXPECT_EQ(status["frontier"]["removed"]["gone"], 2) << status["frontier"];
    EXPECT_EQ(status["frontier"]["removed"]["unreachable"], 0);
    const std::string metrics = c.MetricsText();
    EXPECT_EQ(
        MetricValue(metrics, "freshd_pages_removed_total{reason=\"gone\"}"), 2);
    EXPECT_EQ(MetricValue(metrics,
                          "freshd_pages_removed_total{reason=\"unreachable\"}"),
              0);
  }
  {
    auto store = store::PageStore::Open(config_.store);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    // The store has no record of them (nor of their sketches).
    for (const std::string& url : {a, b}) {
      EXPECT_FALSE(store.value()->GetPage(parse::UrlKey(url), url).ok()) << url;
      EXPECT_FALSE(store.value()->GetSketch(parse::UrlKey(url), url).ok())
          << url;
    }
    EXPECT_TRUE(store.value()->GetPage(parse::UrlKey(c_url), c_url).ok());
    // One "gone" each in the change feed, not one per try.
    std::map<std::string, int> gone;
    ASSERT_TRUE(store.value()
                    ->ForEachFeedEvent(0, 1000,
                                       [&](const store::FeedEvent& e) {
                                         if (e.kind == "gone") ++gone[e.url];
                                         return true;
                                       })
                    .ok());
    EXPECT_EQ(gone[a], 1);
    EXPECT_EQ(gone[b], 1);
    EXPECT_EQ(gone.size(), 2u);
  }
  // A restart does not bring them back, and they are not fetched again.
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const CrawlLoop& c = *loop.value();
  EXPECT_FALSE(IdOf(c, a).has_value());
  EXPECT_FALSE(IdOf(c, b).has_value());
  EXPECT_TRUE(IdOf(c, c_url).has_value());
  const int a_hits = site->Hits("/a"), b_hits = site->Hits("/b");
  RunFor(io, *loop.value(), 2);
  EXPECT_EQ(site->Hits("/a"), a_hits);
  EXPECT_EQ(site->Hits("/b"), b_hits);
}

// "/" links to /a, /b, /c, /d and /x: /a names /b as canonical and has
// /b's text; /b names itself; /c and /d have one body; /x names a URL of
// another host. Counts each path's requests.
struct DuplicateSite {
  std::unique_ptr<HttpServer> server;
  std::string root;
  std::mutex mu;
  std::map<std::string, int> hits;  // guarded by mu
  int Hits(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu);
    return hits[path];
  }
};

std::unique_ptr<DuplicateSite> StartDuplicateSite(asio::io_context& io,
                                                  Config* config) {
  auto site = std::make_unique<DuplicateSite>();
  DuplicateSite* raw = site.get();
  const bool ok = ListenAsSite(
      io, "d.test", config,
      [raw](const HttpRequest& r) {
        if (r.target == "/robots.txt") {
          return HttpReply{200, "text/plain", "User-agent: *\nAllow: /\n"};
        }
        {
          std::lock_guard<std::mutex> lock(raw->mu);
          ++raw->hits[r.target];
        }
        std::string head, body;
        if (r.target == "/") {
          body =
              "<a href=\"/a\">a</a> <a href=\"/b\">b</a> "
              "<a href=\"/c\">c</a> <a href=\"/d\">d</a> "
              "<a href=\"/x\">x</a>";
        } else if (r.target == "/a" || r.target == "/b") {
          head = "<link rel=\"canonical\" href=\"/b\">";
          body = "the one story told at two addresses";
        } else if (r.target == "/c" || r.target == "/d") {
          body = "one body served under two paths";
        } else if (r.target == "/x") {
          head = "<link rel=\"canonical\" href=\"http://elsewhere.test/x\">";
          body = "a page whose canonical is on another host";
        } else {
          return HttpReply{404, "text/plain", ""};
        }
        return HttpReply{
            200, "text/html",
            "<html><head>" + head + "</head><body>" + body + "</body></html>"};
      },
      &site->server, &site->root);
  return ok ? std::move(site) : nullptr;
}

TEST_F(CrawlLoopTest, DuplicateUrlsCollapseIntoOnePage) {
  config_.sched.max_interval_s = 0.5;  // pages refetched often
  asio::io_context io;
  auto site = StartDuplicateSite(io, &config_);
  ASSERT_NE(site, nullptr);
  const std::string a = site->root + "a", b = site->root + "b",
                    c_url = site->root + "c", d = site->root + "d",
                    x = site->root + "x";
  std::string dup, kept;  // of /c and /d: the alias, the page
  {
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(loop.value()->AddSeed(site->root, 1).ok());
    const CrawlLoop& c = *loop.value();
    auto collapsed = [&] {
      const nlohmann::json f = c.StatusJson()["frontier"];
      return f["collapsed"]["canonical"] == 1 &&
             f["collapsed"]["duplicate"] == 1;
    };
    std::optional<std::chrono::steady_clock::time_point> done_at;
    std::map<std::string, int> hits_at_collapse;
    RunUntil(io, *loop.value(), 0, 40, [&] {
      if (!done_at) {
        if (!collapsed()) return false;
        done_at = std::chrono::steady_clock::now();
        for (const char* p : {"/a", "/b", "/c", "/d"}) {
          hits_at_collapse[p] = site->Hits(p);
        }
        return false;
      }
      return std::chrono::steady_clock::now() - *done_at >
             std::chrono::seconds(2);
    });
    ASSERT_TRUE(done_at) << c.StatusJson()["frontier"];
    // Which of /c and /d came second is the crawl's order.
    const bool c_is_alias = !IdOf(c, c_url).has_value();
    dup = c_is_alias ? c_url : d;
    kept = c_is_alias ? d : c_url;
    EXPECT_TRUE(IdOf(c, kept).has_value());
    EXPECT_FALSE(IdOf(c, dup).has_value());
    EXPECT_FALSE(IdOf(c, a).has_value());
    EXPECT_TRUE(IdOf(c, b).has_value());
    EXPECT_TRUE(IdOf(c, x).has_value());  // its canonical ignored
    // The aliases are not fetched again; their pages are.
    const std::string dup_path = c_is_alias ? "/c" : "/d";
    const std::string kept_path = c_is_alias ? "/d" : "/c";
    EXPECT_EQ(site->Hits("/a"), hits_at_collapse["/a"]);
    EXPECT_EQ(site->Hits(dup_path), hits_at_collapse[dup_path]);
    EXPECT_GT(site->Hits("/b"), hits_at_collapse["/b"]);
    EXPECT_GT(site->Hits(kept_path), hits_at_collapse[kept_path]);
    EXPECT_EQ(site->Hits("/a"), 1);  // once, to read its canonical

    auto page_a = loop.value()->PageJson(a);
    ASSERT_TRUE(page_a.ok()) << page_a.status().ToString();
    EXPECT_EQ((*page_a)["alias_of"], b);
    EXPECT_EQ((*page_a)["alias_reason"], "canonical");
    auto page_dup = loop.value()->PageJson(dup);
    ASSERT_TRUE(page_dup.ok()) << page_dup.status().ToString();
    EXPECT_EQ((*page_dup)["alias_of"], kept);
    EXPECT_EQ((*page_dup)["alias_reason"], "duplicate");
    EXPECT_FALSE(loop.value()->PageJson(b)->contains("alias_of"));

    const nlohmann::json f = c.StatusJson()["frontier"];
    EXPECT_EQ(f["aliases"], 2) << f;
    EXPECT_GE(f["collapse_ignored"]["other_host"], 1) << f;  // a fetch
    const std::string metrics = c.MetricsText();
    EXPECT_EQ(MetricValue(metrics,
                          "freshd_pages_collapsed_total{reason=\"canonical\"}"),
              1);
    EXPECT_EQ(MetricValue(metrics,
                          "freshd_pages_collapsed_total{reason=\"duplicate\"}"),
              1);
    EXPECT_EQ(MetricValue(metrics, "freshd_aliases"), 2);
  }
  {
    auto store = store::PageStore::Open(config_.store);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_FALSE(store.value()->GetPage(parse::UrlKey(a), a).ok());
    EXPECT_FALSE(store.value()->GetPage(parse::UrlKey(dup), dup).ok());
    std::map<std::string, std::string> aliases;
    ASSERT_TRUE(store.value()
                    ->ForEachAlias([&](const store::AliasRecord& r) {
                      aliases[r.url] = r.target;
                      return true;
                    })
                    .ok());
    EXPECT_EQ(aliases,
              (std::map<std::string, std::string>{{a, b}, {dup, kept}}));
  }
  // After a restart: still aliases, not pages, and not fetched although
  // "/" still links to them.
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const CrawlLoop& c = *loop.value();
  EXPECT_FALSE(IdOf(c, a).has_value());
  EXPECT_FALSE(IdOf(c, dup).has_value());
  auto page_a = loop.value()->PageJson(a);
  ASSERT_TRUE(page_a.ok()) << page_a.status().ToString();
  EXPECT_EQ((*page_a)["alias_of"], b);
  EXPECT_EQ(c.StatusJson()["frontier"]["aliases"], 2);
  const int a_hits = site->Hits("/a"),
            dup_hits = site->Hits(dup == c_url ? "/c" : "/d");
  const int root_hits = site->Hits("/");
  RunUntil(io, *loop.value(), 2, 20,
           [&] { return site->Hits("/") > root_hits + 1; });
  EXPECT_GT(site->Hits("/"), root_hits);
  EXPECT_EQ(site->Hits("/a"), a_hits);
  EXPECT_EQ(site->Hits(dup == c_url ? "/c" : "/d"), dup_hits);
  EXPECT_FALSE(IdOf(c, a).has_value());
}

}  // namespace
}  // namespace freshd::daemon
