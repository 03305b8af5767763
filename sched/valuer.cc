#include "sched/valuer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

constexpr DivergenceModel kNeverChanges{};  // before a first fetch

// A draw's weight from the n signals since the fetch, τ ago: log P(n | draw)
// up to a constant, n·ln σ − στ with σ = αΔ + ν (σ also set); 0 (and σ = 0)
// for policies that ignore signals.
double SignalLogWeight(const PageParams& p, bool signals, double n, double tau,
                       double* sigma) {
  *sigma = signals ? std::max(p.alpha * p.delta + p.nu, 1e-300) : 0;
  return signals ? n * std::log(*sigma) - *sigma * tau : 0.0;
}

}  // namespace

Valuer::Valuer(const SchedulerOptions& options, const Policy& policy,
               const std::vector<PageState>& pages, const RuleTable& rules,
               const Estimator& estimator, const TokenBucket& bucket)
    : options_(options),
      policy_(policy),
      pages_(pages),
      rules_(rules),
      estimator_(estimator),
      bucket_(bucket) {}

std::span<const WeightedParams> Valuer::Mixture(PageId page) const {
  if (!options_.oracle || policy_.uses_profiles() || truth_ == nullptr) {
    return {};
  }
  return truth_->TrueMixture(page);
}

double Valuer::PolicyValue(const PolicyInput& in, PageId page,
                           double tau) const {
  if (!Mixture(page).empty()) return MixtureValue(in, Mixture(page), tau);
  std::array<WeightedParams, 3> draws;
  if (RateDraws(page, in, &draws)) return MixtureValue(in, draws, tau);
  return policy_.Value(in, tau);
}

bool Valuer::RateDraws(PageId page, const PolicyInput& in,
                       std::array<WeightedParams, 3>* draws) const {
  if (options_.oracle || options_.oracle_rate ||
      !options_.value_over_rate_uncertainty || !policy_.value_reads_model()) {
    return false;
  }
  const PageState& s = pages_[page];
  if (!policy_.uses_signals()) return MixtureDraws(page, in, draws);
  const double rate = in.params.delta;
  if (!s.fetched() || !(rate > 0) || !std::isfinite(rate)) return false;
  const double info = s.rate_stats.LogRateInformation(rate) +
                      estimator_.hosts().options().page_rate_weight;
  if (!(info > 0)) return false;
  const double spread = std::exp(std::sqrt(3.0 / info));
  constexpr double kSide = 1.0 / 6, kMiddle = 2.0 / 3;
  (*draws)[0] = {in.params, kSide};
  (*draws)[0].params.delta = rate / spread;
  (*draws)[1] = {in.params, kMiddle};
  (*draws)[2] = {in.params, kSide};
  (*draws)[2].params.delta = rate * spread;
  return true;
}

bool Valuer::MixtureDraws(PageId page, const PolicyInput& in,
                          std::array<WeightedParams, 3>* draws) const {
  if (!options_.rate_mixture || options_.oracle || options_.oracle_rate ||
      !pages_[page].fetched()) {
    return false;
  }
  const RateTerciles& r = *estimator_.DrawsOf(page);
  if (r.empty()) return false;
  for (int i = 0; i < 3; ++i) {
    (*draws)[i] = {in.params, 1.0 / 3};
    (*draws)[i].params.delta = r.rate[i];
  }
  return true;
}

double Valuer::MixtureValue(PolicyInput in,
                            std::span<const WeightedParams> draws,
                            double tau) const {
  const bool signals = policy_.uses_signals();
  const double n = in.state->signals;
  // Silence counts only where a signal source looked.
  const double heard = estimator_.CoveredTau(*in.state, tau);
  double top = -kInf, sigma;
  for (const WeightedParams& w : draws) {
    if (w.weight > 0) {
      top = std::max(top, SignalLogWeight(w.params, signals, n, heard, &sigma));
    }
  }
  double sum = 0, total = 0;
  for (const WeightedParams& w : draws) {
    if (!(w.weight > 0)) continue;
    const double weight =
        w.weight *
        std::exp(SignalLogWeight(w.params, signals, n, heard, &sigma) - top);
    in.params = w.params;
    sum += weight * policy_.Value(in, tau);
    total += weight;
  }
  return total > 0 ? sum / total : 0;
}

