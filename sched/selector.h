// The greedy choice behind every token: among the pages the caller says are
// eligible now, on hosts its gate says are open, the overdue page with the
// earliest deadline if any (the max_interval floor and policy clamps), else
// the page of highest value.
//
// Exact, not approximate: pages are indexed by an upper bound of their value
// (descending) and by deadline (min-heap, lazily invalidated). A selection
// scans pages in upper-bound order and stops as soon as the next bound
// cannot beat the best value found, so only pages whose bound exceeds the
// winner's value are evaluated (every page when bounds are +inf). Values may
// move arbitrarily between calls as long as each page's bound holds; Update()
// must be called whenever a bound or deadline changes. Bounds are kept as
// floats rounded up (still upper bounds, so the choice is the same; only
// the scan order of pages whose bounds round together follows the page id).
//
// Indexed by open host (issue 43): the bound order is kept per host (a flat
// array grouped by host, each host's pages in bound order, 8 bytes a page,
// plus a small tree of the pages Update()d since, folded into the array when
// it outgrows an eighth of it), and the hosts are ordered by their best
// page's bound (a tree of the open hosts, one node a host). A scan merges
// the open hosts' orders (a heap of the hosts it has entered), which is the
// global order restricted to open hosts: the same pages in the same order,
// so the same choice. A host the gate closes leaves the host order until the
// time the gate gave (a min-heap of reopening times) or until Reopen(host)
// (the caller's in-flight slot freed), so no scan walks its pages: a close
// and a reopen cost O(log hosts). A min-heap rather than a timer wheel:
// reopening times are arbitrary doubles (Crawl-delay, Retry-After, back-off
// of hours), only the due ones are popped, once a Select, and a heap keeps
// them exact and in order with no tick to choose; at 1e5 hosts its log is 17.
// An open host is asked once a Select, when a scan first reaches it; a
// closed one is trusted until its time or Reopen.
// UpdateAll rebuilds the order (grouped by host with a counting sort, each
// host's pages sorted). The next order can be staged while the current one
// serves (BeginStage .. FinishStage): bounds are given a slice at a time,
// then grouped, sorted and the host order built a slice at a time, so that
// no call costs more than its slice; the swap is O(pages changed since they
// were staged). Staging keeps 12 more bytes a page; the host of each page
// costs 4.
// Not thread-safe (the scheduler's owner thread).

#ifndef FRESHD_SCHED_SELECTOR_H_
#define FRESHD_SCHED_SELECTOR_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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

// When a host may next be contacted, as a gate answers: at or before the
// selection's `now`, open; later, closed until then; +inf, closed until
// Selector::Reopen(host). A struct, not a bare double, so that a gate
// returning bool (open or not) does not convert to a time silently.
struct HostOpening {
  double at;
};
inline constexpr HostOpening kHostOpen{
    -std::numeric_limits<double>::infinity()};
inline constexpr HostOpening kHostClosedUntilReopened{
    std::numeric_limits<double>::infinity()};

class Selector {
 public:
  struct Choice {
    PageId page;
    Priority priority;
  };
  using EligibleFn = std::function<bool(PageId)>;
  using ValueFn = std::function<double(PageId)>;
  using HostGate = std::function<HostOpening(HostId)>;

  Selector() = default;
  // Not copyable: it keeps iterators into its own recent_ (moves keep them
  // valid).
  Selector(const Selector&) = delete;
  Selector& operator=(const Selector&) = delete;
  Selector(Selector&&) = default;
  Selector& operator=(Selector&&) = default;

  // Makes room for page ids < pages; new pages start unindexed.
  void Resize(size_t pages);

  // (Re)indexes `page` of `host` (a page's host never changes): upper bound
  // of its value (+inf allowed, NaN treated as +inf) and absolute deadline
  // (+inf: none).
  void Update(PageId page, double upper_bound, double deadline,
              HostId host = 0);
  // The bound a -inf upper bound rounds to: a removed page's
  // (Scheduler::Remove). No live page's bound is this low (values are
  // >= 0), so a scan that reaches it has seen every live page and stops.
  static constexpr float kRemovedBound = std::numeric_limits<float>::lowest();

  // The same for every page in [0, pages) at once, index(p) giving {upper
  // bound, deadline} and host_of(p) its host (when given; else the host it
  // was indexed with, or 0): a counting sort by host and a sort of each
  // host's pages instead of a tree search per page (the scheduler's
  // periodic refresh of all bounds).
  using IndexFn = std::function<std::pair<double, double>(PageId)>;
  using HostFn = std::function<HostId(PageId)>;
  void UpdateAll(size_t pages, const IndexFn& index,
                 const HostFn* host_of = nullptr);

