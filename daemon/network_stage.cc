#include "daemon/network_stage.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <utility>

#include "base/clock.h"
#include "daemon/sd_notify.h"
#include "parse/url.h"

namespace freshd::daemon {

NetworkStage::NetworkStage()
    : work_(io_.get_executor()),
      lag_probe_(io_),
      watchdog_(io_),
      requests_(io_,
                [this](std::vector<Request>& batch) { StartFetches(batch); }) {}

NetworkStage::~NetworkStage() { Stop(); }

Result<std::unique_ptr<NetworkStage>> NetworkStage::Create(
    const Config& config) {
  std::unique_ptr<NetworkStage> stage(new NetworkStage());
  auto crawler = fetch::Crawler::Create(
      stage->io_, fetch::CrawlerOptionsFromConfig(config));
  if (!crawler.ok()) return crawler.status();
  stage->crawler_ = std::move(crawler).value();
  return stage;
}

void NetworkStage::ImportState(const fetch::CrawlerState& state) {
  crawler_->ImportState(state);
}

void NetworkStage::set_sitemap_handler(fetch::Crawler::SitemapHandler handler) {
  crawler_->set_sitemap_handler(
      [this, handler = std::move(handler)](
          const std::string& origin, const std::vector<std::string>& maps) {
        touched_.insert(origin);  // its robots.txt was just fetched
        handler(origin, maps);
      });
}

void NetworkStage::set_archive_handler(fetch::Crawler::Callback handler) {
  crawler_->set_archive_handler(std::move(handler));
}

void NetworkStage::Start() {
  if (started_) return;
  started_ = true;
  boost::asio::post(io_, [this] { lag_probe_.Start(); });
  // The watchdog is fed from this thread: a network thread stuck in a
  // callback stops feeding it, and systemd restarts the daemon.
  const double period = WatchdogPeriodS();
  if (period > 0) {
    boost::asio::post(io_, [this, period] { FeedWatchdog(period / 2); });
  }
  thread_ = std::thread([this] { io_.run(); });
}

void NetworkStage::Stop() {
  if (thread_.joinable()) {
    boost::asio::post(io_, [this] {
      lag_probe_.Stop();
      watchdog_.cancel();
    });
    work_.reset();
    io_.stop();
    thread_.join();
  }
  requests_.Stop();  // requests not started are dropped
  // The crawler goes with the thread that used it (its callbacks are
  // dropped); the io_context outlives it (declared first).
  crawler_.reset();
}

void NetworkStage::FeedWatchdog(double every_s) {
  SdNotify("WATCHDOG=1");
  watchdog_.expires_after(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(every_s)));
  watchdog_.async_wait([this, every_s](boost::system::error_code ec) {
    if (!ec) FeedWatchdog(every_s);
  });
}

double NetworkStage::Now() { return SteadyNow(); }

void NetworkStage::Fetch(fetch::CrawlRequest request, FetchDone done) {
  // Dropped once stopped, as a post to a stopped thread was.
  (void)requests_.Push(Counted(std::move(request), std::move(done)));
}

void NetworkStage::StartFetches(std::vector<Request>& batch) {
  for (Request& one : batch) {
    const std::string host(parse::UrlAuthority(one.request.url));
    std::string origin = parse::UrlOrigin(one.request.url);
    crawler_->Fetch(std::move(one.request),
                    [this, host, origin = std::move(origin),
                     done = std::move(one.done)](fetch::FetchResult r) mutable {
                      --pending_;
                      touched_.insert(std::move(origin));
                      const double next =
                          crawler_->gate().NextAllowed(host, Now());
                      done(std::move(r), next);
                    });
  }
}

void NetworkStage::RefreshRobots(std::vector<std::string> origins) {
  boost::asio::post(io_, [this, origins = std::move(origins)] {
    for (const std::string& origin : origins) crawler_->RefreshRobots(origin);
  });
}

void NetworkStage::ExportTouched(
    std::function<void(fetch::CrawlerState)> done) {
  boost::asio::post(io_, [this, done = std::move(done)] {
    std::vector<std::string> origins(touched_.begin(), touched_.end());
    touched_.clear();
    done(crawler_->ExportState(origins));
  });
}

}  // namespace freshd::daemon
