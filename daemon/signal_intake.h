// SignalIntake: what tells the engine a page changed, besides fetching it.
//   * sitemaps: the lists robots.txt names are fetched (outside the token
//     budget, ≤ kMaxSitemapsPerOrigin per origin and round, one level of
//     index), parsed as every body is (ParseQueue) and applied
//     kSitemapSlice entries a turn: entries in scope become pages, a
//     lastmod newer than the last one considered is a dated signal;
//   * site feeds ([site_feeds]): RSS and Atom feeds pages link, kept when
//     in scope and under the caps, polled every poll_interval with the
//     validators of their last 200; entries become pages, entry dates
//     dated signals (source kFeedEntry); a feed failing
//     kMaxSiteFeedFailures polls in a row is forgotten. Not stored: after
//     a restart feeds come back as the pages naming them are fetched;
//   * WebSub (daemon/websub_subscriptions.h): a polled feed's hubs (its
//     Link headers, else its own hub links) go to Hooks::feed_hubs; a feed
//     forgotten after its failures to Hooks::feed_forgotten; a feed whose
//     subscription is active (SetFeedPushed) is polled pushed_poll_slowdown
//     times less often; a delivered body (ApplyPushedFeed) is parsed and
//     applied exactly as a polled one, its dated signals of source kWebSub
//     (no coverage: a push is not a read);
//   * dated signals (ConsiderDatedSignal) and hints (SignalPage): handed to
//     the scheduler unless stale, and counted by source; a dated one that
//     cannot be true (CheckDatedSignal: in the future, before 1994, before
//     the copy's Last-Modified) is dropped and counted by host, never a
//     signal;
//   * robots refresh: every host crawled has its robots.txt (and so its
//     sitemaps) re-read once its copy expires, a slice of hosts a turn.
// It reaches the other parts through Hooks (the network hand-off, the
// cluster's routing and ownership, the archive, commit and dispatch
// requests), the page book, the scheduler, the frontier and the parse
// queue: never the engine.
// Thread: the engine's (scheduler's) thread; fetch callbacks arrive on the
// network thread and only hand over to the parse queue.

#ifndef FRESHD_DAEMON_SIGNAL_INTAKE_H_
#define FRESHD_DAEMON_SIGNAL_INTAKE_H_

#include <array>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/work_router.h"
#include "conf/config.h"
#include "daemon/frontier.h"
#include "daemon/page_book.h"
#include "daemon/parse_queue.h"
#include "daemon/prometheus_text.h"
#include "fetch/crawler.h"
#include "fetch/outcome.h"
#include "parse/feed.h"
#include "parse/sitemap.h"
#include "sched/scheduler.h"

namespace freshd::daemon {

inline constexpr int kMaxSitemapsPerOrigin = 20;
// Sitemap entries applied per turn of the scheduler's thread (a few ms).
inline constexpr size_t kSitemapSlice = 4096;
// How often every known host's robots.txt (and so its sitemaps) is
// checked for expiry: a quarter of [politeness] robots_cache, within these.
// A sweep hands the network thread at most a quarter of a turn's budget of
// hosts (kMinRobotsRefreshSlice at least) each housekeeping turn: a 10M-page
// store's 100k hosts handed over at once, none yet fetched, were 100k
// robots.txt fetches ahead of every page.
inline constexpr size_t kMinRobotsRefreshSlice = 16;
inline constexpr double kMinRobotsRefreshS = 0.25;
inline constexpr double kMaxRobotsRefreshS = 3600;
// A site feed that fails this many polls in a row is forgotten (a page
// naming it again brings it back).
inline constexpr int kMaxSiteFeedFailures = 5;

// Sitemap lastmod and feed entry date sanity (StormCrawler and Nutch both
// had to add it): a claimed change time more than kDatedSignalFutureS
// ahead of now (a day: any site's time zone, a clock a little fast), before
// kDatedSignalFloorUnix (1994-01-01T00:00:00Z: no web page changed before
// the first sitemaps' and crawlers' dates; 1970 and 0000 dates are
// placeholders), or whose whole claim (a date-only lastmod: its day) ends
// over a second before the Last-Modified of our copy (the server's own
// history of the page says it changed later) is not a signal.
inline constexpr double kDatedSignalFutureS = 86400;
inline constexpr double kDatedSignalFloorUnix = 757382400;
enum class DatedSignalCheck : uint8_t {
  kOk,
  kFuture,
  kTooOld,
  kBeforeHistory,
};
inline constexpr int kDatedSignalDropReasons = 3;  // the three not kOk
// "future", "too_old", "before_history" ("ok" for kOk).
const char* DatedSignalCheckName(DatedSignalCheck check);
// `known_last_modified`: the copy's Last-Modified (Unix s); < 0 unknown.
DatedSignalCheck CheckDatedSignal(double changed_at, double now,
                                  double known_last_modified);

class SignalIntake {
 public:
  using FetchDone = std::function<void(fetch::FetchResult, double)>;
  struct Hooks {
    // Starts a fetch outside the token budget; `done` runs on the network
    // thread.
    std::function<void(fetch::CrawlRequest, FetchDone)> fetch;
    // Re-reads these origins' robots.txt (when expired).
    std::function<void(std::vector<std::string>)> refresh_robots;
    // Queues a raw exchange (no page's) for WARC.
    std::function<void(fetch::FetchResult, double started_unix)> archive;
    // Clustered: publishes `url` to its owner and returns true when its
    // host is another node's; a dated entry carries the source it came
    // from (a sitemap, a polled feed, a WebSub delivery). Null: nothing is
    // routed.
    std::function<bool(const std::string&, cluster::WorkItem::Kind, double,
                       sched::SignalSource)>
        route_away;
    // Whether `host` is this node's (null: every host).
    std::function<bool(sched::HostId)> owned;
    // Whether an operator's pattern control holds `url` (a sitemap or site
    // feed is then not fetched; null: none does).
    std::function<bool(const std::string&)> url_held;
    std::function<void()> commit;    // something was marked
    std::function<void()> dispatch;  // new work may be selected
    // WebSub: a polled feed named hubs (null: not asked).
    std::function<void(const std::string& feed_url, const std::string& self,
                       const std::vector<std::string>& hubs)>
        feed_hubs;
    // WebSub: a feed was forgotten (its failures), not at Stop.
    std::function<void(const std::string& feed_url)> feed_forgotten;
  };
  struct Options {
    SiteFeedsConfig site_feeds;
    uint64_t max_decompressed_bytes = 0;  // [fetch]
    double robots_cache_s = 86400;        // [politeness] robots_cache
    bool keep_raw = false;                // WARC output on
    // A feed pushed by WebSub is polled this many times less often.
    double pushed_poll_slowdown = 1;
  };

