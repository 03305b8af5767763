#include "daemon/loop_lag_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace freshd::daemon {

LoopLagProbe::LoopLagProbe(boost::asio::io_context& io, double period_s,
                           double window_s)
    : timer_(io),
      period_s_(period_s),
      ring_(
          static_cast<size_t>(std::max(1.0, std::ceil(window_s / period_s)))) {}

LoopLagProbe::~LoopLagProbe() {
  *alive_ = false;
  timer_.cancel();
}

void LoopLagProbe::Start() {
  if (running_) return;
  running_ = true;
  Arm();
}

void LoopLagProbe::Stop() {
  running_ = false;
  timer_.cancel();
}

void LoopLagProbe::Arm() {
  timer_.expires_after(
      std::chrono::microseconds(static_cast<int64_t>(period_s_ * 1e6)));
  timer_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (ec || !*alive || !running_) return;
    const auto late = std::chrono::steady_clock::now() - timer_.expiry();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ring_[next_] = std::max(0.0, std::chrono::duration<double>(late).count());
      next_ = (next_ + 1) % ring_.size();
      count_ = std::min(count_ + 1, ring_.size());
    }
    Arm();
  });
}

LoopLagProbe::Stats LoopLagProbe::stats() const {
  Stats s;
  std::vector<double> v;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.samples = count_;
    if (count_ == 0) return s;
    v.assign(ring_.begin(), ring_.begin() + static_cast<long>(count_));
  }
  std::sort(v.begin(), v.end());
  s.max_s = v.back();
  s.p99_s = v[static_cast<size_t>(0.99 * static_cast<double>(v.size() - 1))];
  return s;
}

}  // namespace freshd::daemon
