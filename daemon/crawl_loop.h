// CrawlLoop: the daemon's engine (daemon/README.md has the picture). It
// creates the parts, hands each what it needs at construction (a lower part
// or a function), owns their lifetimes and carries one page's path between
// them; it does nothing else. The parts, each with one owner and thread:
//   * Dispatcher (dispatcher.h): when a fetch starts — in flight, host
//     slots, wake-ups, limited_by; the scheduler's thread;
//   * PageObserver (page_observer.h): a fetched page -> the book, the
//     scheduler, the change feed, WARC, new pages; scheduler's;
//   * Frontier (frontier.h): scope, [[rule]]s, adding URLs; scheduler's;
//   * SignalIntake (signal_intake.h): sitemaps, site feeds, dated signals
//     and hints, robots.txt refresh; scheduler's;
//   * ParseQueue (parse_queue.h): the one parse job of pages, sitemaps and
//     feeds; the parse pool ([engine] parse_threads);
//   * GroupCommitter (group_committer.h): pending WARC and feed items and
//     commit waiters, to the StoreWriter; scheduler's;
//   * NetworkStage: libcurl multi + Asio; the network thread;
//   * StoreWriter: LevelDB and WARC, group commits; the writer thread;
//   * PageBook + Scheduler: every page's state; the scheduler's thread;
//   * StatusViews (status_views.h): counters and read-only views (/status,
//     /metrics, /page, the status page), the sliced summary passes, the
//     operator's history; scheduler's (its snapshot: any thread);
//   * ClusterAdapter (cluster_adapter.h): node, work router, change
//     publisher, budget share and λ; scheduler's (its callbacks posted
//     there; page and change publishing on the writer's thread).
// The scheduler's thread is the io_context handed to Create, which the
// caller runs. A page's path: Dispatcher → StartFetch → network →
// OnNetworkDone → ParseQueue → Complete → PageObserver (observe, mark,
// links to the Frontier) → GroupCommitter → StoreWriter.
// Hand-offs between threads go in batches (daemon/handoff_queue.h): a
// dispatch pass's fetch requests to the network thread, one network turn's
// completions and the parse pool's results to the scheduler's thread; the
// completions of one batch then dispatch once (DispatchSoon) and commit
// once.
// Backpressure: while more than [engine] queue_bytes of bodies wait for the
// parse pool or the writer, dispatch pauses; /status "limited_by" names the
// stage that limits the rate (network, politeness, parse, write, budget).
// On start the scheduler is rebuilt from the store (daemon/recovery.h).
// Time: the scheduler and the store get Unix seconds; the fetcher its own
// steady clock.
// Cluster ([cluster] nats_url set; daemon/cluster_adapter.h): only pages
// of hosts in shards this node owns are selected, robots.txt (and so
// sitemaps) refreshed only for them, and the scheduler runs at its share of
// [budget] rate (rate / live nodes); the cluster node's thread posts each
// change of ownership here. Links, sitemap entries, hints and seeds of other
// nodes' shards go to their owners through the work stream, and each page
// record committed goes to the page stream, from which a shard acquired is
// rebuilt before its hosts are fetched (cluster/work_router.h). Without
// nats_url none of it runs.
// Thread-safety: every method runs on the scheduler's thread (the status
// endpoint reaches it by posting there: daemon/status_service.h), except
// status_snapshot(), which is safe from any thread, and OnNetworkDone
// (network thread: it only posts); the writer's hooks run the cluster
// adapter's publishers on the writer thread.

#ifndef FRESHD_DAEMON_CRAWL_LOOP_H_
#define FRESHD_DAEMON_CRAWL_LOOP_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "cluster/work_router.h"
#include "conf/config.h"
#include "conf/rules.h"
#include "daemon/cluster_adapter.h"
#include "daemon/dispatcher.h"
#include "daemon/fetch_metrics.h"
#include "daemon/frontier.h"
#include "daemon/group_committer.h"
#include "daemon/handoff_queue.h"
#include "daemon/indexnow_receiver.h"
#include "daemon/loop_lag_probe.h"
#include "daemon/network_stage.h"
#include "daemon/operator_controls.h"
#include "daemon/page_book.h"
#include "daemon/page_observer.h"
#include "daemon/parse_queue.h"
#include "daemon/recovery.h"
#include "daemon/signal_intake.h"
#include "daemon/status_history.h"
#include "daemon/status_views.h"
#include "daemon/store_writer.h"
#include "daemon/url_scope.h"
#include "daemon/websub_subscriptions.h"
#include "parse/feed.h"
#include "parse/html_fingerprint.h"
#include "parse/public_suffix.h"
#include "parse/sitemap.h"
#include "sched/rate_shares.h"
#include "sched/scheduler.h"
#include "store/page_store.h"
#include "store/warc_writer.h"

