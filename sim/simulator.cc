#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>

#include "sched/allocation.h"
#include "sched/math_constants.h"
#include "sched/rate_shares.h"
#include "sched/scheduler.h"
#include "sched/special_functions.h"
#include "sim/oracle_truth.h"
#include "sim/page_process.h"
#include "sim/population_posterior.h"
#include "sim/random.h"

namespace freshd::sim {
namespace {

using sched::kInf;
// --oracle-posterior: the prior's particles are another draw of the web.
constexpr uint64_t kPosteriorSeedSalt = 0x9e3779b97f4a7c15;

enum EventKind : uint8_t {
  kChurnEvent = 0,
  kScrollEvent = 1,
  kTrueSignal = 2,
  kFalseSignal = 3,
  kRateChange = 4,
  kSnapshot = 5,
  kEstimate = 6,      // sample the scheduler's estimated freshness
  kExchange = 7,      // the shards' λ exchange
  kBudgetChange = 8,  // SimOptions::budget_changes[index]
  kShardLoss = 9,     // SimOptions::shard_losses[index]
};

// A node of the simulated cluster: a scheduler of its own hosts' pages.
struct Shard {
  // The truth its scheduler reads in oracle modes (SimOptions::oracle,
  // oracle_rate): declared first, so it outlives the scheduler.
  std::unique_ptr<OracleTruth> truth = std::make_unique<OracleTruth>();
  std::unique_ptr<sched::Scheduler> sched;
  std::vector<uint32_t> pages;  // local page id -> the web's page
  double share = 0;             // its budget, pages per second
  double wake = 0;              // no selection tried before
  bool live = true;
  sched::LambdaMeter lambda;  // what it publishes at each exchange
};

struct Event {
  double t;
  uint32_t index;  // page, rate change or snapshot index
  EventKind kind;
  double origin = 0;  // a true signal: the time of its change
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    return index > o.index;
  }
};

struct PageSim {
  Version live, copy;
  double seg_start = 0;
  double stale_since = -1;
  std::deque<std::pair<double, Version>> fetches;  // recent (time, version)
  double last_change = 0;     // time of the latest region event (0: none yet)
  double copy_modified = -1;  // Last-Modified served with our copy
};

class Run {
 public:
  Run(const WebModel& model, const SimOptions& options,
      std::vector<Shard>& shards, PopulationPosterior* posterior)
      : m_(model), o_(options), shards_(shards), posterior_(posterior) {
    end_ = o_.days * kDay;
    double warm = o_.warmup_days >= 0 ? o_.warmup_days : 0.1 * o_.days;
    warm_ = std::min(warm, o_.days) * kDay;
  }

  Result<SimResult> Go();

  // The scheduler's change-rate estimate of page p (per second).
  double EstimatedRate(uint32_t p) const {
    return shards_[page_shard_[p]].sched->page(local_[p]).rate;
  }

 private:
  // Go's steps, in order: the per-page state and first fetches; the
  // scheduled events (returns the snapshot times); the event loop; the
  // metrics at the end.
  Status SetUpPages();
  std::vector<double> ScheduleEvents();
  Status Loop();
  Status HandleEvent(const Event& e, double now);
  void SelectOn(size_t shard, double now);
  void Finish(const std::vector<double>& snap_times);
  uint64_t selections_ = 0, evaluations_ = 0;
  sched::Scheduler& S(uint32_t p) { return *shards_[page_shard_[p]].sched; }
  uint32_t L(uint32_t p) const { return local_[p]; }
  // The live shard of `host`: rendezvous hashing over the live shards, so a
  // loss moves only the dead shards' hosts.
  uint32_t HostShard(uint32_t host) const;
  // Adds page p to shard `s` (a fresh page, or `from` a dead shard's
  // scheduler with its state); the page's truth to the shard's OracleTruth.
  Status Place(uint32_t p, uint32_t s, const sched::Scheduler* from,
               uint32_t from_local);
  // Budget events and the exchange (SimOptions::shards).
  void SetShare(Shard& sh, double share, double now);
  void Exchange(double now, bool step);
  void ScaleBudget(double factor, double now);
  Status LoseShards(int count, double now);
  void Settle();
  void Integrate(uint32_t p, double now);
  void Push(double t, uint32_t index, EventKind kind, double origin = 0) {
    if (t <= end_) queue_.push({t, index, kind, origin});
  }
  void OnChange(uint32_t p, Region r, double now);
  void Crawl(uint32_t p, double now);
  // --oracle-posterior: hands the scheduler page p's posterior.
  void UpdatePosterior(uint32_t p);
  // Adds the μ-weighted mean of the scheduler's P(fresh) at `now`.
  void SampleEstimate(double now);

