// Signal coverage (Scheduler::ObserveSignalCoverage, issue 31): silence is
// evidence only where a signal source looked. Pages identical but for their
// host's coverage: the one whose host's sitemap was read long before its
// fetch is not judged fresher (or slower) by the time no source looked; the
// signals it did get still count; a host that never reported is covered
// through now (as before); coverage only moves forward; a fetch interval's
// signal evidence spans its covered part.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "sched/scheduler.h"

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;
constexpr double kHour = 3600;

std::unique_ptr<Scheduler> Make(bool rate_mixture) {
  SchedulerOptions o;
  o.policy = "ncis";
  o.rate = 100 / kDay;
  o.min_interval = 60;
  o.rate_mixture = rate_mixture;
  auto s = Scheduler::Create(o);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

FetchedObs Changed(bool changed) {
  FetchedObs f;
  f.changed = changed;
  return f;
}

// One page on `host`, fetched at 0, 1 d (changed) and 2 d (changed), one
// signal between each pair of fetches: the same history in every scheduler
// (so the same estimates, bit for bit). Its last fetch is at 2 d.
constexpr double kLastFetch = 2 * kDay;
std::unique_ptr<Scheduler> OnePage(bool rate_mixture, HostId host = 0) {
  auto s = Make(rate_mixture);
  EXPECT_TRUE(s->AddUrl(host, 1).ok());
  EXPECT_TRUE(s->Observe({0, 0, Changed(false)}).page);
  s->Observe({0, 0.5 * kDay, SignalObs{SignalSource::kPushedHint}});
  s->Observe({0, 1 * kDay, Changed(true)});
  s->Observe({0, 1.5 * kDay, SignalObs{SignalSource::kPushedHint}});
  s->Observe({0, kLastFetch, Changed(true)});
  EXPECT_GT(s->Snapshot(0).alpha, 0.05);  // signals carry information
  return s;
}

TEST(SignalCoverageTest, SilenceCountsOnlyWhereASourceLooked) {
  for (bool rate_mixture : {false, true}) {
    SCOPED_TRACE(rate_mixture ? "rate mixture" : "gamma");
    // a: the host's sitemap was read just now; b: 17 h before the fetch;
    // c: never (covered through now, the former behaviour).
    auto a = OnePage(rate_mixture), b = OnePage(rate_mixture),
         c = OnePage(rate_mixture);
    const double now = kLastFetch + 20 * kHour;
    a->ObserveSignalCoverage(0, now);
    b->ObserveSignalCoverage(0, kLastFetch - 17 * kHour);
    EXPECT_EQ(a->SignalCoverage(0), now);
    EXPECT_EQ(c->SignalCoverage(0), std::numeric_limits<double>::infinity());
    // Covered through now is the same as never reported, bit for bit.
    EXPECT_EQ(a->FreshProbability(0, now), c->FreshProbability(0, now));
    EXPECT_EQ(a->Value(0, now), c->Value(0, now));
    EXPECT_EQ(a->Summarize(now).estimated_freshness,
              c->Summarize(now).estimated_freshness);
    // 20 h of silence made a's page look fresh; b's heard none of it.
    const double covered = a->FreshProbability(0, now);
    const double uncovered = b->FreshProbability(0, now);
    EXPECT_LT(uncovered, covered - 0.05);
    EXPECT_EQ(b->Summarize(now).estimated_freshness, uncovered);
    EXPECT_NE(b->Value(0, now), a->Value(0, now));
    if (!rate_mixture) {
      // No silence heard: P(fresh) = e^{−Δτ}, the page's change rate alone.
      const double tau = now - kLastFetch;
      EXPECT_NEAR(uncovered, std::exp(-b->page(0).rate * tau), 1e-12);
    }
    // Nothing covered since the fetch: the draws keep their prior weights,
    // so the value is the same at any coverage up to the fetch.
    const double value = b->Value(0, now);
    b->ObserveSignalCoverage(0, kLastFetch - kHour);
    EXPECT_EQ(b->Value(0, now), value);
    EXPECT_EQ(b->FreshProbability(0, now), uncovered);
    // Coverage only moves forward: an older report changes nothing.
    a->ObserveSignalCoverage(0, now - 5 * kHour);
    EXPECT_EQ(a->SignalCoverage(0), now);
    EXPECT_EQ(a->FreshProbability(0, now), covered);
    // Once b's sitemap is read, its silence counts as a's does.
    b->ObserveSignalCoverage(0, now);
    EXPECT_EQ(b->FreshProbability(0, now), covered);
    EXPECT_EQ(b->Value(0, now), a->Value(0, now));
  }
}

TEST(SignalCoverageTest, SignalsSeenStillCount) {
  for (bool rate_mixture : {false, true}) {
    SCOPED_TRACE(rate_mixture ? "rate mixture" : "gamma");
    auto s = OnePage(rate_mixture);
    const double now = kLastFetch + 20 * kHour;
    s->ObserveSignalCoverage(0, kLastFetch - 17 * kHour);
    const double before = s->FreshProbability(0, now);
    // A pushed signal after the fetch (no coverage implied).
    s->Observe(
        {0, kLastFetch + 2 * kHour, SignalObs{SignalSource::kPushedHint}});
    EXPECT_EQ(s->SignalCoverage(0), kLastFetch - 17 * kHour);
    EXPECT_LT(s->FreshProbability(0, now), before);
    if (!rate_mixture) {
      // P(fresh) = q·e^{−Δτ}: the signal's evidence over no covered time.
      const PageSnapshot p = s->Snapshot(0);
      const double sigma = p.alpha * p.rate + p.nu;
      EXPECT_NEAR(s->FreshProbability(0, now),
                  p.nu / sigma * std::exp(-p.rate * (now - kLastFetch)), 1e-12);
    }
  }
}

TEST(SignalCoverageTest, IntervalEvidenceSpansTheCoveredPart) {
  // a: covered through the last fetch + 6 h; c: never reported; b: covered
  // only before the fetch. Each fetched again 1 d after, unchanged, without
  // signals.
  auto a = OnePage(false), b = OnePage(false), c = OnePage(false);
  a->ObserveSignalCoverage(0, kLastFetch + 6 * kHour);
  b->ObserveSignalCoverage(0, kLastFetch - kHour);
  const double before = c->hosts().Find(0)->signals().exposure();
  ASSERT_EQ(a->hosts().Find(0)->signals().exposure(), before);
  for (Scheduler* s : {a.get(), b.get(), c.get()}) {
    s->Observe({0, kLastFetch + kDay, Changed(false)});
  }
  // Decayed alike: the difference is the uncovered 18 h.
  EXPECT_NEAR(c->hosts().Find(0)->signals().exposure() -
                  a->hosts().Find(0)->signals().exposure(),
              18 * kHour, 1);
  // Nothing covered: no signal evidence at all.
  EXPECT_EQ(b->hosts().Find(0)->signals().exposure(), before);
}

TEST(SignalCoverageTest, BadReportsAreIgnored) {
  auto s = OnePage(false), c = OnePage(false);
  s->ObserveSignalCoverage(0, std::nan(""));
  EXPECT_EQ(s->SignalCoverage(0), std::numeric_limits<double>::infinity());
  s->ObserveSignalCoverage(Scheduler::kMaxCoverageHosts, kLastFetch);
  EXPECT_EQ(s->SignalCoverage(Scheduler::kMaxCoverageHosts),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(s->FreshProbability(0, kLastFetch + kHour),
            c->FreshProbability(0, kLastFetch + kHour));
}

}  // namespace
}  // namespace freshd::sched
