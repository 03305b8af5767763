// Estimator alone, fed observations over a hand-made page table (no
// selection, no values): rates follow the evidence, the saved rate memory
// holds the draws, stale signals and coverage behave as documented.

#include "sched/estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;

struct Fixture {
  explicit Fixture(const std::string& policy_name) {
    options.policy = policy_name;
    policy = std::move(MakePolicy(policy_name, {})).value();
    estimator = std::make_unique<Estimator>(options, *policy, &pages);
  }
  PageId Add(HostId host) {
    PageState s;
    s.host = host;
    pages.push_back(s);
    const auto id = static_cast<PageId>(pages.size() - 1);
    estimator->AddPage(id);
    return id;
  }
  // A fetch at `now` as the scheduler records it.
  void Fetch(PageId p, double now, bool changed) {
    PageState& s = pages[p];
    const double tau = s.fetched() ? now - s.last_fetch : 0;
    FetchedObs f;
    f.changed = changed;
    estimator->ObserveContent(p, now, &f, tau, 1.0);
    s.last_fetch = now;
    s.signals = 0;
    ++s.fetches;
  }
  SchedulerOptions options;
  std::unique_ptr<Policy> policy;
  std::vector<PageState> pages;
  std::unique_ptr<Estimator> estimator;
};

TEST(EstimatorTest, RatesFollowTheEvidence) {
  Fixture f("freshness");
  const PageId fast = f.Add(0), slow = f.Add(1);
  for (int i = 0; i < 12; ++i) {
    f.Fetch(fast, i * kDay, true);
    f.Fetch(slow, i * kDay, false);
  }
  EXPECT_GT(f.pages[fast].rate, 4 * f.pages[slow].rate);
  EXPECT_GT(f.pages[fast].rate_stats.observations(), 10);
  const auto memory = f.estimator->RateMemoryOf(fast);
  ASSERT_TRUE(memory.has_value());  // rate_mixture and explore are on
  EXPECT_FALSE(memory->draws.empty());
  EXPECT_FALSE(f.estimator->RateMemoryOf(99).has_value());
  EXPECT_EQ(f.estimator->SignalsOf(fast), nullptr);  // not a signal policy
}

TEST(EstimatorTest, ExploresAfterTheFirstFetch) {
  Fixture f("freshness");
  const PageId p = f.Add(0);
  f.Add(0);
  f.Fetch(p, 0, false);
  EXPECT_EQ(f.estimator->ExploreInterval(p), 2.0);  // N / R = 2 / 1
  f.Fetch(p, kDay, false);
  EXPECT_EQ(f.estimator->ExploreInterval(p), 0.0);  // an interval seen
}

TEST(EstimatorTest, StaleSignalsAreDroppedAndFreshOnesKept) {
  Fixture f("ncis");
  f.options.signal_window = 60;
  const PageId p = f.Add(0);
  SignalObs before;
  before.changed_at = -10;
  EXPECT_TRUE(f.estimator->ObserveSignal(p, 5, before));  // never fetched
  f.Fetch(p, 100, true);
  EXPECT_FALSE(f.estimator->ObserveSignal(p, 120, before));  // claims before
  EXPECT_FALSE(f.estimator->ObserveSignal(p, 120, SignalObs{}));  // window
  EXPECT_TRUE(f.estimator->ObserveSignal(p, 200, SignalObs{}));
  EXPECT_EQ(f.pages[p].signals, 1);
  ASSERT_NE(f.estimator->SignalsOf(p), nullptr);
  ASSERT_NE(f.estimator->RecentSignalsOf(p), nullptr);
}

TEST(EstimatorTest, CoverageMovesForwardOnly) {
  Fixture f("ncis");
  const PageId p = f.Add(3);
  f.Fetch(p, 100, false);
  EXPECT_TRUE(std::isinf(f.estimator->SignalCoverage(3)));
  EXPECT_EQ(f.estimator->CoveredTau(f.pages[p], 50), 50.0);  // never reported
  EXPECT_TRUE(f.estimator->ObserveSignalCoverage(3, 120));
  EXPECT_FALSE(f.estimator->ObserveSignalCoverage(3, 110));  // older
  EXPECT_FALSE(f.estimator->ObserveSignalCoverage(3, std::nan("")));
  EXPECT_FALSE(
      f.estimator->ObserveSignalCoverage(Estimator::kMaxCoverageHosts, 1e9));
  EXPECT_EQ(f.estimator->CoveredTau(f.pages[p], 50), 20.0);
  EXPECT_EQ(f.estimator->CoveredTau(f.pages[p], 10), 10.0);
}

}  // namespace
}  // namespace freshd::sched
