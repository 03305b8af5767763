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
// must be called whenever a bound or deadline changes. Bounds are kept as
// floats rounded up (still upper bounds, so the choice is the same; only
// the scan order of pages whose bounds round together follows the page id),
// which halves the per-page arrays at 1M+ pages. The bound order is a
// flat array (8 bytes a page), rebuilt by UpdateAll with only its head
// sorted (the rest is sorted when a scan first reaches it), plus a small
// tree of the pages Update()d since, merged during the scan and folded into
// the array when it outgrows an eighth of it.
// The next order can be staged while the current one serves (BeginStage ..
// FinishStage): bounds are given a slice at a time, then ordered a slice at
// a time (the head is partitioned off at a pivot sampled from the bounds),
// so that no call costs more than its slice; the swap is O(pages changed
// since they were staged). Staging keeps 12 more bytes a page.
// Not thread-safe (the scheduler's owner thread).

#ifndef FRESHD_SCHED_SELECTOR_H_
#define FRESHD_SCHED_SELECTOR_H_

#include <cstdint>
#include <functional>
#include <optional>
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
  // running best; `eligible(p)` for candidates in scan order. When given,
  // `value_bound(p)` is a second, cheaper upper bound of value(p) now (+inf:
  // none), asked for such a candidate before its value: a page whose
  // value_bound is not above the running best is passed over unvalued (it
  // could not win), so the choice is the same as without it.
  std::optional<Choice> Select(double now, const EligibleFn& eligible,
                               const ValueFn& value,
                               const ValueFn* value_bound = nullptr);

  // The eligible page of highest value with deadlines ignored: what a token
  // would buy by value alone (the scheduler's implied threshold when
  // deadlines decide). Same contract for `value`, `eligible` and
  // `value_bound` as Select.
  std::optional<Choice> BestByValue(const EligibleFn& eligible,
                                    const ValueFn& value,
                                    const ValueFn* value_bound = nullptr);

  // Staged rebuild, the same index UpdateAll(pages, index) would build, in
  // slices: BeginStage(); StageNext(bound) for pages 0, 1, 2... in order;
  // Restage(page, bound) whenever a page's next bound changes after it was
  // staged (Staged(page); every page past the staged ones once the bounds
  // are ended); EndStageBounds(); OrderStage(count) until it returns true;
  // FinishStage() swaps the staged order in (recent_ then holds the
  // restaged pages). Deadlines are not staged (Update keeps them current).
  // UpdateAll and BeginStage discard a staging in progress.
  enum class Stage { kNone, kBounds, kOrder, kReady };
  Stage stage() const { return stage_; }
  void BeginStage();
  void StageNext(double upper_bound);
  size_t staged_pages() const { return stage_pages_; }
  bool Staged(PageId page) const {
    return stage_ == Stage::kBounds ? page < stage_pages_
                                    : stage_ != Stage::kNone;
  }
  void Restage(PageId page, double upper_bound);
  void EndStageBounds();
  // Orders up to `count` more staged pages; true when all are.
  bool OrderStage(size_t count);
  void FinishStage();  // requires stage() == kReady
  void CancelStage() { stage_ = Stage::kNone; }

  size_t pages() const { return bound_.size(); }
  // Values evaluated by the last Select and any BestByValue after it (for
  // benchmarks and tests), and candidates passed over by their value_bound.
  size_t last_evaluations() const { return last_evaluations_; }
  size_t last_passed_over() const { return last_passed_over_; }

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
    bool operator()(const std::pair<float, PageId>& a,
                    const std::pair<float, PageId>& b) const {
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

  // `upper_bound` as the smallest float not below it (NaN: +inf).
  static float RoundUp(double upper_bound);

  using BoundEntry = std::pair<float, PageId>;  // 8 bytes

  std::vector<float> bound_;      // per page, rounded up; NaN = not indexed
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
  // A min-heap by deadline (std::push_heap/pop_heap with std::greater),
  // lazily invalidated: an entry whose stamp is not its page's is stale.
  // A plain vector rather than std::priority_queue so that compaction can
  // drop the stale entries in place and re-heapify in O(n).
  std::vector<DeadlineEntry> deadlines_;
  size_t last_evaluations_ = 0;
  size_t last_passed_over_ = 0;

  // The staged order (see BeginStage).
  static constexpr size_t kSampleEvery = 64;
  Stage stage_ = Stage::kNone;
  std::vector<float> next_bound_;   // per page, staged or restaged
  size_t stage_pages_ = 0;          // pages [0, stage_pages_) staged
  std::vector<BoundEntry> sample_;  // every kSampleEvery-th staged entry
  BoundEntry pivot_{0, 0};          // the head: entries not after it
  bool all_head_ = true;
  // Head entries fill [0, next_head_) (kept sorted), tail entries
  // [next_tail_, stage_pages_) from the back.
  std::vector<BoundEntry> next_sorted_;
  size_t next_head_ = 0, next_tail_ = 0, order_cursor_ = 0;
  // Pages whose next_sorted_ entry is stale or missing: they join recent_.
  std::vector<PageId> restaged_;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SELECTOR_H_
