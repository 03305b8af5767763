// The daemon's frontier at scale (issue 29 items 1 and 4): memory per known
// page by component, Select+Observe cycles per CPU-second and the longest
// single step at N pages, and (with --store) the store side: writing every
// page's record through the page book and the restart (RebuildScheduler
// streaming the URLs into the page book, as CrawlLoop::Init does), timed,
// with its memory.
//
// The frontier: N pages (--pages, 1M by default; --ten-million: 10M pages
// on 100k hosts) over H hosts (--hosts, default N/100), pages of a host
// contiguous, synthetic URLs of ~75 bytes. Every second page is fetched
// with a plausible history: two fetches 1-7 days apart in the 20 days
// before the run, the change bit drawn at 1/2, Poisson(1) sitemap signals
// between them; its PageMeta carries an ETag, a Last-Modified, a content
// hash, status 200 and outcome "ok". The others were never fetched.
//
// Built in the daemon's own structures, in the order a restart builds them
// (daemon/crawl_loop.cc Init): the host table (PageBook::hosts), per-host
// scope and origins (UrlScope, CrawlLoop's host_origins_), the Scheduler
// (AddUrl per page, then the histories through Observe, then the selector's
// index built by the first Select), the PageMeta vector, then the URLs
// handed to PageBook::Assign as recovery hands them (the strings and the
// URL index together: Assign may re-pack them); with --add, pages come
// through PageBook::Add one by one instead, as seeds and links add them
// (vectors grown by doubling). --loopback-port P names the hosts
// 127.x.y.z:P (http) so that `freshd run` can crawl the --store against one
// local catch-all server (bench/scale/README.md). Each component is measured
// as the growth of the heap (mallinfo2) and of RSS (/proc/self/statm, after
// malloc_trim) while it is added. Memory figures hold on a shared
// machine; CPU figures do not (label them).
//
// Cycles: the budget --rate pages/s in simulated time; a host gate (one
// fetch in flight per host, --crawl-delay s between its fetches; it answers
// when the host reopens, and a completion calls Scheduler::ReopenHost); 16
// fetches in flight, each completed 16 selections later (2% fail, 30% changed)
// and observed through the book (PageBook::Note); a sitemap signal for a random
// fetched page every other cycle. Reported: cycles per CPU-second over
// --cycle-cpu s, values evaluated per selection, horizon refreshes, the
// longest single Select and Observe (wall, steady clock), and the status
// pass (Scheduler::Summarize, CPU ms). --restart-only (with --store and the
// --pages the store was written with) times only the restart of a store a
// previous run wrote, and the first Select after it. --away-days D starts
// the run (first Select, cycles, restart) D days after the histories end, as
// a daemon restarted after a long stop finds its store: every page stale.
// Rerun: see bench/scale/README.md.

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/cpu_clock.h"
#include "conf/config.h"
#include "daemon/page_book.h"
#include "daemon/page_meta.h"
#include "daemon/recovery.h"
#include "daemon/url_scope.h"
#include "fetch/outcome.h"
#include "parse/url.h"
#include "sched/scheduler.h"
#include "store/page_store.h"