  // The best eligible page at `now`; nullopt when no indexed page is
  // eligible. A page is eligible when `eligible(p)` and its host is open:
  // `gate(h)` (nullptr: every host open) is asked at most once a Select for
  // a host not closed already, when the selection first reaches one of its
  // pages; a host it closes (HostOpening::at > now) is left out until then,
  // or until Reopen(h). `value(p)` is called only for eligible p with bound
  // above the running best; `eligible(p)` for candidates in scan order. When
  // given, `value_bound(p)` is a second, cheaper upper bound of value(p) now
  // (+inf: none), asked for such a candidate before its value: a page whose
  // value_bound is not above the running best is passed over unvalued (it
  // could not win), so the choice is the same as without it.
  std::optional<Choice> Select(double now, const EligibleFn& eligible,
                               const ValueFn& value,
                               const ValueFn* value_bound = nullptr,
                               const HostGate* gate = nullptr);

  // The eligible page of highest value with deadlines ignored: what a token
  // would buy by value alone (the scheduler's implied threshold when
  // deadlines decide). Same contract for `value`, `eligible`, `value_bound`
  // and `gate` as Select (a host asked by the Select before it is not asked
  // again).
  std::optional<Choice> BestByValue(double now, const EligibleFn& eligible,
                                    const ValueFn& value,
                                    const ValueFn* value_bound = nullptr,
                                    const HostGate* gate = nullptr);
  // Without a gate or time (every host not closed is open).
  std::optional<Choice> BestByValue(const EligibleFn& eligible,
                                    const ValueFn& value,
                                    const ValueFn* value_bound = nullptr) {
    return BestByValue(-std::numeric_limits<double>::infinity(), eligible,
                       value, value_bound, nullptr);
  }

  // `host` may be open again before the time its gate last gave (e.g. an
  // in-flight slot freed): it rejoins the host order and is asked again
  // when a selection reaches it. O(log hosts); nothing if it is not closed.
  void Reopen(HostId host);
  // Every closed host rejoins (a gate whose answers are not times: asked
  // anew each Select). O(closed hosts).
  void ReopenAll();
  // Hosts closed now (left out of the host order).
  size_t closed_hosts() const { return closed_count_; }

