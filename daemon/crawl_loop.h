// CrawlLoop: the daemon's event loop wiring (DESIGN.md "data flows one
// way"): the scheduler picks a page whenever the token bucket and the host's
// politeness gate allow; the Crawler fetches it (robots.txt first); the body
// is parsed (text hash, sketch, links); the outcome becomes one Observation;
// page + host state go to the store in one batch (and to WARC if
// configured). Links and sitemap entries in scope become new pages; sitemap
// lastmod values newer than our copy and POST /signal hints become signals.
// On start the scheduler is rebuilt from the store (daemon/recovery.h).
//
// Time: the scheduler and the store get Unix seconds; the Crawler its own
// steady clock. Sitemaps are fetched when robots.txt is, outside the token
// budget: at most kMaxSitemapsPerOrigin per origin and round. robots.txt is
// re-read once its cached copy expires ([politeness] robots_cache) on every
// host the loop has crawled, whether or not it is crawling it now.
// Not thread-safe: everything runs on the io_context's one thread, including
// the status endpoint's calls (so they need no locks), except parsing: a
// fetched HTML body is extracted and fingerprinted on a small worker pool
// (DESIGN.md), and the result comes back to the io thread; the page stays in
// flight (and Stop waits for it) until then. Sitemaps are parsed on the pool
// too and applied kSitemapSlice entries per turn of the io thread.

#ifndef FRESHD_DAEMON_CRAWL_LOOP_H_
#define FRESHD_DAEMON_CRAWL_LOOP_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "daemon/cost_bounded_cache.h"
#include "daemon/host_table.h"
#include "daemon/loop_lag_probe.h"
#include "daemon/recovery.h"
#include "daemon/url_index.h"
#include "daemon/url_scope.h"
#include "fetch/crawler.h"
#include "parse/html_fingerprint.h"
#include "parse/public_suffix.h"
#include "parse/sitemap.h"
#include "sched/scheduler.h"
#include "store/page_store.h"
#include "store/warc_writer.h"

namespace freshd::daemon {

inline constexpr int kMaxSitemapsPerOrigin = 20;
// Sitemap entries applied per turn of the io thread (a few ms of work).
inline constexpr size_t kSitemapSlice = 4096;
inline constexpr double kFetchStateSaveS = 60;
// How often every contacted host's robots.txt (and so its sitemaps) is
// checked for expiry: a quarter of [politeness] robots_cache, within these.
inline constexpr double kMinRobotsRefreshS = 0.25;
inline constexpr double kMaxRobotsRefreshS = 3600;
// CopySummary's cache (daemon/cost_bounded_cache.h).
inline constexpr double kSummaryMinCostS = 1e-3;
inline constexpr double kSummaryCostFactor = 100;

class CrawlLoop {
 public:
  // Opens the store, rebuilds the scheduler from it and creates the
  // crawler. Errors: the store's (IOError when locked by another freshd,
  // Corruption), InvalidArgument for an unusable config.
  static Result<std::unique_ptr<CrawlLoop>> Create(boost::asio::io_context& io,
                                                   const Config& config);
  ~CrawlLoop();

  // Adds a seed (normalized; its host joins the scope). InvalidArgument for
  // a URL that does not normalize or is not http(s); ResourceExhausted past
  // [crawler] max_urls. A known URL only gets its importance raised to
  // `weight` (never lowered); a raise is written to the store at once, so it
  // survives a restart before the page's next fetch.
  Status AddSeed(std::string_view url, double weight);

  void Start();
  // Stops selecting, waits up to `grace_s` for fetches in flight, syncs the
  // store and closes WARC output; then `done` runs (on the io thread).
  void Stop(double grace_s, std::function<void(Status)> done);
  // Changes the budget (pages per second) from now on; nothing recomputed.
  void SetRate(double pages_per_second);

  // The status endpoint's views (DESIGN.md contract).
  nlohmann::json StatusJson() const;
  std::string MetricsText() const;
  // NotFound for a URL the crawler does not know.
  Result<nlohmann::json> PageJson(std::string_view url) const;
  // POST /signal: a change hint per known URL, claiming the change time
  // `changed_at` (UTC seconds; −∞: none); unknown in-scope URLs are added as
  // new pages. Returns {"signals": n, "stale": n, "added": n, "ignored": n},
  // stale: hints about a change the copy already has (SignalPage), dropped.
  nlohmann::json Signal(
      const std::vector<std::string>& urls,
      double changed_at = -std::numeric_limits<double>::infinity());

  const RecoveryReport& recovery() const { return recovery_; }
  // The newest sitemap lastmod considered as a change signal for `page`
  // (taken, or dropped as stale; Unix seconds; 0: none, or an unknown id);
  // kept in its record across restarts.
  double signal_lastmod(sched::PageId page) const {
    return page < last_signal_lastmod_.size() ? last_signal_lastmod_[page] : 0;
  }
  const std::vector<std::string>& urls() const { return urls_.urls(); }
  const sched::Scheduler& scheduler() const { return *sched_; }
  const fetch::Crawler& crawler() const { return *crawler_; }
  // Writes every host's robots cache and gate state to the store (also
  // done every kFetchStateSaveS and on Stop).
  Status SaveFetchState();

  // Tests: runs on the parse worker at the start of each HTML parse (set it
  // before Start). Lets a test hold a parse and watch the io thread go on.
  void set_parse_hook_for_testing(std::function<void()> hook) {
    parse_hook_ = std::move(hook);
  }

 private:
  struct InFlight {
    store::PageRecord previous;  // what the store held when dispatched
    double started_unix = 0;
  };

