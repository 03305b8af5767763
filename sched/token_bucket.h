// Token bucket: the crawl budget. Tokens accrue at `rate` per second up to
// the bucket's capacity, max(`burst`, rate × kRefillWindowS); each fetch
// takes one. `burst` is how many fetches may go at once after an idle spell;
// it never caps the sustained rate: a caller that takes tokens at least every
// kRefillWindowS (an event loop's wake-up latency) gets exactly `rate`
// fetches per second, from 0.01 to tens of thousands. SetRate changes the rate
// from now on without touching anything else (tokens already earned are kept),
// which is all a budget change needs: the selector's implied threshold simply
// moves. Time is seconds (any origin, nondecreasing across calls; an earlier
// time is treated as the latest one seen). Not thread-safe (one owner).

#ifndef FRESHD_SCHED_TOKEN_BUCKET_H_
#define FRESHD_SCHED_TOKEN_BUCKET_H_

namespace freshd::sched {

class TokenBucket {
 public:
  // The longest wake-up gap of a taker that loses no token.
  static constexpr double kRefillWindowS = 0.1;

  // rate >= 0 tokens per second; burst >= 1 (clamped). The bucket starts
  // holding min(1, burst) token at time `start`.
  TokenBucket(double rate, double burst, double start = 0);

  // Tokens available at `now` (fractional).
  double Available(double now);

  // Takes one token if at least one is available at `now`; false otherwise.
  bool TryTake(double now);

  // Earliest time >= now at which one token will be available; +inf when
  // rate == 0 and the bucket holds less than one token.
  double NextTokenTime(double now);

  // New rate from `now` on (tokens accrued so far at the old rate are kept).
  void SetRate(double rate, double now);

  double rate() const { return rate_; }
  double burst() const { return burst_; }
  // max(burst, rate × kRefillWindowS).
  double capacity() const;

 private:
  void Advance(double now);

  double rate_;
  double burst_;
  double tokens_;
  double last_;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_TOKEN_BUCKET_H_
