// The daemon's wall clock: Unix seconds as a double, what the scheduler,
// the store and the status endpoint are given (sched/ and store/ read no
// clock themselves). Thread-safe.

#ifndef FRESHD_BASE_CLOCK_H_
#define FRESHD_BASE_CLOCK_H_

#include <chrono>

namespace freshd {

inline double UnixNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace freshd

#endif  // FRESHD_BASE_CLOCK_H_