  CrawlLoop(boost::asio::io_context& io, const Config& config);
  Status Init();
  Status LoadFetchState();
  void ScheduleTick(double delay_s);
  void Tick();
  void Dispatch(sched::PageId page, double now);
  // Has the crawler re-read the robots.txt (and sitemaps) of every host the
  // loop has handed a URL to whose cached copy expired: so sitemap signals
  // arrive each robots cache period even on hosts the scheduler leaves
  // alone (without them, nothing would raise those pages' values).
  void RefreshRobots(double now);
  // Remembers the origin of `page`'s host (the first URL dispatched to it,
  // or a recovered fetched page): RefreshRobots covers it from then on.
  void NoteOrigin(sched::PageId page);
  void OnFetched(sched::PageId page, fetch::FetchResult result);
  // The rest of OnFetched on the io thread; `parsed`: the body's
  // fingerprint when it was HTML (computed on the parse pool).
  void Complete(sched::PageId page, fetch::FetchResult result,
                std::optional<Result<parse::PageFingerprint>> parsed);
  void OnSitemaps(const std::string& origin,
                  const std::vector<std::string>& sitemaps);
  void FetchSitemap(const std::string& url, int depth);
  void OnSitemap(fetch::FetchResult result, int depth);
  // On the io thread, entries [from, from + kSitemapSlice) of a parsed
  // sitemap: child sitemaps fetched, in-scope URLs added, advanced lastmods
  // taken as signals, one store batch; then the rest is posted behind
  // whatever else the io thread has queued.
  void ApplySitemap(std::shared_ptr<const parse::SitemapResult> sitemap,
                    size_t from, int depth);
  // The id of `url` (normalized), adding it when new and in scope; a new
  // page's record goes into `batch` (the caller commits it). A `seed` that
  // is already known gets its importance raised to `importance` if lower,
  // and then its rewritten record goes into `batch` too (PersistPageState),
  // so the raise survives a restart before the page's next fetch.
  std::optional<sched::PageId> AddUrl(const std::string& url, double importance,
                                      bool seed, store::StoreBatch* batch);
  bool InScope(const std::string& url) const;
  // A seed (or a recovered page): its host, and its registrable domain
  // under seed-domains, are in scope from now on.
  void AddScope(std::string_view normalized_url);
  // Hands a signal to the scheduler and counts it (signals_total), unless it
  // is stale (sched::Scheduler::IsStaleSignal: changed_at, a lastmod, not
  // after the last fetch; a hint within [sched] signal_window of it): then
  // it only counts it (signals_stale_total). True if taken. Every signal,
  // sitemap lastmod or pushed hint, goes through here.
  bool SignalPage(sched::PageId page, double now, sched::SignalSource source,
                  double changed_at = -std::numeric_limits<double>::infinity());
  // Adds the page's and its host's records to `batch` and commits it: one
  // LevelDB batch per observation, new pages found by it included.
  Status Persist(sched::PageId page, store::PageRecord record, double now,
                 store::StoreBatch* batch);
  // Between fetches (a signal taken, a seed's importance raised): the
  // page's stored record with its current scheduler state (signal count,
  // importance) and lastmod into `batch`, so a restart loses no signal or
  // raise and takes no lastmod twice. Store errors are counted and logged.
  void PersistPageState(sched::PageId page, store::StoreBatch* batch);
  void Commit(store::StoreBatch* batch, double now);  // counts failures
  void CountOutcome(std::string_view name);
  // The O(pages) figures of /status and /metrics (estimated freshness and
  // the queue counts: sched::Scheduler::Summarize, ~21 ms at 1M pages) at
  // `now`: exact on every call while a pass takes under kSummaryMinCostS,
  // else reused for up to kSummaryCostFactor times its cost (about 2 s at
  // 1M pages), so polling takes at most ~1% of the io thread.
  const sched::Scheduler::Summary& CopySummary(double now) const;

  boost::asio::io_context& io_;
  Config config_;
  boost::asio::steady_timer tick_;
  LoopLagProbe lag_probe_;  // /status loop_lag_ms
  std::unique_ptr<store::PageStore> store_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<fetch::Crawler> crawler_;
  std::unique_ptr<store::WarcWriter> warc_;
  HostTable hosts_;
  UrlIndex urls_;                              // PageId <-> normalized URL
  std::vector<uint32_t> host_pages_;           // pages per HostId
  std::vector<std::string> host_fetch_state_;  // per HostId, as stored
  double last_fetch_state_save_ = 0;
  double next_robots_refresh_ = 0;           // Unix seconds
  std::vector<std::string> host_origins_;    // by host id; "": none yet
  std::vector<double> last_signal_lastmod_;  // per page, 0: none
  std::optional<UrlScope> scope_;  // [crawler] scope, include, exclude
  std::map<sched::PageId, InFlight> in_flight_;
  std::map<std::string, int> sitemaps_this_round_;  // per origin
  RecoveryReport recovery_;
  std::function<void()> parse_hook_;  // tests only; called on the pool

  // Counters for /status and /metrics.
  double started_unix_ = 0;
  uint64_t fetched_total_ = 0;
  uint64_t signals_total_ = 0;
  uint64_t signals_stale_total_ = 0;  // dropped by SignalPage
  uint64_t robots_denied_total_ = 0;
  uint64_t sitemaps_fetched_ = 0;
  uint64_t store_errors_ = 0;
  std::map<std::string, uint64_t, std::less<>> outcomes_;
  mutable std::vector<double> recent_fetches_;  // completions, last 60 s
  mutable CostBoundedCache<sched::Scheduler::Summary> summary_cache_{
      kSummaryMinCostS, kSummaryCostFactor};  // steady clock; thread CPU cost
  bool started_ = false;
  bool stopping_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // Last member: destroyed (joined) first, so no parse outlives the rest.
  std::unique_ptr<boost::asio::thread_pool> parse_pool_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_CRAWL_LOOP_H_
