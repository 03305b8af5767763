// Recovery in bulk (Scheduler::BeginRestore .. FinishRestore, #29 item 2):
// a scheduler whose pages were restored in bulk selects exactly what one
// restored page by page does: the same pages in the same order over
// thousands of Selects with fetches, signals and closed hosts between
// them, for several policies, estimated and oracle; with the first horizon
// started by FinishRestore(now), left to the first Select, or a Select
// during the restore; and a bulk restore into a scheduler that selected
// already. Fixed seeds.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "tests/sched/test_truth.h"

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;
constexpr uint32_t kHosts = 40;

// A scheduler and the truth it reads in oracle mode (declared first, so it
// outlives the scheduler).
struct Sched {
  std::unique_ptr<TestTruth> truth = std::make_unique<TestTruth>();
  std::unique_ptr<Scheduler> s;
  Scheduler* operator->() const { return s.get(); }
  Scheduler& operator*() const { return *s; }
  Scheduler* get() const { return s.get(); }
};

Sched Make(const SchedulerOptions& o) {
  Sched out;
  auto s = Scheduler::Create(o, out.truth.get());
  EXPECT_TRUE(s.ok()) << o.policy;
  out.s = std::move(s).value();
  return out;
}

SchedulerOptions Options(const std::string& policy, bool oracle) {
  SchedulerOptions o;
  o.policy = policy;
  o.oracle = oracle;
  o.rate = 2;  // pages a second: a horizon spans many Selects
  o.burst = 4;
  o.min_interval = 600;
  o.max_interval = 20 * kDay;
  o.new_page_value = 0.2 * kDay;
  o.refresh_slice_pages = 256;  // the next horizon staged
  return o;
}

// Random fetch results and signals for `pages` pages over ~30 days.
Sched Source(const SchedulerOptions& o, size_t pages, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  auto s = Make(o);
  for (size_t i = 0; i < pages; ++i) {
    const PageId id =
        s->AddUrl(static_cast<HostId>(i % kHosts), 0.05 + u(rng)).value();
    if (o.oracle) {
      s.truth->Set(*s, id,
                   {(0.05 + 2 * u(rng)) / kDay, s->page(id).importance, u(rng),
                    0.5 * u(rng) / kDay},
                   {0.2, 0.5, 1 / kDay, 3, 0.5 / kDay});
    }
  }
  double now = 0;
  for (size_t k = 0; k < 3 * pages; ++k) {
    now += 30 * kDay / static_cast<double>(3 * pages);
    const auto p = static_cast<PageId>(u(rng) * static_cast<double>(pages));
    if (u(rng) < 0.3) {
      s->Observe({p, now, SignalObs{}});
      continue;
    }
    if (u(rng) < 0.3) continue;  // some pages stay never fetched
    FetchedObs f;
    f.changed = u(rng) < 0.5;
    for (size_t b = 0; b < s->ProfileBaseTimes(p).size(); ++b) {
      f.base_divergence.push_back(0.8 * u(rng));
    }
    s->Observe({p, now, std::move(f)});
  }
  return s;
}

// Restores src's pages [from, to) into dst (its truth too, oracle mode).
void Restore(const Scheduler& src, const SchedulerOptions& o, size_t from,
             size_t to, uint32_t seed, Scheduler* dst, TestTruth* truth) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = from; i < to; ++i) {
    const auto p = static_cast<PageId>(i);
    std::optional<ProfileSet> profiles;
    if (src.Profiles(p) != nullptr) profiles = *src.Profiles(p);
    std::optional<RecentSignals> recent;
    if (src.RecentSignalsOf(p) != nullptr) recent = *src.RecentSignalsOf(p);
    const PageId q =
        dst->RestorePage(src.Snapshot(p), profiles, recent, src.RateMemoryOf(p))
            .value();
    ASSERT_EQ(q, p);
    if (o.oracle) {
      truth->Set(*dst, q,
                 {(0.05 + 2 * u(rng)) / kDay, src.page(p).importance, u(rng),
                  0.5 * u(rng) / kDay},
                 {0.2, 0.5, 1 / kDay, 3, 0.5 / kDay});
    }
  }
}

