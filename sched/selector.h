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
// page's bound (a tree of the open hosts, one node a host). A host the gate
// closes leaves the host order until the time the gate gave (a min-heap of
// reopening times) or until Reopen(host) (the caller's in-flight slot
// freed): a close and a reopen cost O(log hosts). A min-heap rather than a
// timer wheel: reopening times are arbitrary doubles (Crawl-delay,
// Retry-After, back-off of hours), only the due ones are popped, once a
// Select, and a heap keeps them exact and in order with no tick to choose.
// An open host is asked once a Select, when a scan first reaches it; a
// closed one is trusted until its time or Reopen.
//
// Two scans, the same order (bound, then page id), so the same choice:
// - the global scan (the default) walks the top of the global order: about
//   the first 1/64 of the pages' entries (at least 16,384), copied out in
//   order at each rebuild, merged with the re-indexed pages above its
//   floor. Beside each entry it remembers what a scan valued it at (lazy
//   re-valuation, set_value_growth) and whether it was found dead, so the
//   thousands of candidates a Select passes over at 10M pages (bounds over
//   a horizon are loose; values at the margin are close) cost a sequential
//   read each, not a few cache misses. Closed hosts' pages are skipped one
//   by one. When it runs past the top with its best below the floor, the
//   per-host merge goes on from its best.
// - the per-host merge: the open hosts' orders merged by a heap of the hosts
//   entered, so no closed host's page is read; each candidate costs its
//   host's cursor (a few random reads). Chosen for 32 Selects after a global
//   scan that walked mostly closed hosts' pages (many hosts closed by
//   politeness).
// Measured at 10M pages on 100k hosts (bench/scale/README.md): the merge
// alone ~300 pages/s, the global scan with its remembered values ~1,500.
// UpdateAll rebuilds the order (grouped by host with a counting sort, each
// host's pages sorted). The next order can be staged while the current one
// serves (BeginStage .. FinishStage): bounds are given a slice at a time,
// then grouped, sorted and the host order built a slice at a time, so that
// no call costs more than its slice; the swap is O(pages changed since they
// were staged) plus the global scan's top, rebuilt from the new order in
// one O(pages) pass (not yet sliced). Staging keeps 12 more bytes a page;
// the host of each page costs 4; the top 32 bytes an entry (~0.5 a page).
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

  // How BestByValue walks the order (kAuto: the global scan, the per-host
  // merge for the next 32 Selects after a global scan that walked mostly
  // closed hosts' pages); `top_entries`: the size of the top (0: the larger
  // of 16,384 and one in 64 of the pages). Both scans choose the same page.
  enum class Scan { kAuto, kGlobal, kPerHost };
  struct Options {
    Scan scan = Scan::kAuto;
    size_t top_entries = 0;
  };

  Selector() = default;
  explicit Selector(Options options) : options_(options) {}
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

  // Lazy re-valuation inside the global scan: when set, a page valued by a
  // scan at `now` is remembered beside its top_ entry with `growth(p)`, an
  // upper bound of dValue/dnow while the page stays as it is, and a later
  // scan passes it over without reading anything else about it while
  // value + 1e-12 |value| + growth (now' - now) is not above the running
  // best (the same test as a value_bound). Any Update of the page, or
  // ForgetValues, drops what was remembered.
  void set_value_growth(ValueFn growth) { value_growth_ = std::move(growth); }
  void ForgetValues();

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
  // Global scans that ran past the top undecided (the per-host merge went
  // on from their best).
  uint64_t scan_fallbacks() const { return scan_fallbacks_; }

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
  // The global scan (see top_): the best over top_ and recent_top_,
  // starting from `best`; false when it ran past top_ undecided.
  bool ScanTop(double now, const EligibleFn& eligible, const ValueFn& value,
               const ValueFn* value_bound, const HostGate* gate,
               std::optional<Choice>* best);
  // The per-host merge from `best`.
  std::optional<Choice> ScanHosts(double now, const EligibleFn& eligible,
                                  const ValueFn& value,
                                  const ValueFn* value_bound,
                                  const HostGate* gate,
                                  std::optional<Choice> best);
  // A candidate on an open host: if eligible and not passed over by
  // value_bound, valued (the best if it beats it); its value, or nullopt.
  std::optional<double> Candidate(PageId page, const EligibleFn& eligible,
                                  const ValueFn& value,
                                  const ValueFn* value_bound,
                                  std::optional<Choice>* best);
  void BuildTop();
  // Drops top_'s dead entries.
  void CompactTop();
  // top_'s index of the entry, or top_.size().
  size_t TopSlot(const BoundEntry& entry) const;
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
  // The global scan: the first entries of the sorted_ order through
  // top_last_, as of the last rebuild (BuildTop: UpdateAll, FinishStage,
  // MergeRecent), from top_live_ on (those before are dead: their pages are
  // in recent_, for good until the rebuild); beside each, what a scan
  // remembered of it (its value, when, and growth bound; time +inf: found
  // dead); and recent_'s entries at or above top_floor_ (top_last_'s
  // bound), in bound order. A scan walks these in one merged order,
  // skipping closed hosts' pages one by one; it decides while its best is at
  // or above top_floor_ when top_ runs out, else the per-host merge goes on
  // from its best.
  struct TopMemo {
    double value;  // NaN: none
    double time;
    double growth;
  };
  Options options_;
  std::vector<BoundEntry> top_;
  std::vector<TopMemo> top_memo_;
  size_t top_live_ = 0;
  // top_'s last entry as built (kNoEntry: top_ held every sorted_ entry);
  // recent_top_ keeps recent_'s entries with bounds at or above its bound.
  BoundEntry top_last_ = kNoEntry;
  float top_floor_ = std::numeric_limits<float>::infinity();
  std::set<BoundEntry, ByBoundDesc> recent_top_;
  ValueFn value_growth_;
  uint32_t per_host_selects_ = 0;  // kAuto: Selects left on the merge
  // The last global scan's entries walked, dead ones and closed hosts' ones.
  size_t last_walked_ = 0;
  size_t last_dead_ = 0;
  size_t last_closed_skips_ = 0;
  uint64_t scan_fallbacks_ = 0;

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
