#include "sched/recent_signals.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

// Two claims of one instant, one stored as a float offset: 1 s (HTTP dates
// have 1-s resolution) plus the float's rounding at that offset.
bool SameInstant(double a, double b) {
  return std::abs(a - b) <= 1 + 1e-6 * std::max(std::abs(a), std::abs(b));
}

}  // namespace

bool IsWholeDayClaim(double changed_at) {
  return std::isfinite(changed_at) && std::fmod(changed_at, kDay) == 0;
}

double ClaimEnd(double changed_at) {
  return IsWholeDayClaim(changed_at) ? changed_at + kDay : changed_at;
}

void RecentSignals::Add(int count, double offset, bool whole_day) {
  if (count <= 0) return;
  float& slot = offsets_[(count - 1) % kKept];
  if (!std::isfinite(offset) || offset < 0) {
    slot = kUnknown;
  } else {
    slot = whole_day ? -static_cast<float>(offset) - 1
                     : static_cast<float>(offset);
  }
}

bool RecentSignals::Place(int signals, double change_offset,
                          SignalTriple* x) const {
  if (signals < 0 || signals >= UINT16_MAX || !(change_offset >= 0)) {
    return false;
  }
  int after = 0;
  bool at_change = false;
  bool any_not_after = false;
  const int kept = std::min(signals, kKept);
  for (int count = signals - kept + 1; count <= signals; ++count) {
    const float stored = offsets_[(count - 1) % kKept];
    if (std::isnan(stored)) return false;  // kUnknown
    const bool whole_day = stored < 0;
    const double start = whole_day ? -static_cast<double>(stored) - 1 : stored;
    const double end = whole_day ? start + kDay : start;
    const bool holds_change = SameInstant(start, change_offset) ||
                              SameInstant(end, change_offset) ||
                              (start <= change_offset && change_offset <= end);
    if (!at_change && holds_change) {
      at_change = true;
      any_not_after = true;
    } else if (start > change_offset && !holds_change) {
      ++after;
    } else {
      any_not_after = true;
    }
  }
  // Unkept older signals are placed before the change only when a kept one
  // already is.
  if (signals > kKept && !any_not_after) return false;
  x->signals_after = after;
  x->signal_at_change = at_change;
  return true;
}

void SourceCounts::Add(SignalSource source) {
  const int i = static_cast<int>(source);
  if (i < 0 || i >= kSignalSources || count(source) >= kMax) return;
  bits_ += 1u << (kBits * i);
}

int SourceCounts::count(SignalSource source) const {
  const int i = static_cast<int>(source);
  if (i < 0 || i >= kSignalSources) return 0;
  return static_cast<int>((bits_ >> (kBits * i)) & kMax);
}

int SourceCounts::total() const {
  int n = 0;
  for (int i = 0; i < kSignalSources; ++i) {
    n += count(static_cast<SignalSource>(i));
  }
  return n;
}

bool SourceCounts::saturated() const {
  for (int i = 0; i < kSignalSources; ++i) {
    if (count(static_cast<SignalSource>(i)) == kMax) return true;
  }
  return false;
}

}  // namespace freshd::sched
