// PolitenessGate in virtual time: spacing, Crawl-delay cap, adaptive delay,
// in-flight limit, Retry-After, exponential back-off and its reset.

#include "fetch/politeness_gate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace freshd::fetch {
namespace {

PolitenessConfig Cfg() {
  PolitenessConfig c;
  c.min_delay_s = 1.0;
  c.max_crawl_delay_s = 10.0;
  c.max_in_flight_per_host = 1;
  c.adaptive_delay_factor = 0.0;
  c.backoff_initial_s = 30.0;
  c.backoff_max_s = 3600.0;
  return c;
}

constexpr const char* kHost = "example.com:80";

TEST(PolitenessGateTest, UnknownHostMayStartNow) {
  PolitenessGate gate(Cfg());
  EXPECT_TRUE(gate.MayStart(kHost, 5.0));
  EXPECT_EQ(gate.NextAllowed(kHost, 5.0), 5.0);
}

// After a restart the last contacts since the last save are unknown:
// HoldAll keeps every host, known or not, closed until the hold has passed.
TEST(PolitenessGateTest, HoldAllClosesEveryHostUntilItPasses) {
  PolitenessGate gate(Cfg());
  gate.Import({GateHostSnapshot{kHost, 50.0, 0, 0, std::nullopt}});
  gate.HoldAll(101.0);
  EXPECT_FALSE(gate.MayStart(kHost, 100.5));
  EXPECT_FALSE(gate.MayStart("new.example:80", 100.5));
  EXPECT_EQ(gate.NextAllowed("new.example:80", 100.5), 101.0);
  EXPECT_TRUE(gate.MayStart(kHost, 101.0));
  gate.HoldAll(90.0);  // an earlier hold does not shorten it
  EXPECT_FALSE(gate.MayStart(kHost, 100.9));
}

// A request that reached the wire late (handed over at 100, sent at 103):
// the next start waits for the send and then the spacing delay from it.
TEST(PolitenessGateTest, SpacingCountsFromTheWireWhenTheCallerReportsIt) {
  PolitenessConfig c = Cfg();
  c.max_in_flight_per_host = 2;
  PolitenessGate gate(c);
  gate.OnStart(kHost, 100.0);
  gate.AwaitSent(kHost);
  EXPECT_FALSE(gate.MayStart(kHost, 101.5));  // not on the wire yet
  gate.OnSent(kHost, 103.0);
  EXPECT_FALSE(gate.MayStart(kHost, 103.5));
  EXPECT_TRUE(gate.MayStart(kHost, 104.0));  // in flight 1 of 2
  gate.OnFinish(kHost, 104.0, OutcomeClass::kOk, 200, 1.0, std::nullopt);
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 104.0), 105.0);
}

TEST(PolitenessGateTest, SpacesRequestsByMinDelayAfterCompletion) {
  PolitenessGate gate(Cfg());
  gate.OnStart(kHost, 100.0);
  EXPECT_FALSE(gate.MayStart(kHost, 100.5));  // in flight
  gate.OnFinish(kHost, 100.4, OutcomeClass::kOk, 200, 0.4, std::nullopt);
  EXPECT_FALSE(gate.MayStart(kHost, 101.3));
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 101.0), 101.4);
  EXPECT_TRUE(gate.MayStart(kHost, 101.4));
  EXPECT_TRUE(gate.MayStart("other.com:80", 100.5));  // per host
}

TEST(PolitenessGateTest, CrawlDelayIsHonouredUpToTheCap) {
  PolitenessGate gate(Cfg());
  gate.SetCrawlDelay(kHost, 4.0);
  gate.OnStart(kHost, 0);
  gate.OnFinish(kHost, 1, OutcomeClass::kOk, 200, 1, std::nullopt);
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 1), 5.0);
  gate.SetCrawlDelay(kHost, 1000.0);  // capped at max_crawl_delay_s = 10
  EXPECT_DOUBLE_EQ(gate.SpacingDelay(kHost), 10.0);
  gate.SetCrawlDelay(kHost, -3);  // ignored
  EXPECT_DOUBLE_EQ(gate.SpacingDelay(kHost), 10.0);
}

TEST(PolitenessGateTest, AdaptiveDelayFollowsResponseTime) {
  PolitenessConfig c = Cfg();
  c.adaptive_delay_factor = 5.0;
  PolitenessGate gate(c);
  gate.OnStart(kHost, 0);
  gate.OnFinish(kHost, 2, OutcomeClass::kOk, 200, 2.0, std::nullopt);
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 2), 12.0);  // 5 x 2 s
}