  const WebModel& m_;
  const SimOptions& o_;
  std::vector<Shard>& shards_;
  PopulationPosterior* posterior_;  // --oracle-posterior, else nullptr
  std::vector<uint32_t> page_shard_, local_;        // by page
  std::vector<sched::PageParams> truth_;            // the oracle's, by page
  double total_rate_ = 0;                           // the cluster's, per second
  std::vector<std::pair<double, double>> spreads_;  // (t, spread) per exchange
  uint64_t exchange_stride_ = 1;
  double end_ = 0, warm_ = 0;
  std::vector<PageSim> pages_;
  std::vector<EventStream> churn_, scroll_;
  std::vector<FalseSignalStream> false_;
  std::vector<double> host_next_;
  std::vector<uint64_t> host_crawls_;  // measured crawls per host
  // By page: its rule's index in SimOptions::rules + 1 (0: none); empty
  // without rules.
  std::vector<uint8_t> rule_of_;
  // The measured window's intervals of ruled pages.
  void NoteInterval(uint32_t p, double from, double to, bool closed);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  SimResult r_;
  double fresh_all_ = 0;  // Σμ·fresh time over [0, now], unclipped
  std::vector<double> snapshots_;
  std::vector<uint64_t> snapshot_crawls_;
  double weight_ = 0;
  double estimate_sum_ = 0;  // Σ over SampleEstimate calls
  int estimate_count_ = 0;
};

void Run::Integrate(uint32_t p, double now) {
  PageSim& s = pages_[p];
  const SimPage& sp = m_.pages[p];
  bool fresh = s.copy == s.live;
  if (fresh) fresh_all_ += sp.importance * (now - s.seg_start);
  double a = std::max(s.seg_start, warm_), b = std::min(now, end_);
  s.seg_start = now;
  if (!(b > a)) return;
  double w = sp.importance, dt = b - a;
  SimMetrics* ms[2] = {&r_.total, &r_.per_class[sp.cls]};
  for (SimMetrics* x : ms) {
    if (fresh) {
      x->fresh += w * dt;
    } else {
      x->staleness += w * VersionDivergence(sp, s.copy, s.live) * dt;
      double z = s.stale_since;
      x->age_days += w * 0.5 * ((b - z) * (b - z) - (a - z) * (a - z));
    }
  }
}

void Run::OnChange(uint32_t p, Region r, double now) {
  Integrate(p, now);
  PageSim& s = pages_[p];
  EventStream& es = r == kChurn ? churn_[p] : scroll_[p];
  uint64_t index = es.count();
  ++(r == kChurn ? s.live.churn : s.live.scroll);
  es.Advance();
  Push(es.next(), p, r == kChurn ? kChurnEvent : kScrollEvent);
  if (s.stale_since < 0) s.stale_since = now;
  s.last_change = now;
  ++r_.changes;
  if (m_.pages[p].recall > 0) {
    SignalDraw d = TrueSignal(m_, p, r, index);
    if (d.emitted) Push(now + d.delay, p, kTrueSignal, now);
  }
}

void Run::Crawl(uint32_t p, double now) {
  Integrate(p, now);
  PageSim& s = pages_[p];
  sched::FetchedObs f;
  f.changed = !(s.copy == s.live);
  sched::Scheduler& sched = S(p);
  if (sched.policy().uses_profiles()) {
    for (double base : sched.ProfileBaseTimes(L(p))) {
      for (const auto& [t, v] : s.fetches) {
        if (t == base) {
          f.base_divergence.push_back(
              VersionDivergence(m_.pages[p], v, s.live));
          break;
        }
      }
    }
  }
  if (m_.pages[p].last_modified) {  // exact, as a well-behaved server's
    f.last_modified = s.last_change;
    f.previous_last_modified = s.copy_modified;
    s.copy_modified = s.last_change;
  }
  if (!rule_of_.empty() && rule_of_[p] > 0) {
    NoteInterval(p, S(p).page(L(p)).last_fetch, now, true);
  }
  if (posterior_ != nullptr) {  // the interval the scheduler observes
    const sched::PageState& st = sched.page(L(p));
    posterior_->Observe(p, now - st.last_fetch, st.signals, f.changed);
  }
  sched.Observe({L(p), now, std::move(f)});
  if (posterior_ != nullptr) UpdatePosterior(p);
  s.copy = s.live;
  s.stale_since = -1;
  s.fetches.emplace_back(now, s.live);
  if (s.fetches.size() > static_cast<size_t>(o_.history) + 2) {
    s.fetches.pop_front();
  }
  host_next_[m_.pages[p].host] = now + m_.host_delay_s[m_.pages[p].host];
  ++r_.crawls_total;
  if (now >= warm_) {
    ++r_.total.crawls;
    ++r_.per_class[m_.pages[p].cls].crawls;
    ++host_crawls_[m_.pages[p].host];
  }
}

void Run::NoteInterval(uint32_t p, double from, double to, bool closed) {
  if (to < warm_) return;  // (an interval ending in the window counts)
  SimRuleResult& x = r_.rules[rule_of_[p] - 1];
  const double gap = to - from;
  if (closed) {
    ++x.crawls;
    if (x.shortest_interval < 0 || gap < x.shortest_interval) {
      x.shortest_interval = gap;
    }
  }
  x.longest_interval = std::max(x.longest_interval, gap);
  const double max = o_.rules[rule_of_[p] - 1].rule.max_interval;
  if (max > 0 && gap > max + kRuleSlackS) ++x.late_intervals;
}

void Run::UpdatePosterior(uint32_t p) {
  const double mu = m_.pages[p].importance;
  Shard& sh = shards_[page_shard_[p]];
  sh.truth->Set(L(p), posterior_->Mean(p, mu), m_.TrueModel(p));
  sh.sched->ModelChanged(L(p));
  if (o_.oracle_posterior_draws > 0) {
    std::vector<sched::WeightedParams> mixture;
    for (const sched::PageParams& d :
         posterior_->Draws(p, mu, o_.oracle_posterior_draws)) {
      mixture.push_back({d, 1.0});
    }
    if (sh.truth->SetMixture(L(p), std::move(mixture))) {
      sh.sched->ModelChanged(L(p));
    }
  }
}

void Run::SampleEstimate(double now) {
  if (m_.pages.empty()) return;
  if (shards_.size() == 1) {
    estimate_sum_ += shards_[0].sched->Summarize(now).estimated_freshness;
  } else {  // each shard's mean, weighted by its Σμ
    double sum = 0;
    for (const Shard& sh : shards_) {
      if (!sh.live || sh.pages.empty()) continue;
      double w = 0;
      for (uint32_t p : sh.pages) w += m_.pages[p].importance;
      sum += w * sh.sched->Summarize(now).estimated_freshness;
    }
    estimate_sum_ += sum / weight_;
  }
  ++estimate_count_;
}

uint32_t Run::HostShard(uint32_t host) const {
  if (shards_.size() == 1) return 0;
  constexpr uint64_t kShardStream = 60;  // page_process uses 10–40
  uint32_t best = 0;
  uint64_t best_hash = 0;
  bool found = false;
  for (uint32_t s = 0; s < shards_.size(); ++s) {
    if (!shards_[s].live) continue;
    const uint64_t h = HashKey(host, s, kShardStream);
    if (!found || h > best_hash) {
      best = s;
      best_hash = h;
      found = true;
    }
  }
  return best;
}

Status Run::Place(uint32_t p, uint32_t s, const sched::Scheduler* from,
                  uint32_t from_local) {
  Shard& sh = shards_[s];
  Result<sched::PageId> id = Status::Internal("sim: page not placed");
  if (from == nullptr) {
    id = sh.sched->AddUrl(m_.pages[p].host, m_.pages[p].importance);
  } else {  // its state travels, as the page stream carries it
    std::optional<sched::ProfileSet> profiles;
    if (const sched::ProfileSet* ps = from->Profiles(from_local)) {
      profiles = *ps;
    }
    std::optional<sched::RecentSignals> recent;
    if (const sched::RecentSignals* rs = from->RecentSignalsOf(from_local)) {
      recent = *rs;
    }
    id = sh.sched->RestorePage(from->Snapshot(from_local), std::move(profiles),
                               std::move(recent),
                               from->RateMemoryOf(from_local));
  }
  if (!id.ok()) return id.status();
  if (!rule_of_.empty() && rule_of_[p] > 0) {
    if (Status st = sh.sched->SetPageRule(*id, rule_of_[p]); !st.ok()) {
      return st;
    }
  }
  page_shard_[p] = s;
  local_[p] = *id;
  sh.pages.push_back(p);
  sh.truth->Set(*id, truth_[p], m_.TrueModel(p));
  sh.sched->ModelChanged(*id);
  if (posterior_ != nullptr) UpdatePosterior(p);
  return Status::OK();
}

void Run::SetShare(Shard& sh, double share, double now) {
  sh.share = share;
  sh.sched->SetRate(share, now);
}

void Run::Exchange(double now, bool step) {
  std::vector<sched::ShareMember> members;
  std::vector<size_t> index;  // member -> shard
  char name[32];
  for (size_t s = 0; s < shards_.size(); ++s) {
    const Shard& sh = shards_[s];
    if (!sh.live) continue;
    std::snprintf(name, sizeof name, "s%04zu", s);
    // λ as the daemon publishes it: the mean marginal value since the last
    // exchange (0 with nothing to fetch, unknown before the first).
    const double lambda = step ? shards_[s].lambda.Update(
                                     sh.pages.size(), sh.sched->marginal_sum(),
                                     sh.sched->marginal_count())
                               : sh.lambda.lambda();
    members.push_back({name, lambda, sh.share});
    index.push_back(s);
  }
  std::vector<double> next;
  if (step && o_.exchange_period_s > 0) {
    next = sched::NextRateShares(members, total_rate_, o_.share_options);
  } else {  // no exchange: equal shares among the live
    next.assign(members.size(), total_rate_ / members.size());
  }
  for (size_t i = 0; i < members.size(); ++i) {
    SetShare(shards_[index[i]], next[i], now);
  }
  if (!step) return;
  const double spread = sched::LambdaSpread(members);
  spreads_.emplace_back(now, sched::LambdaDispersion(members));
  if (r_.exchanges++ % exchange_stride_ != 0 ||
      r_.trajectory.size() >= static_cast<size_t>(o_.trajectory_samples)) {
    return;
  }
  SimResult::Sample sample{now / kDay, spread, spreads_.back().second, {}, {}};
  sample.lambda.assign(shards_.size(), -1);
  sample.share.assign(shards_.size(), 0);
  for (size_t i = 0; i < members.size(); ++i) {
    sample.lambda[index[i]] = members[i].lambda;
    sample.share[index[i]] = next[i] * kDay;
  }
  r_.trajectory.push_back(std::move(sample));
}

void Run::ScaleBudget(double factor, double now) {
  total_rate_ *= factor;
  for (Shard& sh : shards_) {
    if (sh.live) SetShare(sh, sh.share * factor, now);
  }
}

Status Run::LoseShards(int count, double now) {
  // The `count` live shards with the most pages die (the loss that moves
  // the most); their pages, state and all, go to the survivors by the
  // hosts' rendezvous hashes, and so do their hosts' pooled statistics.
  std::vector<uint32_t> live;
  for (uint32_t s = 0; s < shards_.size(); ++s) {
    if (shards_[s].live) live.push_back(s);
  }
  std::stable_sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) {
    return shards_[a].pages.size() > shards_[b].pages.size();
  });
  if (count >= static_cast<int>(live.size())) {
    return Status::InvalidArgument("sim: a shard loss leaves no shard");
  }
  std::vector<uint32_t> dead(live.begin(), live.begin() + count);
  for (uint32_t d : dead) shards_[d].live = false;
  for (uint32_t d : dead) {
    Shard& from = shards_[d];
    std::vector<uint32_t> hosts;
    for (uint32_t l = 0; l < from.pages.size(); ++l) {
      const uint32_t p = from.pages[l];
      const uint32_t host = m_.pages[p].host;
      Status placed = Place(p, HostShard(host), from.sched.get(), l);
      if (!placed.ok()) return placed;
      if (hosts.empty() || hosts.back() != host) hosts.push_back(host);
      ++r_.pages_moved;
    }
    for (uint32_t host : hosts) {
      if (const sched::HostStats* stats = from.sched->hosts().Find(host)) {
        shards_[HostShard(host)].sched->mutable_hosts().Restore(host, *stats);
      }
    }
    from.pages.clear();
    SetShare(from, 0, now);
  }
  // The survivors split the whole budget at once (the daemon's next
  // heartbeat), by the rule when there is an exchange.
  Exchange(now, o_.exchange_period_s > 0);
  return Status::OK();
}

