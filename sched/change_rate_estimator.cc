#include "sched/change_rate_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {

// Bounds on outsider-controlled magnitudes: longer intervals are clamped
// (~31,700 years in seconds), prior rates and weights likewise.
constexpr double kMaxInterval = 1e12;
constexpr double kMinRate = 1e-30, kMaxRate = 1e30, kMaxWeight = 1e12;
constexpr double kMaxSum = 1e30;  // events or exposure passed in

// The score (d/dλ of the log posterior) is
//   f(λ) = Σ_changed w·I/(e^{λI} − 1) + events/λ − exposure,
// a strictly decreasing function of λ > 0: the root is the posterior mode.
// `changed` is called as changed(visit) where visit(w, I) is invoked for each
// bit-only changed interval.
struct Score {
  double events = 0;    // timed changes + prior pseudo-changes.
  double exposure = 0;  // unchanged time + timed quiet time + prior time.
};

template <typename ForEachChanged>
double SolveRate(const Score& s, double changed_weight,
                 ForEachChanged for_each_changed) {
  if (changed_weight <= 0) {  // closed form: Gamma posterior mode.
    if (s.events <= 0) return 0;
    if (s.exposure <= 0) return kInf;
    return s.events / s.exposure;
  }
  if (s.exposure <= 0) return kInf;  // every term > 0: no finite root.
  auto f = [&](double rate, double* df) {
    double v = s.events / rate - s.exposure;
    double d = -s.events / (rate * rate);
    for_each_changed([&](double w, double interval) {
      double x = rate * interval;
      if (x > 700) return;
      double e = std::expm1(x);
      v += w * interval / e;
      d -= w * interval * interval * (e + 1) / (e * e);
    });
    *df = d;
    return v;
  };
  // Bracket the root around a crude guess, on a log scale.
  double guess = (changed_weight + s.events) / s.exposure;
  double lo = guess, hi = guess, df = 0;
  for (int i = 0; i < 200 && f(lo, &df) < 0; ++i) lo *= 0.25;
  for (int i = 0; i < 200 && f(hi, &df) > 0; ++i) hi *= 4;
  // Safeguarded Newton: a Newton step inside (lo, hi) or else a geometric
  // bisection; f decreasing keeps the bracket valid.
  double rate = std::sqrt(lo * hi);
  for (int i = 0; i < 100; ++i) {
    double v = f(rate, &df);
    if (v > 0) {
      lo = rate;
    } else {
      hi = rate;
    }
    if (hi - lo <= 1e-12 * hi || v == 0) break;
    double next = df < 0 ? rate - v / df : -1;
    if (!(next > lo && next < hi)) next = std::sqrt(lo * hi);
    if (std::abs(next - rate) <= 1e-13 * rate) {
      rate = next;
      break;
    }
    rate = next;
  }
  return rate;
}

Score PriorScore(const RatePrior& prior) {
  Score s;
  if (prior.weight > 0 && prior.rate > 0) {  // false for NaN
    const double w = std::min(prior.weight, kMaxWeight);
    s.events = w;
    s.exposure = w / std::clamp(prior.rate, kMinRate, kMaxRate);
  }
  return s;
}

}  // namespace

uint16_t PackSeconds16(double seconds) {
  if (!(seconds > 0)) return 0;                // (NaN too)
  if (!(seconds < 0x1.ffcp40)) return 0xffff;  // (+inf too)
  // Rounds the double's 52 mantissa bits to 10 (half up; a carry moves
  // into the exponent), then rebases the exponent (double bias 1023).
  const uint64_t bits = std::bit_cast<uint64_t>(seconds) + (uint64_t{1} << 41);
  const int64_t e = static_cast<int64_t>(bits >> 52) - 1023 + 23;
  if (e < 1) return 1 << 10;  // 2^-22
  return static_cast<uint16_t>((e << 10) | ((bits >> 42) & 1023));
}

double StaticPosterior(const RatePrior& prior, double exposure) {
  if (!(prior.static_share > 0) || !(prior.weight > 0) || !(prior.rate > 0)) {
    return 0;  // (false for NaN too)
  }
  const double pi0 = std::min(prior.static_share, 1 - 1e-9);
  const double w = std::min(prior.weight, kMaxWeight);
  const double rate = std::clamp(prior.rate, kMinRate, kMaxRate);
  const double e = exposure > 0 ? std::min(exposure, kMaxSum) : 0;
  const double no_change = std::exp(-w * std::log1p(e * rate / w));
  // < 1 so that the estimate stays > 0 (a static page may yet change).
  return std::min(pi0 / (pi0 + (1 - pi0) * no_change), 1 - 1e-12);
}

