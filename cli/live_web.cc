#include "cli/live_web.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "base/clock.h"
#include "cli/truth_meter.h"
#include "daemon/http_server.h"
#include "daemon/status_routes.h"
#include "sim/test_web.h"
#include "sim/test_web_server.h"

namespace freshd::cli {
namespace {

// The daemon's config for `web`, its times scaled as the web's clock is.
Config LiveConfig(const sim::TestWeb& web, const LiveWebOptions& o,
                  const std::string& store_path) {
  const double scale = o.day_seconds / sim::kDay;  // wall s per virtual s
  Config config;
  config.store.path = store_path;
  config.budget.rate = o.rate_per_day / o.day_seconds;
  config.budget.burst = o.burst;
  config.sched.policy = o.policy;
  config.sched.rate_model = o.rate_model;
  config.sched.explore = o.explore;
  config.sched.min_interval_s = 60 * scale;
  config.sched.max_interval_s = 90 * o.day_seconds;
  config.sched.prior_change_interval_s = o.day_seconds;
  // Every URL first (the simulator starts with every page fetched).
  config.sched.new_page_value = 1e9;
  const auto& delays = web.model().host_delay_s;
  double delay = delays.empty() ? 0 : *std::ranges::max_element(delays);
  config.politeness.min_delay_s = delay * scale;
  config.politeness.robots_cache_s = o.day_seconds;  // sitemaps daily
  config.site_feeds.enabled = o.feeds;
  config.site_feeds.poll_interval_s = o.day_seconds;  // feeds daily too
  config.fetch.allow_private_networks = true;         // the web is on loopback
  for (uint32_t h = 0; h < web.model().spec.hosts; ++h) {
    config.fetch.resolve[web.HostName(h)] = "127.0.0.1";
  }
  config.status.listen = "127.0.0.1:0";
  return config;
}

Status CheckOptions(const LiveWebOptions& o) {
  if (!(o.rate_per_day > 0) || !std::isfinite(o.rate_per_day) ||
      !(o.days > 0) || !std::isfinite(o.days) || !(o.warmup_days >= 0) ||
      !(o.warmup_days < o.days) || !(o.day_seconds >= 1) ||
      !std::isfinite(o.day_seconds) || !(o.burst >= 1) ||
      !(o.sample_days > 0) || !(o.report_every_days >= 0)) {
    return Status::InvalidArgument(
        "live web: need rate > 0, days > warmup >= 0, day_seconds >= 1, "
        "burst >= 1, sample_days > 0");
  }
  return Status::OK();
}

}  // namespace

Result<LiveWebResult> RunOnLiveWeb(const sim::WebModel& model,
                                   const LiveWebOptions& options) {
  if (Status s = CheckOptions(options); !s.ok()) return s;
  sim::TestWebOptions wo;
  wo.day_seconds = options.day_seconds;
  wo.start_unix = UnixNow();
  wo.feeds = options.feeds;
  wo.feed_entries = options.feed_entries;
  auto web = std::make_shared<const sim::TestWeb>(model, wo);
  auto server = sim::TestWebServer::Start(web, "127.0.0.1", 0);
  if (!server.ok()) return server.status();
  const std::string origin_suffix =
      ":" + std::to_string(server.value()->port());

  std::error_code ec;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path(ec) /
      ("freshd-live-" + std::to_string(getpid()) + "-" +
       std::to_string(static_cast<int64_t>(wo.start_unix * 1e6)));
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::IOError("live web: cannot create " + dir.string() + ": " +
                           ec.message());
  }
  struct RemoveDir {
    std::filesystem::path path;
    ~RemoveDir() {
      std::error_code e;
      std::filesystem::remove_all(path, e);
    }
  } remove_dir{dir};