double Valuer::ValueGrowth(PageId page) const {
  if (!pages_[page].fetched() || !Mixture(page).empty()) return kInf;
  PolicyInput in = Input(page);
  std::array<WeightedParams, 3> draws;
  if (!RateDraws(page, in, &draws)) {
    const double growth = policy_.MaxValueGrowth(in);
    return growth >= 0 ? growth : kInf;  // NaN: none
  }
  // MixtureValue = Σũ_iV_i with ũ_i ∝ w_iσ_iⁿe^{−σ_iτ}, so its derivative is
  // Σũ_iV_i' + Σũ_i(σ̄ − σ_i)V_i. The first is at most max_i V_i' bound; in
  // the second Σũ_i(σ̄ − σ_i) = 0, so V_i may be taken about the middle of
  // [0, max_i sup V_i], and Σũ_i|σ̄ − σ_i| ≤ σ_max − σ_min.
  const bool signals = policy_.uses_signals();
  double growth = 0, sup = 0, lo = kInf, hi = -kInf, sigma;
  for (const WeightedParams& w : draws) {
    if (!(w.weight > 0)) continue;
    in.params = w.params;
    const double g = policy_.MaxValueGrowth(in);
    const double u = policy_.UpperBound(in);
    if (!(g >= 0) || !(u >= 0)) return kInf;
    growth = std::max(growth, g);
    sup = std::max(sup, u);
    SignalLogWeight(w.params, signals, 0, 0, &sigma);
    lo = std::min(lo, sigma);
    hi = std::max(hi, sigma);
  }
  if (hi > lo) growth += 0.5 * (hi - lo) * sup;
  return growth >= 0 ? growth : kInf;
}

double Valuer::MixtureBound(PolicyInput in,
                            std::span<const WeightedParams> draws, double start,
                            double end) const {
  // Until the horizon τ_h, from τ_0 (the horizon's start, or the fetch), each
  // draw's value is at most c_i = min(UpperBound, value at τ_h), and its
  // weight u_i(τ) = u_i(τ_0)e^{−σ_i(τ−τ_0)} within [u_i(τ_0)e^{−σ_i(τ_h−τ_0)},
  // u_i(τ_0)]. So the average is at most Σu_i(τ_0)c_i / Σu_i(τ_0)e^{−σ_i(τ_h
  // −τ_0)}, and at most max c_i. The weights run on the covered time
  // τ_s (ObserveSignalCoverage), which stays within [τ_0, τ_h] when τ_0
  // is the earlier of the horizon's start and the coverage now: coverage
  // only moves forward, and not past the time a value is asked for.
  const PageState& s = *in.state;
  const double tau_h = std::max(0.0, end - s.last_fetch);
  const double tau_0 = std::clamp(
      std::min(start, estimator_.SignalCoverage(s.host)) - s.last_fetch, 0.0,
      tau_h);
  const bool signals = policy_.uses_signals();
  const double n = s.signals;
  double top = -kInf, sigma;
  for (const WeightedParams& w : draws) {
    if (w.weight > 0) {
      top = std::max(top, SignalLogWeight(w.params, signals, n, tau_0, &sigma));
    }
  }
  double largest = 0, sum = 0, least_total = 0;
  for (const WeightedParams& w : draws) {
    if (!(w.weight > 0)) continue;
    in.params = w.params;
    const double sup = policy_.UpperBound(in);
    const double at_horizon = policy_.Value(in, tau_h);
    const double c = at_horizon < sup ? at_horizon : sup;  // NaN: the sup
    const double u =
        w.weight *
        std::exp(SignalLogWeight(w.params, signals, n, tau_0, &sigma) - top);
    largest = std::max(largest, c);
    sum += u * c;
    least_total += u * std::exp(-sigma * (tau_h - tau_0));
  }
  const double tilted = least_total > 0 ? sum / least_total : kInf;
  return tilted < largest ? tilted : largest;
}

PageParams Valuer::Params(PageId page) const {
  PageParams p;
  const PageState& s = pages_[page];
  if (options_.oracle) {
    const PageParams* truth =
        truth_ != nullptr ? truth_->TrueParams(page) : nullptr;
    p = truth != nullptr ? *truth : PageParams{0, s.importance, 0, 0};
  } else {
    p = PageParams{s.rate, s.importance, 0, 0};
    if (const PageSignals* g = estimator_.SignalsOf(page)) {
      p.alpha = g->alpha;
      p.nu = g->nu;
    }
  }
  if (const PageRule* rule = rules_.RuleFor(page);
      rule && rule->importance > 0) {
    p.mu = rule->importance;
  }
  return p;
}