void Run::Settle() {
  const double kWithin = std::log(1.1);
  for (size_t e = 0; e < r_.events.size(); ++e) {
    SimResult::Event& ev = r_.events[e];
    const double from = ev.day * kDay;
    const double to =
        e + 1 < r_.events.size() ? r_.events[e + 1].day * kDay : kInf;
    double settled = -1;
    for (const auto& [t, spread] : spreads_) {  // (the dispersion)
      if (t < from || t >= to) continue;
      const bool within = spread <= kWithin;
      if (within && ev.first_days < 0) ev.first_days = (t - from) / kDay;
      if (!within) {
        settled = -1;
      } else if (settled < 0) {
        settled = t;
      }
    }
    ev.settle_days = settled >= 0 ? (settled - from) / kDay : -1;
  }
}

Result<SimResult> Run::Go() {
  std::clock_t cpu0 = std::clock();
  if (Status s = SetUpPages(); !s.ok()) return s;
  const std::vector<double> snap_times = ScheduleEvents();
  if (Status s = Loop(); !s.ok()) return s;
  Finish(snap_times);
  r_.cpu_seconds = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  return r_;
}

Status Run::SetUpPages() {
  size_t n = m_.pages.size();
  r_.per_class.resize(m_.spec.classes.size());
  pages_.resize(n);
  host_next_.assign(m_.spec.hosts, 0);
  host_crawls_.assign(m_.spec.hosts, 0);
  churn_.reserve(n);
  scroll_.reserve(n);
  false_.reserve(n);
  const bool distort = o_.distorts_rates();
  std::vector<double> host_log_mean;
  if (distort) {
    std::vector<double> count(m_.spec.hosts, 0);
    host_log_mean.assign(m_.spec.hosts, 0);
    for (uint32_t p = 0; p < n; ++p) {
      const double delta = m_.TrueParams(p).delta;
      if (!(delta > 0)) continue;
      host_log_mean[m_.pages[p].host] += std::log(delta);
      ++count[m_.pages[p].host];
    }
    for (size_t h = 0; h < count.size(); ++h) {
      if (count[h] > 0) host_log_mean[h] /= count[h];
    }
  }
  if (!o_.rules.empty()) {
    std::vector<sched::PageRule> table;
    for (const SimRule& r : o_.rules) table.push_back(r.rule);
    for (Shard& sh : shards_) {  // every shard knows every rule
      if (Status s = sh.sched->SetRules(table); !s.ok()) return s;
    }
    r_.rules.resize(o_.rules.size());
    rule_of_.assign(n, 0);
    for (uint32_t p = 0; p < n; ++p) {
      const std::string& cls = m_.spec.classes[m_.pages[p].cls].name;
      for (size_t i = 0; i < o_.rules.size(); ++i) {
        if (o_.rules[i].cls == cls) {
          rule_of_[p] = static_cast<uint8_t>(i + 1);
          ++r_.rules[i].pages;
          break;
        }
      }
    }
  }
  page_shard_.assign(n, 0);
  local_.assign(n, 0);
  truth_.resize(n);
  for (uint32_t p = 0; p < n; ++p) {
    sched::PageParams truth = m_.TrueParams(p);
    if (distort) {
      truth.delta = DistortedRate(m_.seed, p, truth.delta,
                                  host_log_mean[m_.pages[p].host],
                                  o_.oracle_rate_slope, o_.oracle_rate_noise);
    }
    truth_[p] = truth;
    Status placed = Place(p, HostShard(m_.pages[p].host), nullptr, 0);
    if (!placed.ok()) return placed;
    sched::FetchedObs first;  // start fetched, fresh
    if (m_.pages[p].last_modified) {
      first.last_modified = pages_[p].copy_modified = 0;
    }
    S(p).Observe({L(p), 0.0, std::move(first)});
    pages_[p].fetches.emplace_back(0.0, Version{});
    churn_.emplace_back(m_, p, kChurn);
    scroll_.emplace_back(m_, p, kScroll);
    false_.emplace_back(m_, p);
    Push(churn_[p].next(), p, kChurnEvent);
    Push(scroll_[p].next(), p, kScrollEvent);
    Push(false_[p].next(), p, kFalseSignal);
    const SimPage& sp = m_.pages[p];
    weight_ += sp.importance;
    r_.per_class[sp.cls].weight += sp.importance;
    ++r_.per_class[sp.cls].pages;
  }
  r_.total.weight = weight_;
  r_.total.pages = n;
  return Status::OK();
}

