// The selector's choice equals a brute-force argmax over all eligible pages
// (issue 4, item 5: within 1e-9 relative), under random bounds, values,
// eligibility and deadlines; seed logged.

#include "sched/selector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace freshd::sched {
namespace {

constexpr double kNoDeadline = std::numeric_limits<double>::infinity();

// Seeded draws from U(0, 1).
class Uniform {
 public:
  explicit Uniform(uint64_t seed) : rng_(seed) {}
  double operator()() { return dist_(rng_); }

 private:
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> dist_{0, 1};
};

// Selects at time `round` (no deadlines) and checks the choice against the
// brute-force argmax of `value` over the eligible pages, and that no page
// was evaluated twice.
void ExpectBruteForceChoice(Selector& selector, int round,
                            const std::vector<double>& value,
                            const std::vector<bool>& eligible) {
  auto choice = selector.Select(
      round, [&](PageId p) { return static_cast<bool>(eligible[p]); },
      [&](PageId p) { return value[p]; });
  int best = -1;
  for (PageId p = 0; p < value.size(); ++p) {
    if (eligible[p] && (best < 0 || value[p] > value[best])) best = p;
  }
  ASSERT_EQ(choice.has_value(), best >= 0) << "round " << round;
  if (best < 0) return;
  EXPECT_EQ(value[choice->page], value[best]) << "round " << round;
  EXPECT_LE(selector.last_evaluations(), value.size()) << "round " << round;
}

TEST(SelectorTest, EveryChoiceMatchesBruteForceArgmax) {
  const uint32_t seed = 20261121;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Uniform u(seed);
  const size_t n = 500;
  const double inf = std::numeric_limits<double>::infinity();
  Selector selector;
  selector.Resize(n);
  std::vector<double> value(n), bound(n), deadline(n);
  std::vector<bool> eligible(n);
  int overdue_choices = 0;
  for (int round = 0; round < 400; ++round) {
    const double now = round;
    for (PageId p = 0; p < n; ++p) {
      // Re-index a random subset each round, as observations would.
      if (round == 0 || u() < 0.2) {
        value[p] = u() * 10;
        bound[p] = u() < 0.1 ? inf : value[p] * (1 + u());
        deadline[p] = u() < 0.02 ? now + u() * 3 : inf;
        selector.Update(p, bound[p], deadline[p]);
      }
      eligible[p] = u() < 0.7;
    }
    auto choice = selector.Select(
        now, [&](PageId p) { return static_cast<bool>(eligible[p]); },
        [&](PageId p) { return value[p]; });

    // Brute force: overdue (deadline <= now) first by earliest deadline, then
    // highest value; ties to the lower id.
    int best = -1;
    bool best_overdue = false;
    for (PageId p = 0; p < n; ++p) {
      if (!eligible[p]) continue;
      bool overdue = deadline[p] <= now;
      if (best < 0) {
        best = p, best_overdue = overdue;
        continue;
      }
      if (overdue != best_overdue) {
        if (overdue) best = p, best_overdue = true;
        continue;
      }
      double key = overdue ? -deadline[p] : value[p];
      double best_key = overdue ? -deadline[best] : value[best];
      if (key > best_key) best = p;
    }
    ASSERT_EQ(choice.has_value(), best >= 0) << "round " << round;
    if (best < 0) continue;
    overdue_choices += best_overdue;
    const PageId chosen = choice->page;
    ASSERT_TRUE(eligible[chosen]) << "round " << round;
    if (best_overdue) {
      EXPECT_EQ(deadline[chosen], deadline[best]) << "round " << round;
    } else {
      EXPECT_LE(std::fabs(value[chosen] - value[best]),
                1e-9 * std::fabs(value[best]))
          << "round " << round << " chose " << chosen << " best " << best;
    }
  }
  EXPECT_GT(overdue_choices, 0);  // the deadline path was exercised
}

// UpdateAll (the scheduler's periodic refresh) indexes exactly as one
// Update per page: two selectors fed the same bounds, one each way, make the
// same choices, with pages added by the bulk call and unchanged bounds
// mixed in.
TEST(SelectorTest, UpdateAllIndexesLikeUpdate) {
  const uint32_t seed = 20261122;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Uniform u(seed);
  const double inf = std::numeric_limits<double>::infinity();
  Selector one_by_one, bulk;
  size_t n = 200;
  std::vector<double> value, bound, deadline;
  std::vector<bool> eligible;
  int overdue_choices = 0;
  for (int round = 0; round < 300; ++round) {
    const double now = round;
    if (round % 50 == 0) n += 50;  // new pages arrive through UpdateAll
    value.resize(n), bound.resize(n), deadline.resize(n), eligible.resize(n);
    const bool full = round % 50 == 0 || u() < 0.2;
    for (PageId p = 0; p < n; ++p) {
      if (full || u() < 0.1) {
        if (u() < 0.7) {  // else: the same bound and deadline again
          value[p] = std::floor(u() * 20);  // ties on purpose
          bound[p] = u() < 0.1 ? (u() < 0.5 ? inf : std::nan(""))
                               : value[p] + std::floor(u() * 3);
          deadline[p] = u() < 0.02 ? now + u() * 3 : inf;
        }
        if (!full) {
          one_by_one.Update(p, bound[p], deadline[p]);
          bulk.Update(p, bound[p], deadline[p]);
        }
      }
      eligible[p] = u() < 0.7;
    }
    if (full) {
      for (PageId p = 0; p < n; ++p) {
        one_by_one.Update(p, bound[p], deadline[p]);
      }
      bulk.UpdateAll(n, [&](PageId p) {
        return std::pair<double, double>(bound[p], deadline[p]);
      });
    }
    ASSERT_EQ(bulk.pages(), n);
    auto is_eligible = [&](PageId p) { return static_cast<bool>(eligible[p]); };
    auto value_of = [&](PageId p) { return value[p]; };
    auto a = one_by_one.Select(now, is_eligible, value_of);
    auto b = bulk.Select(now, is_eligible, value_of);
    ASSERT_EQ(a.has_value(), b.has_value()) << "round " << round;
    if (!a) continue;
    EXPECT_EQ(a->page, b->page) << "round " << round;
    // The same pages scanned: none twice (dead entries of re-indexed pages
    // in the bulk array are skipped).
    EXPECT_EQ(one_by_one.last_evaluations(), bulk.last_evaluations())
        << "round " << round;
    EXPECT_EQ(a->priority.overdue, b->priority.overdue) << "round " << round;
    overdue_choices += a->priority.overdue;
  }
  EXPECT_GT(overdue_choices, 0);
}

// Enough Update()s that the tree of recent pages is folded into the flat
// array several times (it is capped at max(1,024, an eighth of the array)):
// every choice still equals a brute-force argmax, and each page is scanned
// at most once.
TEST(SelectorTest, ManyUpdatesFoldIntoTheArrayExactly) {
  const uint32_t seed = 20261123;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Uniform u(seed);
  const size_t n = 6000;
  Selector selector;
  std::vector<double> value(n), bound(n);
  std::vector<bool> eligible(n);
  for (int round = 0; round < 60; ++round) {
    for (PageId p = 0; p < n; ++p) {
      if (round == 0 || u() < 0.3) {
        value[p] = u() * 100;
        bound[p] = value[p] * (1 + u());
        if (round != 30) selector.Update(p, bound[p], kNoDeadline);
      }
      eligible[p] = u() < 0.05;
    }
    if (round == 30) {  // the bulk path in between
      selector.UpdateAll(n, [&](PageId p) {
        return std::pair<double, double>(bound[p], kNoDeadline);
      });
    }
    ExpectBruteForceChoice(selector, round, value, eligible);
  }
}

// Many pages on many hosts: scans that must reach the bottom of the order
// (only low-valued pages eligible), and folds of recent updates into the
// array grouped by host, still give the brute-force argmax, each page
// scanned at most once.
TEST(SelectorTest, PartlySortedArrayStaysExact) {
  const uint32_t seed = 20261125;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Uniform u(seed);
  const size_t n = 30000;
  const auto host_of = [](PageId p) { return static_cast<HostId>(p % 300); };
  const Selector::HostFn hosts = host_of;
  Selector selector;
  std::vector<double> value(n), bound(n);
  std::vector<bool> eligible(n);
  int deep_scans = 0;
  for (int round = 0; round < 48; ++round) {
    const bool bulk = round % 12 == 0;
    for (PageId p = 0; p < n; ++p) {
      if (bulk || u() < 0.04) {
        value[p] = u() * 100;
        bound[p] = value[p] * (1 + u());
        if (!bulk) selector.Update(p, bound[p], kNoDeadline, host_of(p));
      }
    }
    if (bulk) {
      selector.UpdateAll(
          n,
          [&](PageId p) {
            return std::pair<double, double>(bound[p], kNoDeadline);
          },
          &hosts);
    }
    // Odd rounds: only the lowest-valued pages (bounds at the very bottom
    // of the order) are eligible; even rounds: a random 30%.
    const bool deep = round % 2 == 1;
    for (PageId p = 0; p < n; ++p) {
      eligible[p] = deep ? value[p] < 0.5 : u() < 0.3;
    }
    ExpectBruteForceChoice(selector, round, value, eligible);
    deep_scans += deep;
  }
  EXPECT_GE(deep_scans, 20);
}

// Pages spread over hosts, re-indexed a few at a time with bounds that rise
// and fall: each host's first entry in the re-indexed set (kept per host,
// not searched for) must follow every insert and erase, across the merges
// into the sorted order, or the scan would start a host at the wrong page.
TEST(SelectorTest, ManyHostsReindexedInPlaceMatchBruteForce) {
  const uint32_t seed = 20261129;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Uniform u(seed);
  const size_t n = 3000;
  const HostId hosts = 37;
  Selector selector;
  selector.Resize(n);
  std::vector<double> value(n);
  std::vector<bool> eligible(n);
  for (PageId p = 0; p < n; ++p) {
    value[p] = u() * 10;
    selector.Update(p, value[p] * (1 + u()), kNoDeadline, p % hosts);
  }
  for (int round = 1; round <= 600; ++round) {
    // A few pages of a few hosts: the host's head moves up, down, or away.
    for (int k = 0; k < 12; ++k) {
      const auto p = static_cast<PageId>(u() * n);
      value[p] = u() < 0.5 ? value[p] * 0.5 : value[p] + u() * 5;
      selector.Update(p, value[p] * (1 + 0.1 * u()), kNoDeadline, p % hosts);
    }
    for (PageId p = 0; p < n; ++p) eligible[p] = u() < 0.9;
    ExpectBruteForceChoice(selector, round, value, eligible);
    if (HasFatalFailure()) return;
  }
}

TEST(SelectorTest, NothingEligibleGivesNoChoice) {
  Selector selector;
  selector.Resize(3);
  for (PageId p = 0; p < 3; ++p) selector.Update(p, 1.0, 1e9);
  auto choice = selector.Select(
      0, [](PageId) { return false; }, [](PageId) { return 1.0; });
  EXPECT_FALSE(choice.has_value());
}

// Bounds are kept as floats rounded up: values closer than a float's
// precision, with bounds equal to them, must still be told apart (a bound
// rounded to nearest would fall below its value and cut the scan short),
// through every path that indexes a bound (Update, UpdateAll, staging).
TEST(SelectorTest, BoundsCloserThanAFloatStayExact) {
  const std::vector<double> value = {1.0, 1.0 + 1e-12, 1e300, 1e300 * 1.5};
  auto of = [&](PageId p) { return value[p]; };
  auto index = [&](PageId p) { return std::pair{value[p], kNoDeadline}; };
  auto pick = [&](Selector& s, const std::vector<PageId>& pages) {
    auto choice = s.Select(
        0,
        [&](PageId p) {
          return std::find(pages.begin(), pages.end(), p) != pages.end();
        },
        of);
    return choice ? choice->page : PageId{99};
  };
  Selector by_update;
  for (PageId p = 0; p < value.size(); ++p) {
    by_update.Update(p, value[p], kNoDeadline);
  }
  Selector by_all;
  by_all.UpdateAll(value.size(), index);
  Selector staged;
  staged.UpdateAll(value.size(), [](PageId) {
    return std::pair{0.0, kNoDeadline};  // stale: below every value
  });
  staged.BeginStage();
  for (double v : value) staged.StageNext(v);
  staged.EndStageBounds();
  while (!staged.OrderStage(1)) {
  }
  staged.FinishStage();
  for (Selector* s : {&by_update, &by_all, &staged}) {
    EXPECT_EQ(pick(*s, {0, 1}), 1u);
    // Past the largest float: indexed as +inf, still in order by value.
    EXPECT_EQ(pick(*s, {0, 1, 2, 3}), 3u);
    EXPECT_EQ(pick(*s, {0, 2}), 2u);
  }
}

// The two scans (sched/selector.h): the global scan over the top of the
// bound order, with what it remembers beside each entry (lazy re-valuation),
// its fallback to the per-host merge when its best is below the top's floor
// (a top of 16 entries forces it), and the per-host merge alone. Values grow
// with time within their growth bounds; pages re-indexed with a new value
// under the same bound (what was remembered of them must be forgotten: their
// entry stays where it is); a gate closes random hosts each round. Every
// choice is the brute-force argmax.
struct ScanCase {
  const char* name;
  Selector::Options options;
};

class SelectorScanTest : public testing::TestWithParam<ScanCase> {};

TEST_P(SelectorScanTest, EveryScanMatchesBruteForceWithGrowingValues) {
  const uint32_t seed = 20261130;
  SCOPED_TRACE(std::string(GetParam().name) + " seed " + std::to_string(seed));
  Uniform u(seed);
  const size_t n = 3000;
  const HostId hosts = 41;
  const double horizon = 700;  // bounds hold until then
  Selector selector(GetParam().options);
  std::vector<double> base(n), rate(n), bound(n);
  std::vector<bool> eligible(n), closed(hosts);
  const auto host_of = [&](PageId p) { return static_cast<HostId>(p % hosts); };
  const auto value_at = [&](PageId p, double t) {
    return base[p] + rate[p] * t;
  };
  selector.set_value_growth([&](PageId p) { return rate[p] * 1.01; });
  const Selector::HostFn host_fn = host_of;
  for (PageId p = 0; p < n; ++p) {
    base[p] = u() * 100;
    rate[p] = u() * 0.01;
    bound[p] = value_at(p, horizon) + u() * 5;
  }
  selector.UpdateAll(
      n,
      [&](PageId p) {
        return std::pair{bound[p], kNoDeadline};
      },
      &host_fn);
  int same_bound_updates = 0;
  for (int round = 1; round <= 500; ++round) {
    const double now = round;
    for (int k = 0; k < 10; ++k) {
      const auto p = static_cast<PageId>(u() * n);
      if (u() < 0.5) {
        // A new value under the same bound, up or down.
        const double room = bound[p] - value_at(p, horizon);
        base[p] += (u() < 0.7 ? u() : -u()) * std::max(room, 0.0);
        ++same_bound_updates;
      } else {
        // Fetched: value falls, bound follows.
        base[p] = u() * 20 - rate[p] * now;
        bound[p] = value_at(p, horizon) + u();
      }
      selector.Update(p, bound[p], kNoDeadline, host_of(p));
    }
    for (PageId p = 0; p < n; ++p) eligible[p] = u() < 0.9;
    for (HostId h = 0; h < hosts; ++h) closed[h] = u() < 0.3;
    const Selector::HostGate gate = [&](HostId h) {
      return closed[h] ? HostOpening{now + 0.5} : kHostOpen;
    };
    const auto choice = selector.Select(
        now, [&](PageId p) { return static_cast<bool>(eligible[p]); },
        [&](PageId p) { return value_at(p, now); }, nullptr, &gate);
    int best = -1;
    for (PageId p = 0; p < n; ++p) {
      if (!eligible[p] || closed[host_of(p)]) continue;
      if (best < 0 || value_at(p, now) > value_at(best, now)) best = p;
    }
    ASSERT_EQ(choice.has_value(), best >= 0) << "round " << round;
    if (best < 0) continue;
    ASSERT_EQ(value_at(choice->page, now), value_at(best, now))
        << "round " << round << " chose " << choice->page << " best " << best;
    if (round % 100 == 0) {  // the periodic refresh rebuilds the top
      selector.UpdateAll(
          n,
          [&](PageId p) {
            return std::pair{bound[p], kNoDeadline};
          },
          &host_fn);
    }
  }
  EXPECT_GT(same_bound_updates, 2000);
  // A top of 16 entries runs out: the per-host merge went on from its best.
  if (GetParam().options.top_entries == 16) {
    EXPECT_GT(selector.scan_fallbacks(), 50u);
  } else {
    EXPECT_EQ(selector.scan_fallbacks(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Scans, SelectorScanTest,
    testing::Values(ScanCase{"auto", {}},
                    ScanCase{"global_top16", {Selector::Scan::kGlobal, 16}},
                    ScanCase{"global", {Selector::Scan::kGlobal, 0}},
                    ScanCase{"per_host", {Selector::Scan::kPerHost, 0}}),
    [](const testing::TestParamInfo<ScanCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace freshd::sched