void ChangeRateStats::Fold(Kind kind, float value) {
  switch (kind) {
    case kUnchanged:
      unchanged_count_ += 1;
      quiet_time_ += value;
      break;
    case kChanged:
      changed_count_ += 1;
      changed_time_ += value;
      break;
    case kTimed:
      timed_changes_ += 1;
      quiet_time_ += value;
      break;
  }
}

void ChangeRateStats::Observe(double interval, bool changed,
                              double since_modified, double decay) {
  if (!(interval > 0) || std::isnan(interval)) return;
  interval = std::min(interval, kMaxInterval);
  if (!(decay >= 0 && decay <= 1)) decay = kDefaultRateDecay;
  Kind kind = kUnchanged;
  uint16_t value = PackSeconds16(interval);
  if (changed) {
    kind = kChanged;
    if (since_modified >= 0 && since_modified < interval) {
      kind = kTimed;
      value = PackSeconds16(since_modified);
    }
  }
  const float d = static_cast<float>(decay);
  unchanged_count_ *= d;
  changed_count_ *= d;
  changed_time_ *= d;
  timed_changes_ *= d;
  quiet_time_ *= d;
  int slot;
  if (ring_size_ == kRing) {  // fold the oldest, reuse its slot.
    slot = ring_head_;
    Fold(KindAt(slot), UnpackSeconds16(ring_[slot]));
    ring_head_ = static_cast<uint8_t>((ring_head_ + 1) % kRing);
  } else {
    slot = (ring_head_ + ring_size_) % kRing;
    ++ring_size_;
  }
  ring_[slot] = value;
  ring_kinds_ =
      static_cast<uint16_t>((ring_kinds_ & ~(3u << (2 * slot))) |
                            (static_cast<unsigned>(kind) << (2 * slot)));
}

double ChangeRateStats::StaticPosterior(const RatePrior& prior) const {
  if (changes() > 0 || observations() <= 0) return 0;
  return sched::StaticPosterior(prior, exposure());
}

double ChangeRateStats::Estimate(const RatePrior& prior) const {
  const double dynamic = 1 - StaticPosterior(prior);
  Score s = PriorScore(prior);
  s.events += timed_changes_;
  s.exposure += quiet_time_;
  double changed_weight = changed_count_;
  for (int i = 0; i < ring_size_; ++i) {
    int slot = (ring_head_ + i) % kRing;
    switch (KindAt(slot)) {
      case kUnchanged:
        s.exposure += UnpackSeconds16(ring_[slot]);
        break;
      case kChanged:
        changed_weight += 1;
        break;
      case kTimed:
        s.events += 1;
        s.exposure += UnpackSeconds16(ring_[slot]);
        break;
    }
  }
  const double rate = SolveRate(s, changed_weight, [&](auto&& visit) {
    if (changed_count_ > 0) {
      visit(changed_count_, changed_time_ / changed_count_);
    }
    for (int i = 0; i < ring_size_; ++i) {
      int slot = (ring_head_ + i) % kRing;
      if (KindAt(slot) == kChanged) visit(1.0, UnpackSeconds16(ring_[slot]));
    }
  });
  return dynamic * rate;
}

double ChangeRateStats::LogLikelihood(double rate) const {
  auto changed = [rate](double interval) {
    const double x = rate * interval;
    return x > 0 ? std::log(-std::expm1(-x)) : -kInf;
  };
  double ll = -rate * quiet_time_;
  if (timed_changes_ > 0) ll += timed_changes_ * std::log(rate);
  if (changed_count_ > 0) {
    ll += changed_count_ * changed(changed_time_ / changed_count_);
  }
  for (int i = 0; i < ring_size_; ++i) {
    const int slot = (ring_head_ + i) % kRing;
    switch (KindAt(slot)) {
      case kUnchanged:
        ll -= rate * UnpackSeconds16(ring_[slot]);
        break;
      case kChanged:
        ll += changed(UnpackSeconds16(ring_[slot]));
        break;
      case kTimed:
        ll += std::log(rate) - rate * UnpackSeconds16(ring_[slot]);
        break;
    }
  }
  return ll;
}

