// A run's pages (sim/sim_run.h): a region's change and the true signal it
// may emit, a crawl observed by the page's shard, the time integrals of
// freshness, age and staleness, a ruled page's intervals, the oracle
// posterior handed to the scheduler, and the scheduler's own estimate of
// its copy's freshness sampled.

#include <algorithm>
#include <cstddef>
#include <utility>

#include "sim/sim_run.h"

namespace freshd::sim::internal {

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

}  // namespace freshd::sim::internal
