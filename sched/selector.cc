#include "sched/selector.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "sched/math_constants.h"

namespace freshd::sched {
namespace {
// The deadline heap's order: std::greater makes the earliest the top.
constexpr std::greater<> kLater{};
constexpr float kInfF = std::numeric_limits<float>::infinity();
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
  host_.resize(pages, 0);
  in_recent_.resize(pages, 0);
}

void Selector::GrowHosts(HostId host) {
  if (host < host_key_.size()) return;
  const size_t n = static_cast<size_t>(host) + 1;
  first_live_.resize(n, 0);
  for (size_t h = host_key_.size(); h < n; ++h) {
    first_live_[h] = HostBegin(static_cast<HostId>(h));
  }
  host_key_.resize(n, kNoEntry);
  closed_.resize(n, 0);
  close_stamp_.resize(n, 0);
  asked_in_.resize(n, 0);
}

Selector::BoundEntry Selector::HostNext(HostId host, size_t* pos,
                                        RecentIterator recent) const {
  const size_t end = HostEnd(host);
  while (*pos < end && in_recent_[sorted_[*pos].second]) ++*pos;
  const bool has_sorted = *pos < end;
  const bool has_recent = recent != recent_.end() && recent->host == host;
  if (!has_sorted) return has_recent ? recent->entry : kNoEntry;
  if (!has_recent) return sorted_[*pos];
  return ByBoundDesc()(sorted_[*pos], recent->entry) ? sorted_[*pos]
                                                     : recent->entry;
}

Selector::RecentIterator Selector::RecentBegin(HostId host) const {
  if (host >= recent_per_host_.size() || recent_per_host_[host] == 0) {
    return recent_.end();
  }
  return recent_first_[host];
}

void Selector::InsertRecent(HostId host, const BoundEntry& entry) {
  const auto [it, inserted] = recent_.insert({host, entry});
  if (!inserted) return;
  if (entry.first >= top_floor_) recent_top_.insert(entry);
  if (host >= recent_per_host_.size()) {
    recent_per_host_.resize(host + 1, 0);
    recent_first_.resize(host + 1, recent_.end());
  }
  if (recent_per_host_[host]++ == 0 ||
      ByHostThenBound()(*it, *recent_first_[host])) {
    recent_first_[host] = it;
  }
}

void Selector::EraseRecent(HostId host, const BoundEntry& entry) {
  if (host >= recent_per_host_.size() || recent_per_host_[host] == 0) return;
  const auto it = recent_.find({host, entry});
  if (it == recent_.end()) return;
  // The host's entries are adjacent: the one after its first is its next.
  if (recent_first_[host] == it) recent_first_[host] = std::next(it);
  recent_.erase(it);
  if (entry.first >= top_floor_) recent_top_.erase(entry);
  --recent_per_host_[host];
}

void Selector::ClearRecent() {
  recent_.clear();
  recent_top_.clear();
  std::fill(recent_per_host_.begin(), recent_per_host_.end(), 0);
}

void Selector::RefreshHostKey(HostId host) {
  GrowHosts(host);
  const BoundEntry key = HostNext(host, &first_live_[host], RecentBegin(host));
  BoundEntry& old = host_key_[host];
  if (key == old || (!IsEntry(key) && !IsEntry(old))) return;
  if (!closed_[host]) {
    if (IsEntry(old)) open_.erase(old);
    if (IsEntry(key)) open_.insert(key);
  }
  old = key;
}

void Selector::Update(PageId page, double upper_bound, double deadline,
                      HostId host) {
  if (page >= bound_.size()) Resize(static_cast<size_t>(page) + 1);
  GrowHosts(host);
  host_[page] = host;
  const float bound = RoundUp(upper_bound);
  if (bound != bound_[page]) {  // (true for NaN: not indexed yet)
    if (in_recent_[page]) EraseRecent(host, {bound_[page], page});
    bound_[page] = bound;
    InsertRecent(host, {bound, page});
    in_recent_[page] = 1;  // its sorted_ entry, if any, is dead now
    RefreshHostKey(host);
    if (recent_.size() > std::max<size_t>(1024, sorted_.size() / 8)) {
      MergeRecent();
    }
  } else if (bound >= top_floor_ && !in_recent_[page]) {
    // Still indexed by its top_ entry: what was remembered of it is stale.
    const size_t slot = TopSlot({bound, page});
    if (slot < top_memo_.size()) top_memo_[slot].value = kNaN;
  }
  SetDeadline(page, deadline);
}

void Selector::Group(const std::vector<float>& bounds, size_t pages,
                     std::vector<BoundEntry>* out, std::vector<size_t>* begin) {
  const size_t hosts = host_key_.size();
  begin->assign(hosts + 1, 0);
  for (size_t i = 0; i < pages; ++i) {
    if (!std::isnan(bounds[i])) ++(*begin)[host_[i] + 1];
  }
  for (size_t h = 0; h < hosts; ++h) (*begin)[h + 1] += (*begin)[h];
  std::vector<size_t> fill(begin->begin(), begin->end() - 1);
  out->resize(begin->back());
  for (size_t i = 0; i < pages; ++i) {
    if (std::isnan(bounds[i])) continue;
    (*out)[fill[host_[i]]++] = {bounds[i], static_cast<PageId>(i)};
  }
  for (size_t h = 0; h < hosts; ++h) {
    SortHost(static_cast<HostId>(h), out, *begin);
  }
}

void Selector::SortHost(HostId host, std::vector<BoundEntry>* order,
                        const std::vector<size_t>& begin) {
  const auto first = order->begin();
  std::sort(first + static_cast<std::ptrdiff_t>(begin[host]),
            first + static_cast<std::ptrdiff_t>(begin[host + 1]),
            ByBoundDesc());
}

void Selector::RebuildHostOrder() {
  open_.clear();
  std::vector<BoundEntry> keys;
  for (size_t h = 0; h < host_key_.size(); ++h) {
    const auto host = static_cast<HostId>(h);
    first_live_[h] = HostBegin(host);
    host_key_[h] = HostNext(host, &first_live_[h], RecentBegin(host));
    if (!closed_[h] && IsEntry(host_key_[h])) keys.push_back(host_key_[h]);
  }
  std::sort(keys.begin(), keys.end(), ByBoundDesc());
  for (const BoundEntry& k : keys) open_.insert(open_.end(), k);
}

void Selector::UpdateAll(size_t pages, const IndexFn& index,
                         const HostFn* host_of) {
  CancelStage();
  Resize(pages);
  for (const RecentEntry& e : recent_) in_recent_[e.entry.second] = 0;
  ClearRecent();
  for (size_t i = 0; i < pages; ++i) {
    const auto page = static_cast<PageId>(i);
    if (host_of) host_[i] = (*host_of)(page);
    GrowHosts(host_[i]);
    auto [upper_bound, deadline] = index(page);
    bound_[i] = RoundUp(upper_bound);
    SetDeadline(page, deadline);
  }
  Group(bound_, bound_.size(), &sorted_, &host_begin_);
  RebuildHostOrder();
  BuildTop();
}

void Selector::BeginStage() {
  stage_ = Stage::kBounds;
  next_bound_.clear();  // (capacity kept: the previous order's)
  stage_pages_ = 0;
  next_fill_.assign(host_key_.size(), 0);
  restaged_.clear();
}

void Selector::StageNext(double upper_bound, HostId host) {
  const float bound = RoundUp(upper_bound);
  const auto page = static_cast<PageId>(stage_pages_++);
  if (page >= bound_.size()) Resize(static_cast<size_t>(page) + 1);
  GrowHosts(host);
  host_[page] = host;
  next_bound_.push_back(bound);
  if (next_fill_.size() <= host) next_fill_.resize(host + 1, 0);
  ++next_fill_[host];  // (a count until EndStageBounds)
}

void Selector::Restage(PageId page, double upper_bound) {
  if (!Staged(page)) return;
  if (page >= next_bound_.size()) {
    next_bound_.resize(static_cast<size_t>(page) + 1,
                       std::numeric_limits<float>::quiet_NaN());
  }
  next_bound_[page] = RoundUp(upper_bound);
  // Before placing reaches it, the placing reads the new bound; after, or
  // past the staged pages, the page joins recent_ at the swap.
  if (stage_ != Stage::kBounds &&
      (page < order_cursor_ || page >= stage_pages_)) {
    restaged_.push_back(page);
  }
}

void Selector::EndStageBounds() {
  stage_ = Stage::kOrder;
  order_phase_ = OrderPhase::kPlace;
  const size_t hosts = next_fill_.size();
  next_begin_.assign(hosts + 1, 0);
  for (size_t h = 0; h < hosts; ++h) {
    next_begin_[h + 1] = next_begin_[h] + next_fill_[h];
    next_fill_[h] = next_begin_[h];
  }
  next_sorted_.resize(stage_pages_);  // (reused: the previous order's)
  order_cursor_ = 0;
  sort_cursor_ = 0;
}

bool Selector::OrderStage(size_t count) {
  if (stage_ != Stage::kOrder) return stage_ == Stage::kReady;
  size_t budget = std::max<size_t>(count, 1);
  if (order_phase_ == OrderPhase::kPlace) {
    const size_t end = std::min(stage_pages_, order_cursor_ + budget);
    for (size_t i = order_cursor_; i < end; ++i) {
      next_sorted_[next_fill_[host_[i]]++] = {next_bound_[i],
                                              static_cast<PageId>(i)};
    }
    budget -= end - order_cursor_;
    order_cursor_ = end;
    if (order_cursor_ < stage_pages_) return false;
    order_phase_ = OrderPhase::kSort;
  }
  const size_t hosts = next_begin_.size() - 1;
  while (sort_cursor_ < hosts && budget > 0) {
    const HostId h = sort_cursor_++;
    SortHost(h, &next_sorted_, next_begin_);
    budget -= std::min(budget, next_begin_[h + 1] - next_begin_[h] + 1);
  }
  if (sort_cursor_ < hosts) return false;
  stage_ = Stage::kReady;
  return true;
}

void Selector::FinishStage() {
  if (stage_ != Stage::kReady) return;
  stage_ = Stage::kNone;
  for (const RecentEntry& e : recent_) in_recent_[e.entry.second] = 0;
  ClearRecent();
  sorted_.swap(next_sorted_);
  host_begin_.swap(next_begin_);
  // Pages indexed since staging began were restaged (Staged() is true for
  // every page once the bounds ended); any other is left unindexed.
  next_bound_.resize(std::max(next_bound_.size(), bound_.size()),
                     std::numeric_limits<float>::quiet_NaN());
  bound_.swap(next_bound_);
  const size_t n = bound_.size();
  if (deadline_.size() < n) {
    deadline_.resize(n, std::numeric_limits<double>::infinity());
    stamp_.resize(n, 0);
    host_.resize(n, 0);
    in_recent_.resize(n, 0);
  }
  for (PageId page : restaged_) {
    if (in_recent_[page] || std::isnan(bound_[page])) continue;
    InsertRecent(host_[page], {bound_[page], page});
    in_recent_[page] = 1;
  }
  restaged_.clear();
  RebuildHostOrder();
  if (recent_.size() > std::max<size_t>(1024, sorted_.size() / 8)) {
    MergeRecent();
  } else {
    BuildTop();
  }
}

void Selector::MergeRecent() {
  // One linear merge of the live sorted_ entries and recent_, both by host
  // then bound: the host keys stay (the same entries head each host).
  std::vector<BoundEntry> merged;
  merged.reserve(sorted_.size() + recent_.size());
  const size_t hosts = host_key_.size();
  std::vector<size_t> begin(hosts + 1, 0);
  auto r = recent_.begin();
  for (size_t h = 0; h < hosts; ++h) {
    const auto host = static_cast<HostId>(h);
    begin[h] = merged.size();
    size_t pos = HostBegin(host);
    const size_t end = HostEnd(host);
    const ByBoundDesc before;
    for (;;) {
      while (pos < end && in_recent_[sorted_[pos].second]) ++pos;
      const bool has_sorted = pos < end;
      const bool has_recent = r != recent_.end() && r->host == host;
      if (!has_sorted && !has_recent) break;
      if (has_sorted && (!has_recent || before(sorted_[pos], r->entry))) {
        merged.push_back(sorted_[pos++]);
      } else {
        in_recent_[r->entry.second] = 0;
        merged.push_back((r++)->entry);
      }
    }
  }
  begin[hosts] = merged.size();
  ClearRecent();
  sorted_.swap(merged);
  host_begin_.swap(begin);
  for (size_t h = 0; h < hosts; ++h) {
    first_live_[h] = HostBegin(static_cast<HostId>(h));
  }
  BuildTop();
}

void Selector::BuildTop() {
  // About the first `want` entries of the global bound order: a threshold
  // from a random sample of sorted_ (a stride would resonate with the
  // hosts' runs, each led by its best entry), then every entry at or above
  // it (ties cut in order), sorted. O(pages), as the rebuilds that call it.
  top_.clear();
  top_memo_.clear();
  top_live_ = 0;
  const size_t n = sorted_.size();
  if (options_.scan == Scan::kPerHost || n == 0) {
    top_last_ = kNoEntry;
    top_floor_ = kInfF;
  } else {
    const size_t want = options_.top_entries > 0
                            ? options_.top_entries
                            : std::max<size_t>(16384, n / 64);
    if (want >= n) {
      top_ = sorted_;
    } else {
      constexpr size_t kSample = 8192;
      std::vector<float> sample(kSample);
      uint64_t x = 0x9E3779B97F4A7C15ull;  // xorshift64
      for (float& b : sample) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = sorted_[x % n].first;
      }
      const auto rank = static_cast<std::ptrdiff_t>(std::min<double>(
          kSample - 1, static_cast<double>(want) / static_cast<double>(n) *
                           static_cast<double>(kSample)));
      std::nth_element(sample.begin(), sample.begin() + rank, sample.end(),
                       std::greater<>());
      const float floor = sample[static_cast<size_t>(rank)];
      for (const BoundEntry& e : sorted_) {
        if (e.first >= floor) top_.push_back(e);
      }
      // Ties at the floor (e.g. pages never fetched, all bounded alike) may
      // collect far more: the first `want` in the order are the top.
      if (top_.size() > want) {
        std::nth_element(top_.begin(),
                         top_.begin() + static_cast<std::ptrdiff_t>(want - 1),
                         top_.end(), ByBoundDesc());
        top_.resize(want);
        top_.shrink_to_fit();
      }
    }
    std::sort(top_.begin(), top_.end(), ByBoundDesc());
    // Every sorted_ entry not in top_ comes after its last.
    top_last_ = top_.size() == n ? kNoEntry : top_.back();
    top_floor_ = IsEntry(top_last_) ? top_last_.first
                                    : std::numeric_limits<float>::lowest();
    top_memo_.assign(top_.size(), TopMemo{kNaN, 0, 0});
  }
  // recent_ (the pages restaged, after FinishStage) at the new floor.
  recent_top_.clear();
  for (const RecentEntry& e : recent_) {
    if (e.entry.first >= top_floor_) recent_top_.insert(e.entry);
  }
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

void Selector::Close(HostId host, double at) {
  GrowHosts(host);
  if (!closed_[host]) {
    closed_[host] = 1;
    ++closed_count_;
    if (IsEntry(host_key_[host])) open_.erase(host_key_[host]);
  }
  ++close_stamp_[host];
  if (at < std::numeric_limits<double>::infinity()) {
    reopen_.push_back({at, host, close_stamp_[host]});
    std::push_heap(reopen_.begin(), reopen_.end(), kLater);
    if (reopen_.size() > 2 * closed_count_ + 1024) {
      std::erase_if(reopen_, [this](const ReopenEntry& e) {
        return !closed_[e.host] || e.stamp != close_stamp_[e.host];
      });
      std::make_heap(reopen_.begin(), reopen_.end(), kLater);
    }
  }
}

void Selector::Reopen(HostId host) {
  if (host >= closed_.size() || !closed_[host]) return;
  closed_[host] = 0;
  --closed_count_;
  ++close_stamp_[host];  // its reopen_ entry, if any, is stale
  asked_in_[host] = 0;   // to be asked again
  if (IsEntry(host_key_[host])) open_.insert(host_key_[host]);
}

void Selector::ReopenAll() {
  if (closed_count_ == 0) return;
  for (size_t h = 0; h < closed_.size(); ++h) {
    if (closed_[h]) Reopen(static_cast<HostId>(h));
  }
  reopen_.clear();
}

void Selector::ReopenDue(double now) {
  while (!reopen_.empty() && reopen_.front().at <= now) {
    std::pop_heap(reopen_.begin(), reopen_.end(), kLater);
    const ReopenEntry e = reopen_.back();
    reopen_.pop_back();
    if (closed_[e.host] && e.stamp == close_stamp_[e.host]) Reopen(e.host);
  }
}

bool Selector::HostOpen(HostId host, double now, const HostGate* gate) {
  if (closed_[host]) return false;
  if (gate == nullptr || asked_in_[host] == select_count_) return true;
  const double at = (*gate)(host).at;
  if (at <= now) {
    asked_in_[host] = select_count_;
    return true;
  }
  Close(host, at);
  return false;
}

std::optional<Selector::Choice> Selector::SelectOverdue(
    double now, const EligibleFn& eligible, const HostGate* gate) {
  std::vector<DeadlineEntry> skipped;
  std::optional<Choice> choice;
  while (!deadlines_.empty() && deadlines_.front().deadline <= now) {
    std::pop_heap(deadlines_.begin(), deadlines_.end(), kLater);
    DeadlineEntry e = deadlines_.back();
    deadlines_.pop_back();
    if (e.stamp != stamp_[e.page]) continue;  // superseded
    skipped.push_back(e);                     // still overdue: keep it
    if (closed_[host_[e.page]]) continue;
    if (eligible(e.page) && HostOpen(host_[e.page], now, gate)) {
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
                                                 const ValueFn* value_bound,
                                                 const HostGate* gate) {
  last_evaluations_ = 0;
  last_passed_over_ = 0;
  ++select_count_;
  ReopenDue(now);
  if (auto overdue = SelectOverdue(now, eligible, gate)) return overdue;
  return BestByValue(now, eligible, value, value_bound, gate);
}

std::optional<Selector::Choice> Selector::BestByValue(
    double now, const EligibleFn& eligible, const ValueFn& value,
    const ValueFn* value_bound, const HostGate* gate) {
  std::optional<Choice> best;
  bool global = options_.scan == Scan::kGlobal;
  if (options_.scan == Scan::kAuto) {
    global = per_host_selects_ == 0;
    if (!global) --per_host_selects_;
  }
  if (global && !top_.empty()) {
    const bool decided =
        ScanTop(now, eligible, value, value_bound, gate, &best);
    if (2 * last_dead_ > 4096 + last_walked_) CompactTop();
    if (decided) {
      // Mostly closed hosts' pages walked: the merge, which leaves closed
      // hosts out, for a while.
      if (options_.scan == Scan::kAuto &&
          2 * last_closed_skips_ > 512 + last_walked_) {
        per_host_selects_ = 32;
      }
      return best;
    }
    ++scan_fallbacks_;
  }
  return ScanHosts(now, eligible, value, value_bound, gate, best);
}

void Selector::CompactTop() {
  size_t kept = 0;
  for (size_t i = top_live_; i < top_.size(); ++i) {
    if (top_memo_[i].time == kInf || in_recent_[top_[i].second]) continue;
    top_[kept] = top_[i];
    top_memo_[kept++] = top_memo_[i];
  }
  top_.resize(kept);
  top_memo_.resize(kept);
  top_live_ = 0;
}

bool Selector::ScanTop(double now, const EligibleFn& eligible,
                       const ValueFn& value, const ValueFn* value_bound,
                       const HostGate* gate, std::optional<Choice>* best_out) {
  std::optional<Choice>& best = *best_out;
  last_closed_skips_ = 0;
  last_walked_ = 0;
  last_dead_ = 0;
  const ByBoundDesc before;
  // A dead entry stays dead until the next BuildTop: the dead prefix is
  // skipped for good, and top_ compacted when a scan skipped more dead
  // entries than it walked live ones.
  while (top_live_ < top_.size() && in_recent_[top_[top_live_].second]) {
    ++top_live_;
  }
  auto s = top_.begin() + static_cast<std::ptrdiff_t>(top_live_);
  auto r = recent_top_.begin();
  const bool remember = value_growth_ && now > -kInf;
  for (;;) {
    ++last_walked_;
    BoundEntry entry;
    size_t slot = top_.size();  // entry's index in top_, if from there
    if (s != top_.end()) {
      if (r != recent_top_.end() && before(*r, *s)) {
        entry = *r++;
      } else {
        slot = static_cast<size_t>(s - top_.begin());
        entry = *s++;
      }
    } else if (r != recent_top_.end() &&
               (!IsEntry(top_last_) || before(*r, top_last_))) {
      entry = *r++;
    } else {
      // Every entry left comes after top_last_: bounds at most its own.
      if (!IsEntry(top_last_)) return true;
      return best && !(top_last_.first > best->priority.key);
    }
    const auto [bound, page] = entry;
    if (best && !(bound > best->priority.key)) return true;
    if (bound == kRemovedBound) return true;
    if (slot < top_.size()) {
      // Passed over by what its entry remembers (no read of the page's
      // state: dead, closed or not, it could not win), else dead or live.
      TopMemo& m = top_memo_[slot];
      if (m.time == kInf) {  // found dead before
        ++last_dead_;
        continue;
      }
      if (best && !std::isnan(m.value) && now >= m.time) {
        const double memo_bound =
            m.value + 1e-12 * std::fabs(m.value) + m.growth * (now - m.time);
        if (!(memo_bound > best->priority.key)) {
          ++last_passed_over_;
          continue;
        }
      }
      if (in_recent_[page]) {
        m.time = kInf;  // (dead until the next BuildTop)
        ++last_dead_;
        continue;
      }
    }
    const HostId host = host_[page];
    if (!HostOpen(host, now, gate)) {
      ++last_closed_skips_;
      continue;
    }
    const std::optional<double> v =
        Candidate(page, eligible, value, value_bound, &best);
    if (v && remember && slot < top_.size()) {
      const double growth = value_growth_(page);
      if (growth < kInf) top_memo_[slot] = TopMemo{*v, now, growth};
    }
  }
}

std::optional<double> Selector::Candidate(PageId page,
                                          const EligibleFn& eligible,
                                          const ValueFn& value,
                                          const ValueFn* value_bound,
                                          std::optional<Choice>* best) {
  if (!eligible(page)) return std::nullopt;
  // Its value is at most value_bound, and a value equal to the best's
  // does not replace it: passing over such a page changes nothing.
  if (*best && value_bound && !((*value_bound)(page) > (*best)->priority.key)) {
    ++last_passed_over_;
    return std::nullopt;
  }
  const double v = value(page);
  ++last_evaluations_;
  if (!*best || v > (*best)->priority.key) {
    *best = Choice{page, Priority{false, v}};
  }
  return v;
}

size_t Selector::TopSlot(const BoundEntry& entry) const {
  const auto it =
      std::lower_bound(top_.begin(), top_.end(), entry, ByBoundDesc());
  return it != top_.end() && *it == entry
             ? static_cast<size_t>(it - top_.begin())
             : top_.size();
}

void Selector::ForgetValues() {
  for (TopMemo& m : top_memo_) m.value = kNaN;
}

std::optional<Selector::Choice> Selector::ScanHosts(
    double now, const EligibleFn& eligible, const ValueFn& value,
    const ValueFn* value_bound, const HostGate* gate,
    std::optional<Choice> best) {
  // Merge the open hosts' orders: hosts not entered yet come from open_ (by
  // their best entry), entered ones from a heap by their next entry.
  const ByBoundDesc before;
  const auto later = [&](const HostCursor& a, const HostCursor& b) {
    return before(b.next, a.next);
  };
  std::vector<HostCursor> entered;
  auto h = open_.begin();
  for (;;) {
    const bool from_open =
        h != open_.end() &&
        (entered.empty() || before(*h, entered.front().next));
    if (!from_open && entered.empty()) break;
    HostCursor cursor;
    if (from_open) {
      const BoundEntry key = *h;
      const HostId host = host_[key.second];
      ++h;  // (a host closed now leaves open_: the iterator stays valid)
      if (best && !(key.first > best->priority.key)) break;
      if (!HostOpen(host, now, gate)) continue;
      cursor = HostCursor{key, host, first_live_[host], RecentBegin(host)};
      cursor.next = HostNext(host, &cursor.pos, cursor.recent);  // == key
    } else {
      std::pop_heap(entered.begin(), entered.end(), later);
      cursor = entered.back();
      entered.pop_back();
    }
    const auto [bound, page] = cursor.next;
    if (best && !(bound > best->priority.key)) break;
    // Entries come in bound order: from here on, only removed pages.
    if (bound == kRemovedBound) break;
    // The host's next entry after this one.
    if (cursor.pos < HostEnd(cursor.host) &&
        sorted_[cursor.pos] == cursor.next) {
      ++cursor.pos;
    } else {
      ++cursor.recent;
    }
    cursor.next = HostNext(cursor.host, &cursor.pos, cursor.recent);
    if (IsEntry(cursor.next)) {
      entered.push_back(cursor);
      std::push_heap(entered.begin(), entered.end(), later);
    }
    (void)Candidate(page, eligible, value, value_bound, &best);
  }
  return best;
}

}  // namespace freshd::sched
