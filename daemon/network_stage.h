// NetworkStage: the engine's network thread (daemon/README.md). It owns an
// io_context, the thread that runs it, and the fetch::Crawler on it (libcurl
// multi, politeness gates, robots.txt cache, redirects, limits, SSRF guard).
// Nothing else runs there: no parsing, no compression, no disk; a finished
// fetch is handed on through the caller's callback, which must only post it
// elsewhere (to the parse pool or the scheduler's thread).
// Every method is safe from any thread: it posts to the network thread
// (ImportState, set_sitemap_handler and set_archive_handler before Start
// only). Fetch requests go there in batches (daemon/handoff_queue.h): the
// requests made while the network thread is busy start together, in the
// order they were made, for one wake-up of it. Callbacks run on
// the network thread. Stop() joins the thread; pending callbacks are
// dropped, never called. When systemd asks for a watchdog (WatchdogSec=),
// this thread sends WATCHDOG=1 every half period (daemon/sd_notify.h).

#ifndef FRESHD_DAEMON_NETWORK_STAGE_H_
#define FRESHD_DAEMON_NETWORK_STAGE_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "daemon/handoff_queue.h"
#include "daemon/loop_lag_probe.h"
#include "fetch/crawler.h"

namespace freshd::daemon {

class NetworkStage {
 public:
  // `result`; `next_allowed`: when the host's gate next lets a request start
  // (the crawler's clock, Now()), read right after the fetch ended.
  using FetchDone =
      std::function<void(fetch::FetchResult result, double next_allowed)>;

  // One fetch to start: the request and what to call with its result.
  struct Request {
    fetch::CrawlRequest request;
    FetchDone done;
  };

  // Creates the crawler (fails as fetch::Crawler::Create). Not started.
  static Result<std::unique_ptr<NetworkStage>> Create(const Config& config);
  ~NetworkStage();  // Stop()s

  // Before Start: robots cache and gate state (crawler clock), and the
  // handler of robots.txt sitemap lines (runs on the network thread).
  void ImportState(const fetch::CrawlerState& state);
  void set_sitemap_handler(fetch::Crawler::SitemapHandler handler);
  // Before Start: handler of robots.txt exchanges to archive (network
  // thread; fetch::Crawler::set_archive_handler).
  void set_archive_handler(fetch::Crawler::Callback handler);

  void Start();
  // Stops the io_context and joins the thread. Idempotent.
  void Stop();

  void Fetch(fetch::CrawlRequest request, FetchDone done);
  // For a caller that batches its side (TurnBatch: a dispatch pass's
  // requests in one hand-off): a request counted in pending() from now,
  // to hand to requests(), the queue Fetch hands requests through.
  Request Counted(fetch::CrawlRequest request, FetchDone done) {
    ++pending_;
    return Request{std::move(request), std::move(done)};
  }
  HandoffQueue<Request>* requests() { return &requests_; }
  // The network thread's io_context, for a TurnBatch of what its
  // callbacks hand on (they run there).
  boost::asio::io_context& io() { return io_; }
  // Crawler::RefreshRobots for each origin.
  void RefreshRobots(std::vector<std::string> origins);
  // The crawler's state of the origins a fetch or a robots.txt fetch touched
  // since the last call, handed to `done` on the network thread.
  void ExportTouched(std::function<void(fetch::CrawlerState)> done);

  // The crawler's clock (steady seconds); any thread.
  static double Now();
  // Fetches handed in (Fetch) or started (requests()) and not yet
  // reported; any thread.
  uint64_t pending() const { return pending_.load(); }
  // Batches of fetch requests handed to the network thread (its wake-ups
  // for them); any thread.
  uint64_t request_batches() const { return requests_.posts(); }
  LoopLagProbe::Stats lag() const { return lag_probe_.stats(); }

 private:
  NetworkStage();
  void FeedWatchdog(double every_s);               // network thread
  void StartFetches(std::vector<Request>& batch);  // network thread

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work_;
  LoopLagProbe lag_probe_;
  boost::asio::steady_timer watchdog_;       // network thread
  std::unique_ptr<fetch::Crawler> crawler_;  // used on the network thread
  std::unordered_set<std::string> touched_;  // origins; network thread
  std::atomic<uint64_t> pending_{0};
  HandoffQueue<Request> requests_;  // to the network thread
  std::thread thread_;
  bool started_ = false;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_NETWORK_STAGE_H_