  boost::asio::io_context io;
  auto loop =
      daemon::CrawlLoop::Create(io, LiveConfig(*web, options, dir / "db"));
  if (!loop.ok()) return loop.status();
  daemon::CrawlLoop& crawl = *loop.value();
  for (uint32_t p = 0; p < model.pages.size(); ++p) {
    const sim::SimPage& page = model.pages[p];
    if (!options.seed_pages && p % model.spec.pages_per_host != 0) continue;
    std::string url = "http://" + web->HostName(page.host) + origin_suffix;
    url += options.seed_pages ? "/p/" + std::to_string(p) : "/";
    double weight = options.seed_pages ? page.importance : 1;
    if (Status s = crawl.AddSeed(url, weight); !s.ok()) return s;
  }

  std::unique_ptr<daemon::HttpServer> status_server;
  LiveWebStart started{server.value()->port(), 0};
  if (options.serve_status) {
    auto listening = daemon::HttpServer::Listen(
        io, "127.0.0.1:0", [&crawl](const daemon::HttpRequest& r) {
          return daemon::RouteStatusRequest(crawl, r);
        });
    if (!listening.ok()) return listening.status();
    status_server = std::move(listening).value();
    started.status_port = status_server->port();
  }
  if (options.on_start) options.on_start(started);

  TruthMeter meter(*web);
  LiveWebResult result;
  const double start = UnixNow();
  const double end = web->UnixTime(options.days * sim::kDay);
  const double warmup_end = web->UnixTime(options.warmup_days * sim::kDay);
  const double sample_s = options.sample_days * options.day_seconds;
  bool warm = options.warmup_days <= 0;
  double next_report =
      options.report_every_days > 0
          ? web->UnixTime(options.report_every_days * sim::kDay)
          : end + 1;
  uint64_t fetched_at_warmup = 0;
  auto fetched_total = [&] {
    return crawl.StatusJson()["pages_fetched_total"].get<uint64_t>();
  };
  auto report = [&](double now, const Truth& truth, bool final) {
    if (!options.on_report) return;
    LiveWebProgress p;
    p.unix_time = now;
    p.wall_s = now - start;
    p.virtual_days = web->VirtualTime(now) / sim::kDay;
    p.true_freshness = truth.freshness;
    p.true_staleness = truth.staleness;
    p.testweb_requests = server.value()->requests();
    p.final = final;
    p.loop = &crawl;
    p.web = web.get();
    options.on_report(p);
  };

  boost::asio::steady_timer ticker(io);
  Status stop_status;
  std::function<void()> tick = [&] {
    double now = UnixNow();
    double wait = std::clamp(std::min(end, next_report) - now, 0.0, sample_s);
    ticker.expires_after(
        std::chrono::microseconds(static_cast<int64_t>(wait * 1e6)));
    ticker.async_wait([&](boost::system::error_code e) {
      if (e) return;
      const auto late = std::chrono::steady_clock::now() - ticker.expiry();
      result.loop_lag_s.push_back(
          std::max(0.0, std::chrono::duration<double>(late).count()));
      double t = UnixNow();
      if (!warm && t >= warmup_end) {
        warm = true;
        meter.ResetAverage();
        fetched_at_warmup = fetched_total();
      }
      t = std::min(t, end);
      Truth truth = meter.Sample(crawl, t);
      if (t >= end) {
        result.true_freshness = meter.Average().freshness;
        result.estimated_freshness = meter.Average().estimated_freshness;
        result.fragment_staleness = meter.Average().staleness;
        result.measured_days = meter.averaged_seconds() / options.day_seconds;
        result.fetches = fetched_total() - fetched_at_warmup;
        result.fetches_per_day = result.measured_days > 0
                                     ? result.fetches / result.measured_days
                                     : 0;
        report(t, truth, true);
        crawl.Stop(5, [&](Status st) {
          stop_status = st;
          io.stop();
        });
        return;
      }
      if (t >= next_report) {
        report(t, truth, false);
        next_report += options.report_every_days * options.day_seconds;
      }
      tick();
    });
  };
  crawl.Start();
  meter.Sample(crawl, UnixNow());
  tick();
  io.run();
  std::ranges::sort(result.loop_lag_s);
  result.testweb_requests = server.value()->requests();
  result.status = crawl.StatusJson();
  status_server.reset();
  loop.value().reset();
  server.value()->Stop();
  if (!stop_status.ok()) return stop_status;
  return result;
}

}  // namespace freshd::cli
