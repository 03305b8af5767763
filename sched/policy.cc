// The classic policies (uniform, nutch, freshness, age), the signal policies
// (ncis, ncis1, ncis2, cis) and the factory. Longevity: policy_longevity.cc.

#include "sched/policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

// μ/Δ, the supremum of every freshness-type value; 0 for a page that never
// changes (nothing to gain).
double FreshnessSup(const PageParams& p) {
  if (!(p.delta > 0)) return 0;
  return p.mu / p.delta;
}

double Finite(double v) { return std::isfinite(v) && v > 0 ? v : 0; }

// sup_τ dV/dτ of the freshness-type values, μ/e: GREEDY's dV/dτ = μΔτe^{−Δτ}
// peaks at τ = 1/Δ; for GREEDY-NCIS V(θ) = μ[G − e^{−κθ}L] rises more slowly
// (tests/sched/value_growth_test.cc checks both over a dense grid). 0.5μ
// leaves room for rounding; +inf for a page whose μ is not finite.
double FreshnessGrowth(const PageParams& p) {
  if (!(p.delta > 0) || !(p.mu >= 0) || !std::isfinite(p.mu)) return kInf;
  return 0.5 * p.mu;
}

// Equal spacing: the oldest copy first (value = τ).
class UniformPolicy final : public Policy {
 public:
  std::string_view name() const override { return "uniform"; }
  double Value(const PolicyInput&, double tau) const override { return tau; }
  double UpperBound(const PolicyInput&) const override { return kInf; }
  bool value_reads_model() const override { return false; }
};

// Nutch as shipped (Generator + AdaptiveFetchSchedule, nutch-default.xml):
// a page is due once its fetch time has come; among due pages the Generator
// takes the highest score first (topN per round), so Value is the page's
// score, its importance μ, when due and 0 before; a token no page is due for
// is left unused (due_only). New pages are due at once (the scheduler
// fetches every never-fetched page first, for every policy).
// AdaptiveFetchSchedule.setFetchSchedule after each fetch: the interval
// (first 30 days, db.fetch.interval.default) is kept on the first fetch
// (STATUS_UNKNOWN: no signature to compare), × (1 − 0.2) when the content
// changed, × (1 + 0.4) when not; with sync_delta, delta = the time since the
// last fetch that saw a change (modifiedTime: Nutch 1.x sets it to the
// fetch time on a change and does not read Last-Modified), the interval
// rises to delta if below it and the next fetch time is fetchTime − 0.3·delta
// + interval; the interval is clamped to [60 s, 365 days]. Not modelled:
// shouldFetch's db.fetch.interval.max (90 days) re-fetch of pages scheduled
// further out (an interval needs ≥ 213 days without a change to pass 90
// days from 30), and batched rounds (every selection is a Generate).
class NutchPolicy final : public Policy {
 public:
  explicit NutchPolicy(const PolicyOptions& o) : o_(o) {}
  std::string_view name() const override { return "nutch"; }
  double Value(const PolicyInput& in, double tau) const override {
    return tau >= DueAfter(*in.state) ? Score(in) : 0;
  }
  double UpperBound(const PolicyInput& in) const override { return Score(in); }
  bool value_reads_model() const override { return false; }
  bool due_only() const override { return true; }
  void OnFetched(const PolicyInput&, PageState& state, bool changed, double tau,
                 double) const override {
    double interval =
        state.interval > 0 ? state.interval : o_.nutch_initial_interval;
    double delta = 0;  // fetchTime − modifiedTime
    if (tau > 0) {
      interval *= changed ? 1.0 - o_.nutch_dec : 1.0 + o_.nutch_inc;
      if (!changed) delta = state.forced + tau;
    }
    if (o_.nutch_sync_delta_rate > 0) interval = std::max(interval, delta);
    state.interval = static_cast<float>(
        std::clamp(interval, o_.nutch_min_interval, o_.nutch_max_interval));
    state.forced = static_cast<float>(delta);  // since the last change seen
  }

 private:
  // Seconds after the last fetch at which the page is due.
  double DueAfter(const PageState& s) const {
    const double interval =
        s.interval > 0 ? s.interval : o_.nutch_initial_interval;
    return interval - o_.nutch_sync_delta_rate * s.forced;
  }
  static double Score(const PolicyInput& in) {
    return in.params.mu > 0 ? in.params.mu : 0;
  }

  PolicyOptions o_;
};

// StormCrawler's AdaptiveScheduler (with a status index spout such as
// OpenSearch's, which emits due URLs by next fetch date): a page is due
// `interval` after its fetch; among due pages the most overdue goes first
// (Value = seconds overdue + 1, so 0 until due, due_only); no score. After
// a fetch: the first keeps the default interval (1 day; no old signature to
// compare), a changed signature sets interval = (1 − 0.5)·interval +
// 0.5·min (min 60 min), an unchanged one (or a 304) interval × 1.5 up to
// 14 days; whole minutes. It differs from nutch in every constant (a
// 1-day start instead of 30, a 2-week cap instead of a year, ±50%), in
// having no sync_delta, and in ignoring the page's score.
class StormCrawlerPolicy final : public Policy {
 public:
  explicit StormCrawlerPolicy(const PolicyOptions& o) : o_(o) {}
  std::string_view name() const override { return "stormcrawler"; }
  double Value(const PolicyInput& in, double tau) const override {
    const double overdue = tau - Interval(*in.state);
    return overdue >= 0 ? overdue + 1 : 0;
  }
  double UpperBound(const PolicyInput&) const override { return kInf; }
  bool due_only() const override { return true; }
  void OnFetched(const PolicyInput&, PageState& state, bool changed, double tau,
                 double) const override {
    double interval = Interval(state);
    if (tau > 0) {
      interval = changed ? (1 - o_.storm_dec) * interval +
                               o_.storm_dec * o_.storm_min_interval
                         : std::min(interval * (1 + o_.storm_inc),
                                    o_.storm_max_interval);
    }
    state.interval = static_cast<float>(std::floor(interval / 60) * 60);
  }