double Valuer::FreshProbability(PageId page, double now) const {
  const PageState& s = pages_[page];
  if (!s.fetched()) return 0;
  PageParams params = Params(page);
  if (!options_.oracle && !policy_.uses_signals()) {
    params.alpha = params.nu = 0;  // never estimated: signals ignored
  }
  const double tau = std::max(0.0, now - s.last_fetch);
  // The signals (and their silence) tell about the covered time τ_s only;
  // after it the page changes at Δ unobserved: P(fresh) = P(fresh over τ_s
  // | n) · e^{−Δ(τ−τ_s)} (ObserveSignalCoverage).
  const double heard = estimator_.CoveredTau(s, tau);
  const double weighted = WeightedSignals(page);
  const double n = weighted >= 0 ? weighted : s.signals;
  const auto fresh = [&](const PageParams& p) {
    const double f = sched::FreshProbability(p, heard, n);
    return heard < tau ? f * std::exp(-p.delta * (tau - heard)) : f;
  };
  double p;
  std::array<WeightedParams, 3> draws;
  if (MixtureDraws(page, Input(page), &draws)) {
    // Over the draws, each weighted as MixtureValue weighs it.
    const bool signals = policy_.uses_signals();
    double top = -kInf, sigma, sum = 0, total = 0;
    for (const WeightedParams& w : draws) {
      top = std::max(
          top, SignalLogWeight(w.params, signals, s.signals, heard, &sigma));
    }
    for (WeightedParams& w : draws) {
      if (!signals) w.params.alpha = w.params.nu = 0;
      const double u =
          w.weight * std::exp(SignalLogWeight(w.params, signals, s.signals,
                                              heard, &sigma) -
                              top);
      sum += u * fresh(w.params);
      total += u;
    }
    p = total > 0 ? sum / total : 0;
  } else {
    p = fresh(params);
  }
  return std::isfinite(p) ? std::clamp(p, 0.0, 1.0) : 0;
}

const DivergenceModel* Valuer::Model(PageId page) const {
  if (!policy_.uses_profiles()) return nullptr;
  if (options_.oracle) {
    const DivergenceModel* truth =
        truth_ != nullptr ? truth_->TrueModel(page) : nullptr;
    return truth != nullptr ? truth : &kNeverChanges;
  }
  const std::optional<DivergenceModel>& fitted =
      estimator_.Profiles(page)->fitted();
  return fitted ? &*fitted : &kNeverChanges;
}

double Valuer::WeightedSignals(PageId page) const {
  const SourceSignals* sources = estimator_.SourceSignalsOf(page);
  if (sources == nullptr) return -1;
  const double weighted = sources->weighted;
  return weighted == pages_[page].signals ? -1 : weighted;
}

PolicyInput Valuer::Input(PageId page) const {
  PolicyInput in;
  in.state = &pages_[page];
  in.params = Params(page);
  in.signals = WeightedSignals(page);
  if (policy_.uses_profiles()) {
    in.model = Model(page);
    in.profiles = estimator_.Profiles(page);
  }
  in.oracle = options_.oracle;
  const double rate = bucket_.rate();
  in.mean_interval =
      rate > 0 ? static_cast<double>(pages_.size()) / rate : kInf;
  return in;
}

double Valuer::Deadline(PageId page) const {
  const PageState& s = pages_[page];
  if (!s.fetched() || s.removed()) return kInf;
  double interval = options_.max_interval > 0 ? options_.max_interval : kInf;
  if (s.forced > 0 && policy_.forced_is_deadline()) {
    interval = std::min<double>(interval, s.forced);
  }
  if (options_.explore && !options_.oracle &&
      s.rate_stats.observations() <= 0 &&
      estimator_.ExploreInterval(page) > 0) {
    interval = std::min(interval, estimator_.ExploreInterval(page));
  }
  if ((s.flags & PageState::kProbe) != 0) {
    const double last = s.rate_stats.RecentInterval(0);
    if (last > 0) interval = std::min(interval, last / 4);
  }
  double min_interval = options_.min_interval;
  if (const PageRule* rule = rules_.RuleFor(page)) {
    if (rule->max_interval > 0) {
      interval = std::min(interval, rule->max_interval);
    }
    min_interval = std::max(min_interval, rule->min_interval);
  }
  if (!std::isfinite(interval)) return kInf;
  return s.last_fetch + std::max(interval, min_interval);
}

double Valuer::IndexBound(PageId page, double start, double end) const {
  const PageState& s = pages_[page];
  // A removed page sorts below every live one (Selector::kRemovedBound).
  if (s.removed()) return -kInf;
  double bound = options_.new_page_value;
  if (s.fetched()) {
    // Values do not decrease with time between observations (policy.h), so
    // the value at the horizon bounds every value Select() sees before it.
    PolicyInput in = Input(page);
    if (!Mixture(page).empty()) {
      return MixtureBound(in, Mixture(page), start, end);
    }
    std::array<WeightedParams, 3> draws;
    if (RateDraws(page, in, &draws)) return MixtureBound(in, draws, start, end);
    bound = policy_.UpperBound(in);
    double at_horizon = policy_.Value(in, std::max(0.0, end - s.last_fetch));
    if (at_horizon < bound) bound = at_horizon;  // NaN keeps the sup
  }
  return bound;
}

double Valuer::Value(PageId page, double now) const {
  const PageState& s = pages_[page];
  if (!s.fetched()) return options_.new_page_value;
  return PolicyValue(Input(page), page, std::max(0.0, now - s.last_fetch));
}

Priority Valuer::PriorityOf(PageId page, double now) const {
  double deadline = Deadline(page);
  if (deadline <= now) return Priority{true, deadline};
  return Priority{false, Value(page, now)};
}

}  // namespace freshd::sched
