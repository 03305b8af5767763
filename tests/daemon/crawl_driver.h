// A deterministic stand-in for the daemon's crawl loop, for the recovery
// tests: pages on a few hosts whose content (40 chunks, each with a version)
// changes at a per-page probability between fetches; a Scheduler picks pages
// and is told fetched / 304 / failed / signal / discovery observations, and
// each observation's page and host records are committed in one StoreBatch
// (daemon/recovery.h's PersistPage / PersistHost).

#ifndef FRESHD_TESTS_DAEMON_CRAWL_DRIVER_H_
#define FRESHD_TESTS_DAEMON_CRAWL_DRIVER_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/sketch.h"
#include "daemon/host_book.h"
#include "daemon/recovery.h"
#include "parse/url.h"
#include "sched/scheduler.h"
#include "store/page_store.h"

namespace freshd::daemon {

inline sched::SchedulerOptions DriverOptions(const std::string& policy) {
  sched::SchedulerOptions o;
  o.policy = policy;
  o.oracle = false;
  o.rate = 0.5;
  o.burst = 10;
  o.min_interval = 60;
  o.history = 4;
  // The round-robin re-estimation sweep updates pages other than the one
  // observed (so they are not in its batch) in page-id order, which differs
  // after a rebuild; the exact comparisons need it off.
  o.reestimate_per_fetch = 0;
  return o;
}

// Content of one page: chunk versions and the chance it changes per fetch.
struct PageTruth {
  std::vector<uint32_t> chunks = std::vector<uint32_t>(40, 0);
  double change_p = 0.5;
  bool dirty = false;  // changed since the last fetch
};

inline uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class CrawlDriver {
 public:
  CrawlDriver(const sched::SchedulerOptions& options, uint64_t seed)
      : rng_(seed) {
    auto s = sched::Scheduler::Create(options);
    if (s.ok()) scheduler_ = std::move(s).value();
  }

  bool ok() const { return scheduler_ != nullptr; }
  sched::Scheduler& scheduler() { return *scheduler_; }
  HostBook& hosts() { return hosts_; }
  std::vector<std::string>& urls() { return urls_; }
  double now() const { return now_; }
  void set_now(double t) { now_ = t; }

  // Adds `n` URLs named prefix + i on `host_count` hosts; persists each.
  Status AddPages(const std::string& prefix, int n, int host_count,
                  store::PageStore* store) {
    for (int i = 0; i < n; ++i) {
      auto url =
          parse::NormalizeUrl("https://h" + std::to_string(i % host_count) +
                              ".example/" + prefix + std::to_string(i));
      if (!url.ok()) return url.status();
      auto host = hosts_.Intern(parse::UrlAuthority(*url));
      if (!host.ok()) return host.status();
      double importance = 0.5 + Uniform();
      auto id = scheduler_->AddUrl(*host, importance);
      if (!id.ok()) return id.status();
      urls_.resize(*id + 1);
      urls_[*id] = *url;
      truth_[*url].change_p = 0.05 + 0.9 * Uniform();
      if (store != nullptr) {
        if (Status s = Persist(*id, store); !s.ok()) return s;
      }
    }
    return Status::OK();
  }

  // One step: maybe a signal or discovery, then a selection at now and its
  // observation; every event persisted. Returns the page selected, or -1.
  int64_t Step(store::PageStore* store) {
    now_ += 1.0 / scheduler_->options().rate;
    const size_t n = scheduler_->size();
    for (auto& [url, t] : truth_) {  // content evolves between fetches
      (void)url;
      if (Uniform() < t.change_p * 0.05) Change(t);
    }
    if (Uniform() < 0.05) {  // half of them claim a change time
      sched::SignalObs signal;
      if (Uniform() < 0.5) signal.changed_at = now_ - 20 * Uniform();
      Observe(Pick(n), signal, store);
    }
    if (Uniform() < 0.02) {
      Observe(Pick(n), sched::DiscoveredObs{1 + 2 * Uniform()}, store);
    }
    auto chosen = scheduler_->Select(now_, [](sched::HostId) { return true; });
    if (!chosen) return -1;
    ObserveFetch(*chosen, store);
    return *chosen;
  }

  // The fetch outcome of `page` now, as the web would give it.
  void ObserveFetch(sched::PageId page, store::PageStore* store) {
    PageTruth& t = truth_[urls_[page]];
    double r = Uniform();
    if (r < 0.05) {
      Observe(page, sched::FailedObs{sched::FailureClass::kHttp5xx}, store);
    } else if (!t.dirty && r < 0.5) {
      Observe(page, sched::NotModifiedObs{}, store);
    } else {
      sched::FetchedObs f;
      f.changed = t.dirty;
      f.sketch = SketchOf(urls_[page], t);
      t.dirty = false;
      Observe(page, std::move(f), store);
    }
  }

  template <typename Event>
  void Observe(sched::PageId page, Event event, store::PageStore* store) {
    sched::Observation obs;
    obs.page = page;
    obs.time = now_;
    obs.event = std::move(event);
    scheduler_->Observe(obs);
    if (store != nullptr) last_status_ = Persist(page, store);
  }

  // The page's and its host's records in one batch.
  Status Persist(sched::PageId page, store::PageStore* store) {
    store::StoreBatch batch;
    PageMeta meta;
    meta.last_status = 200;
    if (Status s =
            PersistPage(*scheduler_, page, urls_[page], meta, {}, &batch);
        !s.ok()) {
      return s;
    }
    if (Status s = PersistHost(*scheduler_, hosts_, scheduler_->page(page).host,
                               {}, &batch);
        !s.ok()) {
      return s;
    }
    bool synced = false;
    Status s = store->Commit(batch, now_, &synced);
    if (synced) ++syncs_;
    return s;
  }

  const Status& last_status() const { return last_status_; }
  uint64_t syncs() const { return syncs_; }  // synced commits so far

 private:
  double Uniform() {
    return std::uniform_real_distribution<double>(0, 1)(rng_);
  }
  sched::PageId Pick(size_t n) {
    return static_cast<sched::PageId>(rng_() % std::max<size_t>(n, 1));
  }
  void Change(PageTruth& t) {
    int k = 1 + static_cast<int>(rng_() % 5);
    for (int i = 0; i < k; ++i) ++t.chunks[rng_() % t.chunks.size()];
    t.dirty = true;
  }
  static BottomSketch SketchOf(const std::string& url, const PageTruth& t) {
    std::vector<uint64_t> h;
    const uint64_t base = parse::UrlKey(url);
    for (size_t i = 0; i < t.chunks.size(); ++i) {
      h.push_back(Mix(base ^ Mix(i * 1000003 + t.chunks[i])));
    }
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
    return Sketch(h, 32);
  }

  std::mt19937_64 rng_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  HostBook hosts_;
  std::vector<std::string> urls_;
  std::map<std::string, PageTruth> truth_;
  double now_ = 1.7e9;
  Status last_status_;
  uint64_t syncs_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_TESTS_DAEMON_CRAWL_DRIVER_H_
