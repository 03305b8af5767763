#include "daemon/dispatcher.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>
#include <limits>

#include "base/clock.h"
#include "daemon/network_stage.h"

namespace freshd::daemon {
namespace {

// Dispatches per turn of the scheduler's thread before it yields to the
// completions queued behind (it goes on right after them).
constexpr int kMaxDispatchPerTurn = 256;
// With no token due and no host reopening known, the dispatcher still looks
// again this often (pages leave their back-off or min_interval).
constexpr double kIdleRecheckS = 0.25;
constexpr double kLimitHalfLifeS = 10;

}  // namespace

const char* LimitName(Limit limit) {
  switch (limit) {
    case Limit::kNetwork:
      return "network";
    case Limit::kPoliteness:
      return "politeness";
    case Limit::kParse:
      return "parse";
    case Limit::kWrite:
      return "write";
    case Limit::kBudget:
      return "budget";
    case Limit::kIdle:
      return "idle";
    case Limit::kScheduler:
      return "scheduler";
    case Limit::kNone:
      break;
  }
  return "none";
}

Limit LimitedBy(const double (&seconds)[kLimits], double rate_actual,
                double rate_target) {
  Limit limited_by = Limit::kNone;
  double most = 0;
  for (int i = 1; i < kLimits; ++i) {
    if (seconds[i] > most) {
      most = seconds[i];
      limited_by = static_cast<Limit>(i);
    }
  }
  if ((limited_by == Limit::kPoliteness || limited_by == Limit::kIdle) &&
      rate_target > 0 && rate_actual >= kBudgetReachedShare * rate_target) {
    return Limit::kBudget;
  }
  return limited_by;
}

void LimitMeter::Note(Limit limit, double now) {
  const double dt = std::max(0.0, now - last_at_);
  const double decay = std::exp2(-dt / kLimitHalfLifeS);
  for (double& s : seconds_) s *= decay;
  seconds_[static_cast<int>(last_)] += dt;
  last_ = limit;
  last_at_ = now;
}

Dispatcher::Dispatcher(boost::asio::io_context& io, sched::Scheduler* sched,
                       Options options, Stages stages, double now)
    : io_(io),
      sched_(sched),
      options_(options),
      stages_(std::move(stages)),
      slots_(options.max_in_flight_per_host),
      fair_(options.max_connections, options.max_in_flight_per_host),
      meter_(now),
      wake_(io) {
  slots_.set_share(&fair_);
}

Dispatcher::~Dispatcher() { *alive_ = false; }

void Dispatcher::Stop() {
  stopped_ = true;
  wake_.cancel();
}

// A slot is freed on this thread (NetworkDone), so a fetch the network
// thread has ended holds one until this thread catches up: full slots, most
// of them held so, are this thread's limit, not the network's.
Limit Dispatcher::SlotsFullLimit() const {
  const uint64_t on_network = fetches_.on_network();
  const uint64_t fetching = std::min<uint64_t>(stages_.fetching(), on_network);
  return on_network > 0 && (on_network - fetching) * 2 >= on_network
             ? Limit::kScheduler
             : Limit::kNetwork;
}

void Dispatcher::HoldHosts(
    const std::vector<std::pair<sched::HostId, double>>& hosts,
    double hold_all_until) {
  slots_.HoldAll(hold_all_until);
  for (const auto& [host, next_allowed] : hosts) {
    slots_.HoldUntil(host, next_allowed);
  }
}

void Dispatcher::TryDispatch() { Run(UnixNow(), NetworkStage::Now()); }

void Dispatcher::Run(double now, double gate_now) {
  if (!started_ || stopped_) return;
  // The time since the slots were found full goes to whoever held them up:
  // it is known only now, when this thread runs again.
  if (meter_.last() == Limit::kNetwork) meter_.Reattribute(SlotsFullLimit());
  // A host closed at an old cap reopens at its next Finish.
  fair_.Roll(gate_now, [this](sched::HostId h) { return slots_.in_flight(h); });
  const uint64_t write_bytes = stages_.write_bytes();
  Limit limit = Limit::kNone;
  int dispatched = 0;
  bool host_closed = false;  // did politeness turn a candidate away?
  // When a host may go, in this clock: a host with its slots full is closed
  // until Finish frees one (ReopenHost); another node's is looked at again
  // after the idle recheck (ownership moves without a call here).
  const sched::Scheduler::HostGate gate =
      [&](sched::HostId h) -> sched::HostOpening {
    if (stages_.owned && !stages_.owned(h)) return {now + kIdleRecheckS};
    if (stages_.held && stages_.held(h)) return sched::kHostClosedUntilReopened;
    const double at = slots_.OpensAt(h);
    if (at <= gate_now) return sched::kHostOpen;
    host_closed = true;
    if (at == std::numeric_limits<double>::infinity()) {
      // Held back by the fair share, not its own allowance: it would take
      // more of the connections, so they are still contended.
      if (slots_.in_flight(h) < options_.max_in_flight_per_host) {
        fair_.NoteContended();
      }
      return sched::kHostClosedUntilReopened;
    }
    fair_.NoteDelayed(h);
    return {now + (at - gate_now)};
  };
  for (;;) {
    if (fetches_.on_network() >= options_.max_connections) {
      fair_.NoteContended();
      limit = SlotsFullLimit();
      break;
    }
    if (stages_.parse_bytes() > options_.queue_bytes / 2) {
      fair_.NoteContended();  // hosts wait for the parse pool
      limit = Limit::kParse;
      break;
    }
    if (write_bytes > options_.queue_bytes / 2) {
      limit = Limit::kWrite;
      break;
    }
    if (dispatched >= kMaxDispatchPerTurn) {
      // Let the completions queued behind run, then go on.
      boost::asio::post(io_, [this, alive = alive_] {
        if (*alive) TryDispatch();
      });
      meter_.Note(Limit::kNone, now);
      return;
    }
    std::optional<sched::PageId> page = sched_->Select(now, gate);
    if (!page) {
      // Hosts closed by earlier Selects are left out, not asked again.
      host_closed = host_closed || sched_->closed_hosts() > 0;
      limit = sched_->NextTokenTime(now) > now ? Limit::kBudget
              : host_closed                    ? Limit::kPoliteness
                                               : Limit::kIdle;
      break;
    }
    const sched::HostId host = sched_->page(*page).host;
    sched_->SetFetchSlot(*page, fetches_.Add(*page, now));
    ++dispatched_total_;
    slots_.Start(host);
    fair_.NoteHeld(host, slots_.in_flight(host));
    stages_.fetch(*page, now);
    ++dispatched;
  }
  meter_.Note(limit, now);
  // Wake-ups besides completions: the next token, the next host reopening;
  // and a periodic look for pages leaving their back-off.
  double at = now + kIdleRecheckS;
  if (limit == Limit::kBudget) at = std::min(at, sched_->NextTokenTime(now));
  const double opening = slots_.NextOpening(gate_now);
  if (std::isfinite(opening)) at = std::min(at, now + (opening - gate_now));
  WakeAt(at, now);
}

void Dispatcher::WakeAt(double unix_time, double now) {
  // An earlier wake-up already armed covers this one.
  if (wake_at_ > now && wake_at_ <= unix_time) return;
  wake_at_ = unix_time;
  wake_.expires_after(std::chrono::microseconds(
      static_cast<int64_t>(std::clamp(unix_time - now, 0.0, 1.0) * 1e6)));
  wake_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (ec || !*alive) return;
    wake_at_ = std::numeric_limits<double>::infinity();
    TryDispatch();
  });
}

