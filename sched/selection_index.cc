#include "sched/selection_index.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sched/math_constants.h"

namespace freshd::sched {

SelectionIndex::SelectionIndex(const IndexedValues& values,
                               const SelectionIndexOptions& options)
    : values_(values),
      options_(options),
      selector_(options.selector),
      horizon_scale_(options.initial_horizon_scale) {
  if (options_.memo_values) {
    selector_.set_value_growth(
        [this](PageId p) { return values_.ValueGrowth(p); });
  }
}

void SelectionIndex::Reindex(PageId page) {
  if (!value_memo_.empty()) value_memo_.erase(page);
  if (restoring_) return;  // FinishRestore indexes every page
  selector_.Update(page, IndexBound(page), values_.Deadline(page),
                   values_.Host(page));
  ++bound_evaluations_;
  if (selector_.Staged(page)) {  // its staged bound is stale: recompute it
    selector_.Restage(page, values_.IndexBound(page, horizon_, next_horizon_));
    ++bound_evaluations_;
  }
}

void SelectionIndex::FinishRestore(std::optional<double> now,
                                   double token_rate) {
  if (!restoring_) return;
  restoring_ = false;
  if (horizon_ == -kInf) {
    // No horizon yet: the first one indexes every page (a full refresh).
    if (now && values_.pages() > 0) AdvanceHorizon(*now, token_rate);
    return;
  }
  // Selects before the restore: every page over the current horizon (the
  // staging, if any, is dropped: the next horizon is a full refresh).
  UpdateAll();
}

std::optional<SelectionIndex::Selection> SelectionIndex::Select(
    double now, double token_rate, const Selector::EligibleFn& eligible,
    const std::function<bool(const Selector::Choice&)>& usable,
    const Selector::HostGate* gate) {
  if (now > horizon_) {
    AdvanceHorizon(now, token_rate);
  } else {
    StageSlice(now, token_rate, /*all=*/false);
  }
  // With lazy re-valuation, every value computed is remembered with its
  // growth bound, and a page valued before (since the horizon moved, with no
  // change to it since) is passed over while value + growth·elapsed, plus
  // 1e-12 relative for rounding, is not above the running best.
  const Selector::ValueFn value = [&](PageId p) {
    const double v = values_.Value(p, now);
    if (options_.memo_values) {
      const double growth = values_.ValueGrowth(p);
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
  const Selector::ValueFn* lazy = options_.memo_values ? &value_bound : nullptr;
  auto choice = selector_.Select(now, eligible, value, lazy, gate);
  if (!choice || !usable(*choice)) {
    horizon_evaluations_ += SelectionWork();
    return std::nullopt;
  }
  Selection out{*choice, choice};
  if (choice->priority.overdue) {
    out.margin = selector_.BestByValue(now, eligible, value, lazy, gate);
  }
  horizon_evaluations_ += SelectionWork();
  return out;
}

void SelectionIndex::UpdateAll() {
  const Selector::HostFn host = [this](PageId p) { return values_.Host(p); };
  selector_.UpdateAll(
      values_.pages(),
      [this](PageId p) {
        ++bound_evaluations_;
        return std::pair<double, double>(IndexBound(p), values_.Deadline(p));
      },
      &host);
}

void SelectionIndex::RescaleHorizon() {
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
  const double n = static_cast<double>(values_.pages()) + 1;
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

double SelectionIndex::SelectionWork() const {
  // A candidate passed over by its remembered value costs a look-up and an
  // eligibility test, about an eighth of a value over three draws
  // (scheduler_bench, ncis estimated): counted so, the horizon still
  // balances the scans against the refreshes.
  return static_cast<double>(selector_.last_evaluations()) +
         static_cast<double>(selector_.last_passed_over()) / 8;
}

double SelectionIndex::HorizonSpan(double token_rate) const {
  const double n = static_cast<double>(values_.pages()) + 1;
  const double rate = std::max(token_rate, 1e-12);
  const double selections =
      std::max(horizon_scale_ * std::sqrt(n), StagingFloor());
  return std::clamp(selections / rate, 1.0, 1e9);
}

double SelectionIndex::StagingFloor() const {
  // The horizon that stages the next must hold enough Selects for its
  // slices: 4/3 of N / slice (staging aims to end at 3/4 of it), and a
  // margin for Selects that come later than their token.
  if (!Stages()) return 0;
  const double n = static_cast<double>(values_.pages()) + 1;
  const double slices = n / static_cast<double>(options_.refresh_slice_pages);
  return 2 * slices + 16;
}

void SelectionIndex::AdvanceHorizon(double now, double token_rate) {
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
      StageSlice(now, token_rate, /*all=*/true);
    }
    selector_.FinishStage();
    horizon_start_ = horizon_;
    horizon_ = next_horizon_;
  } else {
    ++full_refreshes_;
    horizon_ = now + HorizonSpan(token_rate);
    horizon_start_ = now;
    UpdateAll();
  }
  if (Stages()) {
    next_horizon_ = horizon_ + HorizonSpan(token_rate);
    selector_.BeginStage();
  } else {
    selector_.CancelStage();
  }
}

void SelectionIndex::StageSlice(double now, double token_rate, bool all) {
  const Selector::Stage stage = selector_.stage();
  if (stage == Selector::Stage::kNone || stage == Selector::Stage::kReady) {
    return;
  }
  const size_t slice = options_.refresh_slice_pages;
  const size_t n = values_.pages();
  if (stage == Selector::Stage::kBounds) {
    size_t done = selector_.staged_pages();
    // Spread over the Selects until 3/4 of the horizon (one a token).
    const double target = horizon_start_ + 0.75 * (horizon_ - horizon_start_);
    const double selects = std::max(1.0, (target - now) * token_rate);
    const double even = std::ceil(static_cast<double>(n - done) / selects);
    size_t budget =
        all ? n - done
            : std::min(slice, std::max<size_t>(std::min<size_t>(slice, 64),
                                               static_cast<size_t>(even)));
    for (; budget > 0 && done < n; --budget, ++done) {
      const auto page = static_cast<PageId>(done);
      selector_.StageNext(values_.IndexBound(page, horizon_, next_horizon_),
                          values_.Host(page));
      ++bound_evaluations_;
    }
    if (done < n) return;
    selector_.EndStageBounds();
    if (!all) return;
  }
  // Ordering costs a few ns a page: 64 pages' worth per bound.
  while (!selector_.OrderStage(all ? n + 1 : 64 * slice) && all) {
  }
}

}  // namespace freshd::sched
