// Helpers shared by the Scheduler facade's tests (scheduler_*_test.cc).

#ifndef FRESHD_TESTS_SCHED_SCHEDULER_TEST_UTIL_H_
#define FRESHD_TESTS_SCHED_SCHEDULER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "sched/scheduler.h"

namespace freshd::sched::sched_test {

inline constexpr double kDay = 86400;
inline constexpr uint32_t kHosts = 7;

inline FetchedObs Changed(bool changed) {
  FetchedObs f;
  f.changed = changed;
  return f;
}

inline std::unique_ptr<Scheduler> Make(SchedulerOptions o,
                                       const ModelSource* truth = nullptr) {
  auto s = Scheduler::Create(o, truth);
  EXPECT_TRUE(s.ok()) << o.policy;
  return std::move(s).value();
}

inline bool SameKey(double a, double b) {
  if (a == b) return true;
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

}  // namespace freshd::sched::sched_test

#endif  // FRESHD_TESTS_SCHED_SCHEDULER_TEST_UTIL_H_
