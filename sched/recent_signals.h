// The claimed change times of a page's newest signals since its last fetch.
// When a trusted Last-Modified then times the interval's newest change, they
// say which signals came after it (false: the page did not change again),
// whether one claims it (a signalled change), and how many came before it
// (unlabelled): SignalTriple's timed evidence (sched/signal_estimator.h).
//
// 16 bytes: the newest kKept times, as float offsets from the last fetch, in
// a ring indexed by the signal's count since that fetch. Older signals are
// assumed to claim earlier times (true of one page's sitemap lastmods and of
// undelayed hints); when that cannot place every signal, Place says so and
// the interval counts as count-only evidence. A claim of a whole day (a
// date-only sitemap lastmod, read as that day's midnight UTC) claims any
// change within that day. Plain value; one owner.
#ifndef FRESHD_SCHED_RECENT_SIGNALS_H_
#define FRESHD_SCHED_RECENT_SIGNALS_H_

#include <cstdint>

#include "sched/observation.h"
#include "sched/signal_estimator.h"

namespace freshd::sched {

class RecentSignals {
 public:
  static constexpr int kKept = 4;

  // The `count`-th signal since the fetch (1-based; PageState::signals after
  // counting it) claims a change `offset` seconds after the fetch, or with
  // `whole_day` somewhere in the day that starts there.
  void Add(int count, double offset, bool whole_day = false);

  // For `signals` received since the fetch and a change timed at
  // `change_offset` after it, sets x->signals_after and x->signal_at_change
  // (a claimed time within 1 s, plus float rounding, of the change claims
  // it, as does a claimed day that holds it; one signal at most). False,
  // leaving x alone, when a needed time is unknown (not kept, or lost in a
  // restart) or older unkept signals could fall after the change.
  bool Place(int signals, double change_offset, SignalTriple* x) const;

 private:
  // ≥ 0: an instant; ≤ −1: a whole day starting at −(value + 1); NaN:
  // unknown.
  float offsets_[kKept] = {kUnknown, kUnknown, kUnknown, kUnknown};
  static constexpr float kUnknown = __builtin_nanf("");
};

// A page's signals since its last fetch, by source (SignalSource): 6-bit
// saturating counts in one uint32 (5 sources, 30 bits), so the next fetch
// can teach each (host, source) its own recall and false-signal rate. A
// count at kMax may have lost signals (saturated()).
class SourceCounts {
 public:
  static constexpr int kBits = 6;
  static constexpr int kMax = (1 << kBits) - 1;
  static_assert(kSignalSources * kBits <= 32);

  void Add(SignalSource source);
  int count(SignalSource source) const;
  int total() const;
  bool saturated() const;
  void Clear() { bits_ = 0; }
  uint32_t bits() const { return bits_; }

 private:
  uint32_t bits_ = 0;
};

// What the signal policies keep per page beside RecentSignals (8 bytes):
// the per-source counts and the signals' weight Σ_s n_s w_s (Estimator;
// equal to PageState::signals while every weight is 1).
struct SourceSignals {
  SourceCounts counts;
  float weighted = 0;
};

// A claimed change time with no time of day: midnight UTC exactly, as a
// date-only W3C datetime (2026-11-25) is read. A real instant falls there
// once in 86,400 seconds.
bool IsWholeDayClaim(double changed_at);
// The latest instant a claimed change time can mean: the end of its day
// for a whole-day claim, else the claim itself.
double ClaimEnd(double changed_at);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_RECENT_SIGNALS_H_
