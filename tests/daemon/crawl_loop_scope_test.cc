// CrawlLoop's frontier end to end: [[rule]]s on pages added, restored and
// reloaded; the seed-domains scope by the Public Suffix List.

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

// #31 item 7: [[rule]]s reach the pages when added, restored and reloaded;
// a min_interval rule holds against a budget that would fetch the pages
// more often; /page names the rule, /status counts its pages.
TEST_F(CrawlLoopTest, RulesApplyToPagesAddedRestoredAndReloaded) {
  RuleConfig slow;
  slow.name = "slow-h1";
  slow.host = "h1.test";
  slow.min_interval_s = 1.5;
  RuleConfig root;
  root.name = "h0-root";
  root.url = "^http://h0\\.test:[0-9]+/$";
  root.importance = 50;
  root.max_interval_s = 1;
  config_.rules = {slow, root};
  const auto page_rule = [](const CrawlLoop& c, const std::string& url) {
    auto page = c.PageJson(url);
    EXPECT_TRUE(page.ok()) << url;
    return page.ok() ? page.value()["rule"] : nlohmann::json();
  };
  size_t h1_pages = 0;
  {
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    ASSERT_TRUE(loop.ok()) << loop.status().ToString();
    ASSERT_TRUE(loop.value()->AddSeed(Seed(0), 1).ok());
    ASSERT_TRUE(loop.value()->AddSeed(Seed(1), 1).ok());
    const CrawlLoop& c = *loop.value();
    const double start = UnixNow();
    RunFor(io, *loop.value(), 3);
    const double elapsed = UnixNow() - start;
    const int bound = static_cast<int>(elapsed / slow.min_interval_s) + 1;
    for (sched::PageId id = 0; id < c.urls().size(); ++id) {
      const std::string url(c.urls()[id]);
      const nlohmann::json rule = page_rule(c, url);
      if (url.find("//h1.test:") != std::string::npos) {
        ++h1_pages;
        EXPECT_LE(c.scheduler().page(id).fetches, bound) << url;
        ASSERT_TRUE(rule.is_object()) << url;
        EXPECT_EQ(rule["name"], "slow-h1");
        EXPECT_EQ(rule["min_interval_s"], 1.5);
        EXPECT_TRUE(rule["max_interval_s"].is_null());
      } else if (url == Seed(0)) {
        ASSERT_TRUE(rule.is_object()) << url;
        EXPECT_EQ(rule["name"], "h0-root");
        EXPECT_EQ(rule["importance"], 50);
        EXPECT_EQ(c.scheduler().Params(id).mu, 50);
      } else {
        EXPECT_TRUE(rule.is_null()) << url;
      }
    }
    ASSERT_GT(h1_pages, 1u);  // links were followed on h1
    int h0_most = 0, h1_most = 0;
    for (sched::PageId id = 0; id < c.urls().size(); ++id) {
      const bool h1 = c.urls()[id].find("//h1.test:") != std::string::npos;
      int& most = h1 ? h1_most : h0_most;
      most = std::max<int>(most, c.scheduler().page(id).fetches);
    }
    std::printf("fetches of a page at most: h0 %d, h1 %d (bound %d)\n", h0_most,
                h1_most, bound);
    const nlohmann::json rules = c.StatusJson()["rules"];
    ASSERT_EQ(rules.size(), 2u);
    EXPECT_EQ(rules[0]["name"], "slow-h1");
    EXPECT_EQ(rules[0]["pages"], h1_pages);
    EXPECT_EQ(rules[1]["pages"], 1);
  }
  // Restored pages get their rules again (the rule is not stored: a
  // restart with other rules applies those).
  config_.rules = {root};
  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  CrawlLoop& c = *loop.value();
  EXPECT_EQ(page_rule(c, Seed(0))["name"], "h0-root");
  EXPECT_TRUE(page_rule(c, Seed(1)).is_null());
  // A reload (SIGHUP): every page matched again; a bad rule set is refused
  // and the rules in force kept.
  ASSERT_TRUE(c.SetRules({slow}).ok());
  EXPECT_TRUE(page_rule(c, Seed(0)).is_null());
  EXPECT_EQ(page_rule(c, Seed(1))["name"], "slow-h1");
  EXPECT_EQ(c.StatusJson()["rules"][0]["pages"], h1_pages);
  RuleConfig bad = slow;
  bad.host = "";
  EXPECT_FALSE(c.SetRules({bad}).ok());
  EXPECT_EQ(page_rule(c, Seed(1))["name"], "slow-h1");
  ASSERT_TRUE(c.SetRules({}).ok());
  EXPECT_TRUE(page_rule(c, Seed(1)).is_null());
  EXPECT_EQ(c.StatusJson()["rules"], nlohmann::json::array());
}

// Scope "seed-domains" admits the seeds' registrable domains by the Public
// Suffix List, not their last two labels: a seed on news.bbc.co.uk admits
// sport.bbc.co.uk and bbc.co.uk but not other co.uk sites or co.uk itself;
// a github.io user site does not admit its neighbours. "seed-hosts" admits
// the seed hosts only.
TEST_F(CrawlLoopTest, SeedDomainsFollowThePublicSuffixList) {
  auto added = [&](const std::string& scope, const std::string& seed,
                   const std::vector<std::string>& urls) {
    std::filesystem::remove_all(dir_ / "db");
    config_.crawler.scope = scope;
    asio::io_context io;
    auto loop = CrawlLoop::Create(io, config_);
    EXPECT_TRUE(loop.ok()) << loop.status().ToString();
    if (!loop.ok()) return std::string();
    EXPECT_TRUE(loop.value()->AddSeed(seed, 1).ok());
    std::string out;
    for (const std::string& url : urls) {
      out += loop.value()->Signal({url})["added"] == 1 ? "+" : "-";
    }
    return out;
  };
  const std::vector<std::string> bbc = {
      "http://sport.bbc.co.uk/a", "http://bbc.co.uk/b",
      "http://www.itv.co.uk/c", "http://co.uk/d",
      "http://news.bbc.co.uk.evil.example/e"};
  EXPECT_EQ(added("seed-domains", "http://news.bbc.co.uk/", bbc), "++---");
  EXPECT_EQ(added("seed-hosts", "http://news.bbc.co.uk/", bbc), "-----");
  EXPECT_EQ(added("seed-domains", "https://alice.github.io/",
                  {"https://bob.github.io/", "https://www.alice.github.io/x"}),
            "-+");
  EXPECT_EQ(added("seed-domains", "http://127.0.0.1:8080/",
                  {"http://127.0.0.2/", "http://127.0.0.1:9090/x"}),
            "-+");
}

}  // namespace
}  // namespace freshd::daemon
