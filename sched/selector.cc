#include "sched/selector.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace freshd::sched {
namespace {
// The deadline heap's order: std::greater makes the earliest the top.
constexpr std::greater<> kLater{};
}  // namespace

float Selector::RoundUp(double upper_bound) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (!(upper_bound <= kMax)) {  // NaN too
    return std::numeric_limits<float>::infinity();
  }
  if (upper_bound < -kMax) return std::numeric_limits<float>::lowest();
  const auto bound = static_cast<float>(upper_bound);  // (nearest, in range)
  if (!(bound < upper_bound)) return bound;
  // The next float up, by its bits (std::nextafter is a library call, on
  // every staged bound): +1 for +0 and positives, -1 for negatives; bound is
  // never -0, -inf or FLT_MAX here.
  const auto bits = std::bit_cast<uint32_t>(bound);
  return std::bit_cast<float>(bound >= 0 ? bits + 1 : bits - 1);
}

bool Better(const Priority& a, const Priority& b) {
  if (a.overdue != b.overdue) return a.overdue;
  return a.overdue ? a.key < b.key : a.key > b.key;
}

void Selector::Resize(size_t pages) {
  if (pages <= bound_.size()) return;
  bound_.resize(pages, std::numeric_limits<float>::quiet_NaN());
  deadline_.resize(pages, std::numeric_limits<double>::infinity());
  stamp_.resize(pages, 0);
  in_recent_.resize(pages, 0);
}

void Selector::Update(PageId page, double upper_bound, double deadline) {
  if (page >= bound_.size()) Resize(static_cast<size_t>(page) + 1);
  const float bound = RoundUp(upper_bound);
  if (bound != bound_[page]) {  // (true for NaN: not indexed yet)
    if (in_recent_[page]) recent_.erase({bound_[page], page});
    bound_[page] = bound;
    recent_.insert({bound, page});
    in_recent_[page] = 1;  // its sorted_ entry, if any, is dead now
    if (recent_.size() > std::max<size_t>(1024, sorted_.size() / 8)) {
      MergeRecent();
    }
  }
  SetDeadline(page, deadline);
}

void Selector::UpdateAll(size_t pages, const IndexFn& index) {
  CancelStage();
  Resize(pages);
  sorted_.clear();
  sorted_.reserve(bound_.size());
  for (const BoundEntry& e : recent_) in_recent_[e.second] = 0;
  recent_.clear();
  for (size_t i = 0; i < bound_.size(); ++i) {
    const auto page = static_cast<PageId>(i);
    if (i < pages) {
      auto [upper_bound, deadline] = index(page);
      bound_[i] = RoundUp(upper_bound);
      SetDeadline(page, deadline);
    }
    if (!std::isnan(bound_[i])) sorted_.emplace_back(bound_[i], page);
  }
  // Only the head is put in order: a horizon's selections scan a few
  // thousand entries from the top, and sorting all N cost more than the
  // bounds themselves for cheap policies. The tail is sorted if a scan
  // ever reaches it (SortTail).
  const size_t head = std::min(
      sorted_.size(),
      kSortedHeadMin +
          static_cast<size_t>(kSortedHeadPerRoot *
                              std::sqrt(static_cast<double>(sorted_.size()))));
  const auto head_end = sorted_.begin() + static_cast<std::ptrdiff_t>(head);
  std::nth_element(sorted_.begin(), head_end, sorted_.end(), ByBoundDesc());
  std::sort(sorted_.begin(), head_end, ByBoundDesc());
  sorted_head_ = head;
}

void Selector::BeginStage() {
  stage_ = Stage::kBounds;
  next_bound_.clear();  // (capacity kept: the previous order's)
  stage_pages_ = 0;
  sample_.clear();
  restaged_.clear();
}

void Selector::StageNext(double upper_bound) {
  const float bound = RoundUp(upper_bound);
  const auto page = static_cast<PageId>(stage_pages_++);
  next_bound_.push_back(bound);
  if (page % kSampleEvery == 0) sample_.emplace_back(bound, page);
}

