#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <variant>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

// Whether the policy's values grow at a bounded rate, so that Select may
// pass over a page by its remembered value (lazy re-valuation).
bool MemoValues(const SchedulerOptions& options, const Policy& policy) {
  PageState probe;
  PolicyInput in;
  in.state = &probe;
  in.params = PageParams{1, 1, 0.5, 1};
  return options.lazy_revaluation && std::isfinite(policy.MaxValueGrowth(in));
}

// A due-only policy (nutch) is a baseline with its own schedule.
SchedulerOptions Adjusted(SchedulerOptions options, const Policy& policy) {
  if (policy.due_only()) options.explore = false;
  return options;
}

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::Create(
    const SchedulerOptions& options, const ModelSource* truth) {
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
      new Scheduler(options, std::move(policy).value(), truth));
}

Scheduler::Scheduler(const SchedulerOptions& options,
                     std::unique_ptr<Policy> policy, const ModelSource* truth)
    : options_(Adjusted(options, *policy)),
      policy_(std::move(policy)),
      bucket_(options.rate, options.burst, 0),
      estimator_(options_, *policy_, &pages_),
      valuer_(options_, *policy_, pages_, rules_, estimator_, bucket_),
      index_(valuer_,
             SelectionIndexOptions{
                 options_.refresh_slice_pages, options_.initial_horizon_scale,
                 MemoValues(options_, *policy_),
                 Selector::Options{options_.selector_scan, 0}}) {
  estimator_.set_model_source(truth);
  valuer_.set_model_source(truth);
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
  pages_.push_back(s);
  estimator_.AddPage(id);
  Reindex(id);
  return id;
}

void Scheduler::Reserve(size_t pages) {
  const size_t n = std::min(pages, options_.max_pages);
  pages_.reserve(n);
  estimator_.Reserve(n);
}

