// Benchmark of the recrawl scheduler (issue 4 item 9): selector operations
// per CPU-second at 100k and 1M pages, and simulated fetches per CPU-second
// through sim::RunSimulation, for the policies freshness, ncis, nutch,
// uniform and longevity, each in oracle and estimated mode.
//
// Selector workload: the web sim/webs/noisy.toml (Δ, μ ~ U(0,1)/day,
// α ~ Beta(.5,.5), ν ~ U(0,.5)/day) scaled to --pages pages on --hosts hosts.
// Every page has a history of 2 fetches in the 12 days before the run, with
// a changed bit and signals drawn from its truth, so estimators have evidence.
// The timed loop runs at budget R = 0.25·N per day: signals arrive (Poisson,
// page drawn ∝ αΔ+ν), Select() runs under a host gate (crawl delay 100 token
// intervals, --delay-tokens, one fetch in flight per host, 1% of hosts down
// in rotating 6-hour epochs; the gate answers when the host reopens, and a
// completion calls Scheduler::ReopenHost), fetches complete 16 selections later
// (2% fail) and are Observe()d. Measured in CPU time, median of --runs runs per
// figure:
//   cycle  — Select + the Observe of one completed fetch + arriving signals;
//   select — Select alone (batches of 16 Selects, completions untimed);
//   brute  — the reference: argmax of PriorityOf() over every eligible page
//            at the same state (the naive selector); its choice is checked
//            against Select's.
// Status pass: CPU-ms of Scheduler::Summarize (what /status and /metrics
// compute), beside the pass it replaced (PriorityOf per page), same state.
// Refresh: CPU-ms of a cycle in which Select refreshed the horizon (every
// page's bound recomputed, every scale x sqrt(N) selections; the scale adapts,
// Scheduler::AdvanceHorizon, and is reported as it ended): the longest a
// Select holds its thread.
// Max ms / max wall: the longest single Select after the warm-up (a
// horizon swap or a staging slice included), CPU and wall milliseconds (the
// wall time on a shared machine includes other loads); moves/full/late:
// horizons moved after the warm-up, of them refreshed all at once (no
// staged index: SchedulerOptions::refresh_slice_pages), and staged ones
// finished late in the swapping Select.
// Memory: sizeof(PageState), heap (mallinfo2) and RSS growth per page, after
// the warm-up cycles (steady state).
// Estimated longevity runs on at most --longevity-max-pages pages (its
// Observe fits a curve per fetch, so its history replay is slow).
// Simulator: RunSimulation on noisy.toml scaled to --sim-pages pages on
// --sim-hosts hosts for --sim-days days at 0.25·N per day; fetches per
// CPU-second of the simulation loop (SimResult::cpu_seconds; excludes the
// continuous optima RunSimulation computes afterwards). Small by default: the
// selector's cost per fetch grows with the page count (see RESULTS-sched.md).
// Single-threaded. Rerun from the repository root:
//   build-<you>/bench/scheduler_bench   (--help for the options)

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/cpu_clock.h"
#include "sched/divergence_model.h"
#include "sched/page_state.h"
#include "sched/scheduler.h"
#include "sim/oracle_truth.h"
#include "sim/simulator.h"
#include "sim/web_model.h"