  SignalIntake(boost::asio::io_context& io, Options options, PageBook* book,
               sched::Scheduler* sched, Frontier* frontier, ParseQueue* parse,
               Hooks hooks);
  ~SignalIntake();
  SignalIntake(const SignalIntake&) = delete;
  SignalIntake& operator=(const SignalIntake&) = delete;

  // No more fetches or applies; feeds polled are forgotten when they end.
  void Stop() { stopping_ = true; }

  // ---- sitemaps ----
  // robots.txt of `origin` named these sitemaps: a new round for it.
  void OnSitemaps(const std::string& origin,
                  const std::vector<std::string>& sitemaps);
  void FetchSitemap(const std::string& url, int depth);

  // ---- site feeds ----
  // A feed named by a page of `host`: kept if in scope and under the caps,
  // and polled with the next PollSiteFeeds.
  void NoteSiteFeed(const std::string& url, sched::HostId host);
  // Polls the feeds due at `now`.
  void PollSiteFeeds(double now);
  size_t site_feeds() const { return site_feeds_.size(); }
  // WebSub: the feed at `url` has an active subscription (true) or no
  // longer (false); kept for a feed not (yet) known too (after a restart).
  void SetFeedPushed(const std::string& url, bool pushed);
  // WebSub: a verified delivery of the feed at `url`: parsed on the pool
  // and applied as a polled body is (entries, dated signals).
  void ApplyPushedFeed(const std::string& url, std::string body);

  // ---- signals ----
  // A dated claim that `page` changed at `changed_at` (a sitemap lastmod, a
  // feed entry's date): dropped and counted when it cannot be true
  // (CheckDatedSignal against now and the copy's Last-Modified; not
  // remembered, so a later sane date is still newer); else considered once,
  // when newer than the last one considered for the page
  // (PageMeta::last_signal_lastmod, kept across restarts), then taken as a
  // signal unless stale (SignalPage). True if taken.
  bool ConsiderDatedSignal(sched::PageId page, double changed_at, double now,
                           sched::SignalSource source);
  // Hands a signal to the scheduler and counts it (signals_total), unless it
  // is stale (sched::Scheduler::IsStaleSignal): then it only counts it
  // (signals_stale_total). True if taken.
  bool SignalPage(sched::PageId page, double now, sched::SignalSource source,
                  double changed_at = -std::numeric_limits<double>::infinity());
  // A complete read of the signal source at `source_url` (a sitemap's
  // urlset, a feed), whose exchange began at `read_at`: the source has
  // shown every change of its host up to then, so that host's silence
  // counts as evidence through `read_at` (Scheduler::ObserveSignalCoverage).
  // Called only for a whole read: not for a failed or cut-short one, nor a
  // sitemap index (its children cover), nor pushed signals.
  void ObserveSignalCoverage(const std::string& source_url, double read_at);

  // ---- robots refresh ----
  // Keeps the host's origin (from the page's URL) if it has none yet.
  void NoteOrigin(sched::PageId page, std::string_view url);
  // A housekeeping turn of `turn_s` at budget `rate`: hands the next slice
  // of hosts to refresh_robots when a sweep is due.
  void RefreshRobots(double now, double rate, double turn_s);