TEST(PolitenessGateTest, InFlightLimitAllowsParallelismWhenConfigured) {
  PolitenessConfig c = Cfg();
  c.max_in_flight_per_host = 2;
  c.min_delay_s = 0;
  PolitenessGate gate(c);
  gate.OnStart(kHost, 0);
  EXPECT_TRUE(gate.MayStart(kHost, 0));
  gate.OnStart(kHost, 0);
  EXPECT_FALSE(gate.MayStart(kHost, 0));
  EXPECT_EQ(gate.InFlight(kHost), 2);
}

TEST(PolitenessGateTest, BackOffDoublesOnErrorsAndSuccessResetsIt) {
  PolitenessGate gate(Cfg());
  double now = 0;
  double expected[] = {30, 60, 120, 240};
  for (double want : expected) {
    gate.OnStart(kHost, now);
    gate.OnFinish(kHost, now, OutcomeClass::kHttp5xx, 500, 0.1, std::nullopt);
    EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, now) - now, want);
    now = gate.NextAllowed(kHost, now);
  }
  EXPECT_EQ(gate.ConsecutiveErrors(kHost), 4);
  gate.OnStart(kHost, now);
  gate.OnFinish(kHost, now, OutcomeClass::kOk, 200, 0.1, std::nullopt);
  EXPECT_EQ(gate.ConsecutiveErrors(kHost), 0);
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, now) - now, 1.0);
  // Timeouts and network errors count too; a 404 does not.
  gate.OnStart(kHost, now);
  gate.OnFinish(kHost, now, OutcomeClass::kTimeout, 0, 0.1, std::nullopt);
  EXPECT_EQ(gate.ConsecutiveErrors(kHost), 1);
  gate.OnStart(kHost, now);
  gate.OnFinish(kHost, now, OutcomeClass::kHttp4xx, 404, 0.1, std::nullopt);
  EXPECT_EQ(gate.ConsecutiveErrors(kHost), 0);
}

TEST(PolitenessGateTest, BackOffIsCapped) {
  PolitenessGate gate(Cfg());
  for (int i = 0; i < 40; ++i) {
    gate.OnStart(kHost, 0);
    gate.OnFinish(kHost, 0, OutcomeClass::kNetwork, 0, 0, std::nullopt);
  }
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 0), 3600.0);
}

TEST(PolitenessGateTest, RetryAfterOn429And503IsHonouredAndCapped) {
  PolitenessGate gate(Cfg());
  gate.OnStart(kHost, 0);
  gate.OnFinish(kHost, 0, OutcomeClass::kHttp4xx, 429, 0.1, 7.0);
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 0), 7.0);
  gate.OnStart(kHost, 7);
  gate.OnFinish(kHost, 7, OutcomeClass::kHttp5xx, 503, 0.1, 1e9);
  EXPECT_DOUBLE_EQ(gate.NextAllowed(kHost, 7), 7 + 3600.0);
  // Retry-After on a 200 is not a politeness signal.
  PolitenessGate g2(Cfg());
  g2.OnStart(kHost, 0);
  g2.OnFinish(kHost, 0, OutcomeClass::kOk, 200, 0.1, 500.0);
  EXPECT_DOUBLE_EQ(g2.NextAllowed(kHost, 0), 1.0);
}

TEST(PolitenessGateTest, PruneIdleDropsOnlyQuietHosts) {
  PolitenessGate gate(Cfg());
  gate.OnStart("a:80", 0);
  gate.OnFinish("a:80", 0, OutcomeClass::kOk, 200, 0, std::nullopt);
  gate.OnStart("b:80", 0);
  gate.OnFinish("b:80", 0, OutcomeClass::kHttp5xx, 500, 0, std::nullopt);
  gate.OnStart("c:80", 0);
  EXPECT_EQ(gate.PruneIdle(2.0), 1u);  // a only: b backs off, c in flight
  EXPECT_EQ(gate.size(), 2u);
}

