// The two clocks, as seconds in a double: the wall clock (Unix seconds,
// what the scheduler, the store and the status endpoint are given; sched/
// and store/ read no clock themselves) and the steady clock (durations).

#ifndef FRESHD_BASE_CLOCK_H_
#define FRESHD_BASE_CLOCK_H_

#include <chrono>

namespace freshd {

inline double UnixNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Seconds on the steady clock (an arbitrary epoch): for durations,
// deadlines and caches' ages, never for dates. Thread-safe.
inline double SteadyNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace freshd

#endif  // FRESHD_BASE_CLOCK_H_
