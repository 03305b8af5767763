// Poisson change-rate estimation from irregular crawls (Cho & Garcia-Molina,
// "Estimating frequency of change", TOIT 2003), with a Gamma prior.
//
// Each crawl interval I_i yields a bit c_i (changed since the previous crawl?)
// and, when the server's Last-Modified is trusted, the time s_i since the last
// modification. The bit-only likelihood is
// Π(1−e^{−λI_i})^{c_i}(e^{−λI_i})^{1−c_i}; a trusted Last-Modified makes a
// changed interval contribute λe^{−λs_i} (a change seen at a known time, then
// s_i quiet). The estimate is the posterior mode under a Gamma prior of
// `weight` pseudo-changes observed in weight/rate time, so one unchanged crawl
// does not give λ = 0 and one changed crawl does not give ∞; optionally with
// a point mass at λ = 0 for pages that never change. ChangeRateStats is
// a compact (40-byte) online state: a ring of the newest observations kept
// one by one (16-bit floats, relative error ≤ 2^-11) plus exponentially
// decayed aggregates of older ones, so the estimate follows a page whose rate
// changes. Plain values; not thread-safe (one owner thread).
#ifndef FRESHD_SCHED_CHANGE_RATE_ESTIMATOR_H_
#define FRESHD_SCHED_CHANGE_RATE_ESTIMATOR_H_

#include <bit>
#include <cstdint>
#include <span>

namespace freshd::sched {

// Gamma prior as pseudo-observations: `weight` changes seen in weight/rate
// time. The posterior mode with no data is `rate`. weight = 0: pure MLE.
// static_share > 0 adds a point mass at λ = 0 (a page that never changes;
// much of the web is static): while a page has shown no change, its
// estimate is scaled by 1 − P(static | no change in its exposure), so a
// static page's value falls with evidence instead of staying at ~1/exposure.
struct RatePrior {
  double rate = 1.0 / 86400;  // λ₀ > 0, changes per unit time.
  double weight = 1;          // ≥ 0 pseudo-changes.
  double static_share = 0;    // π₀ ∈ [0, 1): prior P(never changes).
};

// P(static | no change seen in `exposure`) under `prior`: π₀ / (π₀ + (1 −
// π₀)·(1 + exposure·λ₀/w)^(−w)), the second term the Gamma part's chance of
// no change. 0 when static_share ≤ 0 or weight ≤ 0 (no Gamma part to weigh
// against), in [0, 1) otherwise.
double StaticPosterior(const RatePrior& prior, double exposure);

// The ring's 16-bit float of a time in seconds: 6 exponent bits e and 10
// mantissa bits m stand for (1 + m/1024)·2^(e − 23), e in [1, 63], so
// [2^-22 s, 2^41 s) to the nearest (relative error ≤ 2^-11 ≈ 4.9e-4; exact
// for values of 11 significant bits: integers to 2048, 0.5, 3600, 86400);
// 0 stands for 0 (and anything not > 0); smaller times read as 2^-22,
// larger as the largest. Unpacking then packing gives the code back; an
// unpacked value is a float exactly.
uint16_t PackSeconds16(double seconds);
inline float UnpackSeconds16(uint16_t code) {
  // The float with the same mantissa bits and the exponent rebased.
  return code == 0 ? 0.0f
                   : std::bit_cast<float>((static_cast<uint32_t>(code) << 13) +
                                          (104u << 23));
}

// Per-observation forgetting factor: every aggregate is multiplied by it on
// each Observe, so the effective memory is about 1/(1−decay) crawls.
inline constexpr double kDefaultRateDecay = 0.97;

// One crawl interval's evidence, for the batch estimator.
struct ChangeObservation {
  double interval;             // I > 0: time between the two crawls.
  bool changed;                // content differs from the previous crawl.
  double since_modified = -1;  // s ∈ [0, I) from trusted Last-Modified, or
                               // < 0 when unknown (bit-only evidence).
};

class ChangeRateStats {
 public:
  static constexpr int kRing = 8;  // newest observations kept exactly.

  // Records one crawl interval. interval ≤ 0 or NaN is ignored; longer than
  // 1e12 is clamped (so are prior rates and weights in Estimate).
  // since_modified ≥ 0 (only meaningful when changed) marks a trusted
  // Last-Modified: the change is then an exactly timed event. A value
  // ≥ interval contradicts the bit and is ignored (bit-only evidence used).
  void Observe(double interval, bool changed, double since_modified = -1,
               double decay = kDefaultRateDecay);

