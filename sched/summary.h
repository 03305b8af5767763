// The whole copy's figures at `now` (a status endpoint's), in one pass over
// the page table that evaluates no value function (~21 ms at 1M pages), or
// in slices. Reads the page table, the rule table and the valuer; owns only
// the pass's running sums. Scheduler::Summarize/SummarizeSome call it
// (Scheduler::Summary and Scheduler::SummaryPass name these types). Runs on
// the scheduler's owner thread.

#ifndef FRESHD_SCHED_SUMMARY_H_
#define FRESHD_SCHED_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sched/observation.h"
#include "sched/page_state.h"
#include "sched/rule_table.h"
#include "sched/valuer.h"

namespace freshd::sched {

// estimated_freshness = Σμ·FreshProbability / Σμ over every page (a
// never-fetched page counts as stale), overdue = pages past their deadline
// (the max_interval floor or a policy clamp: PriorityOf().overdue),
// unfetched = pages never fetched nor failed (never attempted, or the first
// attempt in flight), failed = pages whose latest attempt failed (a 404, a
// robots.txt denial, a timeout...; retried after a back-off), fetched
// before or not.
struct Summary {
  double estimated_freshness = 0;
  uint64_t overdue = 0;
  uint64_t unfetched = 0;
  uint64_t failed = 0;
};

// A pass in slices: next() is the first page not yet covered; summary() the
// figures of the pages covered so far (of the whole copy once done).
class SummaryPass;
bool SummarizeSome(const std::vector<PageState>& pages, const RuleTable& rules,
                   const Valuer& valuer, double now, size_t max_pages,
                   SummaryPass* pass);

class SummaryPass {
 public:
  PageId next() const { return next_; }
  Summary summary() const;

 private:
  friend bool SummarizeSome(const std::vector<PageState>& pages,
                            const RuleTable& rules, const Valuer& valuer,
                            double now, size_t max_pages, SummaryPass* pass);
  PageId next_ = 0;
  double weight_ = 0, fresh_ = 0;
  Summary counts_;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SUMMARY_H_
