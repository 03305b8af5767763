// Maximum-likelihood estimation of change-indicating-signal quality: recall α
// and false-signal rate ν (with the change rate Δ, jointly or given), from
// (interval τ, signals n, changed?) triples (docs/MATH.md Paper 2 (a);
// noisy-signals paper, appendix E).
//
// Model: changes are Poisson(Δ); each change emits a signal with probability
// α; false signals are Poisson(ν). So signalled changes N1 ~ Poisson(αΔτ),
// unsignalled N0 ~ Poisson(κτ) with κ = (1−α)Δ, false F ~ Poisson(ντ), all
// independent; n = N1 + F, changed = N0 + N1 ≥ 1. With σ = αΔ + ν:
//   P(unchanged, n | τ) = e^{−Δτ} · e^{−ντ}(ντ)^n/n!
//   P(changed,   n | τ) = e^{−στ}(στ)^n/n! − P(unchanged, n | τ)
//                       = e^{−στ}τ^n/n! · [σ^n − e^{−κτ}ν^n]
// (dividing gives MATH's P(fresh | τ, n) = e^{−κτ}q^n, q = ν/σ). The fit is EM
// on the latent (N1, N0, F): E[N1|n,chg] = n(1−q)/(1−e^{−κτ}q^n),
// E[N0|n,chg] = κτ/(1−e^{−κτ}q^n), E[F] = n − E[N1]; unchanged: N1 = N0 = 0,
// F = n. M-step: α = ΣN1/Σ(N1+N0), ν = ΣF/Στ, Δ = Σ(N1+N0)/Στ, each with the
// prior's pseudo-counts added (MAP; the host's estimate as prior = shrinkage).
//
// Timed evidence (a trusted Last-Modified put the newest change s before the
// fetch, with b signals before it and m after it): the likelihood, given the
// signal path and so valid when fetch times follow the signals, is
//   e^{−στ} σ^b ν^m e^{−κs} · (αΔ if a signal claims the change, else κ)
// up to parameter-free factors (the unsignalled changes before it are
// summed out). E-step: each of the b is true with probability αΔ/σ, the m
// are false, the change is one signalled or one unsignalled change. The
// M-step then gives κ its own exposure Q (s here, τ for every other
// interval): αΔ = ΣN1/Στ, κ = ΣN0/Q, Δ = αΔ + κ, α = αΔ/Δ; with Q = Στ this
// is the M-step above.
//
// Several sources (sitemap, feed, WebSub, IndexNow, POST /signal:
// SignalSource). Each change is announced by source s with probability α_s,
// independently of the other sources; s also sends false signals at rate
// ν_s; n_s are its signals in τ. Then:
//   * no signal at all: a change goes unannounced with probability
//     Π_s(1−α_s), so P(fresh | τ, 0) = e^{−κτ}, κ = Δ Π_s (1−α_s) (exact);
//   * signals of one source s only: the changes the others missed are
//     Poisson(Δ_{−s}), Δ_{−s} = Δ Π_{r≠s}(1−α_r), and dividing as above
//     gives e^{−κτ}·(ν_s/(α_sΔ_{−s}+ν_s))^{n_s} (exact);
//   * in general we take the sources' evidence as independent:
//       P(fresh | τ, n_1..n_S) = e^{−κτ} Π_s q_s^{n_s},
//       q_s = ν_s/(α_sΔ + ν_s)
//     (a change two sources both announce is counted by both: the product
//     over-counts agreement, and q_s with Δ for Δ_{−s} is the weaker of the
//     two readings of a lone source's signals).
// With one source, κ = (1−α)Δ and q = ν/(αΔ+ν): the formula above, exactly.
// A source that fires on every page view has ν_s ≫ α_sΔ, so q_s ≈ 1 and its
// signals leave P(fresh) where silence would. Each source is learned alone
// (its signals alone follow the one-source model with (Δ, α_s, ν_s): the
// marginal of the model above), one SignalStats per (host, source) under
// the host's pooled estimate (HostPool::SourceParams). The scheduler keeps
// the page's pooled (α, ν) (the union of its sources: 1−α = Π(1−α_s), so κ
// is the κ above) and counts a signal of source s as w_s = ln q_s / ln q
// signals, q the host's pooled q: θ = τ + Σ_s n_s w_s τ_s, so
// P(fresh) = e^{−κθ} = e^{−κτ} Π_s q_s^{n_s} where the page's q is its
// host's. With one source in play on the host, w_s = 1: the one-source
// model, bit for bit (Estimator::ObserveSignal).
// SignalStats is the 20-byte online (decayed, one EM step per observation)
// per-page or per-host state. Plain values; not thread-safe (one owner).
#ifndef FRESHD_SCHED_SIGNAL_ESTIMATOR_H_
#define FRESHD_SCHED_SIGNAL_ESTIMATOR_H_

