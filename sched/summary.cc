#include "sched/summary.h"

#include <algorithm>

namespace freshd::sched {

Summary SummaryPass::summary() const {
  Summary out = counts_;
  out.estimated_freshness = weight_ > 0 ? fresh_ / weight_ : 0;
  return out;
}

// Adds up to `max_pages` pages from pass->next on, each at `now`; true once
// the pass has covered every page (pages added during a pass are covered if
// the pass reaches them).
bool SummarizeSome(const std::vector<PageState>& pages, const RuleTable& rules,
                   const Valuer& valuer, double now, size_t max_pages,
                   SummaryPass* pass) {
  const PageId end = static_cast<PageId>(
      std::min<size_t>(pages.size(), size_t{pass->next_} + max_pages));
  Summary& out = pass->counts_;
  for (PageId id = pass->next_; id < end; ++id) {
    const PageState& s = pages[id];
    if (s.removed()) continue;  // a tombstone (Scheduler::Remove)
    const double mu = rules.ImportanceOf(id, s.importance);
    pass->weight_ += mu;
    if (s.failures > 0) ++out.failed;
    if (!s.fetched()) {
      if (s.failures == 0) ++out.unfetched;
      continue;
    }
    pass->fresh_ += mu * valuer.FreshProbability(id, now);
    if (valuer.Deadline(id) <= now) ++out.overdue;
  }
  pass->next_ = std::max(pass->next_, end);
  return pass->next_ >= pages.size();
}

}  // namespace freshd::sched
