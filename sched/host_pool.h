// Per-host pooled estimates with shrinkage: global → host → page.
//
// Every page observation is also fed to its host's pooled statistics (and to
// the global ones). A host's estimate is the MAP of one common rate for all
// its pages' intervals, with the global estimate as prior (weighted by how
// closely the hosts' rates agree: HostRateWeight); a page's estimate
// uses its host's estimate as prior (pseudo-counts, empirical-Bayes style), so
// a page with few observations sits near its host and a new page starts from
// the host's pooled estimate, not from nothing. Signal quality (α, ν) is
// pooled the same way, and so is the share of a host's pages that never
// change (RatePrior::static_share: each page reports P(static | its
// evidence), an online EM step). Also tracks whether a host's Last-Modified
// agrees with content changes (to decide when to trust it). Times are in one
// unit (seconds in the daemon). Solved rates are cached until the next
// observation or restore, so even const calls write: not thread-safe, not
// even for concurrent readers (the scheduler's owner thread).
#ifndef FRESHD_SCHED_HOST_POOL_H_
#define FRESHD_SCHED_HOST_POOL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sched/change_rate_estimator.h"
#include "sched/observation.h"
#include "sched/signal_estimator.h"

namespace freshd::sched {

struct HostPoolOptions {
  RatePrior global_prior = {1.0 / 86400, 1};  // for the global estimate.
  // Pseudo-changes a host borrows from the global rate: 1/τ̂², clamped to
  // [min, max], where τ̂² is the spread of the hosts' log rates less their
  // sampling noise (HostPool::HostRateSpread). Where hosts are alike a host
  // leans hard on the others: at a fixed 2 a host's first few intervals,
  // hours long because a signal policy fetched right after a signal, could
  // put its rate at 5x the truth; none of its pages was then worth a fetch
  // again, so nothing corrected it (noisy.toml, ncis1 R = 100, 2 of 5 seeds;
  // sim JSON least_host_crawl_share). Where hosts differ the pull drops to
  // min, so a host 12x faster than the others is not read far too slow.
  // Equal bounds give a fixed weight.
  double min_host_rate_weight = 2;
  double max_host_rate_weight = 50;
  // Each host's log rate in that spread is its MAP under this many
  // pseudo-changes at the global rate (enough to keep a host whose
  // intervals all changed finite).
  double host_spread_prior_weight = 1;
  // The spread is recomputed after every min(hosts, this) observed
  // intervals, over at most this many hosts (every k-th id, the offset
  // rotating): a bounded pause, about one rate solve per interval.
  size_t host_spread_sample = 4096;
  double page_rate_weight = 1;    // pseudo-changes a page borrows (host).
  double host_signal_weight = 4;  // pseudo-changes / changes' worth of time
  double page_signal_weight = 2;  // for α and ν, host resp. page level.
  // The same for a host's joint (Δ, α, ν) fit (trusted Last-Modified): Δ
  // leans on it too, and at 4 one host's first hours ran it away as
  // min_host_rate_weight's note says (noisy-lm.toml, ncis1, 2 of 5 seeds).
  double host_joint_weight = 8;
  double decay = 0.999;  // per-observation forgetting at host level.
  // Share of static pages (RatePrior::static_share): Beta(a, b) prior on the
  // global share, then each host's shrunk toward it by host_static_pages.
  double static_prior_a = 1;
  double static_prior_b = 4;
  double host_static_pages = 4;
  size_t max_hosts = 1 << 22;  // ids ≥ this share the global statistics.
};

// One host's (or the global) pooled statistics; ~300 bytes.
class HostStats {
 public:
  // Bit-only changed intervals are kept per octave [2^(i−6), 2^(i−5)) (the
  // ends clamp), each bin at its mean interval in the likelihood.
  static constexpr int kBins = 32;

  void ObserveChange(double interval, bool changed, double since_modified,
                     double decay);
  // Posterior-mode common rate of all observed intervals under `prior`.
  double EstimateRate(const RatePrior& prior) const;

  // Did Last-Modified move exactly when the content did? (per fetch with
  // both a previous and a current Last-Modified.)
  void ObserveLastModifiedAgreement(bool agrees);
  // True once ≥ 5 checks were made and ≥ 90% agreed.
  bool TrustLastModified() const;

