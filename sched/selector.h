// The greedy choice behind every token: among the pages the caller says are
// eligible now, the overdue page with the earliest deadline if any (the
// max_interval floor and policy clamps), else the page of highest value.
//
// Exact, not approximate: pages are indexed by an upper bound of their value
// (descending) and by deadline (min-heap, lazily invalidated). A selection
// scans pages in upper-bound order and stops as soon as the next bound
// cannot beat the best value found, so only pages whose bound exceeds the
// winner's value are evaluated (every page when bounds are +inf). Values may
// move arbitrarily between calls as long as each page's bound holds; Update()
// must be called whenever a bound or deadline changes. The bound order is a
// flat array (16 bytes a page), rebuilt by UpdateAll with only its head
// sorted (the rest is sorted when a scan first reaches it), plus a small
// tree of the pages Update()d since, merged during the scan and folded into
// the array when it outgrows an eighth of it.
// Not thread-safe (the scheduler's owner thread).

#ifndef FRESHD_SCHED_SELECTOR_H_
#define FRESHD_SCHED_SELECTOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "sched/observation.h"

namespace freshd::sched {

// The order the selector maximizes: overdue first (earlier deadline first),
// then higher value. Ties: lower page id.
struct Priority {
  bool overdue = false;
  double key = 0;  // deadline if overdue, else value
};

// True when a is strictly better than b.
bool Better(const Priority& a, const Priority& b);

// UpdateAll sorts only the first kSortedHeadMin + kSortedHeadPerRoot·√N
// entries of the bound order (64·√N covers a horizon of 64·√N selections).
inline constexpr size_t kSortedHeadMin = 4096;
inline constexpr double kSortedHeadPerRoot = 64;

class Selector {
 public:
  struct Choice {
    PageId page;
    Priority priority;
  };
  using EligibleFn = std::function<bool(PageId)>;
  using ValueFn = std::function<double(PageId)>;

  // Makes room for page ids < pages; new pages start unindexed.
  void Resize(size_t pages);

  // (Re)indexes `page`: upper bound of its value (+inf allowed, NaN treated
  // as +inf) and absolute deadline (+inf: none).
  void Update(PageId page, double upper_bound, double deadline);

  // The same for every page in [0, pages) at once, index(p) giving {upper
  // bound, deadline}: one sort and a rebuild instead of a tree search per
  // page (the scheduler's periodic refresh of all bounds).
  using IndexFn = std::function<std::pair<double, double>(PageId)>;
  void UpdateAll(size_t pages, const IndexFn& index);

  // The best eligible page at `now`; nullopt when no indexed page is
  // eligible. `value(p)` is called only for eligible p with bound above the
  // running best; `eligible(p)` for candidates in scan order.
  std::optional<Choice> Select(double now, const EligibleFn& eligible,
                               const ValueFn& value);

  // The eligible page of highest value with deadlines ignored: what a token
  // would buy by value alone (the scheduler's implied threshold when
  // deadlines decide). Same contract for `value` and `eligible` as Select.
  std::optional<Choice> BestByValue(const EligibleFn& eligible,
                                    const ValueFn& value);

  size_t pages() const { return bound_.size(); }
  // Values evaluated by the last Select and any BestByValue after it (for
  // benchmarks and tests).
  size_t last_evaluations() const { return last_evaluations_; }

 private:
  struct DeadlineEntry {
    double deadline;
    PageId page;
    uint32_t stamp;
    bool operator>(const DeadlineEntry& o) const {
      return deadline != o.deadline ? deadline > o.deadline : page > o.page;
    }
  };
  struct ByBoundDesc {
    bool operator()(const std::pair<double, PageId>& a,
                    const std::pair<double, PageId>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };

  std::optional<Choice> SelectOverdue(double now, const EligibleFn& eligible);
  void SetDeadline(PageId page, double deadline);
  // Sorts sorted_'s tail (entries past sorted_head_), once a scan needs it.
  void SortTail();
  // Moves recent_ into sorted_ (one linear merge): keeps the tree, 64 bytes
  // a node, at most an eighth of the array (or 1,024 entries).
  void MergeRecent();
  void CompactHeap();

  using BoundEntry = std::pair<double, PageId>;

  std::vector<double> bound_;     // per page; NaN = not indexed
  std::vector<double> deadline_;  // per page
  std::vector<uint32_t> stamp_;   // per page, bumped by Update
  // The bound order: pages as of the last UpdateAll, sorted, whose entry is
  // live while the page is not in recent_; and the pages Update()d since.
  std::vector<BoundEntry> sorted_;
  // sorted_[0, sorted_head_) is in order; every later entry is ordered
  // after all of them, but the tail is unsorted until a scan reaches it.
  size_t sorted_head_ = 0;
  std::set<BoundEntry, ByBoundDesc> recent_;
  std::vector<uint8_t> in_recent_;  // per page: 1 when its entry is in recent_
  std::priority_queue<DeadlineEntry, std::vector<DeadlineEntry>,
                      std::greater<DeadlineEntry>>
      deadlines_;
  size_t last_evaluations_ = 0;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SELECTOR_H_