TEST(PolitenessGateTest, PerIpSharesInFlightAndSpacingAcrossHosts) {
  PolitenessConfig c = Cfg();
  c.per_ip = true;
  PolitenessGate gate(c);
  gate.SetAddress("a:80", "10.0.0.1");
  gate.SetAddress("b:80", "10.0.0.1");
  gate.SetAddress("c:80", "10.0.0.2");
  EXPECT_EQ(gate.Address("b:80"), "10.0.0.1");
  gate.OnStart("a:80", 0);
  EXPECT_FALSE(gate.MayStart("b:80", 0));  // IP in flight
  EXPECT_TRUE(gate.AtInFlightLimit("b:80"));
  EXPECT_TRUE(gate.MayStart("c:80", 0));  // other IP
  gate.OnFinish("a:80", 0.5, OutcomeClass::kOk, 200, 0.5, std::nullopt);
  EXPECT_FALSE(gate.AtInFlightLimit("b:80"));
  EXPECT_DOUBLE_EQ(gate.NextAllowed("b:80", 0.5), 1.5);  // a's spacing
  EXPECT_TRUE(gate.MayStart("b:80", 1.5));
  // A back-off of one name holds the whole IP.
  gate.OnStart("b:80", 2);
  gate.OnFinish("b:80", 2, OutcomeClass::kHttp5xx, 503, 0.1, std::nullopt);
  EXPECT_DOUBLE_EQ(gate.NextAllowed("a:80", 2), 32.0);
  // Addresses are kept while a request is in flight.
  gate.OnStart("c:80", 40);
  gate.SetAddress("c:80", "10.0.0.1");
  EXPECT_EQ(gate.Address("c:80"), "10.0.0.2");
}

TEST(PolitenessGateTest, PerIpOffIgnoresAddresses) {
  PolitenessGate gate(Cfg());  // per_ip = false
  gate.SetAddress("a:80", "10.0.0.1");
  gate.SetAddress("b:80", "10.0.0.1");
  EXPECT_EQ(gate.Address("a:80"), "");
  gate.OnStart("a:80", 0);
  EXPECT_TRUE(gate.MayStart("b:80", 0));
}

TEST(PolitenessGateTest, ExportImportRoundTripKeepsDecisions) {
  PolitenessConfig c = Cfg();
  c.adaptive_delay_factor = 2.0;
  PolitenessGate gate(c);
  gate.OnStart("a:80", 100);
  gate.OnFinish("a:80", 101, OutcomeClass::kHttp5xx, 500, 1.0, std::nullopt);
  gate.OnStart("a:80", 200);
  gate.OnFinish("a:80", 200, OutcomeClass::kTimeout, 0, 0.7, std::nullopt);
  gate.SetCrawlDelay("b:443", 4.0);
  gate.OnStart("b:443", 100);
  gate.OnFinish("b:443", 100.2, OutcomeClass::kOk, 200, 0.2, std::nullopt);
  gate.OnStart("c:80", 100);  // in flight: not part of a snapshot
  std::vector<GateHostSnapshot> snap = gate.Export();
  ASSERT_EQ(snap.size(), 3u);
  EXPECT_EQ(snap[0].host, "a:80");
  EXPECT_EQ(snap[0].consecutive_errors, 2);
  EXPECT_DOUBLE_EQ(snap[0].next_allowed, 260.0);  // 30 s doubled
  EXPECT_EQ(snap[1].crawl_delay_s, 4.0);

  // Through another clock and back, as the daemon stores it (Unix time).
  ShiftTimes(&snap, 1.7e9);
  EXPECT_DOUBLE_EQ(snap[0].next_allowed, 1.7e9 + 260.0);
  ShiftTimes(&snap, -1.7e9);
  PolitenessGate restored(c);
  restored.Import(snap);
  EXPECT_EQ(restored.Export(), snap);
  for (double now : {100.0, 104.1, 104.3, 259.0, 260.0}) {
    for (const char* h : {"a:80", "b:443"}) {
      EXPECT_NEAR(restored.NextAllowed(h, now), gate.NextAllowed(h, now), 1e-6)
          << h << " at " << now;
      EXPECT_EQ(restored.MayStart(h, now), gate.MayStart(h, now));
    }
  }
  EXPECT_EQ(restored.ConsecutiveErrors("a:80"), 2);
  EXPECT_EQ(restored.InFlight("c:80"), 0);
  EXPECT_DOUBLE_EQ(restored.SpacingDelay("b:443"), 4.0);
  // The back-off continues where it was: one more error doubles it again.
  restored.OnStart("a:80", 300);
  restored.OnFinish("a:80", 300, OutcomeClass::kHttp5xx, 500, 0, std::nullopt);
  EXPECT_DOUBLE_EQ(restored.NextAllowed("a:80", 300), 420.0);
  // Garbage in a snapshot is clamped, not trusted.
  GateHostSnapshot bad;
  bad.host = "x:80";
  bad.next_allowed = std::nan("");
  bad.consecutive_errors = -3;
  bad.crawl_delay_s = -1;
  restored.Import({bad});
  EXPECT_EQ(restored.ConsecutiveErrors("x:80"), 0);
  EXPECT_DOUBLE_EQ(restored.NextAllowed("x:80", 5), 5);
}

}  // namespace
}  // namespace freshd::fetch
