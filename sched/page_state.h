// Per-page scheduler state: the one record every policy's value function
// reads. Kept compact because the scheduler holds one per known URL
// (88 B: 10M pages -> 0.88 GB; 128 B before the change-rate ring became
// 16-bit floats and the signal policies' SignalStats, α and ν moved to the
// scheduler's side table, 28 B a page for those policies only; with the
// selector's index and the host pool, bench/sched/RESULTS-sched.md);
// kPageStateBytes is asserted by a test and logged.
//
// Time unit (whole scheduler): seconds, as doubles. The daemon passes seconds
// since the Unix epoch; the simulator virtual seconds from 0. Rates are per
// second, crawl values are in importance x seconds.
// Change profiles (longevity only) and the signal policies' SignalStats and
// (α, ν) live in side tables (ProfileSet; PageSignals below), so pages of
// other policies do not pay for them.
// Plain values; not thread-safe (the scheduler has one owner thread).

#ifndef FRESHD_SCHED_PAGE_STATE_H_
#define FRESHD_SCHED_PAGE_STATE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "base/sketch.h"
#include "sched/change_profile.h"
#include "sched/change_rate_estimator.h"
#include "sched/divergence_model.h"
#include "sched/observation.h"
#include "sched/signal_estimator.h"

namespace freshd::sched {

inline constexpr double kNever = -std::numeric_limits<double>::infinity();

struct PageState {
  double last_fetch = kNever;  // time of the last successful fetch
  double not_before = 0;       // failure back-off: no attempt before this
  ChangeRateStats rate_stats;  // change/no-change evidence per interval
  float importance = 1;        // μ (request weight), > 0
  float rate = 0;              // cached estimate of Δ (per second); 0: none
  float interval = 0;          // policy scratch: nutch interval, φ (s)
  float forced = 0;  // policy scratch 2: the deadline interval (s) of a
                     // policy with deadlines (longevity; 0: none); nutch:
                     // time from the fetch that saw the last change to the
                     // last fetch (s)
  HostId host = 0;
  uint16_t signals = 0;  // signals since last fetch (saturating)
  uint16_t fetches = 0;  // successful fetches so far (saturating)
  uint8_t failures = 0;  // consecutive failures (saturating)
  uint8_t flags = 0;     // kInFlight | ...
  // P(static) × 255 this page last added to its host's static share
  // (HostPool::AdjustStatic); saved with the state, so a restore rebuilds
  // the host sums exactly.
  uint8_t static_q = 0;
  // While kInFlight: the caller's slot of the fetch (Scheduler::SetFetchSlot;
  // the daemon's dispatcher, daemon/fetch_table.h). The scheduler neither
  // reads nor saves it. It sits in what was padding: the record stays 88 B.
  uint32_t fetch_slot = 0;

  static constexpr uint8_t kInFlight = 1;
  // Its rate is only bounded below (every recent interval changed): the
  // next fetch is due after a quarter of the last interval (a probe).
  static constexpr uint8_t kProbe = 2;
  // Removed (Scheduler::Remove): a tombstone, never eligible, indexed
  // below every live page; never saved (the daemon deletes its record).
  static constexpr uint8_t kRemoved = 4;

  bool fetched() const { return last_fetch != kNever; }
  bool in_flight() const { return (flags & kInFlight) != 0; }
  bool removed() const { return (flags & kRemoved) != 0; }
};

inline constexpr size_t kPageStateBytes = sizeof(PageState);

// What the scheduler keeps beside a page's PageState for the signal
// policies only (Scheduler's side table), so that pages of the other
// policies do not pay for it.
struct PageSignals {
  SignalStats signal_stats;  // (interval, signals, changed) evidence
  float alpha = 0;           // cached estimate of signal recall α
  float nu = 0;              // cached estimate of false-signal rate ν (/s)
};

// A page's whole scheduler state: its PageState plus its PageSignals (empty
// for the other policies). What the state codec saves and
// Scheduler::RestorePage takes (Scheduler::Snapshot).
struct PageSnapshot : PageState, PageSignals {
  PageSnapshot() = default;
  // `state` with empty signals (explicit: a scheduler's page is saved
  // through Scheduler::Snapshot, which fills them).
  explicit PageSnapshot(const PageState& state) : PageState(state) {}
};

// Records one more signal (saturates at 65535).
inline void AddSignal(PageState& s) {
  if (s.signals < UINT16_MAX) ++s.signals;
}

// Olston & Pandey change profiles of one page (docs/MATH.md Paper 3 (b)) plus
// the base sketch of each profile: sched/change_profile.h keeps the compact
// (t - t_B, D) points, this keeps the sketches in its slots so divergences
// can be computed from a new version's sketch.
class ProfileSet {
 public:
  explicit ProfileSet(int history = 4) : profiles_(history) {}

  // A refresh at `time`. `divergences` are D(base_i, new version), oldest
  // first; missing trailing entries are filled with the profile's last d
  // (the content is assumed unchanged since its last point). Then a new
  // profile with `sketch` as base starts; the oldest beyond h is dropped.
  void OnFetch(double time, std::vector<double> divergences,
               BottomSketch sketch);

  // D(base_i, sketch) for each profile with a stored base sketch, oldest
  // first; stops at the first profile without one.
  std::vector<double> DivergencesFrom(const BottomSketch& sketch) const;

  // Base times, oldest first.
  std::vector<double> BaseTimes() const;
  // Profile i's (oldest first) base sketch; nullptr if it has none.
  const BottomSketch* BaseSketch(int i) const;

  const ChangeProfiles& profiles() const { return profiles_; }

  // The divergence curve the scheduler uses for the page in estimated mode
  // (the last fit, or the host prior's model while there are no points),
  // kept here so that it is saved and restored with the profiles: a refit
  // after a restart would see other priors. nullopt before the first fetch.
  const std::optional<DivergenceModel>& fitted() const { return fitted_; }
  void set_fitted(const DivergenceModel& model) { fitted_ = model; }

 private:
  ChangeProfiles profiles_;
  std::vector<BottomSketch> sketches_;  // by profile slot
  std::optional<DivergenceModel> fitted_;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_PAGE_STATE_H_