std::vector<double> Run::ScheduleEvents() {
  // Rate-change segments: snapshot freshness over each segment's 2nd half.
  std::vector<double> bounds = {0};
  for (size_t i = 0; i < o_.rate_changes.size(); ++i) {
    Push(o_.rate_changes[i].day * kDay, static_cast<uint32_t>(i), kRateChange);
    bounds.push_back(o_.rate_changes[i].day * kDay);
  }
  bounds.push_back(end_);
  std::vector<double> snap_times;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    snap_times.push_back(0.5 * (bounds[i] + bounds[i + 1]));
    snap_times.push_back(bounds[i + 1]);
  }
  snapshots_.assign(snap_times.size(), 0);
  snapshot_crawls_.assign(snap_times.size(), 0);
  for (size_t i = 0; i < snap_times.size(); ++i) {
    queue_.push(
        {std::min(snap_times[i], end_), static_cast<uint32_t>(i), kSnapshot});
  }

  // The cluster: its budget and events; the exchange's first step one
  // period in.
  total_rate_ = o_.rate_per_day / kDay;
  for (size_t i = 0; i < o_.budget_changes.size(); ++i) {
    Push(o_.budget_changes[i].day * kDay, static_cast<uint32_t>(i),
         kBudgetChange);
  }
  for (size_t i = 0; i < o_.shard_losses.size(); ++i) {
    Push(o_.shard_losses[i].day * kDay, static_cast<uint32_t>(i), kShardLoss);
  }
  if (o_.exchange_period_s > 0) {
    const double exchanges = std::floor(end_ / o_.exchange_period_s);
    exchange_stride_ = static_cast<uint64_t>(std::max(
        1.0, std::ceil(exchanges / std::max(1, o_.trajectory_samples))));
    r_.events.push_back({"start", 0, 0});
    Push(o_.exchange_period_s, 0, kExchange);
  }

  const int samples = std::max(0, o_.estimate_samples);
  for (int i = 0; i < samples && end_ > warm_; ++i) {
    Push(warm_ + (i + 0.5) * (end_ - warm_) / samples, 0, kEstimate);
  }
  return snap_times;
}