namespace {

namespace sched = freshd::sched;
namespace sim = freshd::sim;
using sched::PageId;

constexpr double kDay = 86400;
constexpr int kInFlight = 16;

struct Flags {
  std::vector<size_t> pages = {100000, 1000000};
  std::vector<std::string> policies = {"freshness", "ncis", "nutch", "uniform",
                                       "longevity"};
  std::vector<std::string> modes = {"oracle", "estimated"};
  int runs = 5;
  uint32_t hosts = 1000;
  // A host's politeness delay after a fetch, in token intervals (with many
  // hosts and a long delay, most hosts are closed at any time).
  double delay_tokens = 100;
  // Cycles run before the timed runs, besides one run's worth (so that a
  // long delay has closed its hosts whatever the machine's speed).
  int warmup_cycles = 0;
  std::string web = "sim/webs/noisy.toml";
  size_t longevity_max_pages = 100000;  // estimated mode only
  // SchedulerOptions::refresh_slice_pages (0: the refresh all at once).
  size_t refresh_slice = sched::SchedulerOptions{}.refresh_slice_pages;
  // SchedulerOptions::selector_scan.
  sched::Selector::Scan scan = sched::Selector::Scan::kAuto;
  size_t sim_pages = 2000;
  uint32_t sim_hosts = 100;
  double sim_days = 4;
  double min_run_cpu = 0.1;  // s of CPU per timed run (at least)
  bool select = true, simulate = true;
};

using freshd::bench::CpuNow;

double RssBytes() {
  long pages_total = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages_total, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<double>(resident) *
         static_cast<double>(sysconf(_SC_PAGESIZE));
}

// Heap bytes in use (glibc; reads 0 under ASan, whose allocator it misses).
double HeapBytes() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The web at `pages` pages: the spec with hosts and pages per host replaced.
sim::WebModel ScaledWeb(const sim::WebSpec& base, uint32_t hosts,
                        size_t pages) {
  sim::WebSpec spec = base;
  spec.hosts = hosts;
  spec.pages_per_host =
      static_cast<uint32_t>(std::max<size_t>(1, pages / hosts));
  return sim::WebModel::Build(spec, 1);
}

// One scheduler under the daemon-like workload described at the top.
class Workload {
 public:
  Workload(const sim::WebModel& web,
           const std::vector<sched::PageParams>& truth, sched::Scheduler& s,
           sim::OracleTruth& oracle, uint64_t seed, double delay_tokens)
      : web_(web), truth_(truth), s_(s), oracle_(oracle), rng_(seed) {
    const size_t n = web.pages.size();
    dt_ = kDay / (0.25 * static_cast<double>(n));
    delay_ = delay_tokens * dt_;
    host_next_.assign(web.spec.hosts, 0);
    host_busy_.assign(web.spec.hosts, 0);
    std::vector<double> w(n);
    double total = 0;
    for (size_t p = 0; p < n; ++p) {
      w[p] = truth[p].alpha * truth[p].delta + truth[p].nu;
      total += w[p];
    }
    if (total > 0) {  // (a web without signals: none arrive)
      signal_page_ = std::discrete_distribution<uint32_t>(w.begin(), w.end());
      signals_per_tick_ = std::poisson_distribution<int>(total * dt_);
    }
    signals_ = total > 0;
    gate_ = [this](sched::HostId h) { return Opening(h); };
  }

  // AddUrl (+ its truth, oracle mode) every page and replays 2 fetches per page
  // (the first in [0, 5] days, the second 1-7 days later, with the signals in
  // between); the run starts at day 12. Returns false on a scheduler error.
  bool Populate() {
    const bool oracle = s_.options().oracle;
    std::uniform_real_distribution<double> first(0, 5 * kDay),
        gap(1 * kDay, 7 * kDay);
    for (uint32_t p = 0; p < web_.pages.size(); ++p) {
      auto id = s_.AddUrl(web_.pages[p].host, web_.pages[p].importance);
      if (!id.ok() || *id != p) return false;
      if (oracle) {
        oracle_.Set(p, truth_[p], web_.TrueModel(p));
        s_.ModelChanged(p);
      }
      double t = first(rng_);
      s_.Observe({p, t, sched::FetchedObs{}});
      double tau = gap(rng_);
      const sched::PageParams& x = truth_[p];
      int changes = std::poisson_distribution<int>(x.delta * tau)(rng_);
      int signals = std::binomial_distribution<int>(changes, x.alpha)(rng_) +
                    std::poisson_distribution<int>(x.nu * tau)(rng_);
      for (int k = 0; k < signals; ++k) {
        s_.Observe({p, t + tau * (k + 1) / (signals + 1), sched::SignalObs{}});
      }
      Fetched(p, t + tau, changes > 0);
    }
    now_ = 12 * kDay;
    return true;
  }

  bool Down(sched::HostId h) const {
    auto epoch = static_cast<uint64_t>(now_ / (6 * 3600));
    return (h + epoch) % 100 == 0;
  }
  // When the host may go: closed until its fetch completes (ReopenHost),
  // its delay, the end of its outage.
  sched::HostOpening Opening(sched::HostId h) const {
    if (host_busy_[h] > 0) return sched::kHostClosedUntilReopened;
    double at = host_next_[h];
    if (Down(h)) {
      const double epoch = std::floor(now_ / (6 * 3600));
      at = std::max(at, (epoch + 1) * 6 * 3600);
    }
    return {at};
  }
  bool Open(sched::HostId h) const { return Opening(h).at <= now_; }
  const sched::Scheduler::HostGate& gate() const { return gate_; }
  double now() const { return now_; }

