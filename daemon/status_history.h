// StatusHistory: the status page's plots' data — one point every
// kHistoryStepS (target and achieved rate, estimated freshness, errors so
// far) for the last kHistoryPoints (6 h), in a fixed ring, so memory stays
// constant however long the daemon runs. Not thread-safe: the scheduler's
// thread.

#ifndef FRESHD_DAEMON_STATUS_HISTORY_H_
#define FRESHD_DAEMON_STATUS_HISTORY_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

namespace freshd::daemon {

inline constexpr double kHistoryStepS = 10;
inline constexpr size_t kHistoryPoints = 6 * 3600 / 10;

struct HistoryPoint {
  double unix_time = 0;
  double rate_target = 0;  // pages/s
  double rate_actual = 0;  // pages/s, last minute
  double freshness = 0;    // estimated, [0, 1]
  double errors = 0;       // error outcomes since start
};

class StatusHistory {
 public:
  explicit StatusHistory(size_t capacity = kHistoryPoints)
      : capacity_(capacity) {}

  // True when a point is due at `now` (the first at once, then every
  // kHistoryStepS).
  bool Due(double now) const {
    return size_ == 0 || now - last_ >= kHistoryStepS;
  }
  // Appends `p`, dropping the oldest point when full.
  void Add(const HistoryPoint& p);

  size_t size() const { return size_; }
  // {"step_s":…, "points":[[t, target, actual, freshness, errors], …]},
  // oldest first, then `live` (the current values) as the last point.
  nlohmann::json Json(const HistoryPoint& live) const;

 private:
  size_t capacity_;
  std::vector<HistoryPoint> ring_;
  size_t next_ = 0;  // where the next point goes once full
  size_t size_ = 0;
  double last_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_STATUS_HISTORY_H_
