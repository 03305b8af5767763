#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>

#include "sched/divergence_fit.h"
#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

constexpr DivergenceModel kNeverChanges{};  // before a first fetch
// A page's fit teaches its host's divergence prior once this many points
// shaped it (DivergenceFit::points).
constexpr int kPriorMinPoints = 3;

// A draw's weight from the n signals since the fetch, τ ago: log P(n | draw)
// up to a constant, n·ln σ − στ with σ = αΔ + ν (σ also set); 0 (and σ = 0)
// for policies that ignore signals.
double SignalLogWeight(const PageParams& p, bool signals, double n, double tau,
                       double* sigma) {
  *sigma = signals ? std::max(p.alpha * p.delta + p.nu, 1e-300) : 0;
  return signals ? n * std::log(*sigma) - *sigma * tau : 0.0;
}

// The mixture's global pseudo-pages follow the configured prior (the host
// pool's global prior rate) unless the options name their own. (Its grid
// follows the prior too: daemon/scheduler_options.h scales it.)
RateMixtureOptions MixtureOptions(const SchedulerOptions& options) {
  RateMixtureOptions o = options.rate_mixture_options;
  if (o.prior_rate == 0) o.prior_rate = options.host_pool.global_prior.rate;
  return o;
}

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::Create(
    const SchedulerOptions& options) {
  if (!(options.rate >= 0) || !std::isfinite(options.rate)) {
    return Status::InvalidArgument("scheduler: rate must be finite and >= 0");
  }
  if (!(options.burst >= 1)) {
    return Status::InvalidArgument("scheduler: burst must be >= 1");
  }
  if (!(options.min_interval >= 0) || options.history < 1 ||
      options.refit_every < 1 || options.reestimate_per_fetch < 0 ||
      !(options.new_page_value >= 0) || !(options.signal_window >= 0) ||
      !std::isfinite(options.signal_window)) {
    return Status::InvalidArgument("scheduler: bad interval/history option");
  }
  if (!(options.initial_horizon_scale >= kMinHorizonScale &&
        options.initial_horizon_scale <= kMaxHorizonScale)) {
    return Status::InvalidArgument(
        "scheduler: initial_horizon_scale must be in [1, 64]");
  }
  auto policy = MakePolicy(options.policy, options.policy_options);
  if (!policy.ok()) return policy.status();
  return std::unique_ptr<Scheduler>(
      new Scheduler(options, std::move(policy).value()));
}

Scheduler::Scheduler(const SchedulerOptions& options,
                     std::unique_ptr<Policy> policy)
    : options_(options),
      policy_(std::move(policy)),
      hosts_(options.host_pool),
      rate_mixture_(MixtureOptions(options)),
      bucket_(options.rate, options.burst, 0),
      horizon_scale_(options.initial_horizon_scale) {
  // A due-only policy (nutch) is a baseline with its own schedule.
  if (policy_->due_only()) options_.explore = false;
  PageState probe;
  PolicyInput in;
  in.state = &probe;
  in.params = PageParams{1, 1, 0.5, 1};
  memo_values_ =
      options_.lazy_revaluation && std::isfinite(policy_->MaxValueGrowth(in));
}

Result<PageId> Scheduler::AddUrl(HostId host, double importance) {
  if (pages_.size() >= options_.max_pages) {
    return Status::ResourceExhausted("scheduler: max_pages reached");
  }
  PageId id = static_cast<PageId>(pages_.size());
  PageState s;
  s.host = host;
  s.importance = static_cast<float>(
      std::clamp(std::isfinite(importance) ? importance : 1.0, 1e-6, 1e6));
  hosts_.AddPage(host);
  pages_.push_back(s);
  if (options_.rate_mixture) rate_draws_.emplace_back();
  if (options_.explore) explore_interval_.push_back(0);
  if (policy_->uses_signals()) {
    recent_signals_.emplace_back();
    signals_.emplace_back();
  }
  RefreshEstimates(id);  // no evidence yet: the host's pooled (Δ, α, ν)
  if (KeepsTruth()) truth_.push_back(PageParams{0, s.importance, 0, 0});
  if (policy_->uses_profiles()) {
    if (options_.oracle) truth_models_.emplace_back();
    profiles_.emplace_back(options_.history);
  }
  Reindex(id);
  return id;
}

void Scheduler::Reserve(size_t pages) {
  const size_t n = std::min(pages, options_.max_pages);
  pages_.reserve(n);
  if (options_.rate_mixture) rate_draws_.reserve(n);
  if (options_.explore) explore_interval_.reserve(n);
  if (policy_->uses_signals()) {
    recent_signals_.reserve(n);
    signals_.reserve(n);
  }
  if (KeepsTruth()) truth_.reserve(n);
  if (policy_->uses_profiles()) profiles_.reserve(n);
}

std::optional<RateMemory> Scheduler::RateMemoryOf(PageId page) const {
  if (page >= pages_.size() || !(options_.rate_mixture || options_.explore)) {
    return std::nullopt;
  }
  RateMemory m;
  if (options_.rate_mixture) m.draws = rate_draws_[page];
  if (options_.explore) m.explore_interval = explore_interval_[page];
  return m;
}

PageSnapshot Scheduler::Snapshot(PageId page) const {
  PageSnapshot snapshot(pages_[page]);
  if (page < signals_.size()) {
    static_cast<PageSignals&>(snapshot) = signals_[page];
  }
  return snapshot;
}