  // Advances one token interval and delivers the signals that arrived.
  void Tick() {
    now_ += dt_;
    for (int k = signals_ ? signals_per_tick_(rng_) : 0; k > 0; --k) {
      s_.Observe({signal_page_(rng_), now_, sched::SignalObs{}});
    }
  }

  // Select at now; the choice (if any) goes in flight.
  std::optional<PageId> Select() {
    timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    const double c0 = CpuNow();
    auto p = s_.Select(now_, gate_);
    const double cpu = CpuNow() - c0;
    clock_gettime(CLOCK_MONOTONIC, &w1);
    max_select_cpu_ = std::max(max_select_cpu_, cpu);
    max_select_wall_ =
        std::max(max_select_wall_,
                 static_cast<double>(w1.tv_sec - w0.tv_sec) +
                     1e-9 * static_cast<double>(w1.tv_nsec - w0.tv_nsec));
    ++selects_;
    if (p) {
      evaluations_ += s_.last_evaluations();
      ++host_busy_[web_.pages[*p].host];
      in_flight_.push_back(*p);
    } else {
      ++empty_;
    }
    return p;
  }

  // Completes the oldest fetch in flight (2% fail) at now.
  void Complete() {
    if (in_flight_.empty()) return;
    PageId p = in_flight_.front();
    in_flight_.pop_front();
    sched::HostId h = web_.pages[p].host;
    --host_busy_[h];
    host_next_[h] = now_ + delay_;
    s_.ReopenHost(h);  // its slot freed
    if (uniform_(rng_) < 0.02) {
      s_.Observe({p, now_, sched::FailedObs{sched::FailureClass::kNetwork}});
      return;
    }
    const sched::PageState& st = s_.page(p);
    double tau = st.fetched() ? now_ - st.last_fetch : 1e300;
    Fetched(p, now_, uniform_(rng_) < -std::expm1(-truth_[p].delta * tau));
  }

  void Cycle() {
    Tick();
    Select();
    if (in_flight_.size() > kInFlight) Complete();
  }
  size_t in_flight() const { return in_flight_.size(); }

  // The fraction of hosts closed by the gate now.
  double ClosedShare() const {
    size_t closed = 0;
    for (sched::HostId h = 0; h < host_next_.size(); ++h) closed += !Open(h);
    return static_cast<double>(closed) / static_cast<double>(host_next_.size());
  }

  uint64_t selects_ = 0, empty_ = 0, evaluations_ = 0;
  // The longest single Select (horizon refresh or staging included), in
  // CPU and wall seconds, since last reset.
  double max_select_cpu_ = 0, max_select_wall_ = 0;

 private:
  void Fetched(PageId p, double t, bool changed) {
    sched::FetchedObs f;
    f.changed = changed;
    if (changed && s_.policy().uses_profiles()) {
      sched::DivergenceModel m = web_.TrueModel(p);
      for (double base : s_.ProfileBaseTimes(p)) {
        f.base_divergence.push_back(sched::Divergence(m, t - base));
      }
    }
    s_.Observe({p, t, std::move(f)});
  }

  const sim::WebModel& web_;
  const std::vector<sched::PageParams>& truth_;
  sched::Scheduler& s_;
  sim::OracleTruth& oracle_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0, 1};
  std::discrete_distribution<uint32_t> signal_page_;
  std::poisson_distribution<int> signals_per_tick_;
  sched::Scheduler::HostGate gate_;
  bool signals_ = false;
  double now_ = 0, dt_ = 1, delay_ = 1;
  std::vector<double> host_next_;
  std::vector<uint16_t> host_busy_;
  std::deque<PageId> in_flight_;
};

struct SelectResult {
  double cycle_ops = 0, select_ops = 0, brute_ops = 0;
  double evals = 0, empty_share = 0, closed_share = 0;
  int agree = 0, checked = 0;
  double summary_ms = 0, old_summary_ms = 0;  // CPU-ms per /status pass
  double refresh_ms = 0;     // CPU-ms of a cycle whose Select refreshed bounds
  double horizon_scale = 0;  // Scheduler::horizon_scale() at the end
  // The longest single Select after the warm-up (its first Select builds
  // the first horizon's index at once), CPU-ms and wall-ms; horizons moved
  // without a staged index (full) and staged ones finished late.
  double max_select_ms = 0, max_select_wall_ms = 0;
  uint64_t full_refreshes = 0, late_refreshes = 0, refreshes = 0;
  double heap_per_page = 0, rss_per_page = 0, setup_cpu = 0;
};

