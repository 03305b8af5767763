// The daemon's io-thread lag on a web with large sitemaps: the real loop
// (cli/live_web.h: fetcher over loopback, parse pool, scheduler, LevelDB)
// crawls a web of --hosts hosts with --pages-per-host pages each, whose
// robots.txt names a sitemap listing every page of the host with its newest
// lastmod; sitemaps are read once a virtual day, so each read hands the loop
// one sitemap of --pages-per-host entries per host, many of them advanced
// (signals). The harness's sampling timer runs on the loop's thread every
// --sample-days; how late it fires is how long other work held the thread.
// Reported per run: lag percentiles and maximum (ms), fetches, sitemaps read,
// signals taken and stale; medians over --runs. Wall time: days * day_seconds
// per run.
//
//   build/bench/loop_lag_bench --hosts 2 --pages-per-host 20000 --rate 20000
//       --days 6 --day-seconds 4 --runs 3

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/live_web.h"
#include "sim/web_model.h"

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The q-quantile of an ascending vector (nearest rank).
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1));
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"freshd: the daemon loop's io-thread lag under large sitemaps"};
  std::string web_path = "sim/webs/noisy.toml", policy = "ncis";
  uint32_t hosts = 2, pages_per_host = 20000;
  double rate = 20000, days = 6, day_seconds = 4, sample_days = 0.005;
  int runs = 3;
  app.add_option("--web", web_path, "web TOML whose classes are used");
  app.add_option("--hosts", hosts, "hosts (each with one sitemap)");
  app.add_option("--pages-per-host", pages_per_host, "sitemap entries a host");
  app.add_option("--rate", rate, "budget, pages per virtual day");
  app.add_option("--days", days, "virtual days per run");
  app.add_option("--day-seconds", day_seconds, "wall seconds per day (>= 1)");
  app.add_option("--sample-days", sample_days, "lag probe period, days");
  app.add_option("--policy", policy, "scheduling policy");
  app.add_option("--runs", runs, "runs (web seeds 1..runs)");
  CLI11_PARSE(app, argc, argv);

  auto spec = freshd::sim::LoadWebSpec(web_path);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
    return 2;
  }
  spec.value().hosts = hosts;
  spec.value().pages_per_host = pages_per_host;
  std::printf(
      "loop_lag_bench: %s as %u hosts x %u pages, policy %s, %.0f pages/day, "
      "%.3g days at %.3g s/day, lag probe every %.3g ms\n\n",
      web_path.c_str(), hosts, pages_per_host, policy.c_str(), rate, days,
      day_seconds, sample_days * day_seconds * 1e3);
  std::printf(
      "| run | lag p50 ms | p99 ms | p99.9 ms | max ms | samples | > 10 ms | "
      "fetches | sitemaps | signals | stale |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> p50, p99, p999, max;
  for (int run = 1; run <= runs; ++run) {
    auto model = freshd::sim::WebModel::Build(spec.value(), run);
    freshd::cli::LiveWebOptions o;
    o.policy = policy;
    o.rate_per_day = rate;
    o.days = days;
    o.day_seconds = day_seconds;
    o.sample_days = sample_days;
    auto r = freshd::cli::RunOnLiveWeb(model, o);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
      return 1;
    }
    const auto& lag = r.value().loop_lag_s;
    const auto& s = r.value().status;
    p50.push_back(1e3 * Quantile(lag, 0.5));
    p99.push_back(1e3 * Quantile(lag, 0.99));
    p999.push_back(1e3 * Quantile(lag, 0.999));
    max.push_back(lag.empty() ? 0 : 1e3 * lag.back());
    const auto over_10ms = lag.end() - std::ranges::upper_bound(lag, 0.01);
    std::printf(
        "| %d | %.2f | %.2f | %.2f | %.1f | %zu | %td | %llu | %llu | %llu "
        "| %llu |\n",
        run, p50.back(), p99.back(), p999.back(), max.back(), lag.size(),
        over_10ms,
        static_cast<unsigned long long>(
            s["pages_fetched_total"].get<uint64_t>()),
        static_cast<unsigned long long>(
            s["sitemaps_fetched_total"].get<uint64_t>()),
        static_cast<unsigned long long>(s["signals_total"].get<uint64_t>()),
        static_cast<unsigned long long>(
            s["signals_stale_total"].get<uint64_t>()));
    std::fflush(stdout);
  }
  std::printf(
      "\nmedians over runs: lag p50 %.2f ms, p99 %.2f ms, p99.9 %.2f "
      "ms, max %.1f ms\n",
      Median(p50), Median(p99), Median(p999), Median(max));
  return 0;
}
