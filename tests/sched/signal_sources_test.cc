// Each signal source learned on its own (issue 44 item 4;
// sched/signal_estimator.h, "Several sources"): on a host with a precise
// source and one that pings for every page view, the noisy pings stop
// buying fetches while the precise source keeps its gain; with one source
// in play nothing changes (every weight is exactly 1); the per-source
// counts and weights a page keeps.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "sched/scheduler.h"

namespace freshd::sched {
namespace {

constexpr double kDay = 86400;
constexpr double kNoTime = -std::numeric_limits<double>::infinity();

FetchedObs Changed(bool changed) {
  FetchedObs f;
  f.changed = changed;
  return f;
}

// Which sources a run's pages hear.
struct Sources {
  bool precise = false;  // announces 80% of changes, never falsely
  bool noisy = false;    // pings for every page view: 20 a day, at random
  // The label each one carries (the same label for both: one noise model
  // for the union of them, as before this change).
  SignalSource precise_label = SignalSource::kFeedEntry;
  SignalSource noisy_label = SignalSource::kIndexNow;
};

struct Outcome {
  double staleness = 0;        // time-averaged share of stale pages
  double fetch_precision = 0;  // share of fetches that found a change
};

// kPages pages of one host changing at 0.2/day each, a budget of a quarter
// of the pages a day, 60 days in 15-minute steps (the first 15 a warm-up).
// Events come from `seed` alone, so every run sees the same changes and,
// per source, the same signals.
Outcome Run(const Sources& sources, uint32_t seed) {
  constexpr int kPages = 100;
  constexpr double kDays = 60, kWarmup = 15, kStep = 900;
  SchedulerOptions o;
  o.policy = "ncis";
  o.rate = 0.25 * kPages / kDay;
  o.min_interval = 60;
  auto created = Scheduler::Create(o);
  EXPECT_TRUE(created.ok());
  Scheduler& s = **created;
  for (int i = 0; i < kPages; ++i) EXPECT_TRUE(s.AddUrl(0, 1).ok());

  struct Event {
    double time;
    int page;
    int kind;  // 0 change, 1 precise signal, 2 noisy ping
    bool operator<(const Event& e) const { return time < e.time; }
  };
  std::vector<Event> events;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> change_gap(0.2 / kDay);
  std::exponential_distribution<double> ping_gap(20 / kDay);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int p = 0; p < kPages; ++p) {
    for (double t = change_gap(rng); t < kDays * kDay; t += change_gap(rng)) {
      events.push_back({t, p, 0});
      if (unit(rng) < 0.8) events.push_back({t, p, 1});
    }
    for (double t = ping_gap(rng); t < kDays * kDay; t += ping_gap(rng)) {
      events.push_back({t, p, 2});
    }
  }
  std::sort(events.begin(), events.end());

