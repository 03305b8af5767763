// What the Scheduler learns from observations, through the facade: new
// pages start from their host's pooled (Δ, α, ν), hosts learn their static
// share, pages without evidence follow their host, Last-Modified trust, and
// the signal policies' timed evidence.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "tests/sched/scheduler_test_util.h"
#include "tests/sched/test_truth.h"

namespace freshd::sched {
namespace {

using sched_test::Changed;
using sched_test::kDay;
using sched_test::kHosts;
using sched_test::Make;
using sched_test::SameKey;
// Feeds host 0 many fetches of fast-changing, signal-rich pages.
void TeachHost(Scheduler& s, double* now, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<PageId> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(s.AddUrl(0, 1).value());
  for (PageId p : ids) s.Observe({p, *now, FetchedObs{}});
  for (int round = 0; round < 40; ++round) {
    *now += 0.25 * kDay;
    for (PageId p : ids) {
      if (u(rng) < 0.8) s.Observe({p, *now - 100, SignalObs{}});
      s.Observe({p, *now, Changed(u(rng) < 0.7)});
    }
  }
}

TEST(SchedulerTest, NewPagesStartFromTheirHostsPooledEstimates) {
  std::mt19937_64 rng(3);
  SCOPED_TRACE("seed 3");
  SchedulerOptions o;
  o.policy = "ncis";
  auto s = Make(o);
  double now = 0;
  TeachHost(*s, &now, rng);
  const RatePrior rate = s->hosts().PageRatePrior(0);
  const SignalPrior sig = s->hosts().PageSignalPrior(0);
  EXPECT_GT(rate.rate, 2 / kDay);  // learned: far from the 1/day default
  PageId fresh = s->AddUrl(0, 1).value();
  // Δ is the median of the host's rate mixture (no evidence of its own
  // yet): learned like the host's Gamma rate, not the 1/day default.
  ASSERT_TRUE(s->RateMemoryOf(fresh).has_value());
  EXPECT_FLOAT_EQ(s->page(fresh).rate, s->RateMemoryOf(fresh)->draws.rate[1]);
  EXPECT_GT(s->page(fresh).rate, 2 / kDay);
  EXPECT_LT(std::abs(std::log(s->page(fresh).rate / rate.rate)), std::log(3));
  EXPECT_FLOAT_EQ(s->page(s->AddUrl(0, 1).value()).rate,
                  s->page(fresh).rate);  // pooled: the same for each
  EXPECT_FLOAT_EQ(s->Snapshot(fresh).alpha,
                  static_cast<float>(sig.center.alpha));
  EXPECT_FLOAT_EQ(s->Snapshot(fresh).nu, static_cast<float>(sig.center.nu));
  EXPECT_GT(s->Snapshot(fresh).alpha, 0.3);
  EXPECT_GT(s->Snapshot(fresh).nu, 0);
  // A page on an unknown host starts from the global mixture (every
  // host's pages): near the global Gamma rate.
  PageId other = s->AddUrl(99, 1).value();
  EXPECT_FLOAT_EQ(s->page(other).rate, s->RateMemoryOf(other)->draws.rate[1]);
  EXPECT_LT(std::abs(std::log(s->page(other).rate / s->hosts().GlobalRate())),
            std::log(3));
}

// A host whose pages half never change learns a static share, and its
// never-changing pages' rates fall well below the plain Gamma estimate
// (their crawl value with them); a host of changing pages learns none.
TEST(SchedulerTest, HostsLearnTheirShareOfStaticPages) {
  SchedulerOptions o;
  o.policy = "freshness";
  auto s = Make(o);
  std::vector<PageId> half, changing;
  for (int i = 0; i < 20; ++i) half.push_back(s->AddUrl(0, 1).value());
  for (int i = 0; i < 20; ++i) changing.push_back(s->AddUrl(1, 1).value());
  const double before = s->hosts().StaticShare(0);
  for (int day = 0; day <= 30; ++day) {
    for (int i = 0; i < 20; ++i) {
      s->Observe({half[i], day * kDay, Changed(i % 2 == 0 && day > 0)});
      s->Observe({changing[i], day * kDay, Changed(day > 0)});
    }
  }
  EXPECT_GT(s->hosts().StaticShare(0), 0.3);
  EXPECT_GT(s->hosts().StaticShare(0), before);
  EXPECT_LT(s->hosts().StaticShare(1), 0.1);
  const PageState& quiet = s->page(half[1]);
  RatePrior gamma = s->hosts().PageRatePrior(0);
  EXPECT_GT(gamma.static_share, 0.3);
  EXPECT_NEAR(quiet.static_q / 255.0, quiet.rate_stats.StaticPosterior(gamma),
              1 / 255.0 + 1e-9);
  gamma.static_share = 0;
  EXPECT_LT(quiet.rate, 0.2 * quiet.rate_stats.Estimate(gamma));
  EXPECT_GT(quiet.rate, 0);
  // Changing pages on the same host are not discounted.
  const PageState& busy = s->page(half[0]);
  EXPECT_EQ(busy.static_q, 0);
  EXPECT_EQ(busy.rate_stats.StaticPosterior(s->hosts().PageRatePrior(0)), 0);
}

// A page fetched once (e.g. added before its host had statistics) follows
// its host's pooled estimate as the round-robin re-estimation reaches it.
TEST(SchedulerTest, PagesWithoutEvidenceFollowTheirHost) {
  std::mt19937_64 rng(5);
  SCOPED_TRACE("seed 5");
  SchedulerOptions o;
  o.policy = "freshness";
  o.rate_mixture = o.explore = false;  // the Gamma host pool's pull
  auto s = Make(o);
  PageId lonely = s->AddUrl(0, 1).value();
  s->Observe({lonely, 0, FetchedObs{}});
  const float before = s->page(lonely).rate;
  double now = 0;
  TeachHost(*s, &now, rng);
  EXPECT_GT(s->page(lonely).rate, 2 * before);
  EXPECT_NEAR(s->page(lonely).rate, s->hosts().PageRatePrior(0).rate,
              0.05 * s->page(lonely).rate);
  o.reestimate_per_fetch = 0;  // off: the page keeps its first estimate
  auto frozen = Make(o);
  PageId f = frozen->AddUrl(0, 1).value();
  frozen->Observe({f, 0, FetchedObs{}});
  now = 0;
  TeachHost(*frozen, &now, rng);
  EXPECT_EQ(frozen->page(f).rate, before);
  o.reestimate_per_fetch = -1;
  EXPECT_FALSE(Scheduler::Create(o).ok());
}

// Last-Modified moving exactly when the content does makes the host trusted;
// moving without a content change (or not moving on a change) does not.
TEST(SchedulerTest, LastModifiedAgreementBuildsTrust) {
  SchedulerOptions o;
  o.policy = "freshness";
  o.rate_mixture = o.explore = false;  // the Gamma estimate's response
  auto s = Make(o);
  PageId a = s->AddUrl(1, 1).value();
  PageId b = s->AddUrl(2, 1).value();
  double lm_a = 1000, lm_b = 1000;
  FetchedObs first;
  first.last_modified = 1000;
  s->Observe({a, 2000, first});
  s->Observe({b, 2000, first});
  double t = 2000;
  for (int k = 0; k < 6; ++k) {
    t += kDay;
    const bool changed = k % 2 == 0;
    FetchedObs fa;
    fa.changed = changed;
    fa.previous_last_modified = lm_a;
    if (changed) lm_a = t - 3600;  // moved with the content
    fa.last_modified = lm_a;
    s->Observe({a, t, fa});
    FetchedObs fb;
    fb.changed = changed;
    fb.previous_last_modified = lm_b;
    lm_b = t - 3600;  // moves every time: disagrees when unchanged
    fb.last_modified = lm_b;
    s->Observe({b, t, fb});
  }
  EXPECT_TRUE(s->hosts().TrustLastModified(1));
  EXPECT_FALSE(s->hosts().TrustLastModified(2));
  // Without the previous validator nothing is checked.
  FetchedObs none;
  none.changed = true;
  none.last_modified = t;
  PageId c = s->AddUrl(3, 1).value();
  for (int k = 0; k < 8; ++k) s->Observe({c, t + k * kDay, none});
  EXPECT_FALSE(s->hosts().TrustLastModified(3));
  // Once trusted, a change an hour before the fetch is timed evidence: the
  // page's rate is estimated from the quiet time, not the bit alone.
  const float before = s->page(a).rate;
  for (int k = 1; k <= 4; ++k) {
    FetchedObs f;
    f.changed = true;
    f.previous_last_modified = lm_a;
    lm_a = t + k * 10 * kDay - 3600;
    f.last_modified = lm_a;
    s->Observe({a, t + k * 10 * kDay, f});
  }
  EXPECT_GT(s->page(a).rate, 2 * before);
}

// The signal policies fetch soon after a signal, so a trusted Last-Modified's
// quiet time is short by choice: they estimate the rate as if it were absent
// (the same history with and without it gives the same estimates), while
// `freshness`, whose fetch times do not follow signals, still times changes.
TEST(SchedulerTest, SignalPoliciesTimeChangesAgainstTheirSignals) {
  // A trusted host; then a page whose changes, 5 to 8 days apart, are each
  // signalled and fetched an hour later, and found unchanged 2 days after,
  // reporting Last-Modified or not. Read as a quiet time (λe^{−λs}), an
  // hour after each change says "fast"; read against the signals, it says
  // that no change followed the signalled one, and the unchanged days that
  // none came unsignalled.
  auto run = [](const char* policy, bool last_modified) {
    SchedulerOptions o;
    o.policy = policy;
    auto s = Make(o);
    PageId teacher = s->AddUrl(1, 1).value();
    PageId page = s->AddUrl(1, 1).value();
    double t = 2000, lm = 1000;
    FetchedObs first;
    first.last_modified = lm;
    for (PageId p : {teacher, page}) s->Observe({p, t, first});
    double page_lm = lm;
    for (int k = 0; k < 6; ++k) {  // Last-Modified agrees: trusted
      t += kDay;
      FetchedObs f;
      f.changed = k % 2 == 0;
      f.previous_last_modified = lm;
      if (f.changed) lm = t - 3600;
      f.last_modified = lm;
      s->Observe({teacher, t, f});
    }
    EXPECT_TRUE(s->hosts().TrustLastModified(1));
    for (int k = 0; k < 4; ++k) {
      const double change = t + (3 + k) * kDay;
      s->Observe({page, change, SignalObs{SignalSource::kPushedHint}});
      t = change + 3600;
      FetchedObs f;
      f.changed = true;
      if (last_modified) {
        f.previous_last_modified = page_lm;
        f.last_modified = page_lm = change;
      }
      s->Observe({page, t, f});
      t += 2 * kDay;  // and a routine fetch finds it unchanged
      FetchedObs same;
      if (last_modified) {
        same.previous_last_modified = same.last_modified = page_lm;
      }
      s->Observe({page, t, same});
    }
    return s->Snapshot(page);
  };
  const double truth = 4 / (27 * kDay);  // 4 changes, 5.0-8.1 days apart
  double ncis_timed = 0;
  for (const char* policy : {"ncis", "cis"}) {
    SCOPED_TRACE(policy);
    const PageSnapshot timed = run(policy, true), bare = run(policy, false);
    std::cout << policy << ": rate/day timed " << timed.rate * kDay << " bare "
              << bare.rate * kDay << " (truth " << truth * kDay
              << "); alpha timed " << timed.alpha << " bare " << bare.alpha
              << "\n";
    EXPECT_LT(std::abs(std::log(timed.rate / truth)), std::log(2.0));
    EXPECT_LT(std::abs(std::log(timed.rate / truth)),
              std::abs(std::log(bare.rate / truth)) / 2);
    // Every change was claimed by a signal: recall reads higher.
    EXPECT_GT(timed.alpha, bare.alpha + 0.2);
    ncis_timed = timed.rate;
  }
  // The freshness policy's fetch times do not follow signals: it reads the
  // quiet time as such, and the signal-chosen hour reads fast.
  const double freshness_timed = run("freshness", true).rate;
  const double freshness_bare = run("freshness", false).rate;
  std::cout << "freshness: rate/day timed " << freshness_timed * kDay
            << " bare " << freshness_bare * kDay << "\n";
  EXPECT_GT(freshness_timed, 1.5 * freshness_bare);
  EXPECT_GT(freshness_timed, 2 * ncis_timed);
}

}  // namespace
}  // namespace freshd::sched