namespace freshd {
namespace {

using sched::HostId;
using sched::PageId;

constexpr double kDay = 86400;
constexpr double kStart = 1.79e9;  // Unix seconds (2026), the run's start
constexpr size_t kInFlight = 16;

struct Flags {
  size_t pages = 1'000'000;
  size_t hosts = 0;  // 0: pages / 100
  std::string policy = "ncis";
  double rate = 1000;  // pages per second of simulated time
  double crawl_delay = 5;
  double cycle_cpu = 5;  // s of CPU for the timed cycles
  double horizon_scale = sched::kMinHorizonScale;  // the first horizon's
  std::string store;                               // empty: no store part
  bool add_path = false;  // pages through PageBook::Add, as seeds and links
  // > 0: the hosts are loopback addresses 127.x.y.z and the URLs
  // http://127.x.y.z:PORT/... so a daemon can crawl the store against one
  // local server (a catch-all nginx) without resolving 100k names.
  int loopback_port = 0;
  bool restart_only = false;  // only the restart, of the store already there
  // The run (first Select, cycles, restart) starts this long after the
  // histories and the store were written: a daemon that was away.
  double away_days = 0;
};

// When the run starts (the histories end at kStart).
double RunStart(const Flags& f) { return kStart + f.away_days * kDay; }

using bench::CpuNow;

double WallNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Mem {
  double heap = 0, rss = 0;
};

// Heap in use (glibc mallinfo2) and resident set, after returning free
// memory to the system so that RSS follows what is kept.
Mem MemNow() {
  malloc_trim(0);
  Mem m;
  struct mallinfo2 mi = mallinfo2();
  m.heap = static_cast<double>(mi.uordblks + mi.hblkhd);
  long total = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &total, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  m.rss = static_cast<double>(resident) *
          static_cast<double>(sysconf(_SC_PAGESIZE));
  return m;
}

// One row of the memory table: what adding a component grew.
struct Row {
  std::string name;
  Mem delta;
};

class Meter {
 public:
  explicit Meter(double pages) : pages_(pages), last_(MemNow()) {
    start_ = last_;
  }
  void Stage(const std::string& name) {
    Mem now = MemNow();
    rows_.push_back({name, {now.heap - last_.heap, now.rss - last_.rss}});
    last_ = now;
  }
  void Print(const char* title) const {
    std::printf("\n%s (bytes per page, N = %.0f)\n", title, pages_);
    std::printf("  %-44s %10s %10s\n", "component", "heap", "RSS");
    for (const Row& r : rows_) {
      std::printf("  %-44s %10.1f %10.1f\n", r.name.c_str(),
                  r.delta.heap / pages_, r.delta.rss / pages_);
    }
    std::printf("  %-44s %10.1f %10.1f\n", "total",
                (last_.heap - start_.heap) / pages_,
                (last_.rss - start_.rss) / pages_);
  }
  double total_rss() const { return last_.rss - start_.rss; }

 private:
  double pages_;
  Mem start_, last_;
  std::vector<Row> rows_;
};

std::string HostName(const Flags& f, size_t h) {
  char buf[64];
  if (f.loopback_port > 0) {
    // 127.1.0.0 and up: 16M addresses, none of them 127.0.0.1 itself.
    std::snprintf(buf, sizeof buf, "127.%zu.%zu.%zu:%d", 1 + (h >> 16) % 254,
                  (h >> 8) & 255, h & 255, f.loopback_port);
  } else {
    std::snprintf(buf, sizeof buf, "www.site%06zu.example.com", h);
  }
  return buf;
}

// ~75 bytes, like a news or shop URL.
std::string PageUrl(const Flags& f, size_t h, size_t i) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%s://%s/section-%zu/article-%08zu-a-slug-of-words.html",
                f.loopback_port > 0 ? "http" : "https", HostName(f, h).c_str(),
                i % 37, i);
  return buf;
}

std::string HttpDate(double t) {
  const auto secs = static_cast<time_t>(t);
  tm g;
  gmtime_r(&secs, &g);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &g);
  return buf;
}

// The frontier and the loop's structures around it.
struct Frontier {
  std::unique_ptr<sched::Scheduler> sched;
  std::unique_ptr<daemon::PageBook> book;
  std::optional<daemon::UrlScope> scope;
  std::vector<std::string> host_origins;  // as CrawlLoop keeps them
  std::vector<HostId> host_of;            // host id by host index
};

Result<std::unique_ptr<sched::Scheduler>> NewScheduler(const Flags& f) {
  sched::SchedulerOptions so;
  so.policy = f.policy;
  so.rate = f.rate;
  so.burst = 10;
  so.max_pages = std::max<size_t>(so.max_pages, f.pages);
  so.initial_horizon_scale = f.horizon_scale;
  return sched::Scheduler::Create(so);
}

size_t HostOfPage(const Flags& f, size_t i) { return i * f.hosts / f.pages; }

