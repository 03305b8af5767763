// End-to-end: the real daemon loop (fetcher over loopback HTTP, parser,
// scheduler, LevelDB store) crawling a simulated web served by the test web
// in compressed time, against what `freshd sim` predicts for the same web,
// seed, policy and budget (docs/DESIGN.md: "compare what the daemon achieved on
// a live test web with what the simulator predicted").
//
// For each policy and seed it reports the daemon's time-averaged true
// freshness over [warm-up, days] (cli/live_web.h) and two predictions of
// the simulator, which runs the same sched::Scheduler in virtual time:
//   sim         the web as its file describes it;
//   sim-polled  the same pages, changes and signals, but each signal seen
//               U(0, 1) day late and claiming its change time, as the
//               daemon sees them through daily sitemap polling (lastmod).
// The ratio daemon / sim-polled is what the daemon's real parts (HTTP,
// parsing, a sitemap that shows only the newest lastmod per poll, one-second
// date resolution, wall-clock timing) cost against the model. Medians over
// seeds. Wall time: days * day_seconds per run.
//
//   build/bench/e2e_bench --web sim/webs/noisy.toml --policies ncis,freshness
//       --rate 100 --days 120 --warmup-days 30 --day-seconds 1 --seeds 1,2,3
//
// --feeds-compare K: instead, what site feeds buy: each run twice on the
// live web, without feeds and with an Atom feed of each host's K latest
// changes polled daily (LiveWebOptions::feeds), no simulation.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/live_web.h"
#include "sim/simulator.h"
#include "sim/web_model.h"

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The --feeds-compare table: each policy and seed crawled without and with
// feeds of `entries` entries; true freshness, fetches, signals.
int CompareFeeds(const freshd::sim::WebSpec& spec,
                 const freshd::cli::LiveWebOptions& base,
                 const std::vector<std::string>& policies,
                 const std::vector<std::string>& seeds, uint32_t entries) {
  std::printf(
      "| policy | seed | freshness, no feeds | with feeds | difference | "
      "fetches/day, no feeds | with feeds | signals, no feeds | with feeds | "
      "of which feed | feed polls (304) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::map<std::string, std::vector<double>> diffs;
  for (const std::string& policy : policies) {
    for (const std::string& seed_text : seeds) {
      auto model = freshd::sim::WebModel::Build(spec, std::stoull(seed_text));
      freshd::cli::LiveWebResult run[2];
      for (int on = 0; on < 2; ++on) {
        freshd::cli::LiveWebOptions lo = base;
        lo.policy = policy;
        lo.feeds = on == 1;
        lo.feed_entries = entries;
        auto live = freshd::cli::RunOnLiveWeb(model, lo);
        if (!live.ok()) {
          std::fprintf(stderr, "e2e_bench: %s\n",
                       live.status().ToString().c_str());
          return 1;
        }
        run[on] = std::move(live).value();
      }
      const nlohmann::json& feeds = run[1].status["site_feeds"];
      const double diff = run[1].true_freshness - run[0].true_freshness;
      std::printf(
          "| %s | %s | %.4f | %.4f | %+.4f | %.1f | %.1f | %llu | %llu | "
          "%llu | %llu (%llu) |\n",
          policy.c_str(), seed_text.c_str(), run[0].true_freshness,
          run[1].true_freshness, diff, run[0].fetches_per_day,
          run[1].fetches_per_day,
          run[0].status["signals_total"].get<unsigned long long>(),
          run[1].status["signals_total"].get<unsigned long long>(),
          feeds["signals_total"].get<unsigned long long>(),
          feeds["polled_total"].get<unsigned long long>(),
          feeds["not_modified_total"].get<unsigned long long>());
      std::fflush(stdout);
      diffs[policy].push_back(diff);
    }
  }
  std::printf("\nMedian difference over seeds:\n\n");
  for (auto& [policy, d] : diffs) {
    std::printf("- %s: %+.4f\n", policy.c_str(), Median(d));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "freshd end-to-end: the daemon on a live test web vs freshd sim"};
  std::string web_path = "sim/webs/noisy.toml", policies = "ncis,freshness",
              seeds = "1,2,3", json_path, metric = "auto";
  double rate = 100, days = 120, warmup = 30, day_seconds = 1;
  app.add_option("--web", web_path, "web TOML (sim/README.md)");
  app.add_option("--policies", policies, "comma-separated policies");
  app.add_option("--rate", rate, "budget, pages per virtual day");
  app.add_option("--days", days, "virtual days per run");
  app.add_option("--warmup-days", warmup, "virtual days before measuring");
  app.add_option("--day-seconds", day_seconds, "wall seconds per day (>= 1)");
  app.add_option("--seeds", seeds, "comma-separated web seeds");
  app.add_option("--json", json_path, "also write every run as JSON here");
  app.add_option("--metric", metric,
                 "freshness, staleness (fragment staleness), or auto: "
                 "staleness for the longevity policies")
      ->check(CLI::IsMember({"auto", "freshness", "staleness"}));
  uint32_t feeds_compare = 0;
  app.add_option("--feeds-compare", feeds_compare,
                 "K: compare runs without and with site feeds of K entries "
                 "(no simulation)")
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);

  auto spec = freshd::sim::LoadWebSpec(web_path);
  if (!spec.ok()) {
    std::fprintf(stderr, "e2e_bench: %s\n", spec.status().ToString().c_str());
    return 2;
  }
  std::string cmd = argv[0];
  for (int i = 1; i < argc; ++i) cmd += std::string(" ") + argv[i];
  std::printf("# %s\n", cmd.c_str());
  if (feeds_compare > 0) {
    freshd::cli::LiveWebOptions lo;
    lo.rate_per_day = rate;
    lo.days = days;
    lo.warmup_days = warmup;
    lo.day_seconds = day_seconds;
    return CompareFeeds(spec.value(), lo, Split(policies), Split(seeds),
                        feeds_compare);
  }
  std::printf(
      "| policy | metric | seed | daemon | sim | sim-polled | daemon / "
      "sim-polled | daemon / sim | fetches/day daemon | sim | estimated "
      "freshness daemon | − true | sim-polled | − true |\n|---|---|---|---|"
      "---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);

  nlohmann::json runs = nlohmann::json::array();
  std::map<std::string, std::map<std::string, std::vector<double>>> summary;
  for (const std::string& policy : Split(policies)) {
    for (const std::string& seed_text : Split(seeds)) {
      uint64_t seed = std::stoull(seed_text);
      auto model = freshd::sim::WebModel::Build(spec.value(), seed);
      auto polled = freshd::sim::WebModel::Build(
          freshd::sim::PolledSignalsSpec(spec.value(), 1), seed);

      freshd::cli::LiveWebOptions lo;
      lo.policy = policy;
      lo.rate_per_day = rate;
      lo.days = days;
      lo.warmup_days = warmup;
      lo.day_seconds = day_seconds;
      auto live = freshd::cli::RunOnLiveWeb(model, lo);
      if (!live.ok()) {
        std::fprintf(stderr, "e2e_bench: %s\n",
                     live.status().ToString().c_str());
        return 1;
      }
      freshd::sim::SimOptions so;
      so.policy = policy;
      so.rate_per_day = rate;
      so.days = days;
      so.warmup_days = warmup;
      so.max_interval_days = 90;  // the daemon's default floor
      auto sim = freshd::sim::RunSimulation(model, so);
      auto sim_polled = freshd::sim::RunSimulation(polled, so);
      if (!sim.ok() || !sim_polled.ok()) {
        std::fprintf(stderr, "e2e_bench: simulation failed\n");
        return 1;
      }
      const bool staleness =
          metric == "staleness" ||
          (metric == "auto" && policy.starts_with("longevity"));
      double d = staleness ? live.value().fragment_staleness
                           : live.value().true_freshness;
      double s =
          staleness ? sim.value().total.staleness : sim.value().total.fresh;
      double sp = staleness ? sim_polled.value().total.staleness
                            : sim_polled.value().total.fresh;
      const char* metric_name = staleness ? "staleness" : "freshness";
      double sim_fpd = sim.value().total.crawls / sim.value().measured_days;
      std::printf(
          "| %s | %s | %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.1f | "
          "%.4f | %+.4f | %.4f | %+.4f |\n",
          policy.c_str(), metric_name, seed_text.c_str(), d, s, sp, d / sp,
          d / s, live.value().fetches_per_day, sim_fpd,
          live.value().estimated_freshness,
          live.value().estimated_freshness - live.value().true_freshness,
          sim_polled.value().estimated_freshness,
          sim_polled.value().estimated_freshness -
              sim_polled.value().total.fresh);
      std::fflush(stdout);
      auto& m = summary[policy + " | " + metric_name];
      m["daemon"].push_back(d);
      m["sim"].push_back(s);
      m["sim_polled"].push_back(sp);
      m["ratio_polled"].push_back(d / sp);
      m["ratio"].push_back(d / s);
      m["estimated"].push_back(live.value().estimated_freshness);
      m["estimated_minus_true"].push_back(live.value().estimated_freshness -
                                          live.value().true_freshness);
      runs.push_back(
          {{"policy", policy},
           {"seed", seed},
           {"daemon_freshness", live.value().true_freshness},
           {"daemon_staleness", live.value().fragment_staleness},
           {"daemon_estimated_freshness", live.value().estimated_freshness},
           {"sim_polled_estimated_freshness",
            sim_polled.value().estimated_freshness},
           {"sim_freshness", sim.value().total.fresh},
           {"sim_staleness", sim.value().total.staleness},
           {"sim_polled_freshness", sim_polled.value().total.fresh},
           {"sim_polled_staleness", sim_polled.value().total.staleness},
           {"daemon_fetches_per_day", live.value().fetches_per_day},
           {"sim_crawls_per_day", sim_fpd},
           {"daemon_status", live.value().status}});
    }
  }
  std::printf(
      "\nMedians over seeds:\n\n| policy | metric | daemon | sim | "
      "sim-polled | daemon / sim-polled | daemon / sim | daemon's estimated "
      "freshness | − true freshness |\n|---|---|---|---|---|---|---|---|---|"
      "\n");
  for (auto& [policy, m] : summary) {
    std::printf("| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %+.4f |\n",
                policy.c_str(), Median(m["daemon"]), Median(m["sim"]),
                Median(m["sim_polled"]), Median(m["ratio_polled"]),
                Median(m["ratio"]), Median(m["estimated"]),
                Median(m["estimated_minus_true"]));
  }
  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "e2e_bench: cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::fprintf(f, "%s\n", runs.dump(1).c_str());
    std::fclose(f);
  }
  return 0;
}
