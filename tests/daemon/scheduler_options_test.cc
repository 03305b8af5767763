// daemon/scheduler_options.h: every config key SchedulerOptionsFromConfig
// reads lands in its SchedulerOptions field, and the scheduler behaviours
// that follow from a config (moved here from tests/sched/scheduler_test.cc
// with the function: sched/ no longer reads the config).
#include "daemon/scheduler_options.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "sched/policy.h"
#include "sched/scheduler.h"

namespace freshd::daemon {
namespace {

using namespace freshd::sched;  // NOLINT: the scheduler's vocabulary

constexpr double kDay = 86400;

FetchedObs Changed(bool changed) {
  FetchedObs f;
  f.changed = changed;
  return f;
}

std::unique_ptr<Scheduler> Make(SchedulerOptions o) {
  auto s = Scheduler::Create(o);
  EXPECT_TRUE(s.ok()) << o.policy;
  return std::move(s).value();
}

// Each key reaches its field, with the documented unit changes: days for
// new_page_value and learning_l, the prior interval as a rate, and the rate
// mixture's grid scaled by 86400 / prior_change_interval_s.
TEST(SchedulerOptionsTest, EveryKeyReachesItsField) {
  Config config;
  const SchedulerOptions defaults = SchedulerOptionsFromConfig(config);
  config.sched.policy = "freshness";
  config.budget.rate = 3.5;
  config.budget.burst = 7;
  config.sched.new_page_value = 2;
  config.sched.min_interval_s = 11;
  config.sched.max_interval_s = 13 * kDay;
  config.sched.history = 5;
  config.crawler.max_urls = 1234;
  config.sched.risk_rho = 0.25;
  config.sched.learning_l = 3;
  config.sched.prior_change_interval_s = kDay / 10;
  config.sched.signal_window_s = 17;
  config.sched.value_over_rate_uncertainty =
      !config.sched.value_over_rate_uncertainty;
  config.sched.rate_model = "mixture";
  config.sched.explore = !config.sched.explore;
  const SchedulerOptions o = SchedulerOptionsFromConfig(config);
  EXPECT_EQ(o.policy, "freshness");
  EXPECT_EQ(o.rate, 3.5);
  EXPECT_EQ(o.burst, 7);
  EXPECT_EQ(o.new_page_value, 2 * kDay);
  EXPECT_EQ(o.min_interval, 11);
  EXPECT_EQ(o.max_interval, 13 * kDay);
  EXPECT_EQ(o.history, 5);
  EXPECT_EQ(o.max_pages, 1234u);
  EXPECT_EQ(o.policy_options.risk_rho, 0.25);
  EXPECT_EQ(o.policy_options.learning_l, 3 * kDay);
  EXPECT_DOUBLE_EQ(o.host_pool.global_prior.rate, 10 / kDay);
  EXPECT_EQ(o.signal_window, 17);
  EXPECT_EQ(o.value_over_rate_uncertainty,
            config.sched.value_over_rate_uncertainty);
  EXPECT_TRUE(o.rate_mixture);
  EXPECT_EQ(o.explore, config.sched.explore);
  EXPECT_DOUBLE_EQ(o.rate_mixture_options.min_rate,
                   defaults.rate_mixture_options.min_rate * 10);
  EXPECT_DOUBLE_EQ(o.rate_mixture_options.max_rate,
                   defaults.rate_mixture_options.max_rate * 10);
  EXPECT_TRUE(Scheduler::Create(o).ok());
}

// Estimated, a signal policy values a page over its change rate's
// uncertainty: Δ̂ and Δ̂·e^{±√3·sd} (weights 2/3, 1/6, 1/6), sd² = 1/(the
// bits' information about ln Δ + the prior's weight), each weighted by
// σⁿe^{−στ}; off ([sched] value_over_rate_uncertainty = false), or for
// other policies, the value at the estimate.
TEST(SchedulerOptionsTest, EstimatedValueIsOverTheRateUncertainty) {
  for (bool on : {true, false}) {
    for (const std::string name : {"ncis", "freshness"}) {
      SCOPED_TRACE(name + (on ? " on" : " off"));
      Config config;
      config.sched.policy = name;
      config.budget.rate = 100 / kDay;
      config.sched.value_over_rate_uncertainty = on;
      config.sched.rate_model = "gamma";  // the draws here are ncis' own
      config.sched.explore = false;
      const SchedulerOptions o = SchedulerOptionsFromConfig(config);
      auto s = Make(o);
      PageId id = *s->AddUrl(0, 0.8);
      s->Observe({id, 0, Changed(false)});
      s->Observe({id, 2 * kDay, Changed(true)});
      s->Observe({id, 5 * kDay, Changed(false)});
      for (int i = 0; i < 2; ++i) {
        s->Observe({id, kDay * (5.5 + i), SignalObs{}});
      }
      const double now = 8 * kDay, tau = 3 * kDay;
      auto policy = MakePolicy(name, {});
      ASSERT_TRUE(policy.ok());
      PolicyInput in;
      in.state = &s->page(id);
      in.params = s->Params(id);
      in.mean_interval = 1 / o.rate;
      const double plain = (*policy)->Value(in, tau);
      if (!on || name != "ncis") {
        EXPECT_EQ(s->Value(id, now), plain);
        continue;
      }
      const PageParams est = s->Params(id);
      const double info = s->page(id).rate_stats.LogRateInformation(est.delta) +
                          s->hosts().options().page_rate_weight;
      const double spread = std::exp(std::sqrt(3 / info));
      double sum = 0, total = 0;
      for (auto [factor, weight] :
           {std::pair{1 / spread, 1.0 / 6}, std::pair{1.0, 2.0 / 3},
            std::pair{spread, 1.0 / 6}}) {
        in.params.delta = est.delta * factor;
        const double sigma = est.alpha * in.params.delta + est.nu;
        const double w = weight * sigma * sigma * std::exp(-sigma * tau);
        sum += w * (*policy)->Value(in, tau);
        total += w;
      }
      EXPECT_NEAR(s->Value(id, now), sum / total, 1e-12 * sum / total);
      EXPECT_NE(s->Value(id, now), plain);
    }
  }
}

// [sched] prior_change_interval is the global prior: a page with no evidence
// on a host with none starts at that rate, and observations move it.
TEST(SchedulerOptionsTest, ConfiguredPriorChangeIntervalIsTheStartingRate) {
  Config config;
  config.sched.policy = "freshness";
  config.sched.rate_model = "gamma";  // one rate: the prior itself
  config.sched.explore = false;
  config.sched.prior_change_interval_s = 3600;
  auto s = Make(SchedulerOptionsFromConfig(config));
  PageId page = s->AddUrl(0, 1).value();
  EXPECT_FLOAT_EQ(s->page(page).rate, static_cast<float>(1.0 / 3600));
  config.sched.prior_change_interval_s = 30 * kDay;
  auto slow = Make(SchedulerOptionsFromConfig(config));
  PageId other = slow->AddUrl(0, 1).value();
  EXPECT_FLOAT_EQ(slow->page(other).rate, static_cast<float>(1 / (30 * kDay)));
  // A page changing every 10 s, fetched every 20 s: under the one-hour
  // prior its estimate reaches minutes within 20 fetches.
  double now = 0;
  s->Observe({page, now, FetchedObs{}});
  for (int i = 0; i < 20; ++i) {
    now += 20;
    FetchedObs changed;
    changed.changed = true;
    s->Observe({page, now, std::move(changed)});
  }
  EXPECT_GT(s->page(page).rate, 1.0 / 600);
}

// Late signals about a change the copy already has are dropped: a lastmod
// not after the last fetch always, a hint (no change time) within [sched]
// signal_window of the fetch; later ones count, as does everything before
// the first fetch.
TEST(SchedulerOptionsTest, StaleSignalsAreDropped) {
  Config config;
  config.sched.policy = "ncis";
  config.sched.signal_window_s = 600;
  auto s = Make(SchedulerOptionsFromConfig(config));
  PageId page = s->AddUrl(0, 1).value();
  const auto hint = [](double changed_at) {
    SignalObs obs{SignalSource::kPushedHint};
    obs.changed_at = changed_at;
    return obs;
  };
  const double kNone = -std::numeric_limits<double>::infinity();
  s->Observe({page, 10, hint(kNone)});  // never fetched: counts
  EXPECT_EQ(s->page(page).signals, 1);
  s->Observe({page, 1000, FetchedObs{}});
  EXPECT_EQ(s->page(page).signals, 0);
  s->Observe({page, 1300, hint(kNone)});  // within the window
  s->Observe({page, 1300, hint(999)});    // lastmod before the fetch
  s->Observe({page, 5000, hint(1000)});   // lastmod at the fetch
  EXPECT_EQ(s->page(page).signals, 0);
  EXPECT_TRUE(s->IsStaleSignal(page, 1300, hint(999)));
  EXPECT_FALSE(s->IsStaleSignal(page, 1300, hint(1001)));
  EXPECT_FALSE(s->IsStaleSignal(page + 1, 1300, hint(999)));  // unknown id
  s->Observe({page, 1300, hint(1001)});   // a change after the fetch
  s->Observe({page, 1601, hint(kNone)});  // after the window
  EXPECT_EQ(s->page(page).signals, 2);
  // Without a window every hint counts; lastmods are still checked.
  config.sched.signal_window_s = 0;
  auto open = Make(SchedulerOptionsFromConfig(config));
  PageId other = open->AddUrl(0, 1).value();
  open->Observe({other, 1000, FetchedObs{}});
  open->Observe({other, 1000.5, hint(kNone)});
  open->Observe({other, 1000.5, hint(500)});
  open->Observe({other, 999, hint(kNone)});  // the wall clock stepped back
  EXPECT_EQ(open->page(other).signals, 2);
  SchedulerOptions bad;
  bad.signal_window = -1;
  EXPECT_FALSE(Scheduler::Create(bad).ok());
}

// A date-only lastmod (read as midnight UTC) claims its whole day: stale
// only when the day had ended by the last fetch.
TEST(SchedulerOptionsTest, DateOnlyLastmodIsStaleOnlyAfterItsDay) {
  Config config;
  config.sched.policy = "ncis";
  auto s = Make(SchedulerOptionsFromConfig(config));
  PageId page = s->AddUrl(0, 1).value();
  const double day = 86400, midnight = 20417 * day;  // 2025-11-25
  const auto lastmod = [](double changed_at) {
    SignalObs obs{SignalSource::kSitemapLastmod};
    obs.changed_at = changed_at;
    return obs;
  };
  s->Observe({page, midnight + 10 * 3600, FetchedObs{}});  // 10:00
  const double now = midnight + 11 * 3600;
  EXPECT_FALSE(s->IsStaleSignal(page, now, lastmod(midnight)));  // that day
  EXPECT_TRUE(s->IsStaleSignal(page, now, lastmod(midnight - day)));
  EXPECT_TRUE(s->IsStaleSignal(page, now, lastmod(midnight + 1)));  // 00:00:01
  s->Observe({page, now, lastmod(midnight)});
  EXPECT_EQ(s->page(page).signals, 1);
  s->Observe({page, midnight + day, FetchedObs{}});  // the next midnight
  EXPECT_TRUE(s->IsStaleSignal(page, now + day, lastmod(midnight)));
}

}  // namespace
}  // namespace freshd::daemon