void Selector::Restage(PageId page, double upper_bound) {
  if (!Staged(page)) return;
  if (page >= next_bound_.size()) {
    next_bound_.resize(static_cast<size_t>(page) + 1,
                       std::numeric_limits<float>::quiet_NaN());
  }
  next_bound_[page] = RoundUp(upper_bound);
  // Before ordering reaches it, the ordering reads the new bound; after, or
  // past the staged pages, the page joins recent_ at the swap.
  if (stage_ != Stage::kBounds &&
      (page < order_cursor_ || page >= stage_pages_)) {
    restaged_.push_back(page);
  }
}

void Selector::EndStageBounds() {
  stage_ = Stage::kOrder;
  const size_t n = stage_pages_;
  // The head to sort: as UpdateAll's, a quarter more for the sample's error.
  const double want =
      1.25 *
      (kSortedHeadMin + kSortedHeadPerRoot * std::sqrt(static_cast<double>(n)));
  const auto rank = static_cast<size_t>(want / kSampleEvery);
  all_head_ = rank >= sample_.size();
  if (!all_head_) {
    const auto nth = sample_.begin() + static_cast<std::ptrdiff_t>(rank);
    std::nth_element(sample_.begin(), nth, sample_.end(), ByBoundDesc());
    pivot_ = *nth;
  }
  next_sorted_.resize(n);  // (reused: the previous order's storage)
  next_head_ = 0;
  next_tail_ = n;
  order_cursor_ = 0;
}

bool Selector::OrderStage(size_t count) {
  if (stage_ != Stage::kOrder) return stage_ == Stage::kReady;
  const ByBoundDesc before;
  const size_t end = std::min(stage_pages_, order_cursor_ + count);
  const size_t head0 = next_head_;
  for (size_t i = order_cursor_; i < end; ++i) {
    const BoundEntry e{next_bound_[i], static_cast<PageId>(i)};
    if (all_head_ || !before(pivot_, e)) {
      next_sorted_[next_head_++] = e;
    } else {
      next_sorted_[--next_tail_] = e;
    }
  }
  order_cursor_ = end;
  const auto first = next_sorted_.begin();
  const auto mid = first + static_cast<std::ptrdiff_t>(head0);
  const auto last = first + static_cast<std::ptrdiff_t>(next_head_);
  std::sort(mid, last, before);
  std::inplace_merge(first, mid, last, before);
  if (order_cursor_ < stage_pages_) return false;
  stage_ = Stage::kReady;
  return true;
}

void Selector::FinishStage() {
  if (stage_ != Stage::kReady) return;
  stage_ = Stage::kNone;
  for (const BoundEntry& e : recent_) in_recent_[e.second] = 0;
  recent_.clear();
  sorted_.swap(next_sorted_);
  sorted_head_ = next_head_;
  // Pages indexed since staging began were restaged (Staged() is true for
  // every page once the bounds ended); any other is left unindexed.
  next_bound_.resize(std::max(next_bound_.size(), bound_.size()),
                     std::numeric_limits<float>::quiet_NaN());
  bound_.swap(next_bound_);
  const size_t n = bound_.size();
  if (deadline_.size() < n) {
    deadline_.resize(n, std::numeric_limits<double>::infinity());
    stamp_.resize(n, 0);
    in_recent_.resize(n, 0);
  }
  for (PageId page : restaged_) {
    if (in_recent_[page] || std::isnan(bound_[page])) continue;
    recent_.insert({bound_[page], page});
    in_recent_[page] = 1;
  }
  restaged_.clear();
  if (recent_.size() > std::max<size_t>(1024, sorted_.size() / 8)) {
    MergeRecent();
  }
}

void Selector::SortTail() {
  std::sort(sorted_.begin() + static_cast<std::ptrdiff_t>(sorted_head_),
            sorted_.end(), ByBoundDesc());
  sorted_head_ = sorted_.size();
}