// Ops per CPU-second of `op`, called in timed chunks (doubling while a
// chunk takes < min_cpu/16) until min_cpu has been spent; at least once.
template <typename F>
double OpsPerCpuSecond(double min_cpu, F&& op) {
  double cpu = 0, ops = 0;
  int chunk = 1;
  do {
    double t0 = CpuNow();
    for (int i = 0; i < chunk; ++i) op();
    double dt = CpuNow() - t0;
    cpu += dt;
    ops += chunk;
    if (dt < min_cpu / 16) chunk *= 2;
  } while (cpu < min_cpu);
  return ops / cpu;
}

std::optional<SelectResult> BenchSelect(
    const Flags& flags, const sim::WebModel& web,
    const std::vector<sched::PageParams>& truth, const std::string& policy,
    bool oracle) {
  malloc_trim(0);
  const double heap0 = HeapBytes(), rss0 = RssBytes();
  const size_t n = web.pages.size();
  sched::SchedulerOptions so;
  so.policy = policy;
  so.oracle = oracle;
  so.rate = 0.25 * static_cast<double>(n) / kDay;
  so.burst = 10;
  so.refresh_slice_pages = flags.refresh_slice;
  so.selector_scan = flags.scan;
  sim::OracleTruth oracle_truth;  // oracle mode: outlives the scheduler
  auto created = sched::Scheduler::Create(so, &oracle_truth);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return std::nullopt;
  }
  SelectResult r;
  {
    std::unique_ptr<sched::Scheduler> s = std::move(created).value();
    Workload w(web, truth, *s, oracle_truth, 7, flags.delay_tokens);
    double t0 = CpuNow();
    if (!w.Populate()) return std::nullopt;
    r.setup_cpu = CpuNow() - t0;
    // Warm up: one run's worth of cycles, so the state is the loop's own.
    OpsPerCpuSecond(flags.min_run_cpu, [&] { w.Cycle(); });
    for (int i = 0; i < flags.warmup_cycles; ++i) w.Cycle();
    // Memory in that steady state (the selector's index is rebuilt flat by
    // the first horizon refresh; the pages were added one by one before).
    w.max_select_cpu_ = w.max_select_wall_ = 0;
    const uint64_t full0 = s->full_refreshes(), late0 = s->late_refreshes(),
                   moves0 = s->horizon_refreshes();
    r.heap_per_page = (HeapBytes() - heap0) / static_cast<double>(n);
    r.rss_per_page = (RssBytes() - rss0) / static_cast<double>(n);
    std::vector<double> cycle, select, brute, closed;
    w.selects_ = w.empty_ = w.evaluations_ = 0;
    for (int run = 0; run < flags.runs; ++run) {
      cycle.push_back(OpsPerCpuSecond(flags.min_run_cpu, [&] { w.Cycle(); }));
      closed.push_back(w.ClosedShare());
      // Batches of Selects between completions: 16 (the in-flight depth)
      // unless a Select takes milliseconds (then 2, to bound the run).
      const int batch = cycle.back() > 200 ? kInFlight : 2;
      double cpu = 0, ops = 0;
      while (cpu < flags.min_run_cpu) {
        while (w.in_flight() > 0) w.Complete();
        double t1 = CpuNow();
        for (int i = 0; i < batch; ++i) {
          w.Tick();  // (signals: a few ns each, inside the timed batch)
          w.Select();
        }
        cpu += CpuNow() - t1;
        ops += batch;
      }
      select.push_back(ops / cpu);
    }
    r.evals = static_cast<double>(w.evaluations_) /
              static_cast<double>(std::max<uint64_t>(1, w.selects_ - w.empty_));
    r.empty_share = static_cast<double>(w.empty_) /
                    static_cast<double>(std::max<uint64_t>(1, w.selects_));
    // The naive selector at the same state; each choice checked.
    for (int run = 0; run < flags.runs; ++run) {
      double cpu = 0, ops = 0;
      while (cpu < flags.min_run_cpu / 2) {
        w.Tick();
        double t1 = CpuNow();
        std::optional<PageId> best;
        sched::Priority best_priority;
        for (PageId p = 0; p < n; ++p) {
          if (!s->Eligible(p, w.now(), w.gate())) continue;
          sched::Priority pr = s->PriorityOf(p, w.now());
          if (!best || sched::Better(pr, best_priority)) {
            best = p;
            best_priority = pr;
          }
        }
        cpu += CpuNow() - t1;
        ++ops;
        std::optional<PageId> chosen = w.Select();  // the check, untimed
        ++r.checked;
        r.agree += chosen == best;
        if (w.in_flight() > kInFlight) w.Complete();
      }
      brute.push_back(ops / cpu);
    }
    // The /status pass (Scheduler::Summarize) and, the reference in the
    // same state, the pass it replaced: PriorityOf per page for the overdue
    // count (it evaluates every fetched page's value) and FreshProbability.
    std::vector<double> summary, old_summary;
    volatile double sink = 0;
    for (int run = 0; run < flags.runs; ++run) {
      summary.push_back(1e3 / OpsPerCpuSecond(flags.min_run_cpu, [&] {
                          sink =
                              sink + s->Summarize(w.now()).estimated_freshness;
                        }));
      old_summary.push_back(
          1e3 / OpsPerCpuSecond(flags.min_run_cpu, [&] {
            double fresh = 0, due = 0;
            for (PageId p = 0; p < n; ++p) {
              const sched::PageState& ps = s->page(p);
              if (ps.fetched() && s->PriorityOf(p, w.now()).overdue) {
                ++due;
              }
              fresh += ps.importance * s->FreshProbability(p, w.now());
            }
            sink = sink + fresh + due;
          }));
    }
    // The horizon refresh (every page's bound recomputed, every 1-64 x
    // sqrt(N) selections): the CPU time of the cycles that did one.
    std::vector<double> refresh;
    for (int guard = 0; refresh.size() < static_cast<size_t>(flags.runs) &&
                        guard < 100 * static_cast<int>(std::sqrt(n) + 1);
         ++guard) {
      const uint64_t before = s->horizon_refreshes();
      const double t1 = CpuNow();
      w.Cycle();
      const double dt = CpuNow() - t1;
      if (s->horizon_refreshes() != before) refresh.push_back(1e3 * dt);
    }
    r.refresh_ms = Median(refresh);
    r.max_select_ms = 1e3 * w.max_select_cpu_;
    r.max_select_wall_ms = 1e3 * w.max_select_wall_;
    r.full_refreshes = s->full_refreshes() - full0;
    r.late_refreshes = s->late_refreshes() - late0;
    r.refreshes = s->horizon_refreshes() - moves0;
    r.horizon_scale = s->horizon_scale();
    r.summary_ms = Median(summary);
    r.old_summary_ms = Median(old_summary);
    r.cycle_ops = Median(cycle);
    r.select_ops = Median(select);
    r.brute_ops = Median(brute);
    r.closed_share = Median(closed);
  }
  return r;
}