// The slot is read whether or not the page is still marked in flight: a
// fetch holds its connection and host slot until it ends, whatever was
// observed of its page meanwhile.
std::optional<FetchTable::Slot> Dispatcher::SlotOf(sched::PageId page) const {
  if (page >= sched_->size()) return std::nullopt;
  const FetchTable::Slot slot = sched_->page(page).fetch_slot;
  if (!fetches_.Holds(slot, page)) return std::nullopt;
  return slot;
}

std::optional<double> Dispatcher::StartedAt(sched::PageId page) const {
  const std::optional<FetchTable::Slot> slot = SlotOf(page);
  if (!slot) return std::nullopt;
  return fetches_.started_unix(*slot);
}

void Dispatcher::NetworkDone(sched::PageId page, double next_allowed) {
  const std::optional<FetchTable::Slot> slot = SlotOf(page);
  if (!slot || !fetches_.on_network(*slot)) return;
  fetches_.LeaveNetwork(*slot);
  const sched::HostId host = sched_->page(page).host;
  slots_.Finish(host, next_allowed);
  sched_->ReopenHost(host);  // a slot freed: asked again
}

void Dispatcher::NoteOutcome(sched::PageId page, fetch::OutcomeClass outcome) {
  using O = fetch::OutcomeClass;
  if (page >= sched_->size() || outcome == O::kRobotsDenied ||
      outcome == O::kBlockedAddress || outcome == O::kBadUrl) {
    return;  // never sent
  }
  fair_.NoteOutcome(sched_->page(page).host, outcome == O::kOk ||
                                                 outcome == O::kNotModified ||
                                                 outcome == O::kRedirect);
}

double Dispatcher::Finish(sched::PageId page, double gate_now) {
  const std::optional<FetchTable::Slot> slot = SlotOf(page);
  if (!slot) return 0;
  const double started_unix = fetches_.started_unix(*slot);
  if (fetches_.on_network(*slot)) {  // the slot's release is behind us
    const sched::HostId host = sched_->page(page).host;
    slots_.Finish(host, gate_now);
    sched_->ReopenHost(host);
  }
  fetches_.Remove(*slot);
  return started_unix;
}

}  // namespace freshd::daemon
