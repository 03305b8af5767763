#include "sched/rule_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace freshd::sched {

Status RuleTable::Set(std::vector<PageRule> rules,
                      const std::function<void(PageId)>& changed) {
  if (rules.size() > kMaxPageRules) {
    return Status::InvalidArgument("scheduler: more than " +
                                   std::to_string(kMaxPageRules) + " rules");
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    const PageRule& r = rules[i];
    for (double v : {r.min_interval, r.max_interval, r.importance}) {
      if (!(v >= 0) || !std::isfinite(v)) {
        return Status::InvalidArgument(
            "scheduler: rule " + std::to_string(i + 1) +
            ": intervals and importance must be finite and >= 0");
      }
    }
    if (r.max_interval > 0 && r.min_interval > r.max_interval) {
      return Status::InvalidArgument("scheduler: rule " +
                                     std::to_string(i + 1) +
                                     ": min_interval > max_interval");
    }
  }
  rules_ = std::move(rules);
  for (PageId p = 0; p < page_rule_.size(); ++p) {
    if (page_rule_[p] == 0) continue;
    if (page_rule_[p] > rules_.size()) page_rule_[p] = 0;
    changed(p);
  }
  return Status::OK();
}

Result<bool> RuleTable::SetPageRule(PageId page, uint8_t rule, size_t pages) {
  if (page >= pages || rule > rules_.size()) {
    return Status::InvalidArgument("scheduler: unknown page or rule");
  }
  if (RuleOf(page) == rule) return false;
  if (page_rule_.size() < pages) page_rule_.resize(pages, 0);
  page_rule_[page] = rule;
  return true;
}

std::vector<uint64_t> RuleTable::PagesPerRule(size_t pages) const {
  std::vector<uint64_t> out(rules_.size() + 1, 0);
  for (PageId p = 0; p < pages; ++p) ++out[RuleOf(p)];
  return out;
}

double RuleTable::MinIntervalOf(PageId page, double min_interval) const {
  const PageRule* rule = RuleFor(page);
  return rule ? std::max(min_interval, rule->min_interval) : min_interval;
}

double RuleTable::MaxIntervalOf(PageId page) const {
  const PageRule* rule = RuleFor(page);
  return rule && rule->max_interval > 0
             ? rule->max_interval
             : std::numeric_limits<double>::infinity();
}

}  // namespace freshd::sched
