#include "sched/host_pool.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

namespace freshd::sched {
namespace {

constexpr int kBinOffset = 6;          // bin 0 holds intervals below 2^−5.
constexpr double kMaxInterval = 1e12;  // longer ones are clamped

int BinOf(double interval) {
  int exponent = 0;
  std::frexp(interval, &exponent);  // interval ∈ [2^(e−1), 2^e)
  return std::clamp(exponent - 1 + kBinOffset, 0, HostStats::kBins - 1);
}

}  // namespace

void HostStats::ObserveChange(double interval, bool changed,
                              double since_modified, double decay) {
  if (!(interval > 0) || std::isnan(interval)) return;
  interval = std::min(interval, kMaxInterval);
  if (!(decay >= 0 && decay <= 1)) decay = 1;
  const float d = static_cast<float>(decay);
  for (int i = 0; i < kBins; ++i) {
    bin_count_[i] *= d;
    bin_time_[i] *= d;
  }
  unchanged_count_ *= d;
  unchanged_time_ *= d;
  timed_changes_ *= d;
  timed_exposure_ *= d;
  if (!changed) {
    unchanged_count_ += 1;
    unchanged_time_ += static_cast<float>(interval);
  } else if (since_modified >= 0 && since_modified < interval) {
    timed_changes_ += 1;
    timed_exposure_ += static_cast<float>(since_modified);
  } else {
    const int bin = BinOf(interval);
    bin_count_[bin] += 1;
    bin_time_[bin] += static_cast<float>(interval);
  }
}

double HostStats::EstimateRate(const RatePrior& prior) const {
  WeightedInterval changed[kBins];
  int n = 0;
  for (int i = 0; i < kBins; ++i) {
    if (bin_count_[i] > 0) {
      changed[n++] = {bin_count_[i], bin_time_[i] / bin_count_[i]};
    }
  }
  return SolveChangeRate(std::span<const WeightedInterval>(changed, n),
                         timed_changes_, unchanged_time_ + timed_exposure_,
                         prior);
}

void HostStats::ObserveLastModifiedAgreement(bool agrees) {
  if (lm_checks_ == UINT16_MAX) {  // keep the ratio, free room
    lm_checks_ /= 2;
    lm_agree_ /= 2;
  }
  ++lm_checks_;
  if (agrees) ++lm_agree_;
}

bool HostStats::TrustLastModified() const {
  return lm_checks_ >= 5 && lm_agree_ >= 0.9 * lm_checks_;
}

double HostStats::LogRateInformation(double rate) const {
  auto per_interval = [](double x) {
    if (!(x > 1e-9)) return 0.0;
    return x * x / std::expm1(x);  // x²e^{−x}/(1−e^{−x})
  };
  double info = timed_changes_;
  if (unchanged_count_ > 0) {
    info += unchanged_count_ *
            per_interval(rate * unchanged_time_ / unchanged_count_);
  }
  for (int i = 0; i < kBins; ++i) {
    if (bin_count_[i] > 0) {
      info += bin_count_[i] * per_interval(rate * bin_time_[i] / bin_count_[i]);
    }
  }
  return info;
}

double HostStats::observations() const {
  double n = unchanged_count_ + timed_changes_;
  for (int i = 0; i < kBins; ++i) n += bin_count_[i];
  return n;
}

HostPool::HostPool(const HostPoolOptions& options) : options_(options) {}

HostStats* HostPool::Get(uint32_t host) {
  if (host >= options_.max_hosts) return nullptr;
  if (host >= hosts_.size()) hosts_.resize(static_cast<size_t>(host) + 1);
  return &hosts_[host];
}

const HostStats* HostPool::Find(uint32_t host) const {
  return host < hosts_.size() ? &hosts_[host] : nullptr;
}

void HostPool::AddPage(uint32_t host) {
  global_.AddPage();
  if (HostStats* h = Get(host)) h->AddPage();
}

void HostPool::ObserveChange(uint32_t host, double interval, bool changed,
                             double since_modified) {
  ++version_;
  global_.ObserveChange(interval, changed, since_modified, options_.decay);
  if (HostStats* h = Get(host)) {
    h->ObserveChange(interval, changed, since_modified, options_.decay);
    ++intervals_;
  }
}

void HostPool::ObserveSignals(uint32_t host, const SignalTriple& x,
                              const SignalParams& current) {
  global_.signals().Observe(x, current, options_.decay);
  if (HostStats* h = Get(host))
    h->signals().Observe(x, current, options_.decay);
}

void HostPool::NoteSource(uint32_t host, SignalSource source) {
  if (static_cast<int>(source) >= kSignalSources) return;
  if (HostStats* h = Get(host)) h->NoteSource(source);
}

void HostPool::ObserveSourceSignals(uint32_t host, SignalSource source,
                                    const SignalTriple& x,
                                    const SignalParams& current) {
  if (static_cast<int>(source) >= kSignalSources || host >= hosts_.size()) {
    return;
  }
  HostStats& h = hosts_[host];
  if ((h.sources_seen() >> static_cast<int>(source) & 1) == 0) return;
  h.source_signals(source).Observe(x, current, options_.decay);
}

int HostPool::SourcesInPlay(uint32_t host) const {
  const HostStats* h = Find(host);
  return h == nullptr ? 0 : std::popcount(h->sources_seen());
}

SignalParams HostPool::SourceParams(uint32_t host, SignalSource source) const {
  const double rate = HostRate(host);
  const HostStats* h = Find(host);
  SignalParams pooled =
      h == nullptr ? HostSignalPrior(false).center
                   : h->signals().Estimate(HostSignalPrior(false), rate);
  pooled.delta = rate;
  if (h == nullptr || static_cast<int>(source) >= kSignalSources ||
      (h->sources_seen() >> static_cast<int>(source) & 1) == 0) {
    return pooled;
  }
  // A weak prior of its own, not the pooled estimate: where a noisy source
  // dominates the pool, a precise one started at the pool's ν would read
  // its first signals as false and unlearn them slowly (online EM).
  SignalPrior prior;
  prior.center = {rate, 0.5, 0};
  prior.change_weight = 1;
  prior.exposure_weight = rate > 0 ? 1 / rate : 0;
  SignalParams p = h->source_signals(source).Estimate(prior, rate);
  p.delta = rate;
  return p;
}

namespace {

// ln q = ln(ν/(αΔ+ν)) ≤ 0, −∞ when ν = 0 and αΔ > 0.
double PooledLogQ(const SignalParams& p) {
  return -std::log1p(p.alpha * p.delta / std::max(p.nu, 1e-300));
}

}  // namespace

double HostPool::SourceWeight(uint32_t host, SignalSource source) const {
  if (SourcesInPlay(host) < 2) return 1;
  const HostStats* h = Find(host);
  const double rate = HostRate(host);
  SignalParams pooled = h->signals().Estimate(HostSignalPrior(false), rate);
  pooled.delta = rate;
  const double log_q = PooledLogQ(pooled);
  if (!(log_q < 0) || !std::isfinite(log_q)) return 1;
  const double w = PooledLogQ(SourceParams(host, source)) / log_q;
  return std::isnan(w) ? 1 : std::clamp(w, 0.0, kMaxSourceWeight);
}

void HostPool::ObserveLastModifiedAgreement(uint32_t host, bool agrees) {
  if (HostStats* h = Get(host)) h->ObserveLastModifiedAgreement(agrees);
}

double HostPool::HostRateSpread() const {
  if (!spread_.stale && intervals_ - spread_.intervals < spread_.period) {
    return spread_.value;
  }
  const size_t sample = std::max<size_t>(options_.host_spread_sample, 2);
  const size_t step = (hosts_.size() + sample - 1) / sample;
  const size_t offset = step > 1 ? spread_.rounds % step : 0;
  const double global = GlobalRate();
  // Each host's MAP deviates from the centre by B·(τ-spread + noise), with
  // B = I/(I + w0) its shrinkage and 1/I the noise's variance.
  const double w0 = options_.host_spread_prior_weight;
  std::vector<double> log_rates, noises, shrinkages;
  for (size_t host = offset; host < hosts_.size(); host += step) {
    const double n = hosts_[host].observations();
    if (!(n >= 1)) continue;
    const double rate = hosts_[host].EstimateRate({global, w0});
    if (!(rate > 0) || !std::isfinite(rate)) continue;
    const double info = hosts_[host].LogRateInformation(rate);
    if (!(info > 0) || !std::isfinite(info)) continue;
    const double b = info / (info + w0);
    log_rates.push_back(std::log(rate));
    noises.push_back(b * b / info);
    shrinkages.push_back(b * b);
  }
  auto median = [](std::vector<double>& v) {
    auto mid = v.begin() + v.size() / 2;
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2 == 1) return *mid;
    return (*mid + *std::max_element(v.begin(), mid)) / 2;
  };
  double value = 0;
  if (log_rates.size() >= 2) {
    const double center = median(log_rates);
    for (double& l : log_rates) l = std::abs(l - center);
    const double scale = 1.4826 * median(log_rates);
    value = (scale * scale - median(noises)) / median(shrinkages);
  }
  spread_ = {value, intervals_,
             std::max<uint64_t>(1, std::min(hosts_.size(), sample)),
             spread_.rounds + 1, false};
  return value;
}

