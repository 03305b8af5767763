// The value function over the page table: what a fetch of a page is worth
// now (the policy's value at the model the scheduler holds: the truth in
// oracle mode, else the estimates; over the page's draws when its model is
// uncertain), its deadline, its priority, its bounds over a horizon for the
// selection index, and P(its copy is fresh).
//
// Owns nothing but its wiring: reads the page table, the estimator, the
// rule table, the token bucket's rate (the mean refresh interval), the
// policy, the options and, in oracle mode, the model source. Read-only: no
// call changes any state. Called by the Scheduler facade, the selection
// index (IndexedValues) and the summary pass. One owner thread.

#ifndef FRESHD_SCHED_VALUER_H_
#define FRESHD_SCHED_VALUER_H_

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "sched/estimator.h"
#include "sched/model_source.h"
#include "sched/page_state.h"
#include "sched/policy.h"
#include "sched/rule_table.h"
#include "sched/scheduler_options.h"
#include "sched/selection_index.h"
#include "sched/token_bucket.h"

namespace freshd::sched {

class Valuer final : public IndexedValues {
 public:
  // Every argument outlives the valuer.
  Valuer(const SchedulerOptions& options, const Policy& policy,
         const std::vector<PageState>& pages, const RuleTable& rules,
         const Estimator& estimator, const TokenBucket& bucket);
  Valuer(const Valuer&) = delete;
  Valuer& operator=(const Valuer&) = delete;

  void set_model_source(const ModelSource* truth) { truth_ = truth; }

  // IndexedValues.
  size_t pages() const override { return pages_.size(); }
  // The page's value at `now` under the policy (new_page_value if never
  // fetched; averaged over draws as the truth's mixture and
  // SchedulerOptions::value_over_rate_uncertainty say).
  double Value(PageId page, double now) const override;
  // The max_interval floor, a policy clamp, exploration, a probe, a rule.
  double Deadline(PageId page) const override;
  // An upper bound of the page's value over a horizon [start, end].
  double IndexBound(PageId page, double start, double end) const override;
  // An upper bound of dValue(page, now)/dnow while the page's state stays
  // as it is (+inf: none): Policy::MaxValueGrowth, over the draws when the
  // value is averaged over them.
  double ValueGrowth(PageId page) const override;
  HostId Host(PageId page) const override { return pages_[page].host; }

  Priority PriorityOf(PageId page, double now) const;
  // The model the value function reads (truth or estimate; a rule's
  // importance replaces μ).
  PageParams Params(PageId page) const;
  // Scheduler::FreshProbability.
  double FreshProbability(PageId page, double now) const;
  // The page's divergence curve (true in oracle mode, else fitted; "never
  // changes" before the first fetch); nullptr for policies without curves.
  const DivergenceModel* Model(PageId page) const;
  PolicyInput Input(PageId page) const;
  // The page's signals since its fetch weighted by source
  // (SourceSignals::weighted); −1 when each weighs one (PolicyInput).
  double WeightedSignals(PageId page) const;

 private:
  // The truth's mixture for the page (oracle, policies without profiles);
  // empty: none.
  std::span<const WeightedParams> Mixture(PageId page) const;
  // The policy's value for `in`: over the page's truth mixture when it has
  // one, else over its rate draws when they apply, else at Params().
  double PolicyValue(const PolicyInput& in, PageId page, double tau) const;
  // SchedulerOptions::value_over_rate_uncertainty's draws for a fetched
  // page; false when they do not apply (oracle or oracle_rate, other
  // policies, option off).
  bool RateDraws(PageId page, const PolicyInput& in,
                 std::array<WeightedParams, 3>* draws) const;
  // SchedulerOptions::rate_mixture's three draws for a fetched page
  // (estimated mode); false when there are none.
  bool MixtureDraws(PageId page, const PolicyInput& in,
                    std::array<WeightedParams, 3>* draws) const;
  // The average of the policy's value over `draws` at τ, each weighted by
  // its weight × σⁿe^{−στ} for the signal policies.
  double MixtureValue(PolicyInput in, std::span<const WeightedParams> draws,
                      double tau) const;
  // A bound on MixtureValue over [start, end] (see IndexBound).
  double MixtureBound(PolicyInput in, std::span<const WeightedParams> draws,
                      double start, double end) const;

  const SchedulerOptions& options_;
  const Policy& policy_;
  const std::vector<PageState>& pages_;
  const RuleTable& rules_;
  const Estimator& estimator_;
  const TokenBucket& bucket_;
  const ModelSource* truth_ = nullptr;  // oracle mode
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_VALUER_H_
