// The selection index: which page a token buys, exactly (a brute-force
// argmax of Scheduler::PriorityOf over the eligible pages would choose the
// same page) and cheaply. Each page is indexed by an upper bound of its
// value over a horizon [start, end] (values only grow between observations;
// a value averaged over draws, which may fall, by a bound that allows for
// it) and by its deadline (sched/selector.h). The horizon moves forward
// every 1-64 x sqrt(N) selections, as the work of selecting and of
// refreshing balance; the next horizon's bounds are computed a slice a
// Select while the current one serves (refresh_slice_pages), so no Select
// computes more than a slice of them once the first horizon is set. With
// lazy re-valuation a page valued earlier in the horizon, unchanged since,
// is passed over while its remembered value plus its growth bound cannot
// beat the best found.
//
// Owns: the Selector, the horizon (start, end, scale, staging, the next
// horizon), its counters, the re-valuation memo and the bulk-restore
// state. Reads: the pages' bounds, deadlines, values and growth bounds
// through IndexedValues (the Valuer). Called by the Scheduler facade
// (Reindex whenever a page's value or deadline may have changed, Select
// once a token). One owner thread, no locks.

#ifndef FRESHD_SCHED_SELECTION_INDEX_H_
#define FRESHD_SCHED_SELECTION_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

#include "sched/observation.h"
#include "sched/selector.h"

namespace freshd::sched {

// Bounds on the selection horizon's length, in sqrt(N) token intervals
// (SelectionIndex adapts it between them).
inline constexpr double kMinHorizonScale = 1;
inline constexpr double kMaxHorizonScale = 64;

// What the index asks of the pages [0, pages()).
class IndexedValues {
 public:
  virtual ~IndexedValues() = default;
  virtual size_t pages() const = 0;
  // An upper bound of the page's value over [start, end] (+inf allowed).
  virtual double IndexBound(PageId page, double start, double end) const = 0;
  // When the page is due regardless of value (+inf: never).
  virtual double Deadline(PageId page) const = 0;
  virtual double Value(PageId page, double now) const = 0;
  // An upper bound of dValue/dnow while the page stays as it is (+inf:
  // none).
  virtual double ValueGrowth(PageId page) const = 0;
  // The page's host (never changes): the selector keeps each host's pages
  // together and leaves a closed host's out of its scans.
  virtual HostId Host(PageId /*page*/) const { return 0; }
};

struct SelectionIndexOptions {
  // SchedulerOptions::refresh_slice_pages, initial_horizon_scale.
  size_t refresh_slice_pages = 1024;
  double initial_horizon_scale = kMinHorizonScale;
  // Lazy re-valuation (a policy with a finite value growth bound and
  // SchedulerOptions::lazy_revaluation).
  bool memo_values = false;
  Selector::Options selector;
};

class SelectionIndex {
 public:
  // `values` outlives the index.
  SelectionIndex(const IndexedValues& values,
                 const SelectionIndexOptions& options);
  SelectionIndex(const SelectionIndex&) = delete;
  SelectionIndex& operator=(const SelectionIndex&) = delete;

  // The page's value, bound or deadline may have changed: re-index it
  // (nothing while restoring).
  void Reindex(PageId page);
  // Values remembered for lazy re-valuation no longer bound the values (a
  // change that is not one page's, e.g. signal coverage).
  void ForgetValues() {
    value_memo_.clear();
    selector_.ForgetValues();
  }

  // Scheduler::BeginRestore / FinishRestore: between them Reindex does
  // nothing; FinishRestore indexes every page at once (the first horizon at
  // `now` when there is none yet; `token_rate`, pages per second, sets its
  // length).
  void BeginRestore() { restoring_ = true; }
  void FinishRestore(std::optional<double> now, double token_rate);
  bool restoring() const { return restoring_; }