  SignalStats& signals() { return signals_; }
  const SignalStats& signals() const { return signals_; }
  double observations() const;  // decayed count of observed intervals.
  // Expected Fisher information about ln λ at `rate`: Σ x²e^{−x}/(1−e^{−x})
  // over bit-only intervals (x = rate × interval; each group of unchanged
  // or binned changed intervals at its mean length), plus one per timed
  // change. 1/information is the sampling variance of ln λ̂.
  double LogRateInformation(double rate) const;
  uint32_t pages() const { return pages_; }
  void AddPage() { ++pages_; }

  // Each source's own evidence (sched/signal_estimator.h, "Several
  // sources"), fed once the source has signalled a page of the host
  // (sources_seen(), bit i for SignalSource i).
  SignalStats& source_signals(SignalSource source) {
    return source_signals_[static_cast<int>(source)];
  }
  const SignalStats& source_signals(SignalSource source) const {
    return source_signals_[static_cast<int>(source)];
  }
  uint8_t sources_seen() const { return sources_seen_; }
  void NoteSource(SignalSource source) {
    sources_seen_ |= static_cast<uint8_t>(1u << static_cast<int>(source));
  }

 private:
  float bin_count_[kBins] = {};  // decayed changed intervals per bin
  float bin_time_[kBins] = {};   // ... and their interval sums.
  float unchanged_count_ = 0;
  float unchanged_time_ = 0;
  float timed_changes_ = 0;
  float timed_exposure_ = 0;
  SignalStats signals_;
  uint16_t lm_checks_ = 0;  // saturating
  uint16_t lm_agree_ = 0;
  uint32_t pages_ = 0;
  SignalStats source_signals_[kSignalSources];
  uint8_t sources_seen_ = 0;
};

// HostPool's cached host-rate spread, for recovery: the value and when it
// is next recomputed, so a rebuilt pool answers as the original would.
struct HostSpreadState {
  double value = 0;
  uint64_t intervals_left = 0;  // ObserveChange calls until recomputed, ≥ 1
  uint64_t rounds = 0;          // computations so far (the sample's offset)
};

class HostPool {
 public:
  explicit HostPool(const HostPoolOptions& options = {});

  // Registers a page on `host` (for pages()); new pages then use
  // PageRatePrior(host).rate as their rate until they have observations.
  void AddPage(uint32_t host);

  // Feeds one page observation to the host's and the global statistics.
  // The page's own ChangeRateStats/SignalStats are updated by the caller.
  void ObserveChange(uint32_t host, double interval, bool changed,
                     double since_modified = -1);
  // `current`: the estimate used for the E-step (the page's present one).
  void ObserveSignals(uint32_t host, const SignalTriple& x,
                      const SignalParams& current);
  void ObserveLastModifiedAgreement(uint32_t host, bool agrees);
  // A signal of `source` reached a page of `host`: from now on the host
  // learns that source's own (α_s, ν_s).
  void NoteSource(uint32_t host, SignalSource source);
  // One interval's evidence about `source` alone on `host` (its signals,
  // the interval's changed bit); `current`: (Δ, α_s, ν_s) for the E-step.
  // Nothing for a source the host has not seen.
  void ObserveSourceSignals(uint32_t host, SignalSource source,
                            const SignalTriple& x, const SignalParams& current);
  // Sources that have signalled the host's pages (0 for an unknown host).
  int SourcesInPlay(uint32_t host) const;
  // The host's (Δ, α_s, ν_s) for `source`: its own evidence under a weak
  // prior (one change's worth of α = 0.5, ν = 0), Δ the host's rate.
  // Unseen source or unknown host: the host's pooled estimate.
  SignalParams SourceParams(uint32_t host, SignalSource source) const;
  // The weight of one signal of `source` on `host`: ln q_s / ln q, q_s =
  // ν_s/(α_sΔ+ν_s) from SourceParams and q the host's pooled q, in
  // [0, kMaxSourceWeight]; exactly 1 while fewer than two sources are in
  // play (the one-source model).
  double SourceWeight(uint32_t host, SignalSource source) const;
  static constexpr double kMaxSourceWeight = 1000;

  // The host's pooled rate (shrunk toward the global one) as a page prior of
  // weight options.page_rate_weight, with the host's static share. Unknown
  // hosts: the global estimates.
  RatePrior PageRatePrior(uint32_t host) const;

