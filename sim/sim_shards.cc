// A run's cluster (sim/sim_run.h, SimOptions::shards): each host's shard
// by rendezvous hashing over the live shards, a page placed on a shard
// (fresh, or with its state from a dead one), the shares of the budget and
// the λ exchange that moves them, budget changes, shard losses, and how
// long the λs took to settle after each event.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "sim/random.h"
#include "sim/sim_run.h"

namespace freshd::sim::internal {

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

}  // namespace freshd::sim::internal
