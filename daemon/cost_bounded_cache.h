// CostBoundedCache: bounds the share of a thread that an expensive, polled
// computation may take. A result that took c seconds to compute is reused
// until it is factor·c seconds old, so callers polling as fast as they like
// spend at most about 1/factor of the thread on it; a result cheaper than
// min_cost is never reused (every call gets an exact, current one). The
// caller supplies the times (any monotonic clock, seconds), so the policy is
// testable without one. Plain value; not thread-safe.

#ifndef FRESHD_DAEMON_COST_BOUNDED_CACHE_H_
#define FRESHD_DAEMON_COST_BOUNDED_CACHE_H_

#include <optional>
#include <utility>

namespace freshd::daemon {

template <typename T>
class CostBoundedCache {
 public:
  CostBoundedCache(double min_cost_s, double factor)
      : min_cost_s_(min_cost_s), factor_(factor) {}

  // The cached result if it may still be used at `now`, else nullptr.
  const T* Get(double now) const {
    if (!value_ || cost_s_ < min_cost_s_) return nullptr;
    const double age = now - computed_at_;
    return age >= 0 && age < factor_ * cost_s_ ? &*value_ : nullptr;
  }

  // Stores a result computed at `computed_at` that took `cost_s` seconds.
  const T& Put(T value, double computed_at, double cost_s) {
    value_ = std::move(value);
    computed_at_ = computed_at;
    cost_s_ = cost_s;
    return *value_;
  }

 private:
  double min_cost_s_;
  double factor_;
  std::optional<T> value_;
  double computed_at_ = 0;
  double cost_s_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_COST_BOUNDED_CACHE_H_
