// Selection indexed by open host (issue 43 item 1): a host gate that
// answers with reopening times closes hosts for a while (politeness delays,
// outages), or until Scheduler::ReopenHost (in-flight slots full, freed by a
// completion); the closed hosts leave the selection, and still every Select
// chooses what a brute-force argmax of PriorityOf over the eligible pages
// (page conditions and the gate's answer now) chooses. Many hosts, most of
// them closed at any time; seeds logged.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "tests/sched/scheduler_test_util.h"

namespace freshd::sched {
namespace {

using sched_test::kDay;
using sched_test::Make;
using sched_test::SameKey;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Counts {
  int checked = 0;        // selections compared with the brute force
  int chosen = 0;         // of them, a page chosen
  size_t max_closed = 0;  // hosts closed at once (Scheduler::closed_hosts)
  int reopens = 0;        // ReopenHost calls
  int slot_closures = 0;  // gate answers "until reopened"
};

// The world the gate reads: per host, in-flight fetches (at most
// kSlots), when its politeness delay ends, and an outage's end.
class World {
 public:
  static constexpr int kSlots = 2;
  explicit World(uint32_t hosts)
      : busy_(hosts, 0), next_(hosts, 0), down_until_(hosts, 0) {}

  HostOpening Opening(HostId h) const {
    if (busy_[h] >= kSlots) return kHostClosedUntilReopened;
    return {std::max(next_[h], down_until_[h])};
  }
  bool Open(HostId h, double now) const { return Opening(h).at <= now; }

