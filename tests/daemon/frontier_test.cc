// Frontier alone: a real Scheduler and PageBook (its URL file in a
// temporary directory), no network, no loop.

#include "daemon/frontier.h"

#include <gtest/gtest.h>

#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

constexpr double kNow = 1.7e9;

class FrontierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = sched::Scheduler::Create(sched::SchedulerOptions{});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(s).value();
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path());
    CrawlerConfig c;
    c.scope = "seed-hosts";
    c.exclude = {"/private/"};
    auto scope = UrlScope::Create(c);
    ASSERT_TRUE(scope.ok()) << scope.status().ToString();
    frontier_ = std::make_unique<Frontier>(std::move(scope).value(),
                                           /*max_urls_per_host=*/3, book_.get(),
                                           sched_.get());
  }

  store::TempDir dir_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  std::unique_ptr<Frontier> frontier_;
};

TEST_F(FrontierTest, LinksJoinOnlyInScopeAndUnderTheHostLimit) {
  // Nothing is in scope before a seed names its host.
  EXPECT_FALSE(frontier_->AddUrl("http://a.test/x", 1, false, kNow));
  frontier_->AddScope("http://a.test/");
  auto x = frontier_->AddUrl("http://a.test/x", 1, false, kNow);
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(frontier_->AddUrl("http://a.test/x", 1, false, kNow), x);
  EXPECT_EQ(book_->size(), 1u);
  EXPECT_FALSE(frontier_->AddUrl("http://a.test/private/y", 1, false, kNow));
  EXPECT_FALSE(frontier_->AddUrl("http://b.test/x", 1, false, kNow));
  // A seed joins out of scope too.
  EXPECT_TRUE(frontier_->AddUrl("http://b.test/x", 1, true, kNow));
  // Three pages a host at most.
  EXPECT_TRUE(frontier_->AddUrl("http://a.test/2", 1, false, kNow));
  EXPECT_TRUE(frontier_->AddUrl("http://a.test/3", 1, false, kNow));
  EXPECT_FALSE(frontier_->AddUrl("http://a.test/4", 1, false, kNow));
  EXPECT_EQ(book_->size(), 4u);
  EXPECT_EQ(book_->url(*x), "http://a.test/x");
}

// What the frontier refuses it counts, by reason, and names the hosts at
// their cap with how many URLs each turned away.
TEST_F(FrontierTest, TurnedAwayUrlsAreCountedByReasonAndHost) {
  frontier_->AddScope("http://a.test/");
  frontier_->AddScope("http://c.test/");
  EXPECT_FALSE(frontier_->AddUrl("http://b.test/x", 1, false, kNow));
  EXPECT_FALSE(frontier_->AddUrl("http://a.test/private/y", 1, false, kNow));
  for (int i = 0; i < 8; ++i) {
    (void)frontier_->AddUrl("http://a.test/" + std::to_string(i), 1, false,
                            kNow);
  }
  for (int i = 0; i < 4; ++i) {
    (void)frontier_->AddUrl("http://c.test/" + std::to_string(i), 1, false,
                            kNow);
  }
  // A known URL is not turned away, even on a host at its cap.
  EXPECT_TRUE(frontier_->AddUrl("http://a.test/0", 1, false, kNow));
  EXPECT_EQ(frontier_->turned_away().out_of_scope, 2u);
  EXPECT_EQ(frontier_->turned_away().host_limit, 5u + 1u);
  EXPECT_EQ(frontier_->turned_away().book_limit, 0u);
  EXPECT_EQ(frontier_->hosts_at_limit(), 2u);
  const nlohmann::json j = frontier_->Json(1);
  EXPECT_EQ(j["max_urls_per_host"], 3);
  EXPECT_EQ(j["turned_away"]["host_limit"], 6);
  EXPECT_EQ(j["turned_away"]["out_of_scope"], 2);
  EXPECT_EQ(j["hosts_at_limit"], 2);
  ASSERT_EQ(j["hosts"].size(), 1u);  // the one that turned most away
  EXPECT_EQ(j["hosts"][0]["host"], "a.test");
  EXPECT_EQ(j["hosts"][0]["pages"], 3);
  EXPECT_EQ(j["hosts"][0]["turned_away"], 5);
  PrometheusText metrics;
  frontier_->AppendMetrics(metrics);
  EXPECT_NE(metrics.text().find(
                "freshd_frontier_turned_away_total{reason=\"host_limit\"} 6"),
            std::string::npos)
      << metrics.text();
  EXPECT_NE(metrics.text().find("freshd_frontier_hosts_at_limit 2"),
            std::string::npos);
}

