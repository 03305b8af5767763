// Dispatcher: when a fetch starts. It owns what it needs of the fetches in
// flight until they finish (FetchTable: start time, on the network or being
// parsed), the per-host slots (HostSlots), the wake-ups and the accounting
// of what held the rate back (/status "limited_by"). Which pages are in
// flight is the scheduler's record (PageState::kInFlight, set by Select,
// cleared by the page's observation after Finish), not the dispatcher's:
// a fetch's slot in the table is noted beside that flag
// (Scheduler::SetFetchSlot), so the dispatcher keeps no map by page.
// It dispatches the moment a token, a connection slot, room in the parse
// and write queues and an eligible page on an open host exist — on a
// completion, a host reopening, a token falling due, new work — never on a
// tick: Run() selects pages (Scheduler::Select) and hands each to `fetch`
// (the engine's network hand-off), then arms one timer for the earliest
// of the next token, the next host reopening and a periodic look.
// While hosts contend for the connections (or for the parse pool: dispatch
// paused on its queue), one host holds at most its fair share of them
// (FairShare: max-min over the hosts active, weighted by the share of
// their fetches that found a page and by their share of the parse pool's
// time), not every slot politeness allows it.
// The stages are read through Stages (queue depths, cluster ownership):
// the dispatcher reaches into no other part.
// Time: `now` is the scheduler's clock (Unix s), `gate_now` the fetcher's
// (steady s); Run(now, gate_now) takes them from the caller (a test passes
// its own), TryDispatch() from the clocks.
// Thread: the engine's (scheduler's) thread, the one running `io`.

#ifndef FRESHD_DAEMON_DISPATCHER_H_
#define FRESHD_DAEMON_DISPATCHER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "daemon/fair_share.h"
#include "daemon/fetch_table.h"
#include "daemon/host_slots.h"
#include "fetch/outcome.h"
#include "sched/scheduler.h"

namespace freshd::daemon {

// What held the crawl rate back, as /status "limited_by" names it; kIdle:
// nothing was due (every page fetched within its interval); kScheduler: the
// connections were all taken, most of them by fetches that had ended and
// waited for this (the scheduler's) thread to take their results.
enum class Limit {
  kNone,
  kNetwork,
  kPoliteness,
  kParse,
  kWrite,
  kBudget,
  kIdle,
  kScheduler
};
inline constexpr int kLimits = 8;
const char* LimitName(Limit limit);

// The share of the budget at which the achieved rate counts as reaching it.
inline constexpr double kBudgetReachedShare = 0.95;

// /status "limited_by": the stage with the most (decayed) `seconds` held
// back, except that politeness or idle time while the achieved rate
// (`rate_actual`, pages/s) is at least kBudgetReachedShare of the budget
// (`rate_target`) is the budget's: hosts closed while tokens waited only
// delayed fetches the bucket paid out later (issue #40). Pure.
[[nodiscard]] Limit LimitedBy(const double (&seconds)[kLimits],
                              double rate_actual, double rate_target);

// Seconds spent limited by each Limit, decayed with a half-life of 10 s.
// Note(limit, now) says that from `now` on, `limit` holds the rate.
class LimitMeter {
 public:
  explicit LimitMeter(double start) : last_at_(start) {}
  void Note(Limit limit, double now);
  Limit last() const { return last_; }
  // Replaces the limit in force since the last Note (what it turned out to
  // be, known only later).
  void Reattribute(Limit limit) { last_ = limit; }
  const double (&seconds() const)[kLimits] { return seconds_; }

 private:
  double seconds_[kLimits] = {};
  Limit last_ = Limit::kNone;
  double last_at_;
};

class Dispatcher {
 public:
  struct Options {
    size_t max_connections = 1;      // [fetch] max_connections
    uint64_t queue_bytes = 1 << 30;  // [engine] queue_bytes
    int max_in_flight_per_host = 1;  // [politeness]
  };
  // What the dispatcher reads of the other stages, and how it starts one.
  struct Stages {
    std::function<uint64_t()> parse_bytes;  // waiting for the parse pool
    std::function<uint64_t()> write_bytes;  // waiting for the writer
    std::function<uint64_t()> fetching;     // on the network thread now
    // Whether `host` is this node's to fetch (null: every host).
    std::function<bool(sched::HostId)> owned;
    // Whether an operator holds `host` (paused or blocked; null: none): it
    // is closed in the selection until the caller reopens it
    // (Scheduler::ReopenHost) on release.
    std::function<bool(sched::HostId)> held;
    // Starts the fetch of `page` (selected at `now`).
    std::function<void(sched::PageId, double now)> fetch;
  };

