// HostRecord::fetch_state: round trips, grouping by host, and hostile bytes.

#include "daemon/fetch_state.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "fetch/crawler.h"

namespace freshd::daemon {
namespace {

HostFetchState Sample() {
  HostFetchState s;
  fetch::GateHostSnapshot g;
  g.host = "example.com:8080";
  g.next_allowed = 1.7e9 + 0.25;
  g.last_response_s = 0.125;
  g.consecutive_errors = 3;
  g.crawl_delay_s = 7.5;
  s.gate = g;
  fetch::RobotsSnapshot r;
  r.origin = "http://example.com:8080";
  r.mode = fetch::RobotsSnapshot::Mode::kRules;
  r.status = 200;
  r.fetched_at = 1.7e9;
  r.expires = 1.7e9 + 86400;
  r.body = "User-agent: *\nDisallow: /private\nSitemap: /s.xml\n";
  r.final_url = "http://example.com:8080/robots.txt";
  r.has_rules = true;
  r.unreachable_since = 1.6e9;
  r.failures = 2;
  r.last_failure = "5xx 503";
  s.robots.push_back(r);
  r.origin = "https://example.com:8080";
  r.mode = fetch::RobotsSnapshot::Mode::kDisallowAll;
  r.unreachable_since.reset();
  s.robots.push_back(r);
  return s;
}

TEST(FetchStateTest, RoundTripsEveryField) {
  HostFetchState s = Sample();
  auto back = DecodeHostFetchState(EncodeHostFetchState(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back.value(), s);
  HostFetchState empty;
  EXPECT_EQ(DecodeHostFetchState(EncodeHostFetchState(empty)).value(), empty);
  // "Never" (an infinite next-allowed time) survives.
  s.gate->next_allowed = std::numeric_limits<double>::infinity();
  EXPECT_EQ(DecodeHostFetchState(EncodeHostFetchState(s)).value(), s);
}

TEST(FetchStateTest, EveryTruncationAndRandomBytesAreCorruptionNotCrashes) {
  std::string bytes = EncodeHostFetchState(Sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(DecodeHostFetchState(bytes.substr(0, n)).status().code(),
              Status::Code::kCorruption)
        << n;
  }
  EXPECT_FALSE(DecodeHostFetchState(bytes + "x").ok());
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    std::string b = bytes;
    b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    (void)DecodeHostFetchState(b);  // must not crash or over-read (ASan)
    std::string junk(rng() % 64, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    (void)DecodeHostFetchState(junk);
  }
}

TEST(FetchStateTest, GroupsGateAndRobotsByAuthority) {
  fetch::CrawlerState state;
  HostFetchState s = Sample();
  state.hosts.push_back(*s.gate);
  state.robots = s.robots;
  fetch::RobotsSnapshot other = s.robots[0];
  other.origin = "https://other.test";
  state.robots.push_back(other);
  auto groups = GroupByHost(state);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].first, "example.com:8080");
  EXPECT_TRUE(groups[0].second.gate.has_value());
  EXPECT_EQ(groups[0].second.robots.size(), 2u);
  EXPECT_EQ(groups[1].first, "other.test");
  EXPECT_FALSE(groups[1].second.gate.has_value());
  EXPECT_EQ(groups[1].second.robots.size(), 1u);
}

}  // namespace
}  // namespace freshd::daemon