  // Posterior-mode λ under `prior`; > 0 whenever prior.weight > 0 and
  // prior.rate > 0. With prior.weight == 0: the MLE, which is 0 when no change
  // was seen and +∞ when every interval changed (no Last-Modified). With no
  // change seen, times 1 − StaticPosterior().
  double Estimate(const RatePrior& prior) const;

  // Log-likelihood of the observations at `rate` (> 0), up to a constant
  // in the rate: Σ ln(1−e^{−λI}) over changed intervals (decayed ones at
  // their mean interval), + timed changes · ln λ − λ · quiet time. An
  // interval that changed bounds the rate below and no more (censored):
  // the term tends to 0, not to a maximum, as λ grows.
  double LogLikelihood(double rate) const;

  // StaticPosterior(prior, exposure()) while no change was seen; 0 once one
  // was (or before any observation).
  double StaticPosterior(const RatePrior& prior) const;

  // Fisher information about ln λ at `rate` (> 0) of the observations:
  // x²e^{−x}/(1−e^{−x}) per bit-only interval of x = rate·I (what one
  // changed/unchanged bit says about the log rate), 1 per timed change;
  // decayed aggregates at their mean interval. Excludes the prior (whose
  // information is its weight). 0 without observations.
  double LogRateInformation(double rate) const;

  // The newest intervals that showed a change without a timed
  // Last-Modified, counted back from the newest (at most kRing).
  int RecentChangedRun() const;
  // The length of the back-th newest interval kept exactly (0: newest);
  // -1 beyond the ring or for a timed change (which keeps its quiet time).
  double RecentInterval(int back) const;

  // Effective (decayed) number of observed intervals.
  double observations() const;
  // Effective number of intervals that showed a change.
  double changes() const;
  // Effective observed time: Σ decayed intervals (for a Last-Modified
  // change, its quiet time s).
  double exposure() const;

 private:
  enum Kind : uint8_t { kUnchanged = 0, kChanged = 1, kTimed = 2 };
  void Fold(Kind kind, float value);  // moves one entry to the aggregates.
  Kind KindAt(int slot) const {
    return static_cast<Kind>((ring_kinds_ >> (2 * slot)) & 3);
  }

  // The newest kRing observations, weight 1 each: value = interval (kinds
  // kUnchanged, kChanged) or quiet time s (kind kTimed) as PackSeconds16; 2
  // kind bits each.
  uint16_t ring_[kRing] = {};
  uint16_t ring_kinds_ = 0;
  uint8_t ring_size_ = 0;
  uint8_t ring_head_ = 0;  // index of the oldest ring entry.
  // Older observations, decayed by `decay` per Observe.
  float unchanged_count_ = 0;  // unchanged intervals
  float changed_count_ = 0;    // changed intervals (bit-only), likelihood
  float changed_time_ = 0;     // approximated at their mean interval.
  float timed_changes_ = 0;    // Last-Modified changes
  // Σ I over unchanged intervals plus Σ s over timed changes: time seen
  // without a change, the only way either enters the likelihood.
  float quiet_time_ = 0;
};

// Posterior-mode λ for a batch of observations, no decay (exact likelihood,
// each changed interval kept individually). Same conventions as Estimate.
double EstimateChangeRate(std::span<const ChangeObservation> observations,
                          const RatePrior& prior);

// A bit-only changed interval with a (decayed) weight.
struct WeightedInterval {
  double weight;
  double interval;
};

// Posterior mode from sufficient statistics: bit-only changed intervals,
// plus `events` exactly timed changes and `exposure` quiet time (unchanged
// intervals and Last-Modified quiet times). Same conventions as Estimate
// (no change at all: scaled by 1 − StaticPosterior(prior, exposure)).
double SolveChangeRate(std::span<const WeightedInterval> changed, double events,
                       double exposure, const RatePrior& prior);

// The naive estimator (changes / total time). Biased low when λI is not small;
// provided for comparison and tests.
double NaiveChangeRate(std::span<const ChangeObservation> observations);

// Cho & Garcia-Molina's bias-reduced estimator for n regular intervals of
// length `interval` with x changes observed: −log((n−x+0.5)/(n+0.5))/interval.
double RegularIntervalChangeRate(int n, int x, double interval);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_CHANGE_RATE_ESTIMATOR_H_
