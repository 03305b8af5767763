// A run's event loop (sim/sim_run.h): the pages set up fetched and fresh
// at t = 0, the events scheduled (rate changes, snapshots, the cluster's
// events, estimate samples), the loop that takes whichever comes first of
// the next event and the next shard's token, and the metrics at the end.

#include "sim/sim_run.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>
#include <utility>

namespace freshd::sim::internal {

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

}  // namespace freshd::sim::internal