  // A Select's work: moves or stages the horizon, then the best eligible
  // page by priority (`eligible` in scan order, on a host `gate` keeps open:
  // Selector::Select); nullopt when none is, or when `usable` refuses it.
  // `margin`: the best eligible page by value when a deadline chose (else
  // the choice).
  struct Selection {
    Selector::Choice choice;
    std::optional<Selector::Choice> margin;
  };
  std::optional<Selection> Select(
      double now, double token_rate, const Selector::EligibleFn& eligible,
      const std::function<bool(const Selector::Choice&)>& usable,
      const Selector::HostGate* gate = nullptr);

  // A host closed by the gate may go before the time it gave
  // (Selector::Reopen); every closed host (Selector::ReopenAll).
  void ReopenHost(HostId host) { selector_.Reopen(host); }
  void ReopenAllHosts() { selector_.ReopenAll(); }
  size_t closed_hosts() const { return selector_.closed_hosts(); }

  size_t last_evaluations() const { return selector_.last_evaluations(); }
  uint64_t horizon_refreshes() const { return horizon_refreshes_; }
  uint64_t full_refreshes() const { return full_refreshes_; }
  uint64_t late_refreshes() const { return late_refreshes_; }
  uint64_t bound_evaluations() const { return bound_evaluations_; }
  double horizon_scale() const { return horizon_scale_; }

 private:
  double IndexBound(PageId page) const {
    return values_.IndexBound(page, horizon_start_, horizon_);
  }
  // Moves the horizon at `now` (> horizon_): swaps the staged one in, or
  // refreshes every bound when none is staged for `now`; then starts staging
  // the next.
  void AdvanceHorizon(double now, double token_rate);
  // Every page's bound over the current horizon, its deadline and host.
  void UpdateAll();
  // A horizon's length: the adapted scale, lengthened so that the next
  // one's staging fits in it.
  double HorizonSpan(double token_rate) const;
  // The fewest Selects a staging horizon holds (0 when not staging).
  double StagingFloor() const;
  void RescaleHorizon();
  // A Select's share of the staging: bounds of at most refresh_slice_pages
  // pages, or ordering; `all`: the rest at once.
  void StageSlice(double now, double token_rate, bool all);
  // Whether the next horizon is staged: a refresh of more pages than a slice
  // (one of at most a slice is done in the Select that needs it, as before).
  bool Stages() const {
    return options_.refresh_slice_pages > 0 &&
           values_.pages() > options_.refresh_slice_pages;
  }
  // The last Select's work, in values: those evaluated, and the candidates
  // passed over by lazy re-valuation at a fraction of one.
  double SelectionWork() const;

  const IndexedValues& values_;
  const SelectionIndexOptions options_;
  Selector selector_;
  // Lazy re-valuation: the value of each page Select valued since the
  // horizon moved, when, and its growth bound, so that a later Select
  // passes over a page whose value cannot have risen to the running best
  // since (Selector::Select's value_bound). Erased by Reindex (any change to
  // the page), cleared when the horizon moves (so it holds at most the
  // pages valued in a horizon).
  struct ValueMemo {
    double time;
    double value;
    double growth;
  };
  std::unordered_map<PageId, ValueMemo> value_memo_;
  // Selection bounds hold until this time (see Reindex); -inf: none yet.
  double horizon_ = -std::numeric_limits<double>::infinity();
  // When the horizon was set: no value is asked for before it.
  double horizon_start_ = -std::numeric_limits<double>::infinity();
  // The horizon's length in units of sqrt(N) token intervals, and the
  // values evaluated by selections since it was last refreshed (see
  // AdvanceHorizon).
  double horizon_scale_;
  double horizon_evaluations_ = 0;
  uint64_t horizon_refreshes_ = 0;
  // The staged next horizon [horizon_, next_horizon_] (Selector::stage()).
  double next_horizon_ = -std::numeric_limits<double>::infinity();
  uint64_t full_refreshes_ = 0;
  uint64_t late_refreshes_ = 0;
  uint64_t bound_evaluations_ = 0;
  bool restoring_ = false;  // BeginRestore .. FinishRestore: no Reindex
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SELECTION_INDEX_H_