namespace freshd::daemon {

// /status "controls" lists at most this many (GET /control: all).
inline constexpr size_t kStatusControlsListed = 100;
// /status "frontier" lists this many hosts at max_urls_per_host (the
// ones that turned most URLs away).
inline constexpr size_t kStatusFrontierHostsListed = 10;

class CrawlLoop {
 public:
  // Opens the store, rebuilds the scheduler from it and creates the stages
  // (not started). Errors: the store's (IOError when locked by another
  // freshd, Corruption), InvalidArgument for an unusable config.
  // `progress`, if not null, follows the rebuild (another thread may read
  // it while Create runs; it must outlive the call).
  static Result<std::unique_ptr<CrawlLoop>> Create(
      boost::asio::io_context& io, const Config& config,
      RecoveryProgress* progress = nullptr);
  ~CrawlLoop();

  // Adds a seed (normalized; its host joins the scope). InvalidArgument for
  // a URL that does not normalize or is not http(s); ResourceExhausted past
  // [crawler] max_urls or for a URL an operator block refuses
  // (OperatorControls). A known URL only gets its importance raised to
  // `weight` (never lowered), written with the next group commit.
  Status AddSeed(std::string_view url, double weight);

  void Start();
  // Stops selecting, waits up to `grace_s` for fetches in flight, saves the
  // fetch state, commits and syncs the store, closes WARC output and stops
  // the stages; then `done` runs (on the scheduler's thread).
  void Stop(double grace_s, std::function<void(Status)> done);
  // Changes the budget (pages per second) from now on; nothing recomputed.
  void SetRate(double pages_per_second);
  // Replaces the operators' rules ([[rule]], conf/config.h; on SIGHUP): every
  // known page is matched again, one pass over the book on the scheduler's
  // thread (a few regex searches a page: seconds at 10M pages with url
  // rules). InvalidArgument for rules the config loader would refuse; the
  // rules in force are then kept. Call on the scheduler's thread.
  Status SetRules(const std::vector<RuleConfig>& rules);

  // The status endpoint's views (docs/DESIGN.md contract; StatusViews,
  // daemon/status_views.h). NotFound for a URL the crawler does not know.
  nlohmann::json StatusJson() const { return views_->StatusJson(); }
  std::string MetricsText() const { return views_->MetricsText(); }
  Result<nlohmann::json> PageJson(std::string_view url) const {
    return views_->PageJson(url);
  }
  // The status page's views (daemon/status_page.h): GET /hosts (`limit` ≤
  // kMaxHostsPage), /history, /overview.
  nlohmann::json HostsJson(size_t offset, size_t limit,
                           std::string_view sort) const {
    return views_->HostsJson(offset, limit, sort);
  }
  nlohmann::json HistoryJson() const { return views_->HistoryJson(); }
  nlohmann::json OverviewJson() const { return views_->OverviewJson(); }
  // POST /signal: a change hint per known URL, claiming the change time
  // `changed_at` (UTC seconds; −∞: none); unknown in-scope URLs are added as
  // new pages. Returns {"signals": n, "stale": n, "added": n, "ignored": n},
  // stale: hints about a change the copy already has (SignalPage), dropped.
  // `committed` (if given) runs on this thread once the hints are durable.
  // `source`: whose hints they are (IndexNow pings: kIndexNow), each source
  // learned apart (sched/signal_estimator.h).
  nlohmann::json Signal(
      const std::vector<std::string>& urls,
      double changed_at = -std::numeric_limits<double>::infinity(),
      std::function<void(Status)> committed = nullptr,
      sched::SignalSource source = sched::SignalSource::kPushedHint);

  // POST /control (daemon/operator_controls.h): parses and applies one
  // operator control from `body`, in force from the next dispatch (a held
  // host leaves the selection, a pattern's pages are matched in one pass
  // over the book); durable with the next group commit (requested now).
  // Returns GET /control's listing. InvalidArgument (400): a bad body or
  // pattern, a refused transition; NotFound (404): no such control;
  // ResourceExhausted (409): over the controls' bounds.
  Result<nlohmann::json> Control(std::string_view body);
  // GET /control: the counts, held_pages and the controls (the first
  // `limit`; by default all, at most OperatorControls::Limits::max_controls).
  nlohmann::json ControlsJson(
      size_t limit = std::numeric_limits<size_t>::max()) const;
  const OperatorControls& controls() const { return *controls_; }

  // `committed` runs on this thread once everything changed so far is
  // durable (committed by the writer): how POST /signal acknowledges.
  // Clustered: also once the hints POST /signal routed to other nodes are
  // stored in the work stream.
  void WhenCommitted(std::function<void(Status)> committed);