std::optional<HostSpreadState> HostPool::spread_state() const {
  const uint64_t since = intervals_ - spread_.intervals;
  if (spread_.stale || since >= spread_.period) return std::nullopt;
  return HostSpreadState{spread_.value, spread_.period - since, spread_.rounds};
}

void HostPool::RestoreSpread(const HostSpreadState& state) {
  if (!std::isfinite(state.value) || state.intervals_left == 0) return;
  // A saved period never exceeds the sample; a larger one (a corrupt
  // record) would keep the value for good.
  const uint64_t left = std::min<uint64_t>(
      state.intervals_left, std::max<size_t>(options_.host_spread_sample, 2));
  spread_ = {state.value, intervals_, left, state.rounds, false};
}

double HostPool::HostRateWeight() const {
  const double lo = options_.min_host_rate_weight;
  const double hi = std::max(lo, options_.max_host_rate_weight);
  const double spread = HostRateSpread();
  return spread > 1 / hi ? std::clamp(1 / spread, lo, hi) : hi;
}

double HostPool::GlobalRate() const {
  if (global_rate_.version != version_) {
    global_rate_ = {global_.EstimateRate(options_.global_prior), version_};
  }
  return global_rate_.rate;
}

double HostPool::HostRate(uint32_t host) const {
  const double global = GlobalRate();
  const HostStats* h = Find(host);
  if (h == nullptr) return global;
  if (host >= host_rates_.size()) host_rates_.resize(hosts_.size());
  CachedRate& cached = host_rates_[host];
  if (cached.version != version_) {
    cached = {h->EstimateRate({global, HostRateWeight()}), version_};
  }
  return cached.rate;
}