void RunSelectBench(const Flags& flags, const sim::WebSpec& base) {
  std::printf(
      "\n== selector (CPU time; median of %d runs; ops/s = per CPU-second) ==\n"
      "sizeof(PageState) = %zu bytes\n",
      flags.runs, sizeof(sched::PageState));
  std::printf(
      "%-9s %-9s %8s %11s %11s %10s %9s %10s %7s %8s %8s %6s %6s %7s %9s "
      "%9s %10s %6s %8s %9s %11s\n",
      "policy", "mode", "pages", "cycle/s", "select/s", "brute/s", "speedup",
      "evals/sel", "agree", "heap B/p", "RSS B/p", "closed", "empty", "setup s",
      "status ms", "was ms", "refresh ms", "scale", "max ms", "max wall",
      "moves/full/late");
  std::fflush(stdout);
  for (size_t pages : flags.pages) {
    sim::WebModel web = ScaledWeb(base, flags.hosts, pages);
    std::vector<sched::PageParams> truth(web.pages.size());
    for (uint32_t p = 0; p < web.pages.size(); ++p) {
      truth[p] = web.TrueParams(p);
    }
    std::optional<sim::WebModel> small;  // estimated longevity above its cap
    std::vector<sched::PageParams> small_truth;
    for (const std::string& policy : flags.policies) {
      for (const std::string& mode : flags.modes) {
        const sim::WebModel* w = &web;
        const std::vector<sched::PageParams>* t = &truth;
        // Estimated longevity fits a divergence curve per fetch (~0.1 ms):
        // its history costs ~50 s per million pages, so it runs on
        // at most --longevity-max-pages pages.
        if (policy.rfind("longevity", 0) == 0 && mode == "estimated" &&
            web.pages.size() > flags.longevity_max_pages) {
          if (std::find(flags.pages.begin(), flags.pages.end(),
                        flags.longevity_max_pages) != flags.pages.end()) {
            std::printf("%-9s %-9s %8zu skipped: see the %zu-page row\n",
                        policy.c_str(), mode.c_str(), web.pages.size(),
                        flags.longevity_max_pages);
            continue;
          }
          if (!small) {
            small = ScaledWeb(base, flags.hosts, flags.longevity_max_pages);
            for (uint32_t p = 0; p < small->pages.size(); ++p) {
              small_truth.push_back(small->TrueParams(p));
            }
          }
          w = &*small;
          t = &small_truth;
        }
        auto r = BenchSelect(flags, *w, *t, policy, mode == "oracle");
        if (!r) {
          std::printf("%-9s %-9s failed\n", policy.c_str(), mode.c_str());
          continue;
        }
        std::printf(
            "%-9s %-9s %8zu %11.0f %11.0f %10.2f %8.2fx %10.1f %3d/%-3d %8.0f "
            "%8.0f %5.1f%% %5.2f%% %7.1f %9.2f %9.2f %10.1f %6.2f %8.2f %9.2f "
            "%4llu/%llu/%llu\n",
            policy.c_str(), mode.c_str(), w->pages.size(), r->cycle_ops,
            r->select_ops, r->brute_ops, r->select_ops / r->brute_ops, r->evals,
            r->agree, r->checked, r->heap_per_page, r->rss_per_page,
            100 * r->closed_share, 100 * r->empty_share, r->setup_cpu,
            r->summary_ms, r->old_summary_ms, r->refresh_ms, r->horizon_scale,
            r->max_select_ms, r->max_select_wall_ms,
            static_cast<unsigned long long>(r->refreshes),
            static_cast<unsigned long long>(r->full_refreshes),
            static_cast<unsigned long long>(r->late_refreshes));
        std::fflush(stdout);
      }
    }
  }
}

