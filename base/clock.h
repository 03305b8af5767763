// The clocks, as seconds in a double: the wall clock (Unix seconds,
// what the scheduler, the store and the status endpoint are given; sched/
// and store/ read no clock themselves), the steady clock (durations) and
// the calling thread's CPU time (what a piece of work cost).

#ifndef FRESHD_BASE_CLOCK_H_
#define FRESHD_BASE_CLOCK_H_

#include <chrono>
#include <ctime>

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

// CPU seconds the calling thread has used: a piece of work's cost whatever
// else the machine runs (wall time would count preemption). Thread-safe.
inline double ThreadCpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace freshd

#endif  // FRESHD_BASE_CLOCK_H_