Status Run::Loop() {
  double now = 0;
  const double progress_step = end_ / 100;
  double next_progress = o_.progress ? progress_step : kInf;
  while (true) {
    // The shard whose next token (or retry) comes first; empty and dead
    // shards never select (an empty one's tokens are lost, as a node's
    // with no pages would be).
    size_t pick = 0;
    double t_try = kInf;
    for (size_t i = 0; i < shards_.size(); ++i) {
      Shard& sh = shards_[i];
      if (!sh.live || sh.pages.empty()) continue;
      const double t = std::max(sh.sched->NextTokenTime(now), sh.wake);
      if (t < t_try) {
        t_try = t;
        pick = i;
      }
    }
    double t_ev = queue_.empty() ? kInf : queue_.top().t;
    if (std::min(t_ev, t_try) > end_) break;
    if (now >= next_progress) {
      o_.progress(now / kDay);
      next_progress = now + progress_step;
    }
    if (t_ev <= t_try) {
      Event e = queue_.top();
      queue_.pop();
      now = e.t;
      if (Status s = HandleEvent(e, now); !s.ok()) return s;
      continue;
    }
    now = t_try;
    SelectOn(pick, now);
  }
  return Status::OK();
}

Status Run::HandleEvent(const Event& e, double now) {
  const size_t n = m_.pages.size();
  switch (e.kind) {
    case kChurnEvent:
      OnChange(e.index, kChurn, now);
      break;
    case kScrollEvent:
      OnChange(e.index, kScroll, now);
      break;
    case kTrueSignal:
    case kFalseSignal: {
      sched::SignalObs signal;
      if (m_.pages[e.index].signal_lastmod) {  // a false one claims now
        signal.changed_at = e.kind == kTrueSignal ? e.origin : now;
      }
      S(e.index).Observe({L(e.index), now, signal});
      ++r_.signals;
      if (e.kind == kFalseSignal) {
        false_[e.index].Advance();
        Push(false_[e.index].next(), e.index, kFalseSignal);
      }
      break;
    }
    case kRateChange:
      if (shards_.size() == 1) {
        shards_[0].sched->SetRate(o_.rate_changes[e.index].rate_per_day / kDay,
                                  now);
      } else {
        const double rate = o_.rate_changes[e.index].rate_per_day / kDay;
        r_.events.push_back({"budget_change", now / kDay, rate / total_rate_});
        ScaleBudget(rate / total_rate_, now);
      }
      break;
    case kBudgetChange:
      r_.events.push_back(
          {"budget_change", now / kDay, o_.budget_changes[e.index].factor});
      ScaleBudget(o_.budget_changes[e.index].factor, now);
      break;
    case kShardLoss: {
      const int count = o_.shard_losses[e.index].count;
      r_.events.push_back(
          {"shard_loss", now / kDay, static_cast<double>(count)});
      Status lost = LoseShards(count, now);
      if (!lost.ok()) return lost;
      break;
    }
    case kExchange:
      Exchange(now, true);
      Push(now + o_.exchange_period_s, 0, kExchange);
      break;
    case kEstimate:
      SampleEstimate(now);
      break;
    case kSnapshot:
      for (uint32_t p = 0; p < n; ++p) Integrate(p, now);
      snapshots_[e.index] = fresh_all_;
      snapshot_crawls_[e.index] = r_.crawls_total;
      break;
  }
  return Status::OK();
}

void Run::SelectOn(size_t pick, double now) {
  Shard& sh = shards_[pick];
  auto chosen = sh.sched->Select(
      now, sched::Scheduler::HostGate([&](sched::HostId h) {
        return sched::HostOpening{host_next_[h]};  // (only ever later)
      }));
  ++selections_;
  evaluations_ += sh.sched->last_evaluations();
  if (chosen) {
    Crawl(sh.pages[*chosen], now);
    sh.wake = now;
  } else {
    double next_host = kInf;
    for (double t : host_next_) {
      if (t > now) next_host = std::min(next_host, t);
    }
    // Nothing eligible: retry in a second (or min_interval). A due-only
    // policy (nutch) has nothing due most of the time; it retries every
    // minute, Nutch's shortest interval (its Generate rounds are coarser).
    const double retry = sh.sched->policy().due_only() ? 60.0 : 1.0;
    sh.wake = std::min(next_host, now + std::max(retry, o_.min_interval_s));
  }
}

void Run::Finish(const std::vector<double>& snap_times) {
  const size_t n = m_.pages.size();
  for (uint32_t p = 0; p < n; ++p) Integrate(p, end_);
  for (uint32_t p = 0; p < rule_of_.size(); ++p) {
    if (rule_of_[p] > 0)
      NoteInterval(p, S(p).page(L(p)).last_fetch, end_, false);
  }
  size_t largest = 0;
  for (size_t i = 0; i < shards_.size(); ++i) {
    r_.overdue_crawls += shards_[i].sched->overdue_selections();
    if (shards_[i].pages.size() > shards_[largest].pages.size()) largest = i;
    if (o_.clustered()) r_.shard_pages.push_back(shards_[i].pages.size());
  }
  if (o_.exchange_period_s > 0) Settle();
  r_.measured_days = (end_ - warm_) / kDay;
  double span = end_ - warm_;
  auto finish = [&](SimMetrics& x) {
    double denom = x.weight * span;
    if (denom > 0) {
      x.fresh /= denom;
      x.staleness /= denom;
      x.age_days /= denom * kDay;
    }
  };
  finish(r_.total);
  for (SimMetrics& x : r_.per_class) finish(x);
  if (r_.total.crawls > 0 && !host_crawls_.empty()) {
    // Every host holds pages_per_host pages, so crawls per page compare as
    // crawls per host.
    const uint64_t least =
        *std::min_element(host_crawls_.begin(), host_crawls_.end());
    r_.least_host_crawl_share = static_cast<double>(least) * m_.spec.hosts /
                                static_cast<double>(r_.total.crawls);
  }
  // Sharded: the largest shard's.
  r_.host_rate_spread = shards_[largest].sched->hosts().HostRateSpread();
  r_.host_rate_weight = shards_[largest].sched->hosts().HostRateWeight();
  for (size_t i = 0; i + 1 < snap_times.size(); i += 2) {
    double len = snap_times[i + 1] - snap_times[i];
    r_.window_freshness.push_back(
        len > 0 ? (snapshots_[i + 1] - snapshots_[i]) / (weight_ * len) : 0);
    double crawls =
        static_cast<double>(snapshot_crawls_[i + 1] - snapshot_crawls_[i]);
    r_.window_crawls_per_day.push_back(len > 0 ? crawls * kDay / len : 0);
  }
  if (estimate_count_ > 0) {
    r_.estimated_freshness = estimate_sum_ / estimate_count_;
  }
  r_.mean_evaluations =
      selections_ > 0 ? static_cast<double>(evaluations_) / selections_ : 0;
}

