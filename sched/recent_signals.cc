#include "sched/recent_signals.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace freshd::sched {
namespace {

// Two claims of one instant, one stored as a float offset: 1 s (HTTP dates
// have 1-s resolution) plus the float's rounding at that offset.
bool SameInstant(double a, double b) {
  return std::abs(a - b) <= 1 + 1e-6 * std::max(std::abs(a), std::abs(b));
}

}  // namespace

void RecentSignals::Add(int count, double offset) {
  if (count <= 0) return;
  const bool usable = std::isfinite(offset) && offset >= 0;
  offsets_[(count - 1) % kKept] =
      usable ? static_cast<float>(offset) : kUnknown;
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
    const float offset = offsets_[(count - 1) % kKept];
    if (offset < 0) return false;  // kUnknown
    if (!at_change && SameInstant(offset, change_offset)) {
      at_change = true;
      any_not_after = true;
    } else if (offset > change_offset && !SameInstant(offset, change_offset)) {
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

}  // namespace freshd::sched
