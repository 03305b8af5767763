#include "sched/estimator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "sched/divergence_fit.h"
#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

// A page's fit teaches its host's divergence prior once this many points
// shaped it (DivergenceFit::points).
constexpr int kPriorMinPoints = 3;

// The mixture's global pseudo-pages follow the configured prior (the host
// pool's global prior rate) unless the options name their own. (Its grid
// follows the prior too: daemon/scheduler_options.h scales it.)
RateMixtureOptions MixtureOptions(const SchedulerOptions& options) {
  RateMixtureOptions o = options.rate_mixture_options;
  if (o.prior_rate == 0) o.prior_rate = options.host_pool.global_prior.rate;
  return o;
}

}  // namespace

Estimator::Estimator(const SchedulerOptions& options, const Policy& policy,
                     std::vector<PageState>* pages)
    : options_(options),
      policy_(policy),
      pages_(*pages),
      hosts_(options.host_pool),
      rate_mixture_(MixtureOptions(options)) {}

void Estimator::AddPage(PageId page) {
  hosts_.AddPage(pages_[page].host);
  if (options_.rate_mixture) rate_draws_.emplace_back();
  if (options_.explore) explore_interval_.push_back(0);
  if (policy_.uses_signals()) {
    recent_signals_.emplace_back();
    signals_.emplace_back();
    source_signals_.emplace_back();
  }
  RefreshEstimates(page);  // no evidence yet: the host's pooled (Δ, α, ν)
  if (policy_.uses_profiles()) profiles_.emplace_back(options_.history);
}

void Estimator::RestorePage(PageId page, const PageSnapshot& state,
                            std::optional<ProfileSet> profiles,
                            std::optional<RecentSignals> recent,
                            std::optional<RateMemory> rate) {
  const PageState& s = pages_[page];
  hosts_.AddPage(s.host);
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
  if (policy_.uses_signals()) {
    recent_signals_.push_back(recent.value_or(RecentSignals{}));
    signals_.push_back(static_cast<const PageSignals&>(state));
    // The sources of the signals since the fetch are not saved: they weigh
    // one each, and that interval teaches no source (ObserveContent).
    SourceSignals sources;
    sources.weighted = s.signals;
    source_signals_.push_back(sources);
  }
  if (s.rate_stats.observations() > 0) {  // its saved share, as it was
    hosts_.AdjustStatic(s.host, 0, s.static_q / 255.0, true);
  }
  if (policy_.uses_profiles()) {
    profiles_.push_back(profiles ? std::move(*profiles)
                                 : ProfileSet(options_.history));
  }
  // The saved estimates are kept (so the page values as before); a state
  // without one starts from its host's pooled prior.
  if (!options_.oracle && (!(s.rate > 0 && std::isfinite(s.rate)) ||
                           (options_.rate_mixture && !restored_draws))) {
    RefreshEstimates(page);
  }
  if (policy_.uses_profiles() && !options_.oracle) {
    const ProfileSet& ps = profiles_[page];
    if (ps.fitted()) {  // as saved; it also teaches the host prior again
      if (FitPoints(ps.profiles().Pooled(),
                    divergence_prior_.FitOptions(s.host, s.rate)) >=
          kPriorMinPoints) {
        divergence_prior_.Observe(s.host, *ps.fitted());
      }
    } else if (s.fetched()) {
      Refit(page);
    }
  }
}

void Estimator::Reserve(size_t n) {
  if (options_.rate_mixture) rate_draws_.reserve(n);
  if (options_.explore) explore_interval_.reserve(n);
  if (policy_.uses_signals()) {
    recent_signals_.reserve(n);
    signals_.reserve(n);
    source_signals_.reserve(n);
  }
  if (policy_.uses_profiles()) profiles_.reserve(n);
}

std::optional<RateMemory> Estimator::RateMemoryOf(PageId page) const {
  if (page >= pages_.size() || !(options_.rate_mixture || options_.explore)) {
    return std::nullopt;
  }
  RateMemory m;
  if (options_.rate_mixture) m.draws = rate_draws_[page];
  if (options_.explore) m.explore_interval = explore_interval_[page];
  return m;
}

bool Estimator::ObserveSignalCoverage(HostId host, double through) {
  if (host >= kMaxCoverageHosts || std::isnan(through)) return false;
  if (host >= signal_coverage_.size()) {
    signal_coverage_.resize(size_t{host} + 1, kInf);
  }
  double& covered = signal_coverage_[host];
  // +inf (never reported: covered through any now) is replaced by the
  // first report; later ones only move it forward.
  if (covered < kInf && !(through > covered)) return false;
  covered = through;
  return true;
}

double Estimator::CoveredTau(const PageState& s, double tau) const {
  if (s.host >= signal_coverage_.size()) return tau;
  const double covered = signal_coverage_[s.host] - s.last_fetch;
  return covered < tau ? std::max(0.0, covered) : tau;
}

