#include "cli/demo_web.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/live_web.h"
#include "sim/web_model.h"

namespace freshd::cli {

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

int RunDemo(const DemoOptions& options) {
  auto spec = sim::ParseWebSpec(kDemoWebToml, "<embedded demo web>");
  if (!spec.ok()) {
    std::fprintf(stderr, "freshd demo: %s\n", spec.status().ToString().c_str());
    return 1;
  }
  sim::WebModel model = sim::WebModel::Build(spec.value(), 1);
  LiveWebOptions lo;
  lo.policy = options.policy;
  lo.day_seconds = options.day_seconds;
  lo.rate_per_day = options.rate * options.day_seconds;
  lo.burst = std::max(1.0, options.rate);
  lo.days = options.seconds / options.day_seconds;
  lo.seed_pages = false;  // the host roots; the rest is discovered
  lo.report_every_days = options.report_every_s / options.day_seconds;
  lo.serve_status = true;
  lo.feeds = options.feeds;
  lo.on_start = [&](const LiveWebStart& where) {
    std::fprintf(stderr,
                 "freshd demo: %u pages on %u hosts at http://h0.test:%u/ ... "
                 "(1 day = %g s); policy %s, %g pages/s; status at "
                 "http://127.0.0.1:%u/status; %g s\n",
                 static_cast<unsigned>(model.pages.size()), model.spec.hosts,
                 where.web_port, options.day_seconds, options.policy.c_str(),
                 options.rate, where.status_port, options.seconds);
  };
  lo.on_report = [](const LiveWebProgress& p) {
    nlohmann::json s = p.loop->StatusJson();
    nlohmann::json line = {
        {"t_s", std::round(p.wall_s * 10) / 10},
        {"simulated_days", p.virtual_days},
        {"pages_known", s["pages_known"]},
        {"pages_fetched_total", s["pages_fetched_total"]},
        {"rate_actual", s["rate_actual"]},
        {"signals_total", s["signals_total"]},
        {"feed_signals_total", s["site_feeds"]["signals_total"]},
        {"estimated_freshness", s["estimated_freshness"]},
        {"true_freshness", p.true_freshness},
    };
    if (p.final) {
      line["final"] = true;
      line["errors"] = s["errors"];
      line["testweb_requests"] = p.testweb_requests;
    }
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  };
  auto result = RunOnLiveWeb(model, lo);
  if (!result.ok()) {
    std::fprintf(stderr, "freshd demo: %s\n",
                 result.status().ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace freshd::cli