 private:
  double Interval(const PageState& s) const {
    return s.interval > 0 ? s.interval : o_.storm_initial_interval;
  }

  PolicyOptions o_;
};

// GREEDY (Cho & Garcia-Molina / Azar): μ·∂F̄/∂f at f = 1/τ.
class FreshnessPolicy final : public Policy {
 public:
  std::string_view name() const override { return "freshness"; }
  double Value(const PolicyInput& in, double tau) const override {
    if (!(in.params.delta > 0)) return 0;
    return Finite(GreedyValue(in.params.delta, in.params.mu, tau));
  }
  double UpperBound(const PolicyInput& in) const override {
    return FreshnessSup(in.params);
  }
  double MaxValueGrowth(const PolicyInput& in) const override {
    return FreshnessGrowth(in.params);
  }
};

// The age metric's crawl value (unbounded: no page is abandoned).
class AgePolicy final : public Policy {
 public:
  std::string_view name() const override { return "age"; }
  double Value(const PolicyInput& in, double tau) const override {
    if (!(in.params.delta > 0)) return 0;
    return Finite(AgeValue(in.params.delta, in.params.mu, tau));
  }
  double UpperBound(const PolicyInput&) const override { return kInf; }
};

// GREEDY-NCIS (exact: max_terms 0) and its APPROX-m truncations. APPROX-m's
// value never exceeds μ/Δ·(1 − (ν/(Δ+ν))^m), for ncis1 μ/(Δ+ν): far below the
// exact ceiling μ/Δ when false signals are frequent (ν ≫ Δ), so ncis1
// abandons such pages, and whole hosts of them, even with true parameters
// (issue 31 item 4). Its floor is the scheduler's: every policy's page is
// refetched at least every [sched] max_interval (90 days by default in the
// daemon; `freshd sim --max-interval-days`). No value floor is added: one
// that lifts the ceiling to μ/Δ (rescaling by (Δ+ν)/Δ, or a max with the
// signal-blind GREEDY value) also lifts the value of every page with few
// signals, so it would no longer be the paper's APPROX-1 it is kept to
// measure; the exact `ncis` (the default) has no such ceiling, and ncis2's
// μ/Δ·(1 − (ν/(Δ+ν))²) is twice as far from 0 when ν ≫ Δ.
class NcisPolicy final : public Policy {
 public:
  NcisPolicy(std::string name, int max_terms)
      : name_(std::move(name)), max_terms_(max_terms) {}
  std::string_view name() const override { return name_; }
  double Value(const PolicyInput& in, double tau) const override {
    if (!(in.params.delta > 0)) return 0;
    return Finite(NcisValue(in.params, tau, SignalCount(in), max_terms_));
  }
  double UpperBound(const PolicyInput& in) const override {
    return FreshnessSup(in.params);
  }
  // Exact ncis only (APPROX-m's growth is not checked).
  double MaxValueGrowth(const PolicyInput& in) const override {
    return max_terms_ == 0 ? FreshnessGrowth(in.params) : kInf;
  }
  bool uses_signals() const override { return true; }

 private:
  std::string name_;
  int max_terms_;
};

// GREEDY-CIS: trusts every signal as a change.
class CisPolicy final : public Policy {
 public:
  std::string_view name() const override { return "cis"; }
  double Value(const PolicyInput& in, double tau) const override {
    if (!(in.params.delta > 0)) return 0;
    return Finite(CisValue(in.params, tau, in.state->signals));
  }
  double UpperBound(const PolicyInput& in) const override {
    return FreshnessSup(in.params);
  }
  bool uses_signals() const override { return true; }
};

}  // namespace

// Defined in policy_longevity.cc.
std::unique_ptr<Policy> MakeLongevityPolicy(const PolicyOptions& options);
std::unique_ptr<Policy> MakeLongevityBoundPolicy(const PolicyOptions& options);

void Policy::OnFetched(const PolicyInput&, PageState&, bool, double,
                       double) const {}

double Policy::MaxValueGrowth(const PolicyInput&) const { return kInf; }

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> kNames = {
      "uniform", "nutch",     "stormcrawler",   "freshness",
      "age",     "ncis",      "ncis1",          "ncis2",
      "cis",     "longevity", "longevity-bound"};
  return kNames;
}

Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                           const PolicyOptions& options) {
  std::unique_ptr<Policy> p;
  if (name == "uniform") p = std::make_unique<UniformPolicy>();
  if (name == "nutch") p = std::make_unique<NutchPolicy>(options);
  if (name == "stormcrawler") p = std::make_unique<StormCrawlerPolicy>(options);
  if (name == "freshness") p = std::make_unique<FreshnessPolicy>();
  if (name == "age") p = std::make_unique<AgePolicy>();
  if (name == "ncis") p = std::make_unique<NcisPolicy>("ncis", 0);
  if (name == "ncis1") p = std::make_unique<NcisPolicy>("ncis1", 1);
  if (name == "ncis2") p = std::make_unique<NcisPolicy>("ncis2", 2);
  if (name == "cis") p = std::make_unique<CisPolicy>();
  if (name == "longevity") p = MakeLongevityPolicy(options);
  if (name == "longevity-bound") p = MakeLongevityBoundPolicy(options);
  if (!p) {
    return Status::InvalidArgument("unknown policy '" + std::string(name) +
                                   "'");
  }
  return p;
}

}  // namespace freshd::sched