  // Static share π₀: the host's pages' P(static | their evidence) summed
  // (an online EM step per page update), shrunk toward the global share. A
  // page reports its change from `before` to `after` (each in [0, 1]);
  // `first` counts it as a page with evidence. In memory only: restored
  // pages report theirs again (Scheduler::RestorePage).
  void AdjustStatic(uint32_t host, double before, double after, bool first);
  double StaticShare(uint32_t host) const;
  // The host's pooled (Δ, α, ν), shrunk toward the global ones, as a page
  // prior of options.page_signal_weight changes' worth. Δ is HostRate (from
  // the changed bits), or with `joint` the signal model's own fit, which
  // uses timed evidence (SignalTriple::quiet) and conditions on the signals.
  SignalPrior PageSignalPrior(uint32_t host, bool joint = false) const;
  double HostRate(uint32_t host) const;
  double GlobalRate() const;
  // The pseudo-changes a host's rate borrows from the global one: 1/τ̂²
  // within [min_host_rate_weight, max_host_rate_weight], max when
  // τ̂² ≤ 1/max. τ̂² is empirical Bayes made robust: over hosts with ≥ 1
  // decayed interval, λ̂_h the host's rate under w0 =
  // host_spread_prior_weight pseudo-changes, I_h its LogRateInformation and
  // B_h = I_h/(I_h + w0) its shrinkage, τ̂² = ((1.4826 · MAD of ln λ̂_h)² −
  // median of B_h²/I_h) / median of B_h². Median and MAD, not mean and
  // variance, because the host that needs the pull most, one whose first
  // intervals ran its rate away, would otherwise widen the spread enough to
  // free itself. Recomputed when stale (host_spread_sample).
  double HostRateWeight() const;
  double HostRateSpread() const;  // τ̂²; ≤ 0: no spread beyond the noise.
  bool TrustLastModified(uint32_t host) const;

  // nullptr when the host has no statistics yet.
  const HostStats* Find(uint32_t host) const;
  size_t hosts() const { return hosts_.size(); }

  // Recovery (sched/state_codec.h): the global statistics, and replacing a
  // host's (ignored for host ≥ max_hosts) or the global statistics. Call
  // before the host's pages are restored: AddPage recounts pages() on top.
  const HostStats& global() const { return global_; }
  void Restore(uint32_t host, const HostStats& stats) {
    if (HostStats* h = Get(host)) *h = stats;
    ++version_;
    spread_.stale = true;
  }
  void RestoreGlobal(const HostStats& stats) {
    global_ = stats;
    ++version_;
    spread_.stale = true;
  }
  // The cached spread, or nullopt when it will be recomputed anyway. Restore
  // it after the hosts and the globals (each of which marks it stale); its
  // intervals_left is capped at host_spread_sample.
  std::optional<HostSpreadState> spread_state() const;
  void RestoreSpread(const HostSpreadState& state);
  const HostPoolOptions& options() const { return options_; }

 private:
  HostStats* Get(uint32_t host);  // nullptr when host ≥ max_hosts.
  SignalPrior HostSignalPrior(bool joint) const;

  struct StaticCount {
    double sum = 0;      // Σ P(static) over pages with evidence
    uint32_t pages = 0;  // pages with evidence
  };
  double GlobalStaticShare() const;

  HostPoolOptions options_;
  HostStats global_;
  std::vector<HostStats> hosts_;  // indexed by host id, grown on demand.
  StaticCount global_static_;
  std::vector<StaticCount> static_;  // by host id, grown on demand.

  // HostRateSpread's last value, recomputed after `period` more intervals.
  struct Spread {
    double value = 0;
    uint64_t intervals = 0;  // intervals observed at that computation
    uint64_t period = 0;
    uint64_t rounds = 0;  // rotates the sample's offset
    bool stale = true;
  };
  uint64_t intervals_ = 0;  // ObserveChange calls with a host in range.
  mutable Spread spread_;

  // Solved rates, valid while their version equals version_, which every
  // change of the statistics advances (a host's rate has the global one as
  // prior, so any observation may move it). Between two observations the
  // scheduler refreshes several pages (sweep), each asking for its host's
  // and the global rate more than once: one solve each instead.
  struct CachedRate {
    double rate = 0;
    uint64_t version = 0;
  };
  uint64_t version_ = 1;
  mutable CachedRate global_rate_;
  mutable std::vector<CachedRate> host_rates_;  // by host id, on demand.
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_HOST_POOL_H_