  // The last StatusJson computed (at most about a second old while the loop
  // runs); any thread. Null before the first.
  std::shared_ptr<const nlohmann::json> status_snapshot() const {
    return views_->snapshot();
  }

  // The IndexNow receiver (daemon/indexnow_receiver.h) the push listener
  // hands pings to, on this thread; null without [push] listen.
  IndexNowReceiver* indexnow() { return indexnow_.get(); }
  // The WebSub subscriptions (daemon/websub_subscriptions.h) whose
  // callbacks the push listener serves, on this thread; null without
  // [push] listen.
  WebSubSubscriptions* websub() { return websub_.get(); }

  const RecoveryReport& recovery() const { return recovery_; }
  // What of the fetcher's saved state (robots.txt copies, per-host gate
  // state) the start restored.
  struct FetchStateCounts {
    size_t robots = 0;
    size_t hosts = 0;
  };
  const FetchStateCounts& fetch_state_restored() const {
    return fetch_state_restored_;
  }
  // The newest sitemap lastmod considered as a change signal for `page`
  // (Unix seconds; 0: none, or an unknown id); kept across restarts.
  double signal_lastmod(sched::PageId page) const {
    return page < book_->size() ? book_->meta(page).last_signal_lastmod : 0;
  }
  UrlIndex::Urls urls() const { return book_->urls(); }
  const sched::Scheduler& scheduler() const { return *sched_; }
  boost::asio::io_context& io() { return io_; }
  // The store, for readers on other threads (PageStore is thread-safe;
  // the change feed reads it from the status thread). Null before Start.
  store::PageStore* store() const { return store_.get(); }

  // Tests: runs on the parse worker at the start of each HTML parse (set it
  // before Start). Lets a test hold a parse and watch the loop go on.
  void set_parse_hook_for_testing(std::function<void()> hook) {
    parse_hook_ = std::move(hook);
  }

 private:
  using Parsed = PageObserver::Parsed;

  CrawlLoop(boost::asio::io_context& io, const Config& config);
  Status Init();
  Status LoadFetchState(fetch::CrawlerState* state);

  // What the network thread hands back for one page: its slot is free
  // (the host's gate next opens at `next_allowed`), and, for a fetch with
  // no response to parse, the result to complete with (the network thread
  // takes a response out for the parse pool: HandNetworkTurn).
  struct NetworkDone {
    sched::PageId page = 0;
    double next_allowed = 0;
    std::optional<fetch::FetchResult> unparsed;
  };

  // Dispatches now if anything may go (Dispatcher).
  void TryDispatch() { dispatcher_->TryDispatch(); }
  // Dispatches once everything queued on this thread now has run: the
  // completions of one batch free their slots first, then one dispatch.
  void DispatchSoon();
  // The dispatcher's hand-off: the fetch of `page` to the network thread,
  // with the validators from the page book.
  void StartFetch(sched::PageId page);
  // Network thread: the fetch of `page` ended; with the turn's others it
  // frees its slot (handed to the scheduler's thread) and goes to the
  // parse pool (a response) or straight back to the scheduler's thread.
  void OnNetworkDone(sched::PageId page, fetch::FetchResult result,
                     double next_allowed);
  // Network thread: one turn's hand-backs to the scheduler's thread, then
  // its responses to the parse pool (Parse).
  void HandNetworkTurn(std::vector<NetworkDone>& batch);
  void Parse(sched::PageId page, fetch::FetchResult result);
  // Scheduler's thread: one batch of the network's hand-backs, in order.
  void OnNetworkBatch(std::vector<NetworkDone>& batch);
  // The page's fetch is over: the dispatcher frees it, the operator's
  // metrics count it, the observer (PageObserver) turns it into the book's
  // and the scheduler's new state, the feed and WARC items, new pages.
  void Complete(sched::PageId page, fetch::FetchResult result, Parsed parsed);
  // Queues the WARC records of a fetch that is no page's (robots.txt, a
  // sitemap) for the next commit; scheduler's thread.
  void ArchiveOnly(fetch::FetchResult raw, double started_unix);
  void Housekeeping();
  // Saves the fetcher's robots cache and gate state of the hosts touched
  // since the last save (every [store] sync_interval, so a crash neither
  // refetches every robots.txt nor forgets a back-off), through the book.
  void SaveFetchState(std::function<void()> then);

  // The id of `url` (normalized), adding it when new and in scope
  // (Frontier::AddUrl, now).
  std::optional<sched::PageId> AddUrl(const std::string& url, double importance,
                                      bool seed);
  void Observe(const sched::Observation& obs);

