// Operators' rules (Scheduler::SetRules/SetPageRule; [[rule]] in the
// daemon's config) and which page has which: a page holds its rule as one
// byte in a table that exists only once some page has a rule, so nothing a
// page without rules. Owns the rules and the page -> rule bytes; reads
// nothing. The scheduler (its owner) re-indexes the pages whose rule
// changed. One owner thread, no locks.

#ifndef FRESHD_SCHED_RULE_TABLE_H_
#define FRESHD_SCHED_RULE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "sched/observation.h"

namespace freshd::sched {

// An operator's constraint on the pages it is given to (Scheduler::SetRules).
// Intervals in seconds, 0: none; importance > 0 replaces the page's μ in every
// value (0: the page's own). min_interval <= max_interval when both are set.
struct PageRule {
  double min_interval = 0;
  double max_interval = 0;
  double importance = 0;
};
// At most this many rules: a page's rule is one byte, 0 meaning none.
inline constexpr size_t kMaxPageRules = 255;

class RuleTable {
 public:
  // Replaces the rules (rule r of SetPageRule is rules[r - 1]); pages whose
  // rule no longer exists lose it; `changed` is called for every page that
  // had a rule. InvalidArgument (nothing changed) past kMaxPageRules, for a
  // negative, NaN or infinite field, or min_interval > max_interval (both
  // set).
  [[nodiscard]] Status Set(std::vector<PageRule> rules,
                           const std::function<void(PageId)>& changed);
  // Gives `page` (< pages, the page count) rule `rule` (0: none). Returns
  // whether it changed; InvalidArgument for an unknown page or rule.
  [[nodiscard]] Result<bool> SetPageRule(PageId page, uint8_t rule,
                                         size_t pages);

  // The page's rule number (0: none, also for an unknown id), and the rule
  // itself (nullptr: none).
  uint8_t RuleOf(PageId page) const {
    return page < page_rule_.size() ? page_rule_[page] : 0;
  }
  const PageRule* RuleFor(PageId page) const {
    const uint8_t r = RuleOf(page);
    return r > 0 ? &rules_[r - 1] : nullptr;
  }
  const std::vector<PageRule>& rules() const { return rules_; }
  // Pages [0, pages) by rule, index 0 counting pages without one.
  std::vector<uint64_t> PagesPerRule(size_t pages) const;

  // The page's effective bounds on its next interval: the longer of
  // `min_interval` (the scheduler's) and its rule's; its rule's max_interval
  // (+inf: none).
  double MinIntervalOf(PageId page, double min_interval) const;
  double MaxIntervalOf(PageId page) const;
  // The page's importance: its rule's when it sets one, else `own`.
  double ImportanceOf(PageId page, double own) const {
    const PageRule* rule = RuleFor(page);
    return rule && rule->importance > 0 ? rule->importance : own;
  }

 private:
  std::vector<PageRule> rules_;
  // By page: its rule (0: none). Empty until a page is given a rule, then
  // one byte a page.
  std::vector<uint8_t> page_rule_;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_RULE_TABLE_H_
