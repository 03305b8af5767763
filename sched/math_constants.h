// Constants the scheduler's math shares: IEEE infinity and quiet NaN (the
// values the valuers and estimators return for "never" and "undefined"),
// and a day in seconds (the unit of rates per day). Header-only.

#ifndef FRESHD_SCHED_MATH_CONSTANTS_H_
#define FRESHD_SCHED_MATH_CONSTANTS_H_

#include <limits>

namespace freshd::sched {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kDay = 86400;  // seconds

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_MATH_CONSTANTS_H_