  std::vector<double> stale_since(kPages, kNoTime);  // kNoTime: fresh
  double stale_time = 0;
  int fetches = 0, found = 0;
  const double warm = kWarmup * kDay;
  const auto fetch = [&](int p, double now) {
    const bool changed = stale_since[p] != kNoTime;
    if (changed && now > warm)
      stale_time += now - std::max(stale_since[p], warm);
    if (now > warm) {
      ++fetches;
      found += changed ? 1 : 0;
    }
    stale_since[p] = kNoTime;
    s.Observe({static_cast<PageId>(p), now, Changed(changed)});
  };
  size_t next = 0;
  for (double now = 0; now < kDays * kDay; now += kStep) {
    for (; next < events.size() && events[next].time <= now; ++next) {
      const Event& e = events[next];
      if (e.kind == 0) {
        if (stale_since[e.page] == kNoTime) stale_since[e.page] = e.time;
      } else if (e.kind == 1 && sources.precise) {
        s.Observe({static_cast<PageId>(e.page), e.time,
                   SignalObs{sources.precise_label, e.time}});
      } else if (e.kind == 2 && sources.noisy) {
        s.Observe({static_cast<PageId>(e.page), e.time,
                   SignalObs{sources.noisy_label, e.time}});
      }
    }
    while (auto page = s.Select(now, [](HostId) { return true; })) {
      fetch(static_cast<int>(*page), now);
    }
  }
  const double end = kDays * kDay;
  for (int p = 0; p < kPages; ++p) {
    if (stale_since[p] != kNoTime)
      stale_time += end - std::max(stale_since[p], warm);
  }
  Outcome out;
  out.staleness = stale_time / (kPages * (end - warm));
  out.fetch_precision = fetches > 0 ? static_cast<double>(found) / fetches : 0;
  return out;
}

Outcome Mean(const Sources& sources) {
  Outcome mean;
  for (uint32_t seed : {1u, 2u}) {
    const Outcome o = Run(sources, seed);
    mean.staleness += o.staleness / 2;
    mean.fetch_precision += o.fetch_precision / 2;
  }
  return mean;
}

// Measured (seeds 1 and 2, mean), staleness / share of fetches that found
// a change:
//   no signals                                  0.309 / 0.54
//   precise only                                0.119 / 0.71
//   precise + noisy, learned apart              0.158 / 0.67
//   precise + noisy, one label (as before)      0.311 / 0.54
//   noisy only                                  0.313 / 0.53
// Under one label the pings drown the precise signals: their whole gain
// (0.19) is lost and the fetches find changes no more often than with no
// signal. Learned apart, the pings buy almost nothing (noisy only: as no
// signal at all) and the precise source keeps four fifths of its gain
// (the page's pooled model still times the future with the union of both).
TEST(SignalSourcesTest, NoisySourceStopsBuyingFetchesPreciseOneKeepsItsGain) {
  const Outcome none = Mean({});
  const Outcome precise = Mean({.precise = true});
  const Outcome apart = Mean({.precise = true, .noisy = true});
  const Outcome one_label = Mean({.precise = true,
                                  .noisy = true,
                                  .precise_label = SignalSource::kFeedEntry,
                                  .noisy_label = SignalSource::kFeedEntry});
  const Outcome noisy = Mean({.noisy = true});
  RecordProperty("staleness_none", std::to_string(none.staleness));
  RecordProperty("staleness_precise", std::to_string(precise.staleness));
  RecordProperty("staleness_apart", std::to_string(apart.staleness));
  RecordProperty("staleness_one_label", std::to_string(one_label.staleness));
  RecordProperty("staleness_noisy", std::to_string(noisy.staleness));

  // The precise source is worth a lot here.
  const double gain = none.staleness - precise.staleness;
  EXPECT_GT(gain, 0.1);
  // Learned apart, the noisy pings cost under a third of that gain...
  EXPECT_LT(apart.staleness, precise.staleness + 0.3 * gain);
  // ... where one label for both loses at least twice as much.
  EXPECT_GT(one_label.staleness - precise.staleness,
            2 * (apart.staleness - precise.staleness));
  EXPECT_GT(apart.fetch_precision, one_label.fetch_precision);
  // Alone, the noisy source buys about what no signal does.
  EXPECT_NEAR(noisy.staleness, none.staleness, 0.2 * gain);
}

// One source in play: every weight is 1 and the values are the one-source
// model's, bit for bit, whatever the source's label.
TEST(SignalSourcesTest, OneSourceInPlayIsTheOneSourceModel) {
  SchedulerOptions o;
  o.policy = "ncis";
  o.rate = 10 / kDay;
  std::vector<std::unique_ptr<Scheduler>> runs;
  for (SignalSource label : {SignalSource::kSitemapLastmod,
                             SignalSource::kIndexNow, SignalSource::kWebSub}) {
    auto s = Scheduler::Create(o);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->AddUrl(0, 1).ok());
    (*s)->Observe({0, 0, Changed(false)});
    for (int i = 1; i <= 6; ++i) {
      (*s)->Observe({0, i * kDay - 3600, SignalObs{label, kNoTime}});
      (*s)->Observe({0, i * kDay, Changed(i % 2 == 0)});
    }
    (*s)->Observe({0, 6.5 * kDay, SignalObs{label, kNoTime}});
    (*s)->Observe({0, 6.6 * kDay, SignalObs{label, kNoTime}});
    const SourceSignals* counts = (*s)->SourceSignalsOf(0);
    ASSERT_NE(counts, nullptr);
    EXPECT_EQ(counts->counts.count(label), 2);
    EXPECT_EQ(counts->weighted, 2.0f);
    EXPECT_EQ((*s)->hosts().SourcesInPlay(0), 1);
    runs.push_back(std::move(*s));
  }
  const double now = 7 * kDay;
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i]->Value(0, now), runs[0]->Value(0, now));
    EXPECT_EQ(runs[i]->FreshProbability(0, now),
              runs[0]->FreshProbability(0, now));
    EXPECT_EQ(runs[i]->Snapshot(0).alpha, runs[0]->Snapshot(0).alpha);
    EXPECT_EQ(runs[i]->Snapshot(0).nu, runs[0]->Snapshot(0).nu);
  }
}