bool Build(const Flags& f, Frontier* fr, Meter* meter) {
  std::mt19937_64 rng(29);
  auto s = NewScheduler(f);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return false;
  }
  fr->sched = std::move(s).value();
  fr->book = std::make_unique<daemon::PageBook>(fr->sched.get());
  meter->Stage("(scheduler and book, empty)");

  fr->host_of.reserve(f.hosts);
  for (size_t h = 0; h < f.hosts; ++h) {
    auto id = fr->book->InternHost(
        parse::UrlAuthority(PageUrl(f, h, h * f.pages / f.hosts)));
    if (!id.ok()) {
      std::fprintf(stderr, "host: %s\n", id.status().ToString().c_str());
      return false;
    }
    fr->host_of.push_back(*id);
  }
  meter->Stage("host table (PageBook::hosts)");

  auto scope = daemon::UrlScope::Create(CrawlerConfig{});
  if (!scope.ok()) {
    std::fprintf(stderr, "scope: %s\n", scope.status().ToString().c_str());
    return false;
  }
  fr->scope.emplace(std::move(scope).value());
  fr->host_origins.resize(f.hosts);
  for (size_t h = 0; h < f.hosts; ++h) {
    const std::string url = PageUrl(f, h, h * f.pages / f.hosts);
    fr->scope->Add(url);
    fr->host_origins[fr->host_of[h]] = parse::UrlOrigin(url);
  }
  meter->Stage("per host: scope + origins (CrawlLoop)");

  for (size_t i = 0; i < f.pages; ++i) {
    const HostId host = fr->host_of[HostOfPage(f, i)];
    auto id = f.add_path ? fr->book->Add(PageUrl(f, HostOfPage(f, i), i), host,
                                         1.0, UINT32_MAX)
                         : fr->sched->AddUrl(host, 1.0);
    if (!id.ok() || *id != i) {
      std::fprintf(stderr, "adding page %zu failed\n", i);
      return false;
    }
  }
  meter->Stage(f.add_path ? "pages (PageBook::Add: scheduler + book)"
                          : "scheduler: pages (AddUrl)");

  std::uniform_real_distribution<double> first(kStart - 20 * kDay,
                                               kStart - 15 * kDay),
      gap(1 * kDay, 7 * kDay), unit(0, 1);
  std::poisson_distribution<int> signals(1.0);
  std::vector<double> second_fetch(f.pages, 0);
  for (PageId p = 0; p < f.pages; p += 2) {
    const double t = first(rng);
    fr->sched->Observe({p, t, sched::FetchedObs{}});
    const double tau = gap(rng);
    const int n = signals(rng);
    for (int k = 0; k < n; ++k) {
      const double at = t + tau * (k + 1) / (n + 1);
      fr->sched->Observe({p, at, sched::SignalObs{{}, at - 3600}});
    }
    sched::FetchedObs again;
    again.changed = unit(rng) < 0.5;
    fr->sched->Observe({p, t + tau, std::move(again)});
    second_fetch[p] = t + tau;
  }
  meter->Stage("scheduler: histories (Observe, half the pages)");

  // The first Select builds the selector's bound order (UpdateAll).
  const double w_index = WallNow(), c_index = CpuNow();
  (void)fr->sched->Select(RunStart(f), [](HostId) { return false; });
  std::printf(
      "first Select (the selector's index) at +%.0f days: %.2f s wall, "
      "%.2f s CPU\n",
      f.away_days, WallNow() - w_index, CpuNow() - c_index);
  meter->Stage("scheduler: selector index (first Select)");

  std::vector<daemon::PageMeta> metas(f.add_path ? 0 : f.pages);
  for (PageId p = 0; p < f.pages; p += 2) {
    char etag[40];
    std::snprintf(etag, sizeof etag, "\"%08llx-%06x\"",
                  static_cast<unsigned long long>(rng() & 0xffffffffULL), p);
    if (f.add_path) {
      // The book owns its pages' fields: a fetch recorded as the daemon
      // records one (its observation is not this stage's).
      fetch::FetchResult fetched;
      fetched.status = 200;
      fetched.outcome = fetch::OutcomeClass::kOk;
      fetched.etag = etag;
      fetched.last_modified = HttpDate(second_fetch[p] - 3600);
      (void)fr->book->RecordFetch(p, fetched, nullptr, rng() | 1,
                                  second_fetch[p]);
      continue;
    }
    // As a restart holds it: the validator strings stay in the store
    // (daemon/page_meta.h); the meta keeps their Last-Modified time. Not
    // flagged kValidators: --store writes no validators (no read back).
    daemon::PageMeta& m = metas[p];
    m.set_last_modified(HttpDate(second_fetch[p] - 3600));
    m.set_last_outcome(fetch::OutcomeClass::kOk);
    m.content_hash = rng() | 1;
    m.last_status = 200;
  }
  meter->Stage(f.add_path ? "page meta strings (fetched pages)"
                          : "page meta (PageMeta vector)");
  if (f.add_path) return true;

  // As recovery hands them over: a vector of strings, then Assign (which
  // may re-pack them); measured once it is done.
  std::vector<std::string> urls;
  urls.reserve(f.pages);
  for (size_t i = 0; i < f.pages; ++i) {
    urls.push_back(PageUrl(f, HostOfPage(f, i), i));
  }
  fr->book->Assign(std::move(urls), std::move(metas));
  meter->Stage("URLs + URL index (PageBook::Assign)");
  return true;
}

