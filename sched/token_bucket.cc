#include "sched/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace freshd::sched {

TokenBucket::TokenBucket(double rate, double burst, double start)
    : rate_(std::isfinite(rate) && rate > 0 ? rate : 0),
      burst_(std::isfinite(burst) && burst > 1 ? burst : 1),
      tokens_(1),
      last_(start) {}

double TokenBucket::capacity() const {
  return std::max(burst_, rate_ * kRefillWindowS);
}

void TokenBucket::Advance(double now) {
  if (!(now > last_)) return;
  tokens_ = std::min(capacity(), tokens_ + (now - last_) * rate_);
  last_ = now;
}

double TokenBucket::Available(double now) {
  Advance(now);
  return tokens_;
}

bool TokenBucket::TryTake(double now) {
  Advance(now);
  // A hair of slack so that NextTokenTime() followed by TryTake() at that
  // exact time always succeeds despite rounding.
  if (tokens_ < 1 - 1e-9) return false;
  tokens_ = std::max(0.0, tokens_ - 1);
  return true;
}

double TokenBucket::NextTokenTime(double now) {
  Advance(now);
  double t = std::max(now, last_);
  if (tokens_ >= 1 - 1e-9) return t;
  if (rate_ <= 0) return std::numeric_limits<double>::infinity();
  return t + (1 - tokens_) / rate_;
}

void TokenBucket::SetRate(double rate, double now) {
  Advance(now);
  rate_ = std::isfinite(rate) && rate > 0 ? rate : 0;
}

}  // namespace freshd::sched
