#include "sched/selector.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace freshd::sched {

bool Better(const Priority& a, const Priority& b) {
  if (a.overdue != b.overdue) return a.overdue;
  return a.overdue ? a.key < b.key : a.key > b.key;
}

void Selector::Resize(size_t pages) {
  if (pages <= bound_.size()) return;
  bound_.resize(pages, std::numeric_limits<double>::quiet_NaN());
  deadline_.resize(pages, std::numeric_limits<double>::infinity());
  stamp_.resize(pages, 0);
}

void Selector::Update(PageId page, double upper_bound, double deadline) {
  if (page >= bound_.size()) Resize(static_cast<size_t>(page) + 1);
  if (std::isnan(upper_bound)) {
    upper_bound = std::numeric_limits<double>::infinity();
  }
  if (upper_bound != bound_[page]) {  // (true for NaN: not indexed yet)
    if (!std::isnan(bound_[page])) by_bound_.erase({bound_[page], page});
    bound_[page] = upper_bound;
    by_bound_.insert({upper_bound, page});
  }
  SetDeadline(page, deadline);
}

void Selector::UpdateAll(size_t pages, const IndexFn& index) {
  Resize(pages);
  std::vector<std::pair<double, PageId>> entries;
  entries.reserve(bound_.size());
  for (size_t i = 0; i < bound_.size(); ++i) {
    const auto page = static_cast<PageId>(i);
    if (i < pages) {
      auto [upper_bound, deadline] = index(page);
      bound_[i] = std::isnan(upper_bound)
                      ? std::numeric_limits<double>::infinity()
                      : upper_bound;
      SetDeadline(page, deadline);
    }
    if (!std::isnan(bound_[i])) entries.emplace_back(bound_[i], page);
  }
  std::sort(entries.begin(), entries.end(), ByBoundDesc());
  by_bound_.clear();
  for (const auto& e : entries) by_bound_.insert(by_bound_.end(), e);
}

void Selector::SetDeadline(PageId page, double deadline) {
  if (deadline == deadline_[page]) return;
  deadline_[page] = deadline;
  ++stamp_[page];
  if (std::isfinite(deadline)) {
    deadlines_.push({deadline, page, stamp_[page]});
    if (deadlines_.size() > 2 * bound_.size() + 1024) CompactHeap();
  }
}

void Selector::CompactHeap() {
  std::vector<DeadlineEntry> live;
  live.reserve(bound_.size());
  while (!deadlines_.empty()) {
    const DeadlineEntry& e = deadlines_.top();
    if (e.stamp == stamp_[e.page]) live.push_back(e);
    deadlines_.pop();
  }
  for (const DeadlineEntry& e : live) deadlines_.push(e);
}

std::optional<Selector::Choice> Selector::SelectOverdue(
    double now, const EligibleFn& eligible) {
  std::vector<DeadlineEntry> skipped;
  std::optional<Choice> choice;
  while (!deadlines_.empty() && deadlines_.top().deadline <= now) {
    DeadlineEntry e = deadlines_.top();
    deadlines_.pop();
    if (e.stamp != stamp_[e.page]) continue;  // superseded
    skipped.push_back(e);                     // still overdue: keep it
    if (eligible(e.page)) {
      choice = Choice{e.page, Priority{true, e.deadline}};
      break;
    }
  }
  for (const DeadlineEntry& e : skipped) deadlines_.push(e);
  return choice;
}

std::optional<Selector::Choice> Selector::Select(double now,
                                                 const EligibleFn& eligible,
                                                 const ValueFn& value) {
  last_evaluations_ = 0;
  if (auto overdue = SelectOverdue(now, eligible)) return overdue;
  return BestByValue(eligible, value);
}

std::optional<Selector::Choice> Selector::BestByValue(
    const EligibleFn& eligible, const ValueFn& value) {
  std::optional<Choice> best;
  for (const auto& [bound, page] : by_bound_) {
    if (best && !(bound > best->priority.key)) break;
    if (!eligible(page)) continue;
    double v = value(page);
    ++last_evaluations_;
    if (!best || v > best->priority.key)
      best = Choice{page, Priority{false, v}};
  }
  return best;
}

}  // namespace freshd::sched