  Dispatcher(boost::asio::io_context& io, sched::Scheduler* sched,
             Options options, Stages stages, double now);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void Start() { started_ = true; }
  // A restart (before Start): the fetcher's gate restored these hosts' next
  // allowed starts and holds every host until `hold_all_until` (times on
  // its clock, NetworkStage::Now). Mirrored in the host slots, so no page
  // is handed to the fetcher to wait out a delay there holding a
  // connection while other hosts could use it.
  void HoldHosts(const std::vector<std::pair<sched::HostId, double>>& hosts,
                 double hold_all_until);
  // No dispatch from now on; the wake-up is cancelled.
  void Stop();

  // Dispatches now (the clocks' times), and arms the next wake-up.
  void TryDispatch();
  void Run(double now, double gate_now);

  // The network is done with `page`: its host slot is free, and the host's
  // gate next opens at `next_allowed` (fetcher's clock). The caller then
  // dispatches (TryDispatch).
  void NetworkDone(sched::PageId page, double next_allowed);
  // The fetch of `page` ended with `outcome`: whether it found a page (2xx,
  // 304, a redirect) or not (an error, a 404, a body cut off) is its
  // host's weight in the fair share; a request never sent (robots, the
  // address guard, a bad URL) counts neither way.
  void NoteOutcome(sched::PageId page, fetch::OutcomeClass outcome);
  // A body of `host` (a page, a sitemap, a feed) took `cpu_s` seconds of
  // the parse pool: its share of the pool's time weighs in the fair share
  // (ParseCost).
  void NoteParseTime(sched::HostId host, double cpu_s) {
    fair_.NoteParseTime(host, cpu_s);
  }
  // The fetch of `page` is over (its result taken). Returns when it started
  // (Unix s; 0 when it was not in flight). A slot still held is freed at
  // `gate_now`. The caller then observes the page's result, which ends its
  // in-flight state in the scheduler.
  double Finish(sched::PageId page, double gate_now);

  // When the fetch of `page` started (Unix s); nullopt when the dispatcher
  // holds none (never dispatched, or finished).
  std::optional<double> StartedAt(sched::PageId page) const;

  // Fetches dispatched and not finished: outside a completion (between
  // Finish and the observation that follows it), the number of pages the
  // scheduler has in flight.
  size_t in_flight() const { return fetches_.size(); }
  uint64_t on_network() const { return fetches_.on_network(); }
  uint64_t dispatched_total() const { return dispatched_total_; }
  const HostSlots& slots() const { return slots_; }
  const FairShare& fair_share() const { return fair_; }
  const LimitMeter& limits() const { return meter_; }
  // The deadline of the wake-up armed (Unix s; +inf: none).
  double wake_at() const { return wake_at_; }

 private:
  // The slot of `page`'s fetch, read beside its in-flight flag; nullopt
  // when the dispatcher holds no fetch of it.
  std::optional<FetchTable::Slot> SlotOf(sched::PageId page) const;
  // kScheduler or kNetwork, for when every connection slot is taken.
  Limit SlotsFullLimit() const;
  void WakeAt(double unix_time, double now);

  boost::asio::io_context& io_;
  sched::Scheduler* const sched_;
  const Options options_;
  const Stages stages_;
  HostSlots slots_;
  FairShare fair_;  // sets slots_'s cap
  LimitMeter meter_;
  boost::asio::steady_timer wake_;
  double wake_at_ = std::numeric_limits<double>::infinity();  // Unix s
  FetchTable fetches_;
  uint64_t dispatched_total_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_DISPATCHER_H_
