#include "sim/trace_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "sched/math_constants.h"
#include "sched/scheduler.h"
#include "sim/oracle_truth.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

using sched::kInf;
// The oracle's Δ of a page that never changes within the run: the value
// functions divide by Δ (negligible against any budget).
constexpr double kMinOracleRate = 1e-12;

// A uniform number in [0, 1) from (page, index, salt): SplitMix64.
double Uniform01(uint64_t page, uint64_t index, uint64_t salt) {
  uint64_t z = page * 0x9E3779B97F4A7C15ULL ^
               (index + 1) * 0xBF58476D1CE4E5B9ULL ^
               salt * 0x94D049BB133111EBULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

struct Signal {
  double at;          // arrival, relative to t0
  double changed_at;  // claimed change time, relative to t0
  uint32_t page;
  bool operator<(const Signal& o) const {
    return at < o.at || (at == o.at && page < o.page);
  }
};

// One page during the replay; times relative to t0.
struct ReplayPage {
  double created = 0, deleted = kInf;  // clipped to the run
  double fetched = 0;     // of the copy; meaningless while never fetched
  double stale_from = 0;  // first change after `fetched` (kInf: none)
  size_t next = 0;        // index of the first change after `fetched`
  bool known = false;     // in the scheduler
  bool ever_fetched = false;
  sched::PageId id = 0;
};

class Replay {
 public:
  Replay(const Trace& trace, const SimOptions& o, const TraceSignals& sig,
         std::optional<uint64_t> seed, double t0, double end,
         sched::Scheduler& sched, OracleTruth& truth)
      : t_(trace),
        o_(o),
        sig_(sig),
        seed_(seed),
        t0_(t0),
        end_(end),
        sched_(sched),
        truth_(truth) {
    warm_ =
        o.warmup_days >= 0 ? std::min(o.warmup_days * kDay, end) : 0.1 * end;
  }

  Result<SimResult> Go() {
    const std::clock_t cpu0 = std::clock();
    const size_t n = t_.pages.size();
    pages_.resize(n);
    std::vector<uint32_t> later;  // created after t0, by creation time
    std::vector<uint32_t> order(n);
    for (uint32_t p = 0; p < n; ++p) order[p] = p;
    if (seed_) {  // Fisher-Yates, portable: the same order everywhere
      for (uint32_t i = n; i > 1; --i) {
        const auto j = static_cast<uint32_t>(Uniform01(*seed_, i, 7) * i);
        std::swap(order[i - 1], order[std::min(j, i - 1)]);
      }
    }
    for (const uint32_t p : order) {
      const TracePage& tp = t_.pages[p];
      ReplayPage& s = pages_[p];
      s.created = std::max(0.0, tp.created - t0_);
      s.deleted = std::min(end_, tp.deleted - t0_);
      if (!(s.deleted > s.created) || s.created >= end_) continue;
      const double lo = std::max(s.created, warm_);
      if (s.deleted > lo) weight_ += tp.importance * (s.deleted - lo);
      ++r_.total.pages;
      r_.total.weight += tp.importance;
      // Changes counted within the run and the lifetime.
      auto first = std::upper_bound(tp.changes.begin(), tp.changes.end(),
                                    t0_ + s.created);
      auto last = std::upper_bound(tp.changes.begin(), tp.changes.end(),
                                   t0_ + s.deleted);
      r_.changes += static_cast<uint64_t>(std::max<ptrdiff_t>(0, last - first));
      if (s.created > 0) {
        later.push_back(p);
      } else {
        if (Status st = Add(p, 0); !st.ok()) return st;
        sched::FetchedObs fresh;  // starts fetched: a change at t0 is in it
        sched_.Observe({s.id, 0.0, std::move(fresh)});
        SetCopy(p, 0);
      }
    }
    if (sig_.recall > 0) DrawSignals();
    size_t next_signal = 0;
    std::sort(later.begin(), later.end(), [&](uint32_t a, uint32_t b) {
      return pages_[a].created < pages_[b].created ||
             (pages_[a].created == pages_[b].created && a < b);
    });
    size_t next_new = 0;
    double now = 0, wake = 0;
    uint64_t selections = 0, evaluations = 0;
    const double progress_step = end_ / 100;
    double next_progress = o_.progress ? progress_step : kInf;
    const double retry =
        std::max(sched_.policy().due_only() ? 60.0 : 1.0, o_.min_interval_s);
    while (true) {
      const double t_new =
          next_new < later.size() ? pages_[later[next_new]].created : kInf;
      const double t_try =
          sched_.size() == 0 ? kInf : std::max(sched_.NextTokenTime(now), wake);
      const double t_sig =
          next_signal < signals_.size() ? signals_[next_signal].at : kInf;
      if (std::min({t_new, t_try, t_sig}) > end_) break;
      if (now >= next_progress) {
        o_.progress(now / kDay);
        next_progress = now + progress_step;
      }
      if (t_sig < t_new && t_sig <= t_try) {
        now = t_sig;
        const Signal& g = signals_[next_signal++];
        const ReplayPage& s = pages_[g.page];
        if (s.known && now <= s.deleted) {
          sched::SignalObs obs;
          obs.changed_at = g.changed_at;
          sched_.Observe({s.id, now, obs});
          ++r_.signals;
          wake = std::min(wake, now);
        }
        continue;
      }
      if (t_new <= t_try) {
        now = t_new;
        const uint32_t p = later[next_new++];
        if (Status st = Add(p, now); !st.ok()) return st;
        ReplayPage& s = pages_[p];
        s.fetched = s.stale_from = now;  // stale (absent) until fetched
        wake = std::min(wake, now);
        continue;
      }
      now = t_try;
      auto chosen =
          sched_.Select(now, [](sched::HostId) { return sched::kHostOpen; });
      ++selections;
      evaluations += sched_.last_evaluations();
      if (chosen) {
        Crawl(page_of_[*chosen], now);
        wake = now;
      } else {
        wake = now + retry;
      }
    }
    for (uint32_t p = 0; p < n; ++p) {
      if (pages_[p].known) Account(p, end_);
    }
    r_.measured_days = (end_ - warm_) / kDay;
    if (weight_ > 0) {
      r_.total.fresh /= weight_;
      r_.total.age_days /= weight_ * kDay;
    }
    r_.total.staleness = std::numeric_limits<double>::quiet_NaN();
    r_.overdue_crawls = sched_.overdue_selections();
    r_.mean_evaluations =
        selections > 0 ? static_cast<double>(evaluations) / selections : 0;
    r_.cpu_seconds = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    return r_;
  }

 private:
  Status Add(uint32_t p, double now) {
    const TracePage& tp = t_.pages[p];
    Result<sched::PageId> id = sched_.AddUrl(tp.host, tp.importance);
    if (!id.ok()) return id.status();
    ReplayPage& s = pages_[p];
    s.id = *id;
    s.known = true;
    if (page_of_.size() <= *id) page_of_.resize(*id + 1);
    page_of_[*id] = p;
    if (o_.oracle) {
      const double delta = std::max(
          kMinOracleRate, TraceMeanRate(tp, t0_ + s.created, t0_ + s.deleted));
      sched::DivergenceModel m;
      m.static_share = 0;
      m.churn_share = 1;
      m.churn_rate = delta;
      m.scroll_k = 1;
      m.scroll_rate = 0;
      truth_.Set(*id, sched::PageParams{delta, tp.importance}, m);
      sched_.ModelChanged(*id);
    }
    (void)now;
    return Status::OK();
  }

  // Every signal of the run (TraceSignals), sorted by arrival.
  void DrawSignals() {
    const double delay = sig_.delay_days * kDay;
    const double extra = (1 - sig_.precision) / sig_.precision;
    for (uint32_t p = 0; p < pages_.size(); ++p) {
      const ReplayPage& s = pages_[p];
      if (!(s.deleted > s.created) || s.created >= end_) continue;
      const std::vector<double>& c = t_.pages[p].changes;
      auto it = std::upper_bound(c.begin(), c.end(), t0_ + s.created);
      for (; it != c.end() && *it - t0_ <= s.deleted; ++it) {
        const uint64_t i = static_cast<uint64_t>(it - c.begin());
        if (Uniform01(p, i, 1) >= sig_.recall) continue;
        const double at = *it - t0_;
        signals_.push_back({at + delay * Uniform01(p, i, 2), at, p});
        const double falses = std::floor(extra) +
                              (Uniform01(p, i, 3) < extra - std::floor(extra));
        for (int k = 0; k < static_cast<int>(falses); ++k) {
          const double t =
              s.created + (s.deleted - s.created) * Uniform01(p, i, 4 + k);
          signals_.push_back({t + delay * Uniform01(p, i, 1000 + k), t, p});
        }
      }
    }
    std::sort(signals_.begin(), signals_.end());
  }

  // The copy is the version at `at`: fresh until the next change.
  void SetCopy(uint32_t p, double at) {
    ReplayPage& s = pages_[p];
    const std::vector<double>& c = t_.pages[p].changes;
    s.next = static_cast<size_t>(
        std::upper_bound(c.begin() + static_cast<ptrdiff_t>(s.next), c.end(),
                         t0_ + at) -
        c.begin());
    s.fetched = at;
    s.stale_from = s.next < c.size() ? c[s.next] - t0_ : kInf;
    s.ever_fetched = true;
  }

  // Adds the copy's interval [fetched, to] to the metrics.
  void Account(uint32_t p, double to) {
    const ReplayPage& s = pages_[p];
    const double lo = std::max({s.fetched, warm_, s.created});
    const double hi = std::min(to, s.deleted);
    if (!(hi > lo)) return;
    const double w = t_.pages[p].importance;
    const double c = s.stale_from;
    if (c > lo) r_.total.fresh += w * (std::min(hi, c) - lo);
    if (c < hi) {
      const double a = std::max(lo, c);
      r_.total.age_days += w * 0.5 * ((hi - c) * (hi - c) - (a - c) * (a - c));
    }
  }

  void Crawl(uint32_t p, double now) {
    ReplayPage& s = pages_[p];
    Account(p, now);
    sched::FetchedObs f;
    f.changed = s.ever_fetched && s.stale_from <= now;
    sched_.Observe({s.id, now, std::move(f)});
    SetCopy(p, now);
    ++r_.crawls_total;
    if (now >= warm_) ++r_.total.crawls;
  }

  const Trace& t_;
  const SimOptions& o_;
  const TraceSignals& sig_;
  const std::optional<uint64_t> seed_;
  const double t0_, end_;
  std::vector<Signal> signals_;
  double warm_ = 0;
  sched::Scheduler& sched_;
  OracleTruth& truth_;
  std::vector<ReplayPage> pages_;
  std::vector<uint32_t> page_of_;  // scheduler id -> trace page
  double weight_ = 0;              // Σμ·(counted time in the window)
  SimResult r_;
};

}  // namespace