double ChangeRateStats::LogRateInformation(double rate) const {
  auto per_interval = [rate](double interval) {
    const double x = rate * interval;
    if (!(x > 1e-9)) return 0.0;
    return x * x / std::expm1(x);  // x²e^{−x}/(1−e^{−x}); → 0 as x → ∞
  };
  double info = timed_changes_;
  // quiet_time_ holds the unchanged intervals and the timed quiet times:
  // its mean per entry stands for an unchanged interval.
  const double quiet_entries = unchanged_count_ + timed_changes_;
  if (unchanged_count_ > 0) {
    info += unchanged_count_ * per_interval(quiet_time_ / quiet_entries);
  }
  if (changed_count_ > 0) {
    info += changed_count_ * per_interval(changed_time_ / changed_count_);
  }
  for (int i = 0; i < ring_size_; ++i) {
    int slot = (ring_head_ + i) % kRing;
    if (KindAt(slot) == kTimed) {
      info += 1;
    } else {
      info += per_interval(UnpackSeconds16(ring_[slot]));
    }
  }
  return info;
}

int ChangeRateStats::RecentChangedRun() const {
  int run = 0;
  for (int back = 0; back < ring_size_; ++back) {
    const int slot = (ring_head_ + ring_size_ - 1 - back) % kRing;
    if (KindAt(slot) != kChanged) break;
    ++run;
  }
  return run;
}

double ChangeRateStats::RecentInterval(int back) const {
  if (back < 0 || back >= ring_size_) return -1;
  const int slot = (ring_head_ + ring_size_ - 1 - back) % kRing;
  if (KindAt(slot) == kTimed) return -1;
  return UnpackSeconds16(ring_[slot]);
}

double ChangeRateStats::observations() const {
  return ring_size_ + unchanged_count_ + changed_count_ + timed_changes_;
}

double ChangeRateStats::changes() const {
  double n = changed_count_ + timed_changes_;
  for (int i = 0; i < ring_size_; ++i) {
    int slot = (ring_head_ + i) % kRing;
    if (KindAt(slot) != kUnchanged) n += 1;
  }
  return n;
}

double ChangeRateStats::exposure() const {
  double t = quiet_time_ + changed_time_;
  for (int i = 0; i < ring_size_; ++i)
    t += UnpackSeconds16(ring_[(ring_head_ + i) % kRing]);
  return t;
}

double EstimateChangeRate(std::span<const ChangeObservation> observations,
                          const RatePrior& prior) {
  // Reduce to sufficient statistics plus the bit-only changed intervals.
  std::vector<WeightedInterval> changed;
  double events = 0, exposure = 0;
  for (const ChangeObservation& o : observations) {
    if (!(o.interval > 0) || std::isnan(o.interval)) continue;
    const double interval = std::min(o.interval, kMaxInterval);
    if (!o.changed) {
      exposure += interval;
    } else if (o.since_modified >= 0 && o.since_modified < interval) {
      events += 1;
      exposure += o.since_modified;
    } else {
      changed.push_back({1.0, interval});
    }
  }
  return SolveChangeRate(changed, events, exposure, prior);
}

double SolveChangeRate(std::span<const WeightedInterval> changed, double events,
                       double exposure, const RatePrior& prior) {
  auto usable = [](const WeightedInterval& w) {
    return w.weight > 0 && w.interval > 0 && !std::isnan(w.interval);
  };
  Score s = PriorScore(prior);
  s.events += events > 0 ? std::min(events, kMaxSum) : 0;  // NaN: 0
  s.exposure += exposure > 0 ? std::min(exposure, kMaxSum) : 0;
  double changed_weight = 0;
  for (const WeightedInterval& w : changed) {
    if (usable(w)) changed_weight += std::min(w.weight, kMaxWeight);
  }
  const double dynamic = changed_weight > 0 || events > 0
                             ? 1
                             : 1 - StaticPosterior(prior, exposure);
  const double rate = SolveRate(s, changed_weight, [&](auto&& visit) {
    for (const WeightedInterval& w : changed) {
      if (usable(w)) {
        visit(std::min(w.weight, kMaxWeight),
              std::min(w.interval, kMaxInterval));
      }
    }
  });
  return dynamic * rate;
}

double NaiveChangeRate(std::span<const ChangeObservation> observations) {
  double changes = 0, time = 0;
  for (const ChangeObservation& o : observations) {
    if (!(o.interval > 0) || !std::isfinite(o.interval)) continue;
    time += o.interval;
    if (o.changed) changes += 1;
  }
  return time > 0 ? changes / time : 0;
}

double RegularIntervalChangeRate(int n, int x, double interval) {
  if (n <= 0 || x < 0 || x > n || !(interval > 0)) return 0;
  return -std::log((n - x + 0.5) / (n + 0.5)) / interval;
}

}  // namespace freshd::sched