// The staleness optimum and the freshness optimum's staleness (SimResult);
// delta (per day) and mu are ContinuousOptima's.
void StalenessOptima(const WebModel& m, const std::vector<double>& delta,
                     const std::vector<double>& mu, double rate_per_day,
                     SimResult& r) {
  if (m.pages.size() > 20000) return;
  std::vector<sched::DivergenceModel> models;
  for (uint32_t p = 0; p < m.pages.size(); ++p) {
    models.push_back(m.TrueModel(p));
  }
  auto best =
      sched::LongevityContinuousOptimum(models, mu, rate_per_day / kDay);
  if (!best.ok()) return;
  r.staleness_optimum = best->staleness;
  // Staleness of the Azar optimum at `rate` per day.
  auto azar_staleness = [&](double rate) -> double {
    auto g = sched::GreedyContinuousOptimum(delta, mu, rate);
    if (!g.ok()) return -1;
    std::vector<double> per_second(g->rates.size());
    for (size_t i = 0; i < per_second.size(); ++i) {
      per_second[i] = g->rates[i] / kDay;
    }
    auto s = sched::PeriodicStaleness(models, mu, per_second);
    return s.ok() ? *s : -1;
  };
  r.staleness_at_freshness_optimum = azar_staleness(rate_per_day);
  if (r.staleness_at_freshness_optimum < 0) return;
  // The budget whose Azar optimum is as stale as the staleness optimum:
  // bracket by doubling, then TOMS 748 on log rate (relative 1e-6).
  double lo = rate_per_day, hi = 2 * rate_per_day;
  for (int i = 0; azar_staleness(hi) > best->staleness; ++i) {
    if (i == 20) return;
    lo = hi;
    hi *= 2;
  }
  const double log_rate = sched::FindRoot(
      [&](double y) { return azar_staleness(std::exp(y)) - best->staleness; },
      std::log(lo), std::log(hi), 0, 1e-6);
  if (std::isfinite(log_rate)) {
    r.freshness_rate_for_staleness_optimum = std::exp(log_rate);
  }
}

// The continuous optima of the web's true parameters at the budget; with
// `staleness`, also StalenessOptima.
void ContinuousOptima(const WebModel& m, double rate_per_day, bool staleness,
                      SimResult& r) {
  if (m.pages.size() > 200000) return;
  std::vector<double> delta, mu;
  std::vector<sched::PageParams> params;
  bool signals = false;
  for (uint32_t p = 0; p < m.pages.size(); ++p) {
    const SimPage& s = m.pages[p];
    delta.push_back(std::max(m.ChangeRate(p), 1e-12));
    mu.push_back(s.importance);
    params.push_back({delta.back(), s.importance, s.recall, s.false_rate});
    signals = signals || s.recall > 0 || s.false_rate > 0;
  }
  auto g = sched::GreedyContinuousOptimum(delta, mu, rate_per_day);
  if (g.ok()) r.continuous_optimum = g->accuracy;
  if (signals) {
    auto nc = sched::NcisContinuousOptimum(params, rate_per_day);
    if (nc.ok()) r.continuous_optimum_ncis = nc->accuracy;
  }
  if (staleness) StalenessOptima(m, delta, mu, rate_per_day, r);
}

// Median over changing pages of |ln(Δ̂/Δ)| at the end of the run (a page
// with no estimate counts as infinitely wrong), and the slope and residual
// scatter of ln Δ̂ on ln Δ over the pages with an estimate.
void MeasureRateError(const WebModel& model, const Run& run, SimResult& r) {
  std::vector<double> errors;
  std::vector<std::vector<double>> bias(r.per_class.size());
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  for (uint32_t p = 0; p < model.pages.size(); ++p) {
    const double truth = model.TrueParams(p).delta;
    if (!(truth > 0)) continue;
    const double estimate = run.EstimatedRate(p);
    if (!(estimate > 0)) {
      errors.push_back(kInf);
      continue;
    }
    const double x = std::log(truth), y = std::log(estimate);
    errors.push_back(std::abs(y - x));
    const uint32_t cls = model.pages[p].cls;
    if (cls < bias.size()) bias[cls].push_back(y - x);
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    syy += y * y;
  }
  for (size_t c = 0; c < bias.size(); ++c) {
    std::vector<double>& b = bias[c];
    if (b.empty()) continue;
    auto m = b.begin() + b.size() / 2;
    std::nth_element(b.begin(), m, b.end());
    r.per_class[c].rate_log_bias = *m;
  }
  if (errors.empty()) return;
  auto mid = errors.begin() + errors.size() / 2;
  std::nth_element(errors.begin(), mid, errors.end());
  r.rate_log_error = *mid;
  const double vx = sxx - sx * sx / n, cxy = sxy - sx * sy / n;
  const double vy = syy - sy * sy / n;
  if (n < 3 || !(vx > 0)) return;
  r.rate_log_slope = cxy / vx;
  const double residual = std::max(0.0, vy - cxy * cxy / vx);
  r.rate_log_scatter = std::sqrt(residual / (n - 2));
}

}  // namespace