Result<TraceReplayResult> ReplayTrace(const Trace& trace,
                                      const TraceReplayOptions& options) {
  const SimOptions& o = options.sim;
  if (trace.pages.empty()) return Status::InvalidArgument("sim: empty trace");
  if (!(o.rate_per_day > 0) || !std::isfinite(o.rate_per_day)) {
    return Status::InvalidArgument("sim: rate must be > 0");
  }
  if (!o.rules.empty() || o.clustered() || !o.rate_changes.empty() ||
      o.oracle_posterior || o.distorts_rates() || o.oracle_rate) {
    return Status::InvalidArgument(
        "sim: --trace replays with one scheduler and no rules, shards, rate "
        "changes or oracle diagnostics");
  }
  if (o.rate_model != "gamma" && o.rate_model != "mixture") {
    return Status::InvalidArgument("sim: rate model must be gamma or mixture");
  }
  TraceReplayResult out;
  out.start = std::isnan(options.start) ? trace.first_time : options.start;
  if (std::isnan(out.start)) out.start = 0;  // no times: a static trace
  double days = o.days;
  if (!(days > 0)) {
    if (std::isnan(trace.last_time) || !(trace.last_time > out.start)) {
      return Status::InvalidArgument(
          "sim: the trace spans no time after its start; give --days");
    }
    days = (trace.last_time - out.start) / kDay;
  }
  if (!std::isfinite(days) || days > 1e6) {
    return Status::InvalidArgument("sim: days out of range");
  }
  out.days = days;
  OracleTruth truth;  // --oracle: each page's mean rate in the run
  auto scheduler = sched::Scheduler::Create(SchedulerOptionsFor(o), &truth);
  if (!scheduler.ok()) return scheduler.status();
  const TraceSignals& sig = options.signals;
  if (!(sig.recall >= 0 && sig.recall <= 1) ||
      !(sig.precision > 0 && sig.precision <= 1) ||
      (sig.recall > 0 && sig.precision < 0.01) ||
      !(sig.delay_days >= 0 && sig.delay_days <= kMaxSimDelayDays)) {
    return Status::InvalidArgument(
        "sim: trace signals need recall in [0, 1], precision in [0.01, 1] "
        "and a delay in [0, 365] days");
  }
  Replay replay(trace, o, sig, options.seed, out.start, days * kDay,
                **scheduler, truth);
  Result<SimResult> r = replay.Go();
  if (!r.ok()) return r.status();
  out.result = std::move(*r);
  return out;
}