struct CycleResult {
  double cycles_per_cpu_s = 0, evals_per_select = 0, empty_share = 0;
  double max_select_ms = 0, max_observe_ms = 0, max_cycle_ms = 0;
  double summary_ms = 0;
  // The daemon's sliced pass (CrawlLoop::AdvanceStatusPasses: 4,096-page
  // slices until 2.5 ms of CPU a turn): its turns and the longest turn.
  int summary_turns = 0;
  double summary_turn_ms = 0;
  uint64_t cycles = 0, refreshes = 0;
  double bounds_per_select = 0;  // the horizon's bounds (staged or all)
  double scale_start = 0, scale_end = 0;  // Scheduler::horizon_scale()
};

CycleResult RunCycles(const Flags& f, Frontier& fr) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<size_t> any_fetched(0, (f.pages - 1) / 2);
  sched::Scheduler& s = *fr.sched;
  daemon::PageBook& book = *fr.book;
  std::vector<double> host_next(book.hosts().size(), 0);
  std::vector<uint8_t> host_busy(book.hosts().size(), 0);
  std::deque<PageId> in_flight;
  double now = RunStart(f);
  const double dt = 1 / f.rate;
  // When a host may go: closed until its fetch completes (ReopenHost), then
  // its crawl delay.
  const sched::Scheduler::HostGate gate = [&](HostId h) {
    return host_busy[h] > 0 ? sched::kHostClosedUntilReopened
                            : sched::HostOpening{host_next[h]};
  };
  CycleResult r;
  uint64_t selected = 0, evaluations = 0, empty = 0;
  const uint64_t refreshes0 = s.horizon_refreshes();

  auto observe = [&](const sched::Observation& obs) {
    const double w0 = WallNow();
    book.Observe(obs);
    r.max_observe_ms = std::max(r.max_observe_ms, 1e3 * (WallNow() - w0));
  };
  auto cycle = [&] {
    const double c0 = WallNow();
    now += dt;
    if (unit(rng) < 0.5) {  // a sitemap signal for a fetched page
      const auto p = static_cast<PageId>(2 * any_fetched(rng));
      const sched::SignalObs sig{sched::SignalSource::kSitemapLastmod,
                                 now - 60};
      if (!s.IsStaleSignal(p, now, sig)) observe({p, now, sig});
    }
    const double w0 = WallNow();
    std::optional<PageId> p = s.Select(now, gate);
    r.max_select_ms = std::max(r.max_select_ms, 1e3 * (WallNow() - w0));
    if (p) {
      ++selected;
      evaluations += s.last_evaluations();
      in_flight.push_back(*p);
      ++host_busy[s.page(*p).host];
    } else {
      ++empty;
    }
    if (in_flight.size() > kInFlight) {
      const PageId q = in_flight.front();
      in_flight.pop_front();
      const HostId h = s.page(q).host;
      --host_busy[h];
      host_next[h] = now + f.crawl_delay;
      s.ReopenHost(h);  // its slot freed
      if (unit(rng) < 0.02) {
        observe({q, now, sched::FailedObs{sched::FailureClass::kNetwork}});
      } else {
        sched::FetchedObs obs;
        obs.changed = s.page(q).fetched() && unit(rng) < 0.3;
        observe({q, now, std::move(obs)});
      }
    }
    r.max_cycle_ms = std::max(r.max_cycle_ms, 1e3 * (WallNow() - c0));
  };
  // Warm-up (not timed): the first refreshes and the in-flight window.
  for (int i = 0; i < 2000; ++i) cycle();
  r = CycleResult{};
  selected = evaluations = empty = 0;
  const uint64_t bounds0 = s.bound_evaluations();
  r.scale_start = s.horizon_scale();
  double cpu = 0;
  int chunk = 256;
  while (cpu < f.cycle_cpu) {
    const double c0 = CpuNow();
    for (int i = 0; i < chunk; ++i) cycle();
    cpu += CpuNow() - c0;
    r.cycles += static_cast<uint64_t>(chunk);
    if (chunk < 65536) chunk *= 2;
  }
  r.cycles_per_cpu_s = static_cast<double>(r.cycles) / cpu;
  r.evals_per_select = static_cast<double>(evaluations) /
                       static_cast<double>(std::max<uint64_t>(1, selected));
  r.empty_share =
      static_cast<double>(empty) / static_cast<double>(selected + empty);
  r.refreshes = s.horizon_refreshes() - refreshes0;
  r.bounds_per_select = static_cast<double>(s.bound_evaluations() - bounds0) /
                        static_cast<double>(std::max<uint64_t>(1, selected));
  r.scale_end = s.horizon_scale();
  // The marks of the run are the next commit's; not this benchmark's.
  store::StoreBatch discard;
  book.TakeBatch(&discard);
  for (int i = 0; i < 3; ++i) {
    const double c0 = CpuNow();
    volatile double sink = s.Summarize(now).estimated_freshness;
    (void)sink;
    r.summary_ms = std::max(r.summary_ms, 1e3 * (CpuNow() - c0));
  }
  sched::Scheduler::SummaryPass pass;
  for (bool done = false; !done;) {
    const double c0 = CpuNow();
    do {
      done = s.SummarizeSome(now, 4096, &pass);
    } while (!done && CpuNow() - c0 < 2.5e-3);
    ++r.summary_turns;
    r.summary_turn_ms = std::max(r.summary_turn_ms, 1e3 * (CpuNow() - c0));
  }
  return r;
}