double DistortedRate(uint64_t seed, uint32_t page, double delta,
                     double host_log_mean, double slope, double noise) {
  if (!(delta > 0)) return delta;
  constexpr uint64_t kDistortionStream = 50;  // page_process uses 10–40
  Rng rng(HashKey(seed, page, kDistortionStream));
  const double z = noise != 0 ? rng.Normal() : 0;
  return std::exp(host_log_mean + slope * (std::log(delta) - host_log_mean) +
                  noise * z);
}

sched::SchedulerOptions SchedulerOptionsFor(const SimOptions& options) {
  sched::SchedulerOptions so;
  so.policy = options.policy;
  so.oracle = options.oracle;
  so.rate_mixture = options.rate_model == "mixture";
  so.explore = options.explore;
  so.rate = options.rate_per_day / kDay;
  so.burst = std::max(1.0, options.burst);
  so.new_page_value = options.new_page_value;
  so.min_interval = options.min_interval_s;
  so.max_interval = options.max_interval_days * kDay;
  so.history = options.history;
  so.signal_window = options.signal_window_days * kDay;
  so.max_pages = kMaxSimPages;
  return so;
}

Result<SimResult> RunSimulation(const WebModel& model,
                                const SimOptions& options) {
  if (!(options.rate_per_day > 0) || !std::isfinite(options.rate_per_day) ||
      !(options.days > 0) || !std::isfinite(options.days)) {
    return Status::InvalidArgument("sim: rate and days must be > 0");
  }
  if (model.pages.empty()) return Status::InvalidArgument("sim: empty web");
  double last_day = 0;
  for (const RateChange& c : options.rate_changes) {
    if (!(c.day > last_day) || !(c.day < options.days) ||
        !(c.rate_per_day > 0) || !std::isfinite(c.rate_per_day)) {
      return Status::InvalidArgument(
          "sim: rate changes need increasing days in (0, days) and rates > 0");
    }
    last_day = c.day;
  }
  if (!(options.shards >= 1 && options.shards <= 1024)) {
    return Status::InvalidArgument("sim: shards must be in 1..1024");
  }
  if (options.exchange_period_s != 0 &&
      !(options.exchange_period_s >= 1 &&
        options.days * kDay / options.exchange_period_s <= 1e6)) {
    return Status::InvalidArgument(
        "sim: the exchange period must be >= 1 s and give at most 1e6 "
        "exchanges");
  }
  last_day = 0;
  for (const BudgetChange& c : options.budget_changes) {
    if (!(c.day > last_day) || !(c.day < options.days) ||
        !(c.factor > 0 && c.factor <= 1e3)) {
      return Status::InvalidArgument(
          "sim: budget changes need increasing days in (0, days) and "
          "factors in (0, 1000]");
    }
    last_day = c.day;
  }
  last_day = 0;
  int lost = 0;
  for (const ShardLoss& c : options.shard_losses) {
    lost += std::max(0, c.count);
    if (!(c.day > last_day) || !(c.day < options.days) || c.count < 1 ||
        lost >= options.shards) {
      return Status::InvalidArgument(
          "sim: shard losses need increasing days in (0, days), at least one "
          "shard each, and a shard left");
    }
    last_day = c.day;
  }
  if (options.oracle && options.policy == "longevity-bound") {
    // Its value is the expected curve between the change profiles' bounds,
    // which the truth cannot stand in for; with --oracle it only lost the
    // learning phase and scored worse than uniform (issue 31 item 6).
    return Status::InvalidArgument(
        "sim: longevity-bound has no oracle mode (it values pages by their "
        "change profiles, not a model); use longevity --oracle for the true "
        "curve");
  }
  for (const SimRule& r : options.rules) {
    bool known = false;
    for (const auto& c : model.spec.classes) known = known || c.name == r.cls;
    if (!known) {
      return Status::InvalidArgument("sim: rule for unknown class \"" + r.cls +
                                     "\"");
    }
  }
  sched::SchedulerOptions so = SchedulerOptionsFor(options);
  so.oracle_rate = options.oracle_rate && !options.oracle;
  if (options.rate_model != "gamma" && options.rate_model != "mixture") {
    return Status::InvalidArgument("sim: rate model must be gamma or mixture");
  }
  if (!(options.oracle_rate_slope >= 0 && options.oracle_rate_slope <= 10) ||
      !(options.oracle_rate_noise >= 0 && options.oracle_rate_noise <= 10)) {
    return Status::InvalidArgument(
        "sim: oracle rate slope and noise must be in [0, 10]");
  }
  so.rate /= options.shards;  // equal shares to begin with
  std::vector<Shard> shards(static_cast<size_t>(options.shards));
  auto scheduler = sched::Scheduler::Create(so, shards[0].truth.get());
  if (!scheduler.ok()) return scheduler.status();
  std::optional<PopulationPosterior> posterior;
  if (options.oracle_posterior_draws != 0 && !options.oracle_posterior) {
    return Status::InvalidArgument(
        "sim: posterior draws need --oracle-posterior");
  }
  if (options.oracle_posterior) {
    if (!options.oracle || options.distorts_rates() ||
        !(options.oracle_posterior_draws >= 0 &&
          options.oracle_posterior_draws <= 256) ||
        (*scheduler)->policy().uses_profiles()) {
      return Status::InvalidArgument(
          "sim: --oracle-posterior needs --oracle, no rate distortion, a "
          "policy without change profiles and 0..256 draws");
    }
    auto created =
        PopulationPosterior::Create(model, model.seed ^ kPosteriorSeedSalt,
                                    (*scheduler)->policy().uses_signals());
    if (!created.ok()) return created.status();
    posterior = std::move(*created);
  }
  shards[0].sched = std::move(*scheduler);
  for (Shard& sh : shards) {
    if (!sh.sched) {
      auto more = sched::Scheduler::Create(so, sh.truth.get());
      if (!more.ok()) return more.status();
      sh.sched = std::move(*more);
    }
    sh.share = so.rate;
  }
  Run run(model, options, shards, posterior ? &*posterior : nullptr);
  auto result = run.Go();
  if (!result.ok()) return result;
  if (!options.oracle) MeasureRateError(model, run, *result);
  ContinuousOptima(model, options.rate_per_day,
                   options.policy.starts_with("longevity"), *result);
  return result;
}