void RunSimBench(const Flags& flags, const sim::WebSpec& base) {
  sim::WebModel web = ScaledWeb(base, flags.sim_hosts, flags.sim_pages);
  std::printf(
      "\n== simulator: %s scaled to %zu pages on %u hosts, %.3g days at "
      "0.25*N/day (median of %d runs) ==\n",
      base.name.c_str(), web.pages.size(), flags.sim_hosts, flags.sim_days,
      flags.runs);
  std::printf("%-9s %-9s %10s %10s %12s %10s %9s %9s\n", "policy", "mode",
              "fetches", "events", "fetches/cpu-s", "cpu s", "evals/sel",
              "freshness");
  std::fflush(stdout);
  for (const std::string& policy : flags.policies) {
    for (const std::string& mode : flags.modes) {
      sim::SimOptions o;
      o.policy = policy;
      o.oracle = mode == "oracle";
      o.rate_per_day = 0.25 * static_cast<double>(web.pages.size());
      o.days = flags.sim_days;
      o.estimate_samples = 0;  // the simulation alone
      std::vector<double> rate, cpu;
      sim::SimResult last;
      for (int run = 0; run < flags.runs; ++run) {
        auto r = sim::RunSimulation(web, o);
        if (!r.ok()) {
          std::printf("%-9s %-9s failed: %s\n", policy.c_str(), mode.c_str(),
                      r.status().ToString().c_str());
          break;
        }
        rate.push_back(static_cast<double>(r->crawls_total) / r->cpu_seconds);
        cpu.push_back(r->cpu_seconds);
        last = *r;
      }
      if (rate.empty()) continue;
      std::printf(
          "%-9s %-9s %10llu %10llu %12.0f %10.3f %9.1f %9.4f\n", policy.c_str(),
          mode.c_str(), static_cast<unsigned long long>(last.crawls_total),
          static_cast<unsigned long long>(last.changes + last.signals),
          Median(rate), Median(cpu), last.mean_evaluations, last.total.fresh);
      std::fflush(stdout);
    }
  }
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

constexpr const char* kUsage =
    "usage: scheduler_bench [--pages 100000,1000000] [--runs 5]\n"
    "  [--policies freshness,ncis,nutch,uniform,longevity]\n"
    "  [--modes oracle,estimated] [--hosts 1000] [--web sim/webs/noisy.toml]\n"
    "  [--delay-tokens 100] [--warmup-cycles 0]\n"
    "  [--longevity-max-pages 100000] [--refresh-slice 1024]\n"
    "  [--scan auto|global|per-host]\n"
    "  [--sim-pages 2000] [--sim-hosts 100]\n"
    "  [--sim-days 4] [--min-run-cpu 0.1] [--no-select] [--no-sim]\n";

// Parses argv into *f; false (after printing usage) on a bad flag.
bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-select") {
      f->select = false;
      continue;
    }
    if (a == "--no-sim") {
      f->simulate = false;
      continue;
    }
    if (i + 1 >= argc) {
      std::fputs(kUsage, stderr);
      return false;
    }
    std::string v = argv[++i];
    if (a == "--pages") {
      f->pages.clear();
      for (const std::string& x : Split(v)) f->pages.push_back(std::stoul(x));
    } else if (a == "--runs") {
      f->runs = std::max(1, std::stoi(v));
    } else if (a == "--policies") {
      f->policies = Split(v);
    } else if (a == "--modes") {
      f->modes = Split(v);
    } else if (a == "--hosts") {
      f->hosts = static_cast<uint32_t>(std::max(1ul, std::stoul(v)));
    } else if (a == "--warmup-cycles") {
      f->warmup_cycles = std::stoi(v);
    } else if (a == "--delay-tokens") {
      f->delay_tokens = std::stod(v);
    } else if (a == "--web") {
      f->web = v;
    } else if (a == "--refresh-slice") {
      f->refresh_slice = std::stoul(v);
    } else if (a == "--scan" &&
               (v == "auto" || v == "global" || v == "per-host")) {
      f->scan = v == "auto"     ? sched::Selector::Scan::kAuto
                : v == "global" ? sched::Selector::Scan::kGlobal
                                : sched::Selector::Scan::kPerHost;
    } else if (a == "--longevity-max-pages") {
      f->longevity_max_pages = std::stoul(v);
    } else if (a == "--sim-pages") {
      f->sim_pages = std::stoul(v);
    } else if (a == "--sim-hosts") {
      f->sim_hosts = static_cast<uint32_t>(std::max(1ul, std::stoul(v)));
    } else if (a == "--sim-days") {
      f->sim_days = std::stod(v);
    } else if (a == "--min-run-cpu") {
      f->min_run_cpu = std::stod(v);
    } else {
      std::fputs(kUsage, stderr);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  try {
    if (!ParseFlags(argc, argv, &flags)) return 2;
  } catch (const std::exception& e) {  // std::stoul and friends
    std::fprintf(stderr, "bad flag value: %s\n%s", e.what(), kUsage);
    return 2;
  }
  for (size_t p : flags.pages) {
    if (p < flags.hosts || p > sim::kMaxSimPages) {
      std::fprintf(stderr, "--pages must be in [hosts, %llu]\n",
                   static_cast<unsigned long long>(sim::kMaxSimPages));
      return 2;
    }
  }
  auto spec = sim::LoadWebSpec(flags.web);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s (run from the repository root or pass --web)\n",
                 spec.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "scheduler_bench: web %s, %u hosts, runs %d, min %.2f CPU-s/run\n",
      flags.web.c_str(), flags.hosts, flags.runs, flags.min_run_cpu);
  double t0 = CpuNow();
  if (flags.select) RunSelectBench(flags, *spec);
  if (flags.simulate) RunSimBench(flags, *spec);
  std::string cmd = argv[0];
  for (int i = 1; i < argc; ++i) cmd += std::string(" ") + argv[i];
  std::printf("\ntotal CPU %.1f s\nrerun (from the repository root): %s\n",
              CpuNow() - t0, cmd.c_str());
  return 0;
}
