// The process's CPU time, the benchmarks' measure of cost on a shared
// machine (wall time there depends on the other loads). Thread-safe.
#ifndef FRESHD_BENCH_CPU_CLOCK_H_
#define FRESHD_BENCH_CPU_CLOCK_H_

#include <time.h>

namespace freshd::bench {

// CPU seconds used by every thread of the process so far.
inline double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace freshd::bench

#endif  // FRESHD_BENCH_CPU_CLOCK_H_