bool Estimator::IsStaleSignal(PageId page, double now,
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

bool Estimator::ObserveSignal(PageId page, double now,
                              const SignalObs& signal) {
  if (IsStaleSignal(page, now, signal)) return false;
  PageState& s = pages_[page];
  const bool counted = s.signals < UINT16_MAX;
  AddSignal(s);
  if (policy_.uses_signals()) {
    // Weighted by its source's quality on the host; 1 each while the host
    // has one source in play, so that `weighted` equals s.signals then.
    hosts_.NoteSource(s.host, signal.source);
    SourceSignals& sources = source_signals_[page];
    sources.counts.Add(signal.source);
    if (counted) {
      sources.weighted += static_cast<float>(
          options_.oracle ? 1.0 : hosts_.SourceWeight(s.host, signal.source));
    }
  }
  if (policy_.uses_signals() && s.fetched()) {
    const bool whole_day = IsWholeDayClaim(signal.changed_at);
    const double claimed = !std::isfinite(signal.changed_at) ? now
                           : whole_day                       ? signal.changed_at
                                       : std::min(signal.changed_at, now);
    recent_signals_[page].Add(s.signals, claimed - s.last_fetch, whole_day);
  }
  return true;
}

void Estimator::RefreshEstimates(PageId page) {
  PageState& s = pages_[page];
  bool from_mixture = false;
  if (options_.rate_mixture) {
    RateTerciles& draws = rate_draws_[page];
    RateTerciles next = rate_mixture_.Posterior(s.host, s.rate_stats, draws);
    next.counted = s.rate_stats.observations() > 0;
    rate_mixture_.Move(s.host, draws, next);
    draws = next;
    if (!draws.empty()) {
      s.rate = draws.rate[1];
      from_mixture = true;
    }
  }
  if (!from_mixture) {
    s.rate =
        static_cast<float>(s.rate_stats.Estimate(hosts_.PageRatePrior(s.host)));
  }
  if (options_.oracle_rate && truth_ != nullptr) {
    const PageParams* truth = truth_->TrueParams(page);
    if (truth != nullptr && truth->delta > 0) {
      s.rate = static_cast<float>(truth->delta);
    }
  }
  if (policy_.uses_signals()) {
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
}

void Estimator::UpdateStaticShare(PageId page, bool counted,
                                  const RatePrior& prior) {
  PageState& s = pages_[page];
  if (s.rate_stats.observations() <= 0) return;
  const double p = s.rate_stats.StaticPosterior(prior);
  const auto q = static_cast<uint8_t>(std::lround(255 * p));
  hosts_.AdjustStatic(s.host, s.static_q / 255.0, q / 255.0, !counted);
  s.static_q = q;
}

void Estimator::ObserveContent(PageId page, double now,
                               const FetchedObs* fetched, double tau,
                               double token_rate) {
  PageState& s = pages_[page];
  const bool first = !s.fetched();
  const bool changed = fetched != nullptr && fetched->changed;
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
    const double bare_since = policy_.uses_signals() ? -1 : since;
    had_evidence = s.rate_stats.observations() > 0;
    s.rate_stats.Observe(tau, changed, bare_since);
    hosts_.ObserveChange(s.host, tau, changed, bare_since);
    if (policy_.uses_signals()) {
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
      ObserveSources(page, x);
    }
  }
  if (policy_.uses_signals()) source_signals_[page] = SourceSignals{};
  if (!options_.oracle) {
    RefreshEstimates(page);
    if (had_evidence) {
      UpdateStaticShare(page, *had_evidence,
                        hosts_.PageRatePrior(pages_[page].host));
    }
  }
  if (policy_.uses_profiles()) {
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
    explore_interval_[page] =
        s.rate_stats.observations() <= 0 && token_rate > 0
            ? static_cast<float>(static_cast<double>(pages_.size()) /
                                 token_rate)
            : 0.0f;
  }
  if (options_.explore && options_.rate_mixture && !options_.oracle &&
      !policy_.uses_signals()) {
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
}

void Estimator::ObserveSources(PageId page, const SignalTriple& x) {
  const PageState& s = pages_[page];
  const SourceCounts& counts = source_signals_[page].counts;
  // Counts lost in a restart (not saved) teach nothing; saturated ones
  // (≥ 63 signals of a source in one interval) teach a lower bound.
  const int total = counts.total();
  if (total != s.signals && !(counts.saturated() && total <= s.signals)) {
    return;
  }
  const HostStats* h = hosts_.Find(s.host);
  if (h == nullptr) return;
  for (int i = 0; i < kSignalSources; ++i) {
    if ((h->sources_seen() >> i & 1) == 0) continue;
    const auto source = static_cast<SignalSource>(i);
    const int n = counts.count(source);
    SignalTriple own{x.tau, n, x.changed};
    // Timed evidence holds for a source that sent every signal of the
    // interval (the same placement) or none (none after the change, the
    // change not its).
    if (x.quiet >= 0 && (n == s.signals || n == 0)) {
      own.quiet = x.quiet;
      if (n > 0) {
        own.signals_after = x.signals_after;
        own.signal_at_change = x.signal_at_change;
      }
    }
    SignalParams current = hosts_.SourceParams(s.host, source);
    current.delta = s.rate;
    hosts_.ObserveSourceSignals(s.host, source, own, current);
  }
}

void Estimator::Refit(PageId page) {
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

void Estimator::Sweep(PageId skip, const std::function<void(PageId)>& reindex) {
  const size_t n = pages_.size();
  const size_t k = std::min(
      n, static_cast<size_t>(std::max(0, options_.reestimate_per_fetch)));
  for (size_t i = 0; i < k; ++i) {
    if (sweep_cursor_ >= n) sweep_cursor_ = 0;
    PageId p = static_cast<PageId>(sweep_cursor_++);
    if (p == skip) continue;
    RefreshEstimates(p);
    reindex(p);
  }
}

}  // namespace freshd::sched