  // Staged rebuild, the same index UpdateAll(pages, index) would build, in
  // slices: BeginStage(); StageNext(bound, host) for pages 0, 1, 2... in
  // order; Restage(page, bound) whenever a page's next bound changes after
  // it was staged (Staged(page); every page past the staged ones once the
  // bounds are ended); EndStageBounds(); OrderStage(count) until it returns
  // true; FinishStage() swaps the staged order in (recent_ then holds the
  // restaged pages). Deadlines are not staged (Update keeps them current).
  // UpdateAll and BeginStage discard a staging in progress.
  enum class Stage { kNone, kBounds, kOrder, kReady };
  Stage stage() const { return stage_; }
  void BeginStage();
  void StageNext(double upper_bound, HostId host = 0);
  size_t staged_pages() const { return stage_pages_; }
  bool Staged(PageId page) const {
    return stage_ == Stage::kBounds ? page < stage_pages_
                                    : stage_ != Stage::kNone;
  }
  void Restage(PageId page, double upper_bound);
  void EndStageBounds();
  // Orders up to about `count` more staged pages; true when all are.
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
  using BoundEntry = std::pair<float, PageId>;  // 8 bytes
  struct ByBoundDesc {
    bool operator()(const BoundEntry& a, const BoundEntry& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  // recent_'s entries: by host, then in bound order.
  struct RecentEntry {
    HostId host;
    BoundEntry entry;
  };
  struct ByHostThenBound {
    bool operator()(const RecentEntry& a, const RecentEntry& b) const {
      return a.host != b.host ? a.host < b.host
                              : ByBoundDesc()(a.entry, b.entry);
    }
  };
  using RecentSet = std::set<RecentEntry, ByHostThenBound>;
  using RecentIterator = RecentSet::const_iterator;
  // A host's place in a scan: its next sorted_ entry and next recent_ one.
  struct HostCursor {
    BoundEntry next;
    HostId host;
    size_t pos;
    RecentIterator recent;
  };
  struct ReopenEntry {
    double at;
    HostId host;
    uint32_t stamp;
    bool operator>(const ReopenEntry& o) const {
      return at != o.at ? at > o.at : host > o.host;
    }
  };
  static constexpr BoundEntry kNoEntry{std::numeric_limits<float>::quiet_NaN(),
                                       0};
  static bool IsEntry(const BoundEntry& e) { return !std::isnan(e.first); }

  std::optional<Choice> SelectOverdue(double now, const EligibleFn& eligible,
                                      const HostGate* gate);
  void SetDeadline(PageId page, double deadline);
  void MergeRecent();
  void CompactHeap();
  void GrowHosts(HostId host);
  // Is `host` open at `now` (asking the gate once a Select; closing it if
  // the gate says so)?
  bool HostOpen(HostId host, double now, const HostGate* gate);
  void Close(HostId host, double at);
  // Hosts whose reopening time has come rejoin the order.
  void ReopenDue(double now);
  // The host's first entry (sorted_ from pos, recent_ from it), or kNoEntry;
  // advances pos past dead entries.
  BoundEntry HostNext(HostId host, size_t* pos, RecentIterator recent) const;
  // The host's first entry in recent_, or recent_.end() when it has none.
  // O(1).
  RecentIterator RecentBegin(HostId host) const;
  void InsertRecent(HostId host, const BoundEntry& entry);
  // Erases the host's entry if recent_ holds it.
  void EraseRecent(HostId host, const BoundEntry& entry);
  void ClearRecent();
  // Recomputes host_key_[host] and its place in open_.
  void RefreshHostKey(HostId host);
  // Builds sorted_/host_begin_ from per-page bounds (grouped by host).
  void Group(const std::vector<float>& bounds, size_t pages,
             std::vector<BoundEntry>* out, std::vector<size_t>* begin);
  void SortHost(HostId host, std::vector<BoundEntry>* order,
                const std::vector<size_t>& begin);
  void RebuildHostOrder();
  size_t HostBegin(HostId h) const {
    return h + 1 < host_begin_.size() ? host_begin_[h] : sorted_.size();
  }
  size_t HostEnd(HostId h) const {
    return h + 1 < host_begin_.size() ? host_begin_[h + 1] : sorted_.size();
  }

  // `upper_bound` as the smallest float not below it (NaN: +inf).
  static float RoundUp(double upper_bound);

  std::vector<float> bound_;      // per page, rounded up; NaN = not indexed
  std::vector<double> deadline_;  // per page
  std::vector<uint32_t> stamp_;   // per page, bumped by Update
  std::vector<HostId> host_;      // per page
  // The bound order: pages as of the last rebuild, grouped by host (host
  // h's in [host_begin_[h], host_begin_[h + 1]), in bound order), whose
  // entry is live while the page is not in recent_; and the pages
  // Update()d since.
  std::vector<BoundEntry> sorted_;
  std::vector<size_t> host_begin_;  // hosts + 1 entries
  RecentSet recent_;
  std::vector<uint8_t> in_recent_;  // per page: 1 when its entry is in recent_
  // Per host: its entries in recent_ and, while it has any, the first of
  // them, so that a scan entering a host finds its place in recent_ in
  // O(1) instead of searching a tree of up to an eighth of the pages (~20
  // cache misses a host at 10M pages, 18% of the scheduler thread).
  std::vector<uint32_t> recent_per_host_;
  std::vector<RecentIterator> recent_first_;
  // Per host: its first live sorted_ entry (dead ones before it skipped),
  // its best entry (the head of its order; kNoEntry: no page), whether it
  // is closed, the stamp of its live reopen_ entry, and the Select that
  // last asked its gate.
  std::vector<size_t> first_live_;
  std::vector<BoundEntry> host_key_;
  std::vector<uint8_t> closed_;
  std::vector<uint32_t> close_stamp_;
  std::vector<uint64_t> asked_in_;
  size_t closed_count_ = 0;
  uint64_t select_count_ = 1;
  // The open hosts with pages, by host_key_ (the host is its page's).
  std::set<BoundEntry, ByBoundDesc> open_;
  // Reopening times of hosts closed until a time (min-heap, lazily
  // invalidated by close_stamp_).
  std::vector<ReopenEntry> reopen_;
  // A min-heap by deadline (std::push_heap/pop_heap with std::greater),
  // lazily invalidated: an entry whose stamp is not its page's is stale.
  std::vector<DeadlineEntry> deadlines_;
  size_t last_evaluations_ = 0;
  size_t last_passed_over_ = 0;

  // The staged order (see BeginStage): bounds, then grouping (the count of
  // each host's staged pages, then placing), then each host's sort.
  Stage stage_ = Stage::kNone;
  enum class OrderPhase { kPlace, kSort };
  OrderPhase order_phase_ = OrderPhase::kPlace;
  std::vector<float> next_bound_;   // per page, staged or restaged
  size_t stage_pages_ = 0;          // pages [0, stage_pages_) staged
  std::vector<size_t> next_begin_;  // per host, then its fill position
  std::vector<size_t> next_fill_;
  std::vector<BoundEntry> next_sorted_;
  size_t order_cursor_ = 0;  // pages placed
  HostId sort_cursor_ = 0;   // hosts sorted
  // Pages whose next_sorted_ entry is stale or missing: they join recent_.
  std::vector<PageId> restaged_;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_SELECTOR_H_