  // Group commit (GroupCommitter): everything the page book has marked and
  // the WARC and feed items waiting, as one writer job.
  void RequestCommit(std::function<void(Status)> committed = nullptr);

  // Cluster (ClusterAdapter; null without [cluster] nats_url): creates
  // it, with the hooks it calls back on this thread.
  Status InitCluster();
  // Clustered and `url`'s host in a shard this node does not own: routed
  // to the owner (ClusterAdapter::RouteAway); false: handled here.
  bool RouteAway(const std::string& url, cluster::WorkItem::Kind kind,
                 double value, std::shared_ptr<RouteJoin> join = {},
                 std::optional<sched::SignalSource> source = std::nullopt) {
    return cluster_ &&
           cluster_->RouteAway(url, kind, value, std::move(join), source);
  }
  // The budget this node crawls at: [budget] rate, or its share of it.
  double RateShare() const {
    return cluster_ ? cluster_->RateShare() : config_.budget.rate;
  }

  // The stored controls, before dispatch (Init).
  Status RestoreControls();
  // What a control change means for the scheduler: released hosts
  // reopened in the selection, every page matched again when the patterns
  // changed (one RE2::Set search per page).
  void ApplyControlChange(OperatorControls::Change change);

  // The IndexNow receiver ([push] listen set), its hooks into the parts.
  void InitIndexNow();
  // The WebSub subscriptions ([push] listen set), their hooks, the stored
  // ones restored.
  Status InitWebSub();
  // The status views' readers of the parts (StatusViews::Sources).
  StatusViews::Sources StatusSources();

  boost::asio::io_context& io_;
  Config config_;
  // Keeps the caller's io_context running while other threads owe it
  // completions (from Start until Stop's callback).
  std::optional<
      boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      work_;
  boost::asio::steady_timer housekeeping_;
  LoopLagProbe lag_probe_;  // the scheduler thread's lag
  std::unique_ptr<store::PageStore> store_;
  std::unique_ptr<store::WarcWriter> warc_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  std::unique_ptr<Frontier> frontier_;  // scope, [[rule]]s, adding URLs
  // Pause/block of hosts and URL patterns (POST /control).
  std::unique_ptr<OperatorControls> controls_;
  // Sitemaps, site feeds, dated signals and hints, robots refresh.
  std::unique_ptr<SignalIntake> intake_;
  RecoveryReport recovery_;
  RecoveryProgress* progress_ = nullptr;  // during Create only
  FetchStateCounts fetch_state_restored_;
  std::function<void()> parse_hook_;  // tests only; called on the pool

  double started_unix_ = 0;
  double last_fetch_state_save_ = 0;  // Unix seconds
  bool saving_fetch_state_ = false;
  std::vector<std::function<void()>> fetch_state_waiters_;
  bool started_ = false;
  bool stopping_ = false;
  bool dispatch_posted_ = false;  // a DispatchSoon is queued
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // The stages; destroyed (joined) before the state above.
  std::unique_ptr<StoreWriter> writer_;
  std::unique_ptr<GroupCommitter> committer_;  // to writer_
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<PageObserver> observer_;  // the observe step; outcomes
  std::unique_ptr<NetworkStage> net_;
  // The network thread's hand-backs (OnNetworkDone), in batches: those of
  // one network turn go together (done_batch_, network thread).
  std::unique_ptr<HandoffQueue<NetworkDone>> network_done_;
  std::unique_ptr<TurnBatch<NetworkDone>> done_batch_;
  // Network thread: the responses of the turn being handed on, and their
  // bytes until the parse queue counts them (read by the dispatcher).
  std::vector<std::pair<sched::PageId, fetch::FetchResult>> to_parse_;
  std::atomic<uint64_t> parse_handing_bytes_{0};
  // A dispatch pass's fetch requests, to the network thread as one batch.
  std::unique_ptr<TurnBatch<NetworkStage::Request>> fetch_batch_;
  std::unique_ptr<ParseQueue> parse_;  // pages, sitemaps, feeds
  // Counters and read-only views (/status, /metrics, /page, the status
  // page), reading the parts above.
  std::unique_ptr<StatusViews> views_;
  // The cluster's parts (null without [cluster] nats_url): membership
  // stopped first, the change stream's publisher after the writer.
  std::unique_ptr<ClusterAdapter> cluster_;
  // IndexNow pings from the push listener (null without [push] listen).
  std::unique_ptr<IndexNowReceiver> indexnow_;
  // WebSub subscriptions (null without [push] listen).
  std::unique_ptr<WebSubSubscriptions> websub_;
  // The routed POST /signal hints the next WhenCommitted also waits for.
  std::shared_ptr<RouteJoin> route_join_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_CRAWL_LOOP_H_