  // ---- figures (/status, /metrics) ----
  uint64_t signals_total() const { return signals_total_; }
  uint64_t signals_stale_total() const { return signals_stale_total_; }
  uint64_t sitemaps_fetched() const { return sitemaps_fetched_; }
  // Signals taken, by source (SignalPage).
  uint64_t signals_by_source(sched::SignalSource source) const {
    const auto i = static_cast<size_t>(source);
    return i < signals_by_source_.size() ? signals_by_source_[i] : 0;
  }
  // Dated signals dropped by CheckDatedSignal, by reason (index: the
  // DatedSignalCheck less one).
  uint64_t dated_dropped(DatedSignalCheck reason) const;
  // /status "signal_sources": per source the signals taken, the hosts
  // with their own estimate of it and the median over them (at most
  // kSourceSampleHosts, evenly spaced) of its recall and precision
  // αΔ/(αΔ+ν); and "lastmod_dropped": the dated signals dropped by reason,
  // the hosts that sent any and the kDroppedHostsListed that sent most.
  nlohmann::json SignalSourcesJson() const;
  void AppendSignalSourceMetrics(PrometheusText& out) const;
  static constexpr size_t kSourceSampleHosts = 4096;
  static constexpr size_t kDroppedHostsListed = 20;
  // /status "site_feeds".
  nlohmann::json SiteFeedsJson() const;
  void AppendSiteFeedMetrics(PrometheusText& out) const;

 private:
  void ApplySitemap(std::shared_ptr<const parse::SitemapResult> sitemap,
                    size_t from, int depth);
  // Network thread: hands the raw exchange of `r` to `archive` (posted to
  // this thread); `r` keeps its body for the parse.
  void PostArchive(fetch::FetchResult* r);
  void PollSiteFeed(const std::string& url);
  // A poll ended; `parsed` set when a body was parsed. `read_at`: when
  // the exchange began.
  void SiteFeedDone(const std::string& url, fetch::FetchResult head,
                    std::optional<Result<parse::FeedResult>> parsed,
                    double read_at);
  // `source`: kFeedEntry for a poll, kWebSub for a delivery.
  void ApplySiteFeed(const parse::FeedResult& feed, sched::SignalSource source);
  // Parses a feed body (a poll's 2xx or a push) on the pool: `done` on this
  // thread with the head (body cleared) and the parse.
  void SubmitFeedParse(
      fetch::FetchResult r,
      std::function<void(fetch::FetchResult, Result<parse::FeedResult>)> done);
  double PollInterval(const std::string& url) const {
    return options_.site_feeds.poll_interval_s *
           (pushed_feeds_.count(url) != 0 ? options_.pushed_poll_slowdown : 1);
  }
  bool Owned(sched::HostId host) const {
    return !hooks_.owned || hooks_.owned(host);
  }
  bool UrlHeld(const std::string& url) const {
    return hooks_.url_held && hooks_.url_held(url);
  }
  bool RouteAway(const std::string& url, cluster::WorkItem::Kind kind,
                 double value, sched::SignalSource source) const {
    return hooks_.route_away && hooks_.route_away(url, kind, value, source);
  }

  boost::asio::io_context& io_;
  const Options options_;
  PageBook* const book_;
  sched::Scheduler* const sched_;
  Frontier* const frontier_;
  ParseQueue* const parse_;
  const Hooks hooks_;
  bool stopping_ = false;

  std::map<std::string, int> sitemaps_this_round_;  // per origin
  struct SiteFeed {
    sched::HostId host = 0;  // of the page that named it (cluster ownership)
    std::string etag, last_modified;  // validators of the last 200
    bool in_flight = false;
    int failures = 0;  // polls in a row that failed
  };
  std::map<std::string, SiteFeed, std::less<>> site_feeds_;  // by URL
  std::map<std::string, int, std::less<>> site_feeds_per_origin_;
  std::set<std::pair<double, std::string>> site_feeds_due_;  // (Unix s, URL)
  std::set<std::string, std::less<>> pushed_feeds_;          // WebSub active
  struct SiteFeedCounts {
    uint64_t polled = 0;        // polls that got an answer or failed
    uint64_t not_modified = 0;  // of which 304
    uint64_t errors = 0;        // failed fetches and unparsable feeds
    uint64_t entries = 0;       // entries read
    uint64_t signals = 0;       // change signals taken from entries
  } site_feed_counts_;

  std::vector<std::string> host_origins_;  // by host id; "": none yet
  double next_robots_refresh_ = 0;         // Unix seconds
  // The robots refresh sweeps the hosts a slice a housekeeping turn; the
  // next host it checks.
  size_t robots_refresh_cursor_ = 0;

  uint64_t signals_total_ = 0;
  uint64_t signals_stale_total_ = 0;
  std::array<uint64_t, sched::kSignalSources> signals_by_source_{};
  // Dated signals dropped, by host (only hosts that sent one), by reason.
  std::map<sched::HostId, std::array<uint64_t, kDatedSignalDropReasons>>
      dated_dropped_;
  uint64_t sitemaps_fetched_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_SIGNAL_INTAKE_H_