#include <span>

namespace freshd::sched {

struct SignalParams {
  double delta = 0;  // Δ > 0: change rate.
  double alpha = 0;  // α ∈ [0, 1]: recall (P(signal | change)).
  double nu = 0;     // ν ≥ 0: false-signal rate.
};

// One crawl interval: length, signals received during it, changed bit; and,
// when a trusted Last-Modified timed the interval's newest change, where
// that change fell among the signals.
struct SignalTriple {
  double tau;
  int signals;
  bool changed;
  // Timed evidence (only with changed): quiet = s ∈ [0, τ), the time from the
  // newest change to the fetch; < 0 when unknown (count-only evidence).
  // Given the signals, it says that the signals_after signals in the quiet
  // time were all false, that the change itself was signalled (a signal
  // claims its time) or not, and that no change happened in the quiet time;
  // the signals before it stay unlabelled. This likelihood conditions on the
  // signal path, so it holds when fetch times follow the signals, which the
  // bare quiet time (ChangeRateStats' λe^{−λs}) does not.
  double quiet = -1;
  int signals_after = 0;
  bool signal_at_change = false;
};

// Pseudo-counts pulling the estimate toward `center` (e.g. the host's
// estimate): change_weight pseudo-changes with recall center.alpha, and
// exposure_weight pseudo-time with center.nu false signals and center.delta
// changes per unit time. Zero weights: plain MLE.
struct SignalPrior {
  SignalParams center = {1.0 / 86400, 0.5, 0};
  double change_weight = 0;
  double exposure_weight = 0;
};

// log P(triple | params), dropping the parameter-free τ^n/n!. Parameters are
// clamped to α ∈ [1e-9, 1−1e-9], Δ, ν ≥ 1e-300 first. −∞ for an impossible
// triple (e.g. n < 0). τ ≤ 0 gives 0 (no evidence).
double SignalLogLikelihood(const SignalParams& p, const SignalTriple& x);

struct SignalFitOptions {
  bool fix_delta = false;     // true: keep start.delta, fit α and ν only.
  int max_iterations = 5000;  // EM iterations, bounded.
  double tolerance = 1e-9;    // stop when no parameter moves more (relative
                              // for Δ and ν, absolute for α).
};

struct SignalFit {
  SignalParams params;
  double log_likelihood = 0;  // Σ SignalLogLikelihood at params (no prior).
  int iterations = 0;
};

// MAP (MLE when the prior's weights are 0) of (Δ, α, ν) from a batch by EM,
// started at `start` (its delta is kept when options.fix_delta). Empty input
// returns the prior's center (or start when the prior has no weight).
SignalFit FitSignals(std::span<const SignalTriple> data,
                     const SignalParams& start, const SignalPrior& prior,
                     const SignalFitOptions& options = {});

inline constexpr double kDefaultSignalDecay = 0.98;

// Online sufficient statistics: decayed expected latent counts.
class SignalStats {
 public:
  // One online-EM step: the E-step of x under `current` (the page's present
  // estimate) is added to the decayed aggregates. τ ≤ 0 or n < 0: ignored.
  void Observe(const SignalTriple& x, const SignalParams& current,
               double decay = kDefaultSignalDecay);

  // M-step with the prior's pseudo-counts. When delta > 0 it is used as Δ
  // (e.g. from ChangeRateStats); else Δ is estimated here. Without data,
  // returns prior.center (clamped: α ∈ [1e-9, 1−1e-9], rates in
  // [1e-300, 1e9]). τ is clamped to 1e12 and n to 2^20 per triple.
  SignalParams Estimate(const SignalPrior& prior, double delta = -1) const;

  // Adds another state's counts (host pooling). REQUIRES: same time unit.
  void Merge(const SignalStats& other, double weight = 1);

  double signalled_changes() const { return signalled_; }
  double unsignalled_changes() const { return unsignalled_; }
  double false_signals() const { return false_; }
  double exposure() const { return exposure_; }
  // Σ time in which unsignalled changes were seen: τ for count-only
  // evidence, s for timed (≤ exposure()).
  double quiet() const { return quiet_; }

 private:
  float signalled_ = 0;    // Σ E[N1]
  float unsignalled_ = 0;  // Σ E[N0] (timed: the changes seen)
  float false_ = 0;        // Σ E[F]
  float exposure_ = 0;     // Σ τ
  float quiet_ = 0;        // Σ τ, or s when timed
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SIGNAL_ESTIMATOR_H_