// Runs the same Selects and observations on a and b from `now`; expects
// the same choice every time. Returns the pages chosen.
int SameSelections(Scheduler* a, Scheduler* b, double now, int selects,
                   uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<PageId> in_flight;
  std::vector<bool> open(kHosts, true);
  const Scheduler::HostOpenFn gate = [&](HostId h) { return bool(open[h]); };
  int chosen = 0;
  for (int k = 0; k < selects; ++k) {
    now += 0.5;
    if (k % 50 == 0) {
      for (uint32_t h = 0; h < kHosts; ++h) open[h] = u(rng) < 0.8;
    }
    if (u(rng) < 0.1) {  // a signal
      const auto p =
          static_cast<PageId>(u(rng) * static_cast<double>(a->size()));
      a->Observe({p, now, SignalObs{}});
      b->Observe({p, now, SignalObs{}});
    }
    const std::optional<PageId> pa = a->Select(now, gate);
    const std::optional<PageId> pb = b->Select(now, gate);
    EXPECT_EQ(pa, pb) << "select " << k;
    if (pa != pb) return chosen;
    if (pa) {
      ++chosen;
      in_flight.push_back(*pa);
    }
    if (in_flight.size() > 8) {  // the oldest fetch completes
      const PageId p = in_flight.front();
      in_flight.erase(in_flight.begin());
      FetchedObs f;
      f.changed = u(rng) < 0.4;
      for (size_t i = 0; i < a->ProfileBaseTimes(p).size(); ++i) {
        f.base_divergence.push_back(0.5 * u(rng));
      }
      FetchedObs g = f;
      a->Observe({p, now, std::move(f)});
      b->Observe({p, now, std::move(g)});
    }
  }
  EXPECT_EQ(a->horizon_refreshes(), b->horizon_refreshes());
  return chosen;
}

constexpr size_t kPages = 3000;
constexpr double kRestartAt = 31 * kDay;

struct Case {
  std::string policy;
  bool oracle;
};
const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      {"ncis", false},      {"freshness", false}, {"age", false},
      {"longevity", false}, {"nutch", false},     {"freshness", true},
      {"ncis", true}};
  return kCases;
}

TEST(BulkRestoreTest, SelectsWhatAPageByPageRestoreSelects) {
  for (const Case& c : Cases()) {
    for (int mode = 0; mode < 3; ++mode) {
      SCOPED_TRACE(c.policy + (c.oracle ? " oracle" : " estimated") + " mode " +
                   std::to_string(mode));
      const SchedulerOptions o = Options(c.policy, c.oracle);
      auto src = Source(o, kPages, 29);
      auto one = Make(o);  // page by page
      one->mutable_hosts() = src->hosts();
      Restore(*src, o, 0, kPages, 7, one.get(), one.truth.get());
      auto bulk = Make(o);
      bulk->mutable_hosts() = src->hosts();
      bulk->BeginRestore();
      EXPECT_TRUE(bulk->restoring());
      Restore(*src, o, 0, kPages, 7, bulk.get(), bulk.truth.get());
      const uint64_t bounds = bulk->bound_evaluations();
      EXPECT_EQ(bounds, 0u) << "no page is indexed while restoring";
      if (mode == 0) bulk->FinishRestore(kRestartAt);  // the daemon's way
      if (mode == 1) bulk->FinishRestore();  // the first Select indexes
      // mode 2: the first Select finishes the restore
      EXPECT_EQ(bulk->restoring(), mode == 2);
      if (mode == 0) {
        EXPECT_EQ(bulk->horizon_refreshes(), 1u);
        EXPECT_EQ(bulk->bound_evaluations(), kPages);
      }
      const int chosen =
          SameSelections(one.get(), bulk.get(), kRestartAt, 3000, 5);
      EXPECT_GT(chosen, 1000);
      EXPECT_FALSE(bulk->restoring());
    }
  }
}

// Selects before the restore: the pages restored in bulk are indexed over
// the current horizon by FinishRestore.
TEST(BulkRestoreTest, BulkRestoreIntoASchedulerThatSelected) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.policy + (c.oracle ? " oracle" : " estimated"));
    const SchedulerOptions o = Options(c.policy, c.oracle);
    auto src = Source(o, kPages, 31);
    auto one = Make(o);
    auto bulk = Make(o);
    for (Sched* s : {&one, &bulk}) {
      (*s)->mutable_hosts() = src->hosts();
      Restore(*src, o, 0, kPages / 2, 7, s->get(), s->truth.get());
    }
    EXPECT_GT(SameSelections(one.get(), bulk.get(), kRestartAt, 500, 3), 100);
    const double later = kRestartAt + 300;
    Restore(*src, o, kPages / 2, kPages, 8, one.get(), one.truth.get());
    bulk->BeginRestore();
    Restore(*src, o, kPages / 2, kPages, 8, bulk.get(), bulk.truth.get());
    bulk->FinishRestore(later);
    EXPECT_GT(SameSelections(one.get(), bulk.get(), later, 2000, 4), 400);
  }
}

}  // namespace
}  // namespace freshd::sched