std::string TraceReplayToJson(const Trace& trace,
                              const TraceReplayOptions& options,
                              const TraceReplayResult& out) {
  using nlohmann::json;
  const SimOptions& o = options.sim;
  const SimResult& r = out.result;
  json j;
  j["pages"] = r.total.pages;
  j["freshness"] = r.total.fresh;
  j["age_days"] = r.total.age_days;
  j["fragment_staleness"] = nullptr;  // changes have no size in a trace
  j["crawls"] = r.total.crawls;
  j["crawls_per_day"] =
      r.measured_days > 0 ? r.total.crawls / r.measured_days : 0;
  j["web"] = nullptr;
  j["trace"] = {
      {"pages", trace.pages.size()},
      {"hosts", trace.hosts.size()},
      {"changes", trace.changes},
      {"start", out.start},
      {"first_time",
       std::isnan(trace.first_time) ? json(nullptr) : json(trace.first_time)},
      {"last_time",
       std::isnan(trace.last_time) ? json(nullptr) : json(trace.last_time)}};
  j["policy"] = o.policy;
  j["oracle"] = o.oracle;
  j["oracle_rate"] = false;
  if (o.rate_model != "gamma") j["rate_model"] = o.rate_model;
  if (o.explore) j["explore"] = true;
  j["seed"] = options.seed ? json(*options.seed) : json(nullptr);
  j["rate_per_day"] = o.rate_per_day;
  j["days"] = out.days;
  j["measured_days"] = r.measured_days;
  j["max_interval_days"] = o.max_interval_days;
  j["crawls_total"] = r.crawls_total;
  j["overdue_crawls"] = r.overdue_crawls;
  j["changes"] = r.changes;
  j["signals"] = r.signals;
  if (options.signals.recall > 0) {
    j["trace_signals"] = {{"recall", options.signals.recall},
                          {"precision", options.signals.precision},
                          {"delay_days", options.signals.delay_days}};
  }
  j["continuous_optimum"] = nullptr;
  j["estimated_freshness"] = nullptr;
  j["least_host_crawl_share"] = nullptr;
  j["host_rate_spread"] = nullptr;
  j["host_rate_weight"] = nullptr;
  j["per_class"] = nullptr;
  j["selector_evaluations_per_selection"] = r.mean_evaluations;
  j["rate_log_error"] = nullptr;
  j["cpu_seconds"] = r.cpu_seconds;
  return j.dump(2);
}

}  // namespace freshd::sim
