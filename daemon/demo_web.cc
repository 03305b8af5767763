#include "daemon/demo_web.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "daemon/clock.h"
#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"
#include "daemon/status_routes.h"
#include "sim/test_web.h"
#include "sim/test_web_server.h"

namespace freshd::daemon {

const char kDemoWebToml[] = R"(
name = "demo"
hosts = 4
pages_per_host = 50

[[class]]
name = "news"
share = 0.3
importance = { dist = "uniform", min = 0.5, max = 2.0 }
static_words = 60
[class.scroll]
items = 10
words_per_item = 12
rate = { dist = "loguniform", min = 1.0, max = 6.0 }
[class.signals]
recall = 0.9
false_rate = 0.1
delay_days = 0.05

[[class]]
name = "churn"
share = 0.4
importance = { dist = "uniform", min = 0.0, max = 1.0 }
static_words = 120
[class.churn]
words = 40
rate = { dist = "loguniform", min = 0.2, max = 3.0 }
[class.signals]
recall = { dist = "beta", a = 0.5, b = 0.5 }
false_rate = { dist = "uniform", min = 0.0, max = 0.5 }

[[class]]
name = "slow"
share = 0.3
importance = { dist = "uniform", min = 0.0, max = 1.0 }
static_words = 200
[class.churn]
words = 50
rate = { dist = "loguniform", min = 0.01, max = 0.2 }
)";

namespace {

// Importance-weighted share of the web's pages whose copy is current: the
// page was fetched and has not changed since (ground truth).
double TrueFreshness(const sim::TestWeb& web, const CrawlLoop& loop,
                     double now) {
  const sim::WebModel& model = web.model();
  std::vector<double> fetched_at(model.pages.size(), -1);
  for (sched::PageId id = 0; id < loop.urls().size(); ++id) {
    const std::string& url = loop.urls()[id];
    size_t p = url.rfind("/p/");
    const sched::PageState& s = loop.scheduler().page(id);
    if (p == std::string::npos || !s.fetched()) continue;
    uint64_t page = std::strtoull(url.c_str() + p + 3, nullptr, 10);
    if (page < fetched_at.size()) fetched_at[page] = s.last_fetch;
  }
  double weight = 0, fresh = 0;
  double v_now = web.VirtualTime(now);
  for (uint32_t p = 0; p < model.pages.size(); ++p) {
    weight += model.pages[p].importance;
    if (fetched_at[p] < 0) continue;
    double v_fetch = web.VirtualTime(fetched_at[p]);
    if (web.PageAt(p, v_now).last_change <= v_fetch) {
      fresh += model.pages[p].importance;
    }
  }
  return weight > 0 ? fresh / weight : 0;
}

}  // namespace

int RunDemo(const DemoOptions& options) {
  auto spec = sim::ParseWebSpec(kDemoWebToml, "<embedded demo web>");
  if (!spec.ok()) {
    std::fprintf(stderr, "freshd demo: %s\n", spec.status().ToString().c_str());
    return 1;
  }
  sim::TestWebOptions wo;
  wo.day_seconds = options.day_seconds;
  wo.start_unix = UnixNow();
  auto web = std::make_shared<const sim::TestWeb>(
      sim::WebModel::Build(spec.value(), 1), wo);
  auto server = sim::TestWebServer::Start(web, "127.0.0.1", 0);
  if (!server.ok()) {
    std::fprintf(stderr, "freshd demo: %s\n",
                 server.status().ToString().c_str());
    return 1;
  }
  uint16_t port = server.value()->port();

  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec) /
                              ("freshd-demo-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "freshd demo: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  Config config;
  config.store.path = (dir / "db").string();
  config.budget.rate = options.rate;
  config.budget.burst = std::max(1.0, options.rate);
  config.sched.policy = options.policy;
  // Compressed time: a simulated day lasts day_seconds, so the scheduler's
  // intervals and the politeness delays shrink with it.
  config.sched.min_interval_s = options.day_seconds / 100;
  config.sched.max_interval_s = options.day_seconds * 10;
  config.sched.prior_change_interval_s = options.day_seconds;
  config.sched.new_page_value = 1;
  config.politeness.min_delay_s = 0.05;
  config.politeness.robots_cache_s = options.day_seconds;  // sitemaps daily
  config.fetch.allow_private_networks = true;  // the web is on loopback
  for (uint32_t h = 0; h < web->model().spec.hosts; ++h) {
    config.fetch.resolve[web->HostName(h)] = "127.0.0.1";
  }
  config.status.listen = "127.0.0.1:0";

  boost::asio::io_context io;
  auto loop = CrawlLoop::Create(io, config);
  if (!loop.ok()) {
    std::fprintf(stderr, "freshd demo: %s\n", loop.status().ToString().c_str());
    return 1;
  }
  CrawlLoop& crawl = *loop.value();
  for (uint32_t h = 0; h < web->model().spec.hosts; ++h) {
    std::string seed =
        "http://" + web->HostName(h) + ":" + std::to_string(port) + "/";
    Status s = crawl.AddSeed(seed, 1);
    if (!s.ok()) {
      std::fprintf(stderr, "freshd demo: seed %s: %s\n", seed.c_str(),
                   s.ToString().c_str());
      return 1;
    }
  }
  auto status = HttpServer::Listen(
      io, config.status.listen,
      [&crawl](const HttpRequest& r) { return RouteStatusRequest(crawl, r); });
  if (!status.ok()) {
    std::fprintf(stderr, "freshd demo: %s\n",
                 status.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr,
               "freshd demo: %u pages on %u hosts at http://h0.test:%u/ ... "
               "(1 day = %g s); policy %s, %g pages/s; status at "
               "http://127.0.0.1:%u/status; %g s\n",
               static_cast<unsigned>(web->model().pages.size()),
               web->model().spec.hosts, port, options.day_seconds,
               options.policy.c_str(), options.rate, status.value()->port(),
               options.seconds);

  double start = UnixNow();
  auto report = [&](bool final) {
    double now = UnixNow();
    nlohmann::json s = crawl.StatusJson();
    nlohmann::json line = {
        {"t_s", std::round((now - start) * 10) / 10},
        {"simulated_days", web->VirtualTime(now) / 86400},
        {"pages_known", s["pages_known"]},
        {"pages_fetched_total", s["pages_fetched_total"]},
        {"rate_actual", s["rate_actual"]},
        {"signals_total", s["signals_total"]},
        {"estimated_freshness", s["estimated_freshness"]},
        {"true_freshness", TrueFreshness(*web, crawl, now)},
    };
    if (final) {
      line["final"] = true;
      line["errors"] = s["errors"];
      line["testweb_requests"] = server.value()->requests();
    }
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  };

  boost::asio::steady_timer ticker(io);
  std::function<void()> tick = [&] {
    double left = options.seconds - (UnixNow() - start);
    double wait = std::clamp(std::min(options.report_every_s, left), 0.0,
                             options.report_every_s);
    ticker.expires_after(
        std::chrono::milliseconds(static_cast<int64_t>(wait * 1000)));
    ticker.async_wait([&](boost::system::error_code e) {
      if (e) return;
      if (UnixNow() - start + 1e-3 < options.seconds) {
        report(false);
        tick();
        return;
      }
      report(true);
      crawl.Stop(5, [&](Status st) {
        if (!st.ok())
          std::fprintf(stderr, "freshd demo: %s\n", st.ToString().c_str());
        io.stop();
      });
    });
  };
  crawl.Start();
  tick();
  io.run();
  status.value().reset();
  loop.value().reset();
  server.value()->Stop();
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace freshd::daemon