RatePrior HostPool::PageRatePrior(uint32_t host) const {
  return {HostRate(host), options_.page_rate_weight, StaticShare(host)};
}

void HostPool::AdjustStatic(uint32_t host, double before, double after,
                            bool first) {
  auto apply = [&](StaticCount& c) {
    c.sum = std::max(0.0, c.sum + after - before);
    if (first) ++c.pages;
  };
  apply(global_static_);
  if (host >= options_.max_hosts) return;
  if (host >= static_.size()) static_.resize(static_cast<size_t>(host) + 1);
  apply(static_[host]);
}

double HostPool::GlobalStaticShare() const {
  const double a = options_.static_prior_a, b = options_.static_prior_b;
  return (global_static_.sum + a) / (global_static_.pages + a + b);
}

double HostPool::StaticShare(uint32_t host) const {
  const double global = GlobalStaticShare();
  if (host >= static_.size()) return global;
  const StaticCount& c = static_[host];
  const double k = options_.host_static_pages;
  return std::clamp((c.sum + k * global) / (c.pages + k), 0.0, 1 - 1e-6);
}

bool HostPool::TrustLastModified(uint32_t host) const {
  const HostStats* h = Find(host);
  return h != nullptr && h->TrustLastModified();
}

// The global signal estimate, as the prior of every host: the global
// statistics with a weak pull toward α = 0.5, ν = 0 (and with `joint`, Δ
// fitted by the signal model rather than the changed bits' global rate).
SignalPrior HostPool::HostSignalPrior(bool joint) const {
  const double global_rate = GlobalRate();
  SignalPrior weak;
  weak.center = {global_rate, 0.5, 0};
  weak.change_weight = 1;
  weak.exposure_weight = global_rate > 0 ? 1 / global_rate : 0;
  SignalPrior out;
  out.center = global_.signals().Estimate(weak, joint ? -1 : global_rate);
  const double rate = out.center.delta;
  const double weight =
      joint ? options_.host_joint_weight : options_.host_signal_weight;
  out.change_weight = weight;
  out.exposure_weight = rate > 0 ? weight / rate : 0;
  return out;
}

SignalPrior HostPool::PageSignalPrior(uint32_t host, bool joint) const {
  SignalPrior host_prior = HostSignalPrior(joint);
  const HostStats* h = Find(host);
  SignalPrior out;
  if (joint) {
    out.center = h == nullptr ? host_prior.center
                              : h->signals().Estimate(host_prior, -1);
  } else {
    const double rate = HostRate(host);
    out.center = h == nullptr ? host_prior.center
                              : h->signals().Estimate(host_prior, rate);
    out.center.delta = rate;
  }
  const double rate = out.center.delta;
  out.change_weight = options_.page_signal_weight;
  out.exposure_weight = rate > 0 ? options_.page_signal_weight / rate : 0;
  return out;
}

}  // namespace freshd::sched