Result<PageId> Scheduler::RestorePage(const PageSnapshot& state,
                                      std::optional<ProfileSet> profiles,
                                      std::optional<RecentSignals> recent,
                                      std::optional<RateMemory> rate) {
  if (pages_.size() >= options_.max_pages) {
    return Status::ResourceExhausted("scheduler: max_pages reached");
  }
  PageId id = static_cast<PageId>(pages_.size());
  PageState s = static_cast<const PageState&>(state);
  s.flags &= static_cast<uint8_t>(~PageState::kInFlight);
  if (options_.oracle || s.rate_stats.observations() <= 0) s.static_q = 0;
  s.importance = static_cast<float>(std::clamp(
      std::isfinite(s.importance) ? static_cast<double>(s.importance) : 1.0,
      1e-6, 1e6));
  hosts_.AddPage(s.host);
  pages_.push_back(s);
  // Saved draws are taken as they were (and join the host's histogram, so
  // the histogram is the sum of the restored pages' draws, as before).
  const bool restored_draws =
      options_.rate_mixture && !options_.oracle && rate && !rate->draws.empty();
  if (options_.rate_mixture) {
    rate_draws_.push_back(restored_draws ? rate->draws : RateTerciles{});
    if (restored_draws) rate_mixture_.Move(s.host, {}, rate_draws_.back());
  }
  if (options_.explore) {
    explore_interval_.push_back(rate ? rate->explore_interval : 0.0f);
  }
  // Without the saved times of the signals since the last fetch (an older
  // record), that interval counts as count-only evidence.
  if (policy_->uses_signals()) {
    recent_signals_.push_back(recent.value_or(RecentSignals{}));
    signals_.push_back(static_cast<const PageSignals&>(state));
  }
  if (s.rate_stats.observations() > 0) {  // its saved share, as it was
    hosts_.AdjustStatic(s.host, 0, s.static_q / 255.0, true);
  }
  if (KeepsTruth()) truth_.push_back(PageParams{0, s.importance, 0, 0});
  if (policy_->uses_profiles()) {
    if (options_.oracle) truth_models_.emplace_back();
    profiles_.push_back(profiles ? std::move(*profiles)
                                 : ProfileSet(options_.history));
  }
  // The saved estimates are kept (so the page values as before); a state
  // without one starts from its host's pooled prior.
  if (!options_.oracle && (!(s.rate > 0 && std::isfinite(s.rate)) ||
                           (options_.rate_mixture && !restored_draws))) {
    RefreshEstimates(id);
  }
  if (policy_->uses_profiles() && !options_.oracle) {
    const ProfileSet& ps = profiles_[id];
    if (ps.fitted()) {  // as saved; it also teaches the host prior again
      if (FitPoints(ps.profiles().Pooled(),
                    divergence_prior_.FitOptions(s.host, s.rate)) >=
          kPriorMinPoints) {
        divergence_prior_.Observe(s.host, *ps.fitted());
      }
    } else if (s.fetched()) {
      Refit(id);
    }
  }
  Reindex(id);
  return id;
}

void Scheduler::SetTruth(PageId page, const PageParams& params,
                         const DivergenceModel& model) {
  if (!KeepsTruth() || page >= pages_.size()) return;
  truth_[page] = params;
  if (!options_.oracle) {  // oracle_rate: only Δ is taken from the truth
    RefreshEstimates(page);
    Reindex(page);
    return;
  }
  if (policy_->uses_profiles()) truth_models_[page] = model;
  Reindex(page);
}

void Scheduler::SetTruthMixture(PageId page,
                                std::vector<WeightedParams> mixture) {
  if (!options_.oracle || policy_->uses_profiles() || page >= pages_.size()) {
    return;
  }
  double total = 0;
  for (const WeightedParams& w : mixture) {
    if (!(w.weight >= 0) || !std::isfinite(w.weight)) return;
    total += w.weight;
  }
  if (!(total > 0)) mixture.clear();
  if (truth_mixtures_.size() <= page) truth_mixtures_.resize(page + 1);
  truth_mixtures_[page] = std::move(mixture);
  Reindex(page);
}

double Scheduler::PolicyValue(const PolicyInput& in, PageId page,
                              double tau) const {
  if (HasMixture(page)) return MixtureValue(in, truth_mixtures_[page], tau);
  std::array<WeightedParams, 3> draws;
  if (RateDraws(page, in, &draws)) return MixtureValue(in, draws, tau);
  return policy_->Value(in, tau);
}

bool Scheduler::RateDraws(PageId page, const PolicyInput& in,
                          std::array<WeightedParams, 3>* draws) const {
  if (options_.oracle || options_.oracle_rate ||
      !options_.value_over_rate_uncertainty) {
    return false;
  }
  const PageState& s = pages_[page];
  if (!policy_->uses_signals()) return MixtureDraws(page, in, draws);
  const double rate = in.params.delta;
  if (!s.fetched() || !(rate > 0) || !std::isfinite(rate)) return false;
  const double info =
      s.rate_stats.LogRateInformation(rate) + hosts_.options().page_rate_weight;
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

bool Scheduler::MixtureDraws(PageId page, const PolicyInput& in,
                             std::array<WeightedParams, 3>* draws) const {
  if (!options_.rate_mixture || options_.oracle || options_.oracle_rate ||
      !pages_[page].fetched()) {
    return false;
  }
  const RateTerciles& r = rate_draws_[page];
  if (r.empty()) return false;
  for (int i = 0; i < 3; ++i) {
    (*draws)[i] = {in.params, 1.0 / 3};
    (*draws)[i].params.delta = r.rate[i];
  }
  return true;
}

double Scheduler::MixtureValue(PolicyInput in,
                               std::span<const WeightedParams> draws,
                               double tau) const {
  const bool signals = policy_->uses_signals();
  const double n = in.state->signals;
  // Silence counts only where a signal source looked.
  const double heard = CoveredTau(*in.state, tau);
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
    sum += weight * policy_->Value(in, tau);
    total += weight;
  }
  return total > 0 ? sum / total : 0;
}