  std::vector<int> busy_;
  std::vector<double> next_;
  std::vector<double> down_until_;
};

Counts RunWithClosures(const std::string& policy, uint32_t seed, size_t slice) {
  SCOPED_TRACE(policy + " seed " + std::to_string(seed) + " slice " +
               std::to_string(slice));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  SchedulerOptions o;
  o.policy = policy;
  o.rate = 1e6;  // tokens are never the limit
  o.burst = 1e9;
  o.min_interval = 600;
  o.max_interval = 4 * kDay;  // some pages become overdue
  o.new_page_value = 0.5 * kDay;
  o.refresh_slice_pages = slice;
  auto sched = Make(o);
  const uint32_t hosts = 150;
  const size_t n = 1200;
  for (size_t i = 0; i < n; ++i) {
    // Uneven hosts: a few large, most small.
    const auto h = static_cast<HostId>(
        std::min<double>(hosts - 1, hosts * std::pow(u(rng), 1.6)));
    EXPECT_TRUE(sched->AddUrl(h, 0.05 + u(rng)).ok());
  }
  World world(hosts);
  const Scheduler::HostGate gate = [&](HostId h) { return world.Opening(h); };
  struct InFlight {
    PageId page;
    HostId host;
  };
  std::vector<InFlight> in_flight;
  Counts counts;
  double now = 0;
  for (int step = 0; step < 300; ++step) {
    now += u(rng) * 0.02 * kDay;
    for (int k = 0; k < 4; ++k) {
      sched->Observe({static_cast<PageId>(u(rng) * n), now, SignalObs{}});
    }
    // Completions: the page's result, its host's slot freed, a new delay.
    for (size_t k = 0; k < in_flight.size();) {
      if (u(rng) < 0.6) {
        ++k;
        continue;
      }
      const InFlight f = in_flight[k];
      in_flight.erase(in_flight.begin() + static_cast<long>(k));
      const double r = u(rng);
      if (r < 0.7) {
        FetchedObs fetched;
        fetched.changed = u(rng) < 0.5;
        sched->Observe({f.page, now, fetched});
      } else if (r < 0.9) {
        sched->Observe({f.page, now, NotModifiedObs{}});
      } else {
        FailedObs failed;
        failed.failure = FailureClass::kNetwork;
        sched->Observe({f.page, now, failed});
      }
      --world.busy_[f.host];
      world.next_[f.host] = now + u(rng) * 0.1 * kDay;
      sched->ReopenHost(f.host);  // a slot freed
      ++counts.reopens;
    }
    // Outages begin or grow (later than the host said: asked again when
    // it reopens), and some delays are cut short (earlier: ReopenHost).
    for (int k = 0; k < 3; ++k) {
      const auto h = static_cast<HostId>(u(rng) * hosts);
      world.down_until_[h] =
          std::max(world.down_until_[h], now + u(rng) * 0.3 * kDay);
    }
    for (int k = 0; k < 3; ++k) {
      const auto h = static_cast<HostId>(u(rng) * hosts);
      if (world.next_[h] > now || world.down_until_[h] > now) {
        world.next_[h] = std::min(world.next_[h], now + u(rng) * 60);
        world.down_until_[h] = 0;
        sched->ReopenHost(h);
        ++counts.reopens;
      }
    }
    for (int pick = 0; pick < 6; ++pick) {
      std::optional<PageId> best;
      Priority best_priority;
      for (PageId p = 0; p < n; ++p) {
        if (!sched->Eligible(p, now, gate)) continue;
        const Priority pr = sched->PriorityOf(p, now);
        if (!best || Better(pr, best_priority)) {
          best = p;
          best_priority = pr;
        }
      }
      const bool unused = best.has_value() && sched->policy().due_only() &&
                          !best_priority.overdue &&
                          sched->page(*best).fetched() &&
                          !(best_priority.key > 0);
      const std::optional<PageId> got = sched->Select(now, gate);
      ++counts.checked;
      counts.max_closed = std::max(counts.max_closed, sched->closed_hosts());
      EXPECT_EQ(got.has_value(), best.has_value() && !unused)
          << "step " << step << " pick " << pick;
      if (!got) break;
      const Priority gp = sched->PriorityOf(*got, now);
      EXPECT_EQ(gp.overdue, best_priority.overdue) << "step " << step;
      EXPECT_TRUE(SameKey(gp.key, best_priority.key))
          << "step " << step << " got " << *got << " key " << gp.key
          << " brute force " << *best << " key " << best_priority.key;
      const HostId h = sched->page(*got).host;
      EXPECT_TRUE(world.Open(h, now));
      ++counts.chosen;
      in_flight.push_back({*got, h});
      ++world.busy_[h];
      if (world.busy_[h] >= World::kSlots) ++counts.slot_closures;
      // Politeness: the next request to the host waits a while.
      world.next_[h] = now + u(rng) * 0.05 * kDay;
    }
  }
  return counts;
}

TEST(OpenHostSelectionTest, ClosedHostsLeaveTheSelectionExactly) {
  for (const std::string policy : {"ncis", "freshness", "nutch"}) {
    for (size_t slice : {size_t{0}, size_t{64}}) {
      const Counts c =
          RunWithClosures(policy, 4300 + static_cast<uint32_t>(slice), slice);
      EXPECT_GT(c.checked, 1000) << policy;
      EXPECT_GT(c.chosen, 500) << policy;
      // Many hosts closed at once, slots filled, reopen calls made.
      EXPECT_GT(c.max_closed, 40u) << policy;
      EXPECT_GT(c.slot_closures, 20) << policy;
      EXPECT_GT(c.reopens, 200) << policy;
    }
  }
}

// A host closed until a time is not asked again before it: the gate is
// asked once per reopening, not once per page or per Select.
TEST(OpenHostSelectionTest, AClosedHostIsNotAskedUntilItReopens) {
  SchedulerOptions o;
  o.policy = "freshness";
  o.rate = 1e6;
  o.burst = 1e9;
  auto sched = Make(o);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(sched->AddUrl(0, 1).ok());
  ASSERT_TRUE(sched->AddUrl(1, 0.5).ok());
  int asked = 0;
  double reopen_at = 100;
  const Scheduler::HostGate gate = [&](HostId h) {
    if (h != 0) return kHostOpen;
    ++asked;
    return HostOpening{reopen_at};
  };
  // Host 0 is closed until 100: every Select before picks host 1's page
  // (once), then nothing.
  EXPECT_EQ(sched->Select(1, gate), PageId{50});
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(sched->closed_hosts(), 1u);
  for (double t = 2; t < 100; t += 7) {
    EXPECT_FALSE(sched->Select(t, gate).has_value());
  }
  EXPECT_EQ(asked, 1);
  // At 100 it rejoins and is asked again: open now.
  reopen_at = 0;
  const auto at_100 = sched->Select(100, gate);
  ASSERT_TRUE(at_100.has_value());
  EXPECT_LT(*at_100, PageId{50});
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(sched->closed_hosts(), 0u);
  // Closed until reopened: no time brings it back, ReopenHost does.
  reopen_at = kInf;
  EXPECT_FALSE(sched->Select(101, gate).has_value());
  EXPECT_FALSE(sched->Select(1e9, gate).has_value());
  EXPECT_EQ(asked, 3);
  reopen_at = 0;
  sched->ReopenHost(0);
  EXPECT_TRUE(sched->Select(1e9 + 1, gate).has_value());
  EXPECT_EQ(asked, 4);
}

// The two gate forms mix: what a bool gate closed was for its Select
// only, so a HostGate Select after it finds every host open (bench/scale's
// first Select, which only builds the index with every host closed, left
// the whole frontier closed for good before this was so).
TEST(OpenHostSelectionTest, ABoolGatesClosuresEndWithItsSelect) {
  SchedulerOptions o;
  o.policy = "freshness";
  o.rate = 1e6;
  o.burst = 1e9;
  auto sched = Make(o);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(sched->AddUrl(static_cast<HostId>(i % 4), 1).ok());
  }
  EXPECT_FALSE(sched->Select(1, [](HostId) { return false; }).has_value());
  EXPECT_EQ(sched->closed_hosts(), 0u);
  const Scheduler::HostGate open = [](HostId) { return kHostOpen; };
  EXPECT_TRUE(sched->Select(2, open).has_value());
  // And a bool gate re-asks the hosts a HostGate closed until reopened.
  const Scheduler::HostGate slots_full = [](HostId) {
    return kHostClosedUntilReopened;
  };
  EXPECT_FALSE(sched->Select(3, slots_full).has_value());
  EXPECT_EQ(sched->closed_hosts(), 4u);
  EXPECT_TRUE(sched->Select(4, [](HostId) { return true; }).has_value());
}

}  // namespace
}  // namespace freshd::sched