void Selector::MergeRecent() {
  // Dead entries go (the page is in recent_); the live head stays in order.
  size_t head = 0;
  for (size_t i = 0; i < sorted_head_; ++i)
    head += in_recent_[sorted_[i].second] == 0;
  std::erase_if(sorted_, [this](const BoundEntry& e) {
    return in_recent_[e.second] != 0;
  });
  // A recent entry ordered before the head's last joins the head (one
  // linear merge); the others join the unsorted tail.
  std::vector<BoundEntry> into_head, into_tail;
  const ByBoundDesc before;
  for (const BoundEntry& e : recent_) {
    in_recent_[e.second] = 0;
    if (head > 0 && before(e, sorted_[head - 1])) {
      into_head.push_back(e);
    } else {
      into_tail.push_back(e);
    }
  }
  recent_.clear();
  const auto head_end = sorted_.begin() + static_cast<std::ptrdiff_t>(head);
  sorted_.insert(head_end, into_head.begin(), into_head.end());
  std::inplace_merge(
      sorted_.begin(), sorted_.begin() + static_cast<std::ptrdiff_t>(head),
      sorted_.begin() + static_cast<std::ptrdiff_t>(head + into_head.size()),
      before);
  sorted_.insert(sorted_.end(), into_tail.begin(), into_tail.end());
  sorted_head_ = head + into_head.size();
}

void Selector::SetDeadline(PageId page, double deadline) {
  if (deadline == deadline_[page]) return;
  deadline_[page] = deadline;
  ++stamp_[page];
  if (std::isfinite(deadline)) {
    deadlines_.push_back({deadline, page, stamp_[page]});
    std::push_heap(deadlines_.begin(), deadlines_.end(), kLater);
    if (deadlines_.size() > 2 * bound_.size() + 1024) CompactHeap();
  }
}

void Selector::CompactHeap() {
  // O(n): drop the stale entries in place, then re-heapify (popping every
  // entry, as before, cost O(n log n): ~0.5-1 s at 10M pages).
  std::erase_if(deadlines_, [this](const DeadlineEntry& e) {
    return e.stamp != stamp_[e.page];
  });
  std::make_heap(deadlines_.begin(), deadlines_.end(), kLater);
}

std::optional<Selector::Choice> Selector::SelectOverdue(
    double now, const EligibleFn& eligible) {
  std::vector<DeadlineEntry> skipped;
  std::optional<Choice> choice;
  while (!deadlines_.empty() && deadlines_.front().deadline <= now) {
    std::pop_heap(deadlines_.begin(), deadlines_.end(), kLater);
    DeadlineEntry e = deadlines_.back();
    deadlines_.pop_back();
    if (e.stamp != stamp_[e.page]) continue;  // superseded
    skipped.push_back(e);                     // still overdue: keep it
    if (eligible(e.page)) {
      choice = Choice{e.page, Priority{true, e.deadline}};
      break;
    }
  }
  for (const DeadlineEntry& e : skipped) {
    deadlines_.push_back(e);
    std::push_heap(deadlines_.begin(), deadlines_.end(), kLater);
  }
  return choice;
}

std::optional<Selector::Choice> Selector::Select(double now,
                                                 const EligibleFn& eligible,
                                                 const ValueFn& value,
                                                 const ValueFn* value_bound) {
  last_evaluations_ = 0;
  last_passed_over_ = 0;
  if (auto overdue = SelectOverdue(now, eligible)) return overdue;
  return BestByValue(eligible, value, value_bound);
}

std::optional<Selector::Choice> Selector::BestByValue(
    const EligibleFn& eligible, const ValueFn& value,
    const ValueFn* value_bound) {
  std::optional<Choice> best;
  // Merge the two bound orders (each page is in exactly one of them).
  const ByBoundDesc before;
  auto s = sorted_.begin();
  auto r = recent_.begin();
  for (;;) {
    for (;; ++s) {  // skips dead entries; sorts the tail on reaching it
      if (s != sorted_.end() &&
          static_cast<size_t>(s - sorted_.begin()) == sorted_head_) {
        SortTail();  // (in place: s stays valid)
      }
      if (s == sorted_.end() || !in_recent_[s->second]) break;
    }
    if (s == sorted_.end() && r == recent_.end()) break;
    const bool from_sorted =
        r == recent_.end() || (s != sorted_.end() && before(*s, *r));
    const auto [bound, page] = from_sorted ? *s++ : *r++;
    if (best && !(bound > best->priority.key)) break;
    if (!eligible(page)) continue;
    // Its value is at most value_bound, and a value equal to the best's
    // does not replace it: passing over such a page changes nothing.
    if (best && value_bound && !((*value_bound)(page) > best->priority.key)) {
      ++last_passed_over_;
      continue;
    }
    double v = value(page);
    ++last_evaluations_;
    if (!best || v > best->priority.key)
      best = Choice{page, Priority{false, v}};
  }
  return best;
}

}  // namespace freshd::sched