// The URL index's costs off the selection path (the URLs live in a file):
// url(id) at random (dispatch, a record, /page: one pread from the page
// cache), Find of a known URL (dedupe of a link: a key match, then one read
// to compare) and of an unknown one (no read). Wall and CPU ns per call.
void UrlReads(const Flags& f, const Frontier& fr) {
  constexpr size_t kCalls = 200'000;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<size_t> any(0, f.pages - 1);
  std::vector<std::string> known, unknown;
  std::vector<PageId> ids;
  for (size_t k = 0; k < kCalls; ++k) {
    const size_t i = any(rng);
    ids.push_back(static_cast<PageId>(i));
    known.push_back(PageUrl(f, HostOfPage(f, i), i));
    unknown.push_back(PageUrl(f, HostOfPage(f, i), i + f.pages));
  }
  auto time = [&](auto&& call) {
    const double w0 = WallNow(), c0 = CpuNow();
    size_t sink = 0;
    for (size_t k = 0; k < kCalls; ++k) sink += call(k);
    const double wall = WallNow() - w0, cpu = CpuNow() - c0;
    if (sink == 0) std::printf("  (no result)\n");
    return std::pair(1e9 * wall / kCalls, 1e9 * cpu / kCalls);
  };
  const auto read = time([&](size_t k) { return fr.book->url(ids[k]).size(); });
  const auto hit = time([&](size_t k) {
    return static_cast<size_t>(fr.book->Find(known[k]) == ids[k]);
  });
  const auto miss = time([&](size_t k) {
    return static_cast<size_t>(!fr.book->Find(unknown[k]).has_value());
  });
  std::printf(
      "\nURL index, %zu calls each at random (ns per call, wall / CPU; "
      "shared machine, indicative)\n"
      "  url(id) %.0f / %.0f; Find, known %.0f / %.0f; Find, unknown "
      "%.0f / %.0f\n",
      kCalls, read.first, read.second, hit.first, hit.second, miss.first,
      miss.second);
}

// Writes every page, host and the global record through the page book into
// a fresh store at f.store; false on an error.
bool WriteStore(const Flags& f, Frontier& fr, double* seconds,
                uint64_t* bytes) {
  std::filesystem::remove_all(f.store);
  StoreConfig sc;
  sc.path = f.store;
  sc.sync_interval_s = 1e9;
  auto store = store::PageStore::Open(sc);
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return false;
  }
  const double w0 = WallNow();
  constexpr size_t kGroup = 20000;
  for (size_t start = 0; start < f.pages; start += kGroup) {
    const size_t end = std::min(f.pages, start + kGroup);
    fr.book->MarkForRewrite(static_cast<PageId>(start),
                            static_cast<PageId>(end));
    store::StoreBatch batch;
    uint64_t failures = 0;
    fr.book->TakeBatch(&batch, &failures);
    if (failures > 0) {
      std::fprintf(stderr, "store: %llu records over the limits\n",
                   static_cast<unsigned long long>(failures));
      return false;
    }
    if (Status st = (*store)->Commit(batch, kStart); !st.ok()) {
      std::fprintf(stderr, "commit: %s\n", st.ToString().c_str());
      return false;
    }
  }
  if (Status st = (*store)->MaybeSync(kStart, true); !st.ok()) return false;
  if (Status st = (*store)->Close(); !st.ok()) return false;
  *seconds = WallNow() - w0;
  *bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(f.store)) {
    if (e.is_regular_file()) *bytes += e.file_size();
  }
  return true;
}