// The host learns each source apart: after a precise and a noisy source
// have both signalled its pages, the precise one's q is far below 1 and
// weighs more than a pooled signal, the noisy one's weighs almost nothing.
TEST(SignalSourcesTest, HostLearnsEachSourceApart) {
  SchedulerOptions o;
  o.policy = "ncis";
  o.rate = 10 / kDay;
  auto created = Scheduler::Create(o);
  ASSERT_TRUE(created.ok());
  Scheduler& s = **created;
  constexpr int kPages = 20;
  for (int p = 0; p < kPages; ++p) {
    ASSERT_TRUE(s.AddUrl(0, 1).ok());
    s.Observe({static_cast<PageId>(p), 0, Changed(false)});
  }
  // Day by day: even days each page changes and the feed announces it;
  // every day IndexNow pings each page 10 times.
  for (int day = 1; day <= 40; ++day) {
    for (int p = 0; p < kPages; ++p) {
      const PageId id = static_cast<PageId>(p);
      const double start = (day - 1) * kDay;
      for (int k = 0; k < 10; ++k) {
        s.Observe({id, start + (k + 0.5) * kDay / 10,
                   SignalObs{SignalSource::kIndexNow, kNoTime}});
      }
      const bool changes = day % 2 == 0;
      if (changes) {
        s.Observe({id, start + 0.3 * kDay,
                   SignalObs{SignalSource::kFeedEntry, start + 0.3 * kDay}});
      }
      const SourceSignals* counts = s.SourceSignalsOf(id);
      ASSERT_NE(counts, nullptr);
      EXPECT_EQ(counts->counts.count(SignalSource::kIndexNow), 10);
      EXPECT_EQ(counts->counts.count(SignalSource::kFeedEntry),
                changes ? 1 : 0);
      s.Observe({id, day * kDay, Changed(changes)});
      EXPECT_EQ(s.SourceSignalsOf(id)->counts.total(), 0);  // reset
    }
  }
  const HostPool& pool = s.hosts();
  EXPECT_EQ(pool.SourcesInPlay(0), 2);
  const SignalParams feed = pool.SourceParams(0, SignalSource::kFeedEntry);
  const SignalParams pings = pool.SourceParams(0, SignalSource::kIndexNow);
  const auto precision = [](const SignalParams& p) {
    return p.alpha * p.delta / (p.alpha * p.delta + p.nu);
  };
  EXPECT_GT(precision(feed), 0.8);
  EXPECT_LT(precision(pings), 0.2);
  EXPECT_GT(feed.alpha, 0.7);
  // q_s = ν_s/(α_sΔ+ν_s): a ping leaves P(fresh) almost where it was, a
  // feed entry cuts it.
  const auto q = [&](const SignalParams& p) { return 1 - precision(p); };
  EXPECT_GT(q(pings), 0.8);
  EXPECT_LT(q(feed), 0.2);
  // Weights are against the host's pooled signal, which the pings
  // dominate: a feed entry is worth many pooled signals, a ping about one.
  EXPECT_GT(pool.SourceWeight(0, SignalSource::kFeedEntry),
            10 * pool.SourceWeight(0, SignalSource::kIndexNow));
  // A source never seen on the host is the host's pooled estimate and
  // teaches nothing.
  EXPECT_EQ(pool.Find(0)->sources_seen() &
                (1u << static_cast<int>(SignalSource::kWebSub)),
            0u);
  // A page's pings now weigh little, its feed signal much.
  s.Observe({0, 41 * kDay, SignalObs{SignalSource::kIndexNow, kNoTime}});
  const float one_ping = s.SourceSignalsOf(0)->weighted;
  EXPECT_FLOAT_EQ(one_ping, pool.SourceWeight(0, SignalSource::kIndexNow));
  s.Observe({1, 41 * kDay, SignalObs{SignalSource::kIndexNow, kNoTime}});
  s.Observe({0, 41.1 * kDay, SignalObs{SignalSource::kFeedEntry, 41.1 * kDay}});
  EXPECT_GT(s.SourceSignalsOf(0)->weighted - one_ping, 10 * one_ping);
  // Page 0 (a ping and a feed entry) is likely changed; page 1 (a ping) is
  // as fresh as a page with no signal would be, give or take a ping's q.
  EXPECT_LT(s.FreshProbability(0, 41.2 * kDay),
            0.3 * s.FreshProbability(1, 41.2 * kDay));
}

TEST(SourceCountsTest, SaturatesPerSourceAndCountsApart) {
  SourceCounts c;
  for (int i = 0; i < 70; ++i) c.Add(SignalSource::kIndexNow);
  c.Add(SignalSource::kSitemapLastmod);
  c.Add(SignalSource::kWebSub);
  c.Add(SignalSource::kWebSub);
  EXPECT_EQ(c.count(SignalSource::kIndexNow), SourceCounts::kMax);
  EXPECT_EQ(c.count(SignalSource::kSitemapLastmod), 1);
  EXPECT_EQ(c.count(SignalSource::kWebSub), 2);
  EXPECT_EQ(c.count(SignalSource::kFeedEntry), 0);
  EXPECT_EQ(c.count(SignalSource::kPushedHint), 0);
  EXPECT_EQ(c.total(), SourceCounts::kMax + 3);
  EXPECT_TRUE(c.saturated());
  c.Add(static_cast<SignalSource>(7));  // out of range: ignored
  EXPECT_EQ(c.total(), SourceCounts::kMax + 3);
  c.Clear();
  EXPECT_EQ(c.total(), 0);
  EXPECT_FALSE(c.saturated());
}

}  // namespace
}  // namespace freshd::sched
