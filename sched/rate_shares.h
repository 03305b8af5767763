// One budget, one threshold: how the members of a cluster split the crawl
// budget R (issue 30 item 4). Each member schedules its own pages greedily
// and publishes its threshold λ (Scheduler::threshold(): the value of its
// recent marginal selections) and its rate share. At the optimum of the
// whole problem every crawl is worth the same λ, the Lagrange multiplier of
// the budget (NCIS paper §5.2; Olston & Pandey's utility threshold T), so a
// member whose λ is above the others' should get more of R and one below
// less. NextRateShares takes one damped multiplicative step toward equal λ:
//   share_i ← share_i · clamp((λ_i / λ̄)^η, 1/max_step, max_step),
// λ̄ the share-weighted geometric mean of the positive λs, then renormalised
// so the shares sum to R, with none below floor·R/n (a member never starves
// and can still measure its λ). A member with λ = 0 has nothing to fetch (no
// pages) and gets nothing; n counts the others. One with an unknown λ (< 0
// or not finite: just joined, nothing selected yet) gets R/n. A member with
// no valid share (≤ 0, not finite) starts from R/n.
// λ itself is best measured over a window, the mean marginal value since
// the last exchange (LambdaMeter): Scheduler::threshold() remembers about
// 100 selections, a lag that made the exchange oscillate in simulation.
// Pure: no clock, no I/O; the result depends only on the inputs as a set
// (members are processed in node-name order), so every member computes the
// same vector and takes its own entry. Thread-safe (no state).

#ifndef FRESHD_SCHED_RATE_SHARES_H_
#define FRESHD_SCHED_RATE_SHARES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace freshd::sched {

struct ShareMember {
  std::string node;  // unique among the members
  double lambda = -1;
  double share = 0;  // pages per second (any unit: the result has R's)
};

struct RateShareOptions {
  // η: the step's exponent. λ falls about as share^-2 for freshness (a
  // page's value grows as τ² at short intervals), so η = 0.25 halves the
  // log-λ gap each step without overshooting; measured λ lags the share.
  double step = 0.25;
  // No member's factor per step beyond [1/max_step, max_step] (before the
  // renormalisation; so a share moves at most max_step² a step).
  double max_step = 2;
  // The floor, as a fraction of the equal share R/n.
  double floor = 0.05;
};

// The next shares, one per member in the order given, summing to `total`
// (all 0 when total ≤ 0 or not finite; empty for no members). Options out
// of range are clamped: step to [0, 1], max_step to [1, 1e3], floor to
// [0, 1].
std::vector<double> NextRateShares(std::span<const ShareMember> members,
                                   double total,
                                   const RateShareOptions& options = {});

// The λ a member publishes, measured over windows of its scheduler's
// marginal selections (Scheduler::marginal_sum/count). Not thread-safe (one
// owner).
class LambdaMeter {
 public:
  // REQUIRES: min_selections >= 1.
  explicit LambdaMeter(uint64_t min_selections = 1)
      : min_selections_(min_selections) {}
  // The λ to publish now: 0 with no pages; else the mean marginal value
  // since the window opened once it holds min_selections (the window then
  // restarts); else the last such mean; -1 (unknown) before the first.
  double Update(size_t pages, double marginal_sum, uint64_t marginal_count);
  double lambda() const { return lambda_; }
  // Windows completed so far (a caller steps once per new λ).
  uint64_t windows() const { return windows_; }

 private:
  uint64_t min_selections_;
  uint64_t windows_ = 0;
  double sum_ = 0;
  uint64_t count_ = 0;
  double lambda_ = -1;
};

// How far apart the positive λs are, as the budget sees it: the
// share-weighted root mean square of ln(λ_i/λ̄) (λ̄ their share-weighted
// geometric mean); 0.095 = ln 1.1 is "within 10%". A small member's noisy
// λ weighs little. 0 with no positive λ.
double LambdaDispersion(std::span<const ShareMember> members);

// The spread of the positive λs, max/min (1: all equal); 0 when fewer
// than one member has λ > 0.
double LambdaSpread(std::span<const ShareMember> members);

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_RATE_SHARES_H_