// The restart: CrawlLoop::Init's RebuildScheduler streaming into the book.
bool Recover(const Flags& f) {
  Meter meter(static_cast<double>(f.pages));
  StoreConfig sc;
  sc.path = f.store;
  auto store = store::PageStore::Open(sc);
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return false;
  }
  meter.Stage("store open");
  auto s = NewScheduler(f);
  if (!s.ok()) return false;
  std::unique_ptr<sched::Scheduler> sched = std::move(s).value();
  auto book = std::make_unique<daemon::PageBook>(sched.get());
  const double w0 = WallNow(), c0 = CpuNow();
  daemon::RecoveryOptions options;
  const double start = RunStart(f);
  options.clock = [start] { return start; };  // as CrawlLoop::Init (its now)
  book->ReserveUrls((*store)->page_count());
  auto report = book->Restore(
      **store, [](sched::PageId, std::string_view) {}, options);
  if (!report.ok()) {
    std::fprintf(stderr, "recovery: %s\n", report.status().ToString().c_str());
    return false;
  }
  const double wall = WallNow() - w0, cpu = CpuNow() - c0;
  meter.Stage("RebuildScheduler into the PageBook");
  // The first Select builds the selector's index (a full refresh): part of
  // what a restart costs before the crawl goes on.
  const double w1 = WallNow(), c1 = CpuNow();
  (void)sched->Select(start, [](HostId) { return false; });
  const double select_wall = WallNow() - w1, select_cpu = CpuNow() - c1;
  meter.Stage("selector index (first Select)");
  std::printf(
      "\nrecovery of %llu pages (%llu reset, %llu hosts): %.2f s wall, "
      "%.2f s CPU, %.0f pages/s; then the first Select %.2f s wall, %.2f s "
      "CPU; together %.2f s wall, %.2f s CPU\n",
      static_cast<unsigned long long>(report->pages),
      static_cast<unsigned long long>(report->pages_reset),
      static_cast<unsigned long long>(report->hosts), wall, cpu,
      static_cast<double>(f.pages) / wall, select_wall, select_cpu,
      wall + select_wall, cpu + select_cpu);
  meter.Print("memory after the restart");
  // A dispatch's validator read (daemon/page_book.h "Validators out of
  // memory"): one point read of a random page's record, its URL read first
  // (not timed: url(id) above).
  {
    std::mt19937_64 rng(13);
    constexpr int kReads = 200000;
    std::vector<std::string> urls(kReads);
    for (std::string& u : urls) {
      u = book->url(static_cast<PageId>(rng() % f.pages));
    }
    int found = 0;
    const double w2 = WallNow(), c2 = CpuNow();
    for (const std::string& u : urls) {
      found += (*store)->GetPage(parse::UrlKey(u), u).ok();
    }
    std::printf(
        "validator read (PageStore::GetPage, random page, %d reads, %d "
        "found): %.0f ns wall / %.0f ns CPU a read\n",
        kReads, found, (WallNow() - w2) / kReads * 1e9,
        (CpuNow() - c2) / kReads * 1e9);
  }
  return report->pages + report->pages_reset == f.pages;
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--pages N] [--ten-million] [--hosts H] "
               "[--policy P] [--rate R] [--crawl-delay S] [--cycle-cpu S] "
               "[--horizon-scale S] [--store DIR] [--add] [--restart-only] "
               "[--loopback-port P] [--away-days D]\n",
               argv0);
  return 2;
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char* v = nullptr;
    if (a == "--ten-million") {
      f.pages = 10'000'000;
      f.hosts = 100'000;
    } else if (a == "--pages" && (v = next())) {
      f.pages = std::strtoull(v, nullptr, 10);
    } else if (a == "--hosts" && (v = next())) {
      f.hosts = std::strtoull(v, nullptr, 10);
    } else if (a == "--policy" && (v = next())) {
      f.policy = v;
    } else if (a == "--rate" && (v = next())) {
      f.rate = std::strtod(v, nullptr);
    } else if (a == "--crawl-delay" && (v = next())) {
      f.crawl_delay = std::strtod(v, nullptr);
    } else if (a == "--cycle-cpu" && (v = next())) {
      f.cycle_cpu = std::strtod(v, nullptr);
    } else if (a == "--horizon-scale" && (v = next())) {
      f.horizon_scale = std::strtod(v, nullptr);
    } else if (a == "--add") {
      f.add_path = true;
    } else if (a == "--away-days" && (v = next())) {
      f.away_days = std::strtod(v, nullptr);
    } else if (a == "--restart-only") {
      f.restart_only = true;
    } else if (a == "--store" && (v = next())) {
      f.store = v;
    } else if (a == "--loopback-port" && (v = next())) {
      f.loopback_port = std::atoi(v);
    } else {
      return Usage(argv[0]);
    }
  }
  if (f.hosts == 0) f.hosts = std::max<size_t>(1, f.pages / 100);
  if (f.pages < 2 || f.hosts > f.pages || f.pages > (size_t{1} << 31) ||
      !(f.rate > 0) || (f.restart_only && f.store.empty()) ||
      f.loopback_port < 0 || f.loopback_port > 65535 ||
      (f.loopback_port > 0 && f.hosts > 254 * 65536)) {
    return Usage(argv[0]);
  }
  if (f.restart_only) {  // the store a previous run with --store wrote
    std::printf("scale_bench: the restart of %zu pages from %s\n", f.pages,
                f.store.c_str());
    return Recover(f) ? 0 : 1;
  }
  std::printf(
      "scale_bench: %zu pages, %zu hosts, policy %s, "
      "sizeof(PageState) %zu, sizeof(PageMeta) %zu\n",
      f.pages, f.hosts, f.policy.c_str(), sched::kPageStateBytes,
      sizeof(daemon::PageMeta));
  Meter meter(static_cast<double>(f.pages));
  Frontier fr;
  const double b0 = WallNow();
  if (!Build(f, &fr, &meter)) return 1;
  std::printf("built in %.1f s wall\n", WallNow() - b0);
  meter.Print("memory of the frontier (restart order)");
  std::printf("  RSS all-in: %.1f MiB, %.1f B/page\n", MemNow().rss / (1 << 20),
              MemNow().rss / static_cast<double>(f.pages));

  const CycleResult c = RunCycles(f, fr);
  std::printf(
      "\ncycles (CPU figures: shared machine, indicative)\n"
      "  Select+Observe cycles per CPU-second %.0f over %llu cycles; "
      "%.1f values evaluated per selection; %.1f%% empty selections; "
      "%llu horizon refreshes; %.1f bounds computed per selection; horizon "
      "scale %.2f -> %.2f\n"
      "  longest Select %.2f ms, longest Observe %.2f ms, longest cycle "
      "%.2f ms (wall); status pass (Summarize) %.1f ms CPU, sliced as the "
      "daemon does: %d turns, the longest %.2f ms CPU\n",
      c.cycles_per_cpu_s, static_cast<unsigned long long>(c.cycles),
      c.evals_per_select, 100 * c.empty_share,
      static_cast<unsigned long long>(c.refreshes), c.bounds_per_select,
      c.scale_start, c.scale_end, c.max_select_ms, c.max_observe_ms,
      c.max_cycle_ms, c.summary_ms, c.summary_turns, c.summary_turn_ms);
  std::printf("  RSS after the cycles: %.1f B/page\n",
              MemNow().rss / static_cast<double>(f.pages));

  UrlReads(f, fr);

  if (f.store.empty()) return 0;
  double write_s = 0;
  uint64_t bytes = 0;
  if (!WriteStore(f, fr, &write_s, &bytes)) return 1;
  std::printf(
      "\nstore: %zu pages written through the page book in %.1f s "
      "wall, %.1f B/page on disk\n",
      f.pages, write_s,
      static_cast<double>(bytes) / static_cast<double>(f.pages));
  fr.book.reset();  // (it borrows the scheduler)
  fr = Frontier{};
  return Recover(f) ? 0 : 1;
}

}  // namespace
}  // namespace freshd

int main(int argc, char** argv) { return freshd::Main(argc, argv); }