std::string SimResultToJson(const WebModel& model, const SimOptions& options,
                            const SimResult& r) {
  using nlohmann::json;
  auto metrics = [](const SimMetrics& x, double days) {
    return json{{"pages", x.pages},
                {"freshness", x.fresh},
                {"age_days", x.age_days},
                {"fragment_staleness", x.staleness},
                {"crawls", x.crawls},
                {"crawls_per_day", days > 0 ? x.crawls / days : 0}};
  };
  auto class_metrics = [&metrics](const SimMetrics& x, double days) {
    json j = metrics(x, days);
    if (!std::isnan(x.rate_log_bias)) j["rate_log_bias"] = x.rate_log_bias;
    return j;
  };
  json j = metrics(r.total, r.measured_days);
  j["web"] = model.spec.name;
  j["policy"] = options.policy;
  j["oracle"] = options.oracle;
  j["oracle_rate"] = options.oracle_rate && !options.oracle;
  if (options.rate_model != "gamma") j["rate_model"] = options.rate_model;
  if (options.explore) j["explore"] = true;
  if (options.oracle_posterior) {
    j["oracle_posterior"] = true;
    j["oracle_posterior_draws"] = options.oracle_posterior_draws;
  }
  if (options.distorts_rates()) {
    j["oracle_rate_slope"] = options.oracle_rate_slope;
    j["oracle_rate_noise"] = options.oracle_rate_noise;
  }
  j["seed"] = model.seed;
  j["rate_per_day"] = options.rate_per_day;
  j["days"] = options.days;
  j["measured_days"] = r.measured_days;
  j["max_interval_days"] = options.max_interval_days;
  if (options.signal_window_days > 0) {
    j["signal_window_days"] = options.signal_window_days;
  }
  j["crawls_total"] = r.crawls_total;
  j["overdue_crawls"] = r.overdue_crawls;
  j["changes"] = r.changes;
  j["signals"] = r.signals;
  if (r.continuous_optimum >= 0) j["continuous_optimum"] = r.continuous_optimum;
  if (r.continuous_optimum_ncis >= 0) {
    j["continuous_optimum_ncis"] = r.continuous_optimum_ncis;
  }
  if (r.staleness_optimum >= 0) {
    j["staleness_optimum"] = r.staleness_optimum;
    j["staleness_at_freshness_optimum"] = r.staleness_at_freshness_optimum;
    j["freshness_rate_for_staleness_optimum"] =
        r.freshness_rate_for_staleness_optimum;
  }
  if (r.estimated_freshness >= 0) {
    j["estimated_freshness"] = r.estimated_freshness;
  }
  if (r.least_host_crawl_share >= 0) {
    j["least_host_crawl_share"] = r.least_host_crawl_share;
  }
  j["host_rate_spread"] = r.host_rate_spread;
  j["host_rate_weight"] = r.host_rate_weight;
  if (!options.rate_changes.empty()) {
    j["segment_freshness"] = r.window_freshness;  // 2nd half of each segment
    j["segment_crawls_per_day"] = r.window_crawls_per_day;
  }
  json classes = json::object();
  for (size_t i = 0; i < r.per_class.size(); ++i) {
    classes[model.spec.classes[i].name] =
        class_metrics(r.per_class[i], r.measured_days);
  }
  j["per_class"] = classes;
  j["selector_evaluations_per_selection"] = r.mean_evaluations;
  if (r.rate_log_error >= 0) j["rate_log_error"] = r.rate_log_error;
  if (r.rate_log_scatter >= 0) {
    j["rate_log_slope"] = r.rate_log_slope;
    j["rate_log_scatter"] = r.rate_log_scatter;
  }
  if (!options.rules.empty()) {
    json rules = json::array();
    for (size_t i = 0; i < options.rules.size() && i < r.rules.size(); ++i) {
      const sched::PageRule& rule = options.rules[i].rule;
      const SimRuleResult& x = r.rules[i];
      rules.push_back({{"class", options.rules[i].cls},
                       {"min_interval_s", rule.min_interval},
                       {"max_interval_s", rule.max_interval},
                       {"importance", rule.importance},
                       {"pages", x.pages},
                       {"crawls", x.crawls},
                       {"shortest_interval_s", x.shortest_interval},
                       {"longest_interval_s", x.longest_interval},
                       {"late_intervals", x.late_intervals}});
    }
    j["rules"] = rules;
  }
  if (options.clustered()) {
    json c;
    c["shards"] = options.shards;
    c["exchange_period_s"] = options.exchange_period_s;
    c["shard_pages"] = r.shard_pages;
    c["pages_moved"] = r.pages_moved;
    c["exchanges"] = r.exchanges;
    json events = json::array();
    for (const SimResult::Event& e : r.events) {
      json x = {{"kind", e.kind}, {"day", e.day}};
      if (e.kind == "budget_change") x["factor"] = e.value;
      if (e.kind == "shard_loss") x["shards"] = e.value;
      x["settle_days"] = e.settle_days;
      x["first_within_days"] = e.first_days;
      events.push_back(x);
    }
    c["events"] = events;
    json day = json::array(), spread = json::array(), lambda = json::array(),
         share = json::array(), dispersion = json::array();
    for (const SimResult::Sample& s : r.trajectory) {
      day.push_back(s.day);
      spread.push_back(s.spread);
      dispersion.push_back(s.dispersion);
      lambda.push_back(s.lambda);
      share.push_back(s.share);
    }
    // Sampled at exchanges (at most SimOptions::trajectory_samples):
    // λ by shard (-1 unknown or dead; 0 nothing to fetch), share by shard
    // in pages per day, the spread max/min of the positive λs and their
    // dispersion (sched::LambdaDispersion).
    c["trajectory"] = {{"day", day},
                       {"lambda_spread", spread},
                       {"lambda_dispersion", dispersion},
                       {"lambda", lambda},
                       {"share_per_day", share}};
    j["cluster"] = c;
  }
  j["cpu_seconds"] = r.cpu_seconds;
  return j.dump();
}

}  // namespace freshd::sim