PageSnapshot Scheduler::Snapshot(PageId page) const {
  PageSnapshot snapshot(pages_[page]);
  if (const PageSignals* signals = estimator_.SignalsOf(page)) {
    static_cast<PageSignals&>(snapshot) = *signals;
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
  s.fetch_slot = 0;
  if (options_.oracle || s.rate_stats.observations() <= 0) s.static_q = 0;
  s.importance = static_cast<float>(std::clamp(
      std::isfinite(s.importance) ? static_cast<double>(s.importance) : 1.0,
      1e-6, 1e6));
  pages_.push_back(s);
  estimator_.RestorePage(id, state, std::move(profiles), std::move(recent),
                         std::move(rate));
  Reindex(id);
  return id;
}

void Scheduler::FinishRestore(std::optional<double> now) {
  index_.FinishRestore(now, bucket_.rate());
}

void Scheduler::ModelChanged(PageId page) {
  if (!KeepsTruth() || page >= pages_.size()) return;
  // oracle_rate: only Δ is taken from the truth, through the estimates.
  if (!options_.oracle) estimator_.RefreshEstimates(page);
  Reindex(page);
}

Status Scheduler::SetRules(std::vector<PageRule> rules) {
  return rules_.Set(std::move(rules), [this](PageId p) { Reindex(p); });
}

Status Scheduler::SetPageRule(PageId page, uint8_t rule) {
  Result<bool> changed = rules_.SetPageRule(page, rule, pages_.size());
  if (!changed.ok()) return changed.status();
  if (*changed) Reindex(page);
  return Status::OK();
}

std::vector<uint64_t> Scheduler::PagesPerRule() const {
  return rules_.PagesPerRule(pages_.size());
}

Scheduler::Summary Scheduler::Summarize(double now) const {
  SummaryPass pass;
  (void)SummarizeSome(now, pages_.size(), &pass);
  return pass.summary();
}

std::vector<double> Scheduler::ProfileBaseTimes(PageId page) const {
  if (!policy_->uses_profiles() || page >= pages_.size()) return {};
  return estimator_.Profiles(page)->BaseTimes();
}

void Scheduler::SetHeld(PageId page, bool held) {
  if (page >= pages_.size() || this->held(page) == held) return;
  if (page >= held_.size()) held_.resize(pages_.size(), false);
  held_[page] = held;
  if (held) {
    ++held_count_;
  } else {
    --held_count_;
  }
}

void Scheduler::Remove(PageId page) {
  if (page >= pages_.size() || pages_[page].removed()) return;
  PageState& s = pages_[page];
  s.flags = static_cast<uint8_t>((s.flags & ~PageState::kInFlight) |
                                 PageState::kRemoved);
  ++removed_count_;
  Reindex(page);  // lowest bound, no deadline (Valuer)
}

bool Scheduler::PageEligible(PageId page, double now) const {
  const PageState& s = pages_[page];
  if (s.in_flight() || now < s.not_before || held(page) || s.removed()) {
    return false;
  }
  if (s.fetched() && now - s.last_fetch < options_.min_interval) return false;
  if (const PageRule* rule = rules_.RuleFor(page);
      rule && s.fetched() && now - s.last_fetch < rule->min_interval) {
    return false;
  }
  return true;
}

bool Scheduler::Eligible(PageId page, double now,
                         const HostOpenFn& host_open) const {
  return PageEligible(page, now) && host_open(pages_[page].host);
}

std::optional<PageId> Scheduler::Select(double now,
                                        const HostOpenFn& host_open) {
  index_.ReopenAllHosts();
  std::optional<PageId> page =
      Select(now, HostGate([&](HostId h) {
               return host_open(h) ? kHostOpen : kHostClosedUntilReopened;
             }));
  // The answers were for this Select only: a later HostGate Select must
  // not find the hosts it closed still closed.
  index_.ReopenAllHosts();
  return page;
}

std::optional<PageId> Scheduler::Select(double now, const HostGate& gate) {
  if (index_.restoring()) FinishRestore();
  if (bucket_.Available(now) < 1 - 1e-9) return std::nullopt;
  // Nothing eligible, or (a due-only policy, nutch) nothing due: no
  // selection, and the token stays unused.
  const auto usable = [&](const Selector::Choice& c) {
    return !(policy_->due_only() && !c.priority.overdue &&
             pages_[c.page].fetched() && !(c.priority.key > 0));
  };
  const auto selection = index_.Select(
      now, bucket_.rate(), [&](PageId p) { return PageEligible(p, now); },
      usable, &gate);
  if (!selection) return std::nullopt;
  const Selector::Choice* choice = &selection->choice;
  // The implied threshold is the value a token buys at the margin. When a
  // deadline decides, the margin is the best page by value (else a policy
  // whose clamps scale with the threshold, longevity's risk bound, would
  // freeze it at whatever it was when deadlines took over). A never-fetched
  // page at the margin (discovery) leaves the refresh threshold alone.
  const std::optional<Selector::Choice>& margin = selection->margin;
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
  // Values over draws may rise with the coverage (the weights move as if τ
  // had grown): a value remembered for lazy re-valuation no longer bounds
  // them. Index bounds allow for it (Valuer::IndexBound).
  if (estimator_.ObserveSignalCoverage(host, through)) index_.ForgetValues();
}

Scheduler::ObserveEffect Scheduler::Observe(const Observation& obs) {
  ObserveEffect effect;
  if (obs.page >= pages_.size() || !std::isfinite(obs.time) ||
      pages_[obs.page].removed()) {
    return effect;
  }
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
          if (!estimator_.ObserveSignal(obs.page, obs.time, e)) return;
          effect.page = true;
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

void Scheduler::OnContent(PageId page, double now, const FetchedObs* fetched) {
  PageState& s = pages_[page];
  s.flags &= static_cast<uint8_t>(~PageState::kInFlight);
  s.failures = 0;
  s.not_before = 0;
  const bool first = !s.fetched();
  const bool changed = fetched != nullptr && fetched->changed;
  double tau = first ? 0 : now - s.last_fetch;
  if (!first && !(tau > 0)) tau = 0;
  estimator_.ObserveContent(page, now, fetched, tau, bucket_.rate());
  s.last_fetch = now;
  s.signals = 0;
  if (s.fetches < UINT16_MAX) ++s.fetches;
  policy_->OnFetched(valuer_.Input(page), s, changed, tau, threshold_);
  Reindex(page);
  if (!options_.oracle) {
    estimator_.Sweep(page, [this](PageId p) { Reindex(p); });
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
