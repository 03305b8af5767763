#include "daemon/status_history.h"

namespace freshd::daemon {
namespace {

nlohmann::json Point(const HistoryPoint& p) {
  return nlohmann::json::array(
      {p.unix_time, p.rate_target, p.rate_actual, p.freshness, p.errors});
}

}  // namespace

void StatusHistory::Add(const HistoryPoint& p) {
  if (capacity_ == 0) return;
  if (ring_.size() < capacity_) {
    ring_.push_back(p);
  } else {
    ring_[next_] = p;
    next_ = (next_ + 1) % capacity_;
  }
  size_ = ring_.size();
  last_ = p.unix_time;
}

nlohmann::json StatusHistory::Json(const HistoryPoint& live) const {
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < ring_.size(); ++i) {
    points.push_back(Point(ring_[(next_ + i) % ring_.size()]));
  }
  points.push_back(Point(live));
  return {{"step_s", kHistoryStepS},
          {"columns",
           {"unix_time", "rate_target", "rate_actual", "estimated_freshness",
            "errors_total"}},
          {"points", std::move(points)}};
}

}  // namespace freshd::daemon