// [crawler] max_new_urls_per_host_per_minute: a host adding URLs faster is
// turned away and counted, by reason and by host; another host, a seed and
// a known URL are not; the bucket refills with time.
TEST_F(FrontierTest, AHostOverItsRateOfNewUrlsIsTurnedAwayAndCounted) {
  frontier_ = std::make_unique<Frontier>(
      std::move(UrlScope::Create(CrawlerConfig{})).value(),
      /*max_urls_per_host=*/1000, book_.get(), sched_.get());
  frontier_->set_max_new_urls_per_minute(60);  // one a second
  frontier_->AddScope("http://a.test/");
  frontier_->AddScope("http://c.test/");
  int added = 0;
  for (int i = 0; i < 100; ++i) {
    if (frontier_->AddUrl("http://a.test/" + std::to_string(i), 1, false,
                          kNow)) {
      ++added;
    }
  }
  EXPECT_EQ(added, 60);  // a minute's worth at once, no more
  EXPECT_EQ(frontier_->turned_away().host_rate, 40u);
  EXPECT_EQ(frontier_->hosts_over_rate(), 1u);
  // Another host has its own bucket; a seed and a known URL pass.
  EXPECT_TRUE(frontier_->AddUrl("http://c.test/1", 1, false, kNow));
  EXPECT_TRUE(frontier_->AddUrl("http://a.test/seed", 1, true, kNow));
  EXPECT_TRUE(frontier_->AddUrl("http://a.test/0", 1, false, kNow));
  EXPECT_FALSE(frontier_->AddUrl("http://a.test/more", 1, false, kNow));
  // Ten seconds on: ten more.
  added = 0;
  for (int i = 100; i < 200; ++i) {
    if (frontier_->AddUrl("http://a.test/" + std::to_string(i), 1, false,
                          kNow + 10)) {
      ++added;
    }
  }
  EXPECT_EQ(added, 10);
  EXPECT_EQ(book_->hosts().pages(*book_->hosts().Find("a.test")), 60u + 1 + 10);
  EXPECT_EQ(frontier_->turned_away().host_rate, 40u + 1 + 90);
  EXPECT_EQ(frontier_->turned_away().host_limit, 0u);
  const nlohmann::json j = frontier_->Json(5);
  EXPECT_EQ(j["max_new_urls_per_host_per_minute"], 60);
  EXPECT_EQ(j["turned_away"]["host_rate"], 131);
  EXPECT_EQ(j["hosts_over_rate"], 1);
  EXPECT_EQ(j["hosts_at_limit"], 0);
  ASSERT_EQ(j["hosts"].size(), 1u);
  EXPECT_EQ(j["hosts"][0]["host"], "a.test");
  EXPECT_EQ(j["hosts"][0]["turned_away"], 131);
  EXPECT_EQ(j["hosts"][0]["host_rate"], 131);
  PrometheusText metrics;
  frontier_->AppendMetrics(metrics);
  EXPECT_NE(metrics.text().find(
                "freshd_frontier_turned_away_total{reason=\"host_rate\"} 131"),
            std::string::npos)
      << metrics.text();
  EXPECT_NE(metrics.text().find("freshd_frontier_hosts_over_rate 1"),
            std::string::npos);
}

// Without the key (0) nothing bounds the rate.
TEST_F(FrontierTest, NoRateBoundWithoutTheKey) {
  frontier_ = std::make_unique<Frontier>(
      std::move(UrlScope::Create(CrawlerConfig{})).value(),
      /*max_urls_per_host=*/100000, book_.get(), sched_.get());
  frontier_->AddScope("http://a.test/");
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(frontier_->AddUrl("http://a.test/" + std::to_string(i), 1,
                                  false, kNow));
  }
  EXPECT_EQ(frontier_->turned_away().host_rate, 0u);
}

TEST_F(FrontierTest, AKnownSeedGetsItsImportanceRaised) {
  frontier_->AddScope("http://a.test/");
  auto x = frontier_->AddUrl("http://a.test/x", 1, false, kNow);
  ASSERT_TRUE(x.has_value());
  const double before = sched_->page(*x).importance;
  store::StoreBatch drained;
  book_->TakeBatch(&drained);
  EXPECT_FALSE(book_->marked());
  EXPECT_EQ(frontier_->AddUrl("http://a.test/x", 5, true, kNow), x);
  EXPECT_GT(sched_->page(*x).importance, before);
  EXPECT_TRUE(book_->marked());  // written with the next commit
}

TEST_F(FrontierTest, RulesApplyOnAddAndOnReplace) {
  frontier_->AddScope("http://a.test/");
  auto plain = frontier_->AddUrl("http://a.test/plain", 1, false, kNow);
  ASSERT_TRUE(plain.has_value());
  RuleConfig news;
  news.name = "news";
  news.url = "/news/";
  news.max_interval_s = 600;
  ASSERT_TRUE(frontier_->SetRules({news}).ok());
  auto item = frontier_->AddUrl("http://a.test/news/1", 1, false, kNow);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(sched_->RuleOf(*item), 1);
  EXPECT_EQ(sched_->RuleOf(*plain), 0);
  // A rule the loader would refuse keeps the rules in force.
  RuleConfig bad;
  bad.name = "bad";
  bad.url = "(";
  EXPECT_FALSE(frontier_->SetRules({bad}).ok());
  EXPECT_EQ(frontier_->rules().rules().size(), 1u);
  EXPECT_EQ(sched_->RuleOf(*item), 1);
  // New rules: every page matched again.
  RuleConfig plain_rule;
  plain_rule.name = "plain";
  plain_rule.url = "/plain";
  plain_rule.importance = 3;
  ASSERT_TRUE(frontier_->SetRules({plain_rule, news}).ok());
  EXPECT_EQ(sched_->RuleOf(*plain), 1);
  EXPECT_EQ(sched_->RuleOf(*item), 2);
  ASSERT_TRUE(frontier_->SetRules({}).ok());
  EXPECT_EQ(sched_->RuleOf(*plain), 0);
  EXPECT_EQ(sched_->RuleOf(*item), 0);
}

}  // namespace
}  // namespace freshd::daemon