double Scheduler::ValueGrowth(PageId page) const {
  if (!pages_[page].fetched() || HasMixture(page)) return kInf;
  PolicyInput in = Input(page);
  std::array<WeightedParams, 3> draws;
  if (!RateDraws(page, in, &draws)) {
    const double growth = policy_->MaxValueGrowth(in);
    return growth >= 0 ? growth : kInf;  // NaN: none
  }
  // MixtureValue = Σũ_iV_i with ũ_i ∝ w_iσ_iⁿe^{−σ_iτ}, so its derivative is
  // Σũ_iV_i' + Σũ_i(σ̄ − σ_i)V_i. The first is at most max_i V_i' bound; in
  // the second Σũ_i(σ̄ − σ_i) = 0, so V_i may be taken about the middle of
  // [0, max_i sup V_i], and Σũ_i|σ̄ − σ_i| ≤ σ_max − σ_min.
  const bool signals = policy_->uses_signals();
  double growth = 0, sup = 0, lo = kInf, hi = -kInf, sigma;
  for (const WeightedParams& w : draws) {
    if (!(w.weight > 0)) continue;
    in.params = w.params;
    const double g = policy_->MaxValueGrowth(in);
    const double u = policy_->UpperBound(in);
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

double Scheduler::MixtureBound(PolicyInput in,
                               std::span<const WeightedParams> draws,
                               double start, double end) const {
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
      std::min(start, SignalCoverage(s.host)) - s.last_fetch, 0.0, tau_h);
  const bool signals = policy_->uses_signals();
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
    const double sup = policy_->UpperBound(in);
    const double at_horizon = policy_->Value(in, tau_h);
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

PageParams Scheduler::Params(PageId page) const {
  PageParams p;
  if (options_.oracle) {
    p = truth_[page];
  } else {
    const PageState& s = pages_[page];
    p = PageParams{s.rate, s.importance, 0, 0};
    if (page < signals_.size()) {
      p.alpha = signals_[page].alpha;
      p.nu = signals_[page].nu;
    }
  }
  if (const PageRule* rule = RuleFor(page); rule && rule->importance > 0) {
    p.mu = rule->importance;
  }
  return p;
}

Status Scheduler::SetRules(std::vector<PageRule> rules) {
  if (rules.size() > kMaxPageRules) {
    return Status::InvalidArgument("scheduler: more than " +
                                   std::to_string(kMaxPageRules) + " rules");
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    const PageRule& r = rules[i];
    for (double v : {r.min_interval, r.max_interval, r.importance}) {
      if (!(v >= 0) || !std::isfinite(v)) {
        return Status::InvalidArgument(
            "scheduler: rule " + std::to_string(i + 1) +
            ": intervals and importance must be finite and >= 0");
      }
    }
    if (r.max_interval > 0 && r.min_interval > r.max_interval) {
      return Status::InvalidArgument("scheduler: rule " +
                                     std::to_string(i + 1) +
                                     ": min_interval > max_interval");
    }
  }
  rules_ = std::move(rules);
  for (PageId p = 0; p < page_rule_.size(); ++p) {
    if (page_rule_[p] == 0) continue;
    if (page_rule_[p] > rules_.size()) page_rule_[p] = 0;
    Reindex(p);
  }
  return Status::OK();
}

Status Scheduler::SetPageRule(PageId page, uint8_t rule) {
  if (page >= pages_.size() || rule > rules_.size()) {
    return Status::InvalidArgument("scheduler: unknown page or rule");
  }
  if (RuleOf(page) == rule) return Status::OK();
  if (page_rule_.size() < pages_.size()) page_rule_.resize(pages_.size(), 0);
  page_rule_[page] = rule;
  Reindex(page);
  return Status::OK();
}

std::vector<uint64_t> Scheduler::PagesPerRule() const {
  std::vector<uint64_t> out(rules_.size() + 1, 0);
  for (PageId p = 0; p < pages_.size(); ++p) ++out[RuleOf(p)];
  return out;
}

double Scheduler::MinIntervalOf(PageId page) const {
  const PageRule* rule = RuleFor(page);
  return rule ? std::max(options_.min_interval, rule->min_interval)
              : options_.min_interval;
}

double Scheduler::FreshProbability(PageId page, double now) const {
  const PageState& s = pages_[page];
  if (!s.fetched()) return 0;
  PageParams params = Params(page);
  if (!options_.oracle && !policy_->uses_signals()) {
    params.alpha = params.nu = 0;  // never estimated: signals ignored
  }
  const double tau = std::max(0.0, now - s.last_fetch);
  // The signals (and their silence) tell about the covered time τ_s only;
  // after it the page changes at Δ unobserved: P(fresh) = P(fresh over τ_s
  // | n) · e^{−Δ(τ−τ_s)} (ObserveSignalCoverage).
  const double heard = CoveredTau(s, tau);
  const auto fresh = [&](const PageParams& p) {
    const double f = sched::FreshProbability(p, heard, s.signals);
    return heard < tau ? f * std::exp(-p.delta * (tau - heard)) : f;
  };
  double p;
  std::array<WeightedParams, 3> draws;
  if (MixtureDraws(page, Input(page), &draws)) {
    // Over the draws, each weighted as MixtureValue weighs it.
    const bool signals = policy_->uses_signals();
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

Scheduler::Summary Scheduler::Summarize(double now) const {
  SummaryPass pass;
  (void)SummarizeSome(now, pages_.size(), &pass);
  return pass.summary();
}

Scheduler::Summary Scheduler::SummaryPass::summary() const {
  Summary out = counts_;
  out.estimated_freshness = weight_ > 0 ? fresh_ / weight_ : 0;
  return out;
}

bool Scheduler::SummarizeSome(double now, size_t max_pages,
                              SummaryPass* pass) const {
  const PageId end = static_cast<PageId>(
      std::min<size_t>(pages_.size(), size_t{pass->next_} + max_pages));
  Summary& out = pass->counts_;
  for (PageId id = pass->next_; id < end; ++id) {
    const PageState& s = pages_[id];
    const PageRule* rule = RuleFor(id);
    const double mu =
        rule && rule->importance > 0 ? rule->importance : s.importance;
    pass->weight_ += mu;
    if (s.failures > 0) ++out.failed;
    if (!s.fetched()) {
      if (s.failures == 0) ++out.unfetched;
      continue;
    }
    pass->fresh_ += mu * FreshProbability(id, now);
    if (Deadline(id) <= now) ++out.overdue;
  }
  pass->next_ = std::max(pass->next_, end);
  return pass->next_ >= pages_.size();
}

const DivergenceModel* Scheduler::Model(PageId page) const {
  if (!policy_->uses_profiles()) return nullptr;
  if (options_.oracle) return &truth_models_[page];
  const std::optional<DivergenceModel>& fitted = profiles_[page].fitted();
  return fitted ? &*fitted : &kNeverChanges;
}

std::vector<double> Scheduler::ProfileBaseTimes(PageId page) const {
  if (!policy_->uses_profiles() || page >= pages_.size()) return {};
  return profiles_[page].BaseTimes();
}

PolicyInput Scheduler::Input(PageId page) const {
  PolicyInput in;
  in.state = &pages_[page];
  in.params = Params(page);
  if (policy_->uses_profiles()) {
    in.model = Model(page);
    in.profiles = &profiles_[page];
  }
  in.oracle = options_.oracle;
  const double rate = bucket_.rate();
  in.mean_interval =
      rate > 0 ? static_cast<double>(pages_.size()) / rate : kInf;
  return in;
}

double Scheduler::Deadline(PageId page) const {
  const PageState& s = pages_[page];
  if (!s.fetched()) return kInf;
  double interval = options_.max_interval > 0 ? options_.max_interval : kInf;
  if (s.forced > 0 && policy_->forced_is_deadline()) {
    interval = std::min<double>(interval, s.forced);
  }
  if (options_.explore && !options_.oracle &&
      s.rate_stats.observations() <= 0 && explore_interval_[page] > 0) {
    interval = std::min<double>(interval, explore_interval_[page]);
  }
  if ((s.flags & PageState::kProbe) != 0) {
    const double last = s.rate_stats.RecentInterval(0);
    if (last > 0) interval = std::min(interval, last / 4);
  }
  double min_interval = options_.min_interval;
  if (const PageRule* rule = RuleFor(page)) {
    if (rule->max_interval > 0) {
      interval = std::min(interval, rule->max_interval);
    }
    min_interval = std::max(min_interval, rule->min_interval);
  }
  if (!std::isfinite(interval)) return kInf;
  return s.last_fetch + std::max(interval, min_interval);
}

double Scheduler::IndexBound(PageId page, double start, double end) const {
  const PageState& s = pages_[page];
  double bound = options_.new_page_value;
  if (s.fetched()) {
    // Values do not decrease with time between observations (policy.h), so
    // the value at the horizon bounds every value Select() sees before it.
    PolicyInput in = Input(page);
    if (HasMixture(page)) {
      return MixtureBound(in, truth_mixtures_[page], start, end);
    }
    std::array<WeightedParams, 3> draws;
    if (RateDraws(page, in, &draws)) return MixtureBound(in, draws, start, end);
    bound = policy_->UpperBound(in);
    double at_horizon = policy_->Value(in, std::max(0.0, end - s.last_fetch));
    if (at_horizon < bound) bound = at_horizon;  // NaN keeps the sup
  }
  return bound;
}

void Scheduler::Reindex(PageId page) {
  if (!value_memo_.empty()) value_memo_.erase(page);
  if (restoring_) return;  // FinishRestore indexes every page
  selector_.Update(page, IndexBound(page), Deadline(page));
  ++bound_evaluations_;
  if (selector_.Staged(page)) {  // its staged bound is stale: recompute it
    selector_.Restage(page, IndexBound(page, horizon_, next_horizon_));
    ++bound_evaluations_;
  }
}

void Scheduler::FinishRestore(std::optional<double> now) {
  if (!restoring_) return;
  restoring_ = false;
  if (horizon_ == -kInf) {
    // No horizon yet: the first one indexes every page (a full refresh).
    if (now && !pages_.empty()) AdvanceHorizon(*now);
    return;
  }
  // Selects before the restore: every page over the current horizon (the
  // staging, if any, is dropped: the next horizon is a full refresh).
  selector_.UpdateAll(pages_.size(), [this](PageId p) {
    ++bound_evaluations_;
    return std::pair<double, double>(IndexBound(p), Deadline(p));
  });
}

void Scheduler::RescaleHorizon() {
  // Exact selection costs evaluations two ways: each refresh re-evaluates
  // every page's bound and its value at the horizon (about 2N), and between
  // refreshes each selection evaluates the pages whose bound (their value at
  // the horizon) beats the best value found, more the further away the
  // horizon (about as its square, where bounds prune at all). The sum per
  // selection is least where the two are equal, so after each horizon the
  // span (scale x sqrt(N) token intervals) is rescaled toward that point,
  // by sqrt(2N / evaluations), at most 2x a step and never below the
  // sqrt(N) intervals of the fixed rule it replaced (for policies whose
  // bounds cannot prune, shortening would only add refreshes).
  const double n = static_cast<double>(pages_.size()) + 1;
  if (horizon_refreshes_ > 0) {
    // The step is from the span the horizon had: staging may have
    // lengthened it beyond the scale (HorizonSpan), and a scale stepping up
    // from below that floor would change nothing for horizons on end (five
    // at 10M pages from scale 1).
    horizon_scale_ = std::max(horizon_scale_, StagingFloor() / std::sqrt(n));
    double step = std::sqrt(2 * n / std::max(1.0, horizon_evaluations_));
    // Staged, the span set now is the horizon after next's: the step acts
    // a horizon late, and is halved (in log) so that it does not overshoot
    // (a 10k-page noisy web, ncis: 188 values a selection undamped, 147
    // damped, 118 with the refresh all at once).
    if (Stages()) step = std::sqrt(step);
    horizon_scale_ = std::clamp(horizon_scale_ * std::clamp(step, 0.5, 2.0),
                                kMinHorizonScale, kMaxHorizonScale);
  }
  horizon_evaluations_ = 0;
}

double Scheduler::SelectionWork() const {
  // A candidate passed over by its remembered value costs a look-up and an
  // eligibility test, about an eighth of a value over three draws
  // (scheduler_bench, ncis estimated): counted so, the horizon still
  // balances the scans against the refreshes.
  return static_cast<double>(selector_.last_evaluations()) +
         static_cast<double>(selector_.last_passed_over()) / 8;
}

double Scheduler::HorizonSpan() const {
  const double n = static_cast<double>(pages_.size()) + 1;
  const double rate = std::max(bucket_.rate(), 1e-12);
  const double selections =
      std::max(horizon_scale_ * std::sqrt(n), StagingFloor());
  return std::clamp(selections / rate, 1.0, 1e9);
}

double Scheduler::StagingFloor() const {
  // The horizon that stages the next must hold enough Selects for its
  // slices: 4/3 of N / slice (staging aims to end at 3/4 of it), and a
  // margin for Selects that come later than their token.
  if (!Stages()) return 0;
  const double n = static_cast<double>(pages_.size()) + 1;
  const double slices = n / static_cast<double>(options_.refresh_slice_pages);
  return 2 * slices + 16;
}

void Scheduler::AdvanceHorizon(double now) {
  value_memo_.clear();
  RescaleHorizon();
  ++horizon_refreshes_;
  const bool staged =
      selector_.stage() != Selector::Stage::kNone && now <= next_horizon_;
  if (staged) {
    // The staged bounds hold over [horizon_, next_horizon_] and now is in
    // it; finish the staging if the Selects were too few (late).
    if (selector_.stage() != Selector::Stage::kReady) {
      ++late_refreshes_;
      StageSlice(now, /*all=*/true);
    }
    selector_.FinishStage();
    horizon_start_ = horizon_;
    horizon_ = next_horizon_;
  } else {
    ++full_refreshes_;
    horizon_ = now + HorizonSpan();
    horizon_start_ = now;
    selector_.UpdateAll(pages_.size(), [this](PageId p) {
      ++bound_evaluations_;
      return std::pair<double, double>(IndexBound(p), Deadline(p));
    });
  }
  if (Stages()) {
    next_horizon_ = horizon_ + HorizonSpan();
    selector_.BeginStage();
  } else {
    selector_.CancelStage();
  }
}

void Scheduler::StageSlice(double now, bool all) {
  const Selector::Stage stage = selector_.stage();
  if (stage == Selector::Stage::kNone || stage == Selector::Stage::kReady) {
    return;
  }
  const size_t slice = options_.refresh_slice_pages;
  if (stage == Selector::Stage::kBounds) {
    const size_t n = pages_.size();
    size_t done = selector_.staged_pages();
    // Spread over the Selects until 3/4 of the horizon (one a token).
    const double target = horizon_start_ + 0.75 * (horizon_ - horizon_start_);
    const double selects = std::max(1.0, (target - now) * bucket_.rate());
    const double even = std::ceil(static_cast<double>(n - done) / selects);
    size_t budget =
        all ? n - done
            : std::min(slice, std::max<size_t>(std::min<size_t>(slice, 64),
                                               static_cast<size_t>(even)));
    for (; budget > 0 && done < n; --budget, ++done) {
      selector_.StageNext(
          IndexBound(static_cast<PageId>(done), horizon_, next_horizon_));
      ++bound_evaluations_;
    }
    if (done < n) return;
    selector_.EndStageBounds();
    if (!all) return;
  }
  // Ordering costs a few ns a page: 64 pages' worth per bound.
  while (!selector_.OrderStage(all ? pages_.size() + 1 : 64 * slice) && all) {
  }
}

double Scheduler::Value(PageId page, double now) const {
  const PageState& s = pages_[page];
  if (!s.fetched()) return options_.new_page_value;
  return PolicyValue(Input(page), page, std::max(0.0, now - s.last_fetch));
}

Priority Scheduler::PriorityOf(PageId page, double now) const {
  double deadline = Deadline(page);
  if (deadline <= now) return Priority{true, deadline};
  return Priority{false, Value(page, now)};
}

bool Scheduler::Eligible(PageId page, double now,
                         const HostGate& host_open) const {
  const PageState& s = pages_[page];
  if (s.in_flight() || now < s.not_before) return false;
  if (s.fetched() && now - s.last_fetch < options_.min_interval) return false;
  if (const PageRule* rule = RuleFor(page);
      rule && s.fetched() && now - s.last_fetch < rule->min_interval) {
    return false;
  }
  return host_open(s.host);
}

std::optional<PageId> Scheduler::Select(double now, const HostGate& host_open) {
  if (restoring_) FinishRestore();
  if (bucket_.Available(now) < 1 - 1e-9) return std::nullopt;
  if (now > horizon_) {
    AdvanceHorizon(now);
  } else {
    StageSlice(now, /*all=*/false);
  }
  // With lazy re-valuation, every value computed is remembered with its
  // growth bound, and a page valued before (since the horizon moved, with no
  // change to it since) is passed over while value + growth·elapsed, plus
  // 1e-12 relative for rounding, is not above the running best.
  const Selector::ValueFn value = [&](PageId p) {
    const double v = Value(p, now);
    if (memo_values_) {
      const double growth = ValueGrowth(p);
      if (growth < kInf) value_memo_[p] = ValueMemo{now, v, growth};
    }
    return v;
  };
  const Selector::ValueFn value_bound = [&](PageId p) {
    const auto it = value_memo_.find(p);
    if (it == value_memo_.end() || !(now >= it->second.time)) return kInf;
    const ValueMemo& m = it->second;
    const double bound =
        m.value + 1e-12 * std::fabs(m.value) + m.growth * (now - m.time);
    return std::isnan(bound) ? kInf : bound;
  };
  const Selector::ValueFn* lazy = memo_values_ ? &value_bound : nullptr;
  auto choice = selector_.Select(
      now, [&](PageId p) { return Eligible(p, now, host_open); }, value, lazy);
  if (!choice ||
      (policy_->due_only() && !choice->priority.overdue &&
       pages_[choice->page].fetched() && !(choice->priority.key > 0))) {
    // Nothing eligible, or (a due-only policy, nutch) nothing due: the token
    // stays unused.
    horizon_evaluations_ += SelectionWork();
    return std::nullopt;
  }
  // The implied threshold is the value a token buys at the margin. When a
  // deadline decides, the margin is the best page by value (else a policy
  // whose clamps scale with the threshold, longevity's risk bound, would
  // freeze it at whatever it was when deadlines took over). A never-fetched
  // page at the margin (discovery) leaves the refresh threshold alone.
  std::optional<Selector::Choice> margin = choice;
  if (choice->priority.overdue) {
    margin = selector_.BestByValue(
        [&](PageId p) { return Eligible(p, now, host_open); }, value, lazy);
  }
  horizon_evaluations_ += SelectionWork();
  std::optional<double> marginal;
  if (margin && pages_[margin->page].fetched()) {
    marginal = margin->priority.key;
  }
  bucket_.TryTake(now);
  PageState& s = pages_[choice->page];
  s.flags |= PageState::kInFlight;
  ++selections_;
  if (choice->priority.overdue) ++overdue_selections_;
  if (marginal) {
    double v = *marginal;
    threshold_ = threshold_ > 0 ? 0.99 * threshold_ + 0.01 * v : v;
    marginal_sum_ += v;
    ++marginal_count_;
  }
  return choice->page;
}

void Scheduler::SetRate(double pages_per_second, double now) {
  bucket_.SetRate(pages_per_second, now);
}

void Scheduler::ObserveSignalCoverage(HostId host, double through) {
  if (host >= kMaxCoverageHosts || std::isnan(through)) return;
  if (host >= signal_coverage_.size()) {
    signal_coverage_.resize(size_t{host} + 1, kInf);
  }
  double& covered = signal_coverage_[host];
  // +inf (never reported: covered through any now) is replaced by the
  // first report; later ones only move it forward.
  if (covered < kInf && !(through > covered)) return;
  covered = through;
  // Values over draws may rise with the coverage (the weights move as if τ
  // had grown): a value remembered for lazy re-valuation no longer bounds
  // them. Index bounds allow for it (MixtureBound).
  value_memo_.clear();
}

double Scheduler::CoveredTau(const PageState& s, double tau) const {
  if (s.host >= signal_coverage_.size()) return tau;
  const double covered = signal_coverage_[s.host] - s.last_fetch;
  return covered < tau ? std::max(0.0, covered) : tau;
}

bool Scheduler::IsStaleSignal(PageId page, double now,
                              const SignalObs& signal) const {
  if (page >= pages_.size()) return false;
  const PageState& s = pages_[page];
  if (!s.fetched()) return false;
  if (std::isfinite(signal.changed_at)) {
    return ClaimEnd(signal.changed_at) <= s.last_fetch;  // a day: its end
  }
  return options_.signal_window > 0 &&
         now < s.last_fetch + options_.signal_window;
}

Scheduler::ObserveEffect Scheduler::Observe(const Observation& obs) {
  ObserveEffect effect;
  if (obs.page >= pages_.size() || !std::isfinite(obs.time)) return effect;
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, FetchedObs>) {
          OnContent(obs.page, obs.time, &e);
          effect = {true, true, true};
        } else if constexpr (std::is_same_v<T, NotModifiedObs>) {
          OnContent(obs.page, obs.time, nullptr);
          effect = {true, true, true};
        } else if constexpr (std::is_same_v<T, FailedObs>) {
          OnFailure(obs.page, obs.time, e.failure);
          effect.page = true;
        } else if constexpr (std::is_same_v<T, SignalObs>) {
          if (IsStaleSignal(obs.page, obs.time, e)) return;
          PageState& s = pages_[obs.page];
          AddSignal(s);
          effect.page = true;
          if (policy_->uses_signals() && s.fetched()) {
            const bool whole_day = IsWholeDayClaim(e.changed_at);
            const double claimed = !std::isfinite(e.changed_at) ? obs.time
                                   : whole_day
                                       ? e.changed_at
                                       : std::min(e.changed_at, obs.time);
            recent_signals_[obs.page].Add(s.signals, claimed - s.last_fetch,
                                          whole_day);
          }
          if (policy_->uses_signals()) Reindex(obs.page);  // value moved
        } else {
          PageState& s = pages_[obs.page];
          if (std::isfinite(e.importance) && e.importance > s.importance) {
            s.importance = static_cast<float>(std::min(e.importance, 1e6));
            Reindex(obs.page);
            effect.page = true;
          }
        }
      },
      obs.event);
  return effect;
}

RatePrior Scheduler::RefreshEstimates(PageId page) {
  PageState& s = pages_[page];
  const RatePrior prior = hosts_.PageRatePrior(s.host);
  s.rate = static_cast<float>(s.rate_stats.Estimate(prior));
  if (options_.rate_mixture) {
    RateTerciles& draws = rate_draws_[page];
    RateTerciles next = rate_mixture_.Posterior(s.host, s.rate_stats, draws);
    next.counted = s.rate_stats.observations() > 0;
    rate_mixture_.Move(s.host, draws, next);
    draws = next;
    if (!draws.empty() && !policy_->uses_signals()) s.rate = draws.rate[1];
  }
  if (options_.oracle_rate && page < truth_.size() && truth_[page].delta > 0) {
    s.rate = static_cast<float>(truth_[page].delta);
  }
  if (policy_->uses_signals()) {
    // On a host whose Last-Modified is trusted, Δ is the signal model's own
    // (its timed evidence conditions on the signals that chose the fetch
    // times; the changed bits alone read such intervals as fast), under its
    // host's joint estimate; elsewhere Δ is the changed bits' and α, ν are
    // fitted given it.
    const bool joint =
        hosts_.TrustLastModified(s.host) && !options_.oracle_rate;
    PageSignals& g = signals_[page];
    SignalParams e = g.signal_stats.Estimate(
        hosts_.PageSignalPrior(s.host, joint), joint ? -1.0 : s.rate);
    if (joint) s.rate = static_cast<float>(e.delta);
    g.alpha = static_cast<float>(e.alpha);
    g.nu = static_cast<float>(e.nu);
  }
  return prior;
}

void Scheduler::UpdateStaticShare(PageId page, bool counted,
                                  const RatePrior& prior) {
  PageState& s = pages_[page];
  if (s.rate_stats.observations() <= 0) return;
  const double p = s.rate_stats.StaticPosterior(prior);
  const auto q = static_cast<uint8_t>(std::lround(255 * p));
  hosts_.AdjustStatic(s.host, s.static_q / 255.0, q / 255.0, !counted);
  s.static_q = q;
}

void Scheduler::OnContent(PageId page, double now, const FetchedObs* fetched) {
  PageState& s = pages_[page];
  s.flags &= static_cast<uint8_t>(~PageState::kInFlight);
  s.failures = 0;
  s.not_before = 0;
  bool first = !s.fetched();
  bool changed = fetched != nullptr && fetched->changed;
  double tau = first ? 0 : now - s.last_fetch;
  if (!first && !(tau > 0)) tau = 0;
  if (fetched != nullptr && !first && fetched->last_modified >= 0 &&
      fetched->previous_last_modified >= 0) {
    bool moved = fetched->last_modified != fetched->previous_last_modified;
    hosts_.ObserveLastModifiedAgreement(s.host, moved == changed);
  }
  std::optional<bool> had_evidence;  // set when a new interval is observed
  if (!options_.oracle && tau > 0) {
    // A trusted Last-Modified times the newest change, s before the fetch.
    // For ChangeRateStats the interval then counts as a change followed by a
    // quiet time s (λe^{−λs}). Not for the signal policies: they fetch soon
    // after a signal, and a signalled change soon before, so their quiet
    // times are short by choice and that rate came out biased high
    // (noisy-lm.toml: ncis 9.2% from its oracle against 7.8% without
    // Last-Modified). They give s to the signal model instead, whose timed
    // likelihood conditions on where the signals fell (SignalTriple).
    double since = -1;
    if (fetched != nullptr && changed && fetched->last_modified >= 0 &&
        hosts_.TrustLastModified(s.host)) {
      since = now - fetched->last_modified;
      if (!(since >= 0 && since < tau)) since = -1;
    }
    const double bare_since = policy_->uses_signals() ? -1 : since;
    had_evidence = s.rate_stats.observations() > 0;
    s.rate_stats.Observe(tau, changed, bare_since);
    hosts_.ObserveChange(s.host, tau, changed, bare_since);
    if (policy_->uses_signals()) {
      // The interval's signal evidence spans its covered part τ_s
      // (ObserveSignalCoverage): the signals could only be seen there, so
      // the false-signal rate's exposure is τ_s, not τ. Its changed bit is
      // the whole interval's (a change in the uncovered tail, whose signal
      // no source could have shown yet, counts as unsignalled, as it did
      // before). A change timed by Last-Modified within τ_s is timed
      // evidence with its quiet time cut at τ_s; one in the tail leaves
      // count-only evidence. τ_s = 0 (nothing covered): no evidence.
      const double heard = CoveredTau(s, tau);
      SignalTriple x{heard, s.signals, changed};
      if (since >= 0 && tau - since <= heard &&
          recent_signals_[page].Place(s.signals, tau - since, &x)) {
        x.quiet = since - (tau - heard);
      }
      PageSignals& g = signals_[page];
      SignalParams current{s.rate, g.alpha, g.nu};
      g.signal_stats.Observe(x, current);
      hosts_.ObserveSignals(s.host, x, current);
    }
  }
  if (!options_.oracle) {
    const RatePrior prior = RefreshEstimates(page);
    if (had_evidence) UpdateStaticShare(page, *had_evidence, prior);
  }
  if (policy_->uses_profiles()) {
    ProfileSet& ps = profiles_[page];
    std::vector<double> div;
    BottomSketch sketch;
    if (fetched != nullptr) {
      div = fetched->base_divergence;
      if (div.empty() && !fetched->sketch.hashes.empty()) {
        div = ps.DivergencesFrom(fetched->sketch);
      }
      sketch = fetched->sketch;
    } else {  // 304: the same version as at the previous fetch
      // (ProfileSet::OnFetch fills each profile's last d.)
    }
    ps.OnFetch(now, std::move(div), std::move(sketch));
    if (!options_.oracle && (first || s.fetches % options_.refit_every == 0)) {
      Refit(page);
    }
  }
  if (options_.explore && !options_.oracle) {
    // One fetch tells nothing of the rate; a second one after the uniform
    // interval (N/R when the first was made) does, at one fetch a page.
    const double rate = bucket_.rate();
    explore_interval_[page] =
        s.rate_stats.observations() <= 0 && rate > 0
            ? static_cast<float>(static_cast<double>(pages_.size()) / rate)
            : 0.0f;
  }
  if (options_.explore && options_.rate_mixture && !options_.oracle &&
      !policy_->uses_signals()) {
    // A rate only bounded below, over a wide posterior, earns one probe at
    // a quarter of the interval (not a chain of probes: not after an
    // interval that was itself a probe). Not for the signal policies, whose
    // values do not use these draws (scroll.toml: ncis 0.282 -> 0.271).
    const RateTerciles& r = rate_draws_[page];
    const double last = s.rate_stats.RecentInterval(0);
    const double before = s.rate_stats.RecentInterval(1);
    const bool probe = s.rate_stats.RecentChangedRun() >= 3 && !r.empty() &&
                       r.rate[2] > 4 * r.rate[0] && last > 0 && before > 0 &&
                       last >= 0.5 * before;
    s.flags = static_cast<uint8_t>(probe ? s.flags | PageState::kProbe
                                         : s.flags & ~PageState::kProbe);
  }
  s.last_fetch = now;
  s.signals = 0;
  if (s.fetches < UINT16_MAX) ++s.fetches;
  policy_->OnFetched(Input(page), s, changed, tau, threshold_);
  Reindex(page);
  if (!options_.oracle) Sweep(page);
}

void Scheduler::Refit(PageId page) {
  const PageState& s = pages_[page];
  const double rate = s.rate;
  DivergenceFit fit = FitDivergence(profiles_[page].profiles().Pooled(),
                                    divergence_prior_.FitOptions(s.host, rate));
  if (fit.points == 0) {
    profiles_[page].set_fitted(divergence_prior_.Model(s.host, rate));
    return;
  }
  if (fit.points >= kPriorMinPoints) {
    divergence_prior_.Observe(s.host, fit.model);
  }
  profiles_[page].set_fitted(fit.model);
}

void Scheduler::Sweep(PageId skip) {
  const size_t n = pages_.size();
  const size_t k = std::min(
      n, static_cast<size_t>(std::max(0, options_.reestimate_per_fetch)));
  for (size_t i = 0; i < k; ++i) {
    if (sweep_cursor_ >= n) sweep_cursor_ = 0;
    PageId p = static_cast<PageId>(sweep_cursor_++);
    if (p == skip) continue;
    RefreshEstimates(p);
    Reindex(p);
  }
}

void Scheduler::OnFailure(PageId page, double now, FailureClass failure) {
  PageState& s = pages_[page];
  s.flags &= static_cast<uint8_t>(~PageState::kInFlight);
  if (s.failures < UINT8_MAX) ++s.failures;
  double backoff;
  if (failure == FailureClass::kRobotsDenied ||
      failure == FailureClass::kHttp4xx) {
    backoff = options_.max_interval > 0 && std::isfinite(options_.max_interval)
                  ? options_.max_interval
                  : 30 * kDay;
  } else {
    backoff = std::max(options_.min_interval, 60.0) *
              std::ldexp(1.0, std::min<int>(s.failures - 1, 20));
    backoff = std::min(backoff, kDay);
  }
  s.not_before = now + backoff;
}

}  // namespace freshd::sched
