// SimResultToJson (sim/simulator.h): a run's result as the one JSON object
// `freshd sim` prints, the output contract (sim/README.md).

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/simulator.h"

namespace freshd::sim {

std::string SimResultToJson(const WebModel& model, const SimOptions& options,
                            const SimResult& r) {
  using nlohmann::json;
  auto metrics = [](const SimMetrics& x, double days) {
    return json{{"pages", x.pages},
                {"freshness", x.fresh},
                {"age_days", x.age_days},
                {"fragment_staleness", x.staleness},
                {"crawls", x.crawls},
                {"crawls_per_day", days > 0 ? x.crawls / days : 0}};
  };
  auto class_metrics = [&metrics](const SimMetrics& x, double days) {
    json j = metrics(x, days);
    if (!std::isnan(x.rate_log_bias)) j["rate_log_bias"] = x.rate_log_bias;
    return j;
  };
  json j = metrics(r.total, r.measured_days);
  j["web"] = model.spec.name;
  j["policy"] = options.policy;
  j["oracle"] = options.oracle;
  j["oracle_rate"] = options.oracle_rate && !options.oracle;
  if (options.rate_model != "gamma") j["rate_model"] = options.rate_model;
  if (options.explore) j["explore"] = true;
  if (options.oracle_posterior) {
    j["oracle_posterior"] = true;
    j["oracle_posterior_draws"] = options.oracle_posterior_draws;
  }
  if (options.distorts_rates()) {
    j["oracle_rate_slope"] = options.oracle_rate_slope;
    j["oracle_rate_noise"] = options.oracle_rate_noise;
  }
  j["seed"] = model.seed;
  j["rate_per_day"] = options.rate_per_day;
  j["days"] = options.days;
  j["measured_days"] = r.measured_days;
  j["max_interval_days"] = options.max_interval_days;
  if (options.signal_window_days > 0) {
    j["signal_window_days"] = options.signal_window_days;
  }
  j["crawls_total"] = r.crawls_total;
  j["overdue_crawls"] = r.overdue_crawls;
  j["changes"] = r.changes;
  j["signals"] = r.signals;
  if (r.continuous_optimum >= 0) j["continuous_optimum"] = r.continuous_optimum;
  if (r.continuous_optimum_ncis >= 0) {
    j["continuous_optimum_ncis"] = r.continuous_optimum_ncis;
  }
  if (r.staleness_optimum >= 0) {
    j["staleness_optimum"] = r.staleness_optimum;
    j["staleness_at_freshness_optimum"] = r.staleness_at_freshness_optimum;
    j["freshness_rate_for_staleness_optimum"] =
        r.freshness_rate_for_staleness_optimum;
  }
  if (r.estimated_freshness >= 0) {
    j["estimated_freshness"] = r.estimated_freshness;
  }
  if (r.least_host_crawl_share >= 0) {
    j["least_host_crawl_share"] = r.least_host_crawl_share;
  }
  j["host_rate_spread"] = r.host_rate_spread;
  j["host_rate_weight"] = r.host_rate_weight;
  if (!options.rate_changes.empty()) {
    j["segment_freshness"] = r.window_freshness;  // 2nd half of each segment
    j["segment_crawls_per_day"] = r.window_crawls_per_day;
  }
  json classes = json::object();
  for (size_t i = 0; i < r.per_class.size(); ++i) {
    classes[model.spec.classes[i].name] =
        class_metrics(r.per_class[i], r.measured_days);
  }
  j["per_class"] = classes;
  j["selector_evaluations_per_selection"] = r.mean_evaluations;
  if (r.rate_log_error >= 0) j["rate_log_error"] = r.rate_log_error;
  if (r.rate_log_scatter >= 0) {
    j["rate_log_slope"] = r.rate_log_slope;
    j["rate_log_scatter"] = r.rate_log_scatter;
  }
  if (!options.rules.empty()) {
    json rules = json::array();
    for (size_t i = 0; i < options.rules.size() && i < r.rules.size(); ++i) {
      const sched::PageRule& rule = options.rules[i].rule;
      const SimRuleResult& x = r.rules[i];
      rules.push_back({{"class", options.rules[i].cls},
                       {"min_interval_s", rule.min_interval},
                       {"max_interval_s", rule.max_interval},
                       {"importance", rule.importance},
                       {"pages", x.pages},
                       {"crawls", x.crawls},
                       {"shortest_interval_s", x.shortest_interval},
                       {"longest_interval_s", x.longest_interval},
                       {"late_intervals", x.late_intervals}});
    }
    j["rules"] = rules;
  }
  if (options.clustered()) {
    json c;
    c["shards"] = options.shards;
    c["exchange_period_s"] = options.exchange_period_s;
    c["shard_pages"] = r.shard_pages;
    c["pages_moved"] = r.pages_moved;
    c["exchanges"] = r.exchanges;
    json events = json::array();
    for (const SimResult::Event& e : r.events) {
      json x = {{"kind", e.kind}, {"day", e.day}};
      if (e.kind == "budget_change") x["factor"] = e.value;
      if (e.kind == "shard_loss") x["shards"] = e.value;
      x["settle_days"] = e.settle_days;
      x["first_within_days"] = e.first_days;
      events.push_back(x);
    }
    c["events"] = events;
    json day = json::array(), spread = json::array(), lambda = json::array(),
         share = json::array(), dispersion = json::array();
    for (const SimResult::Sample& s : r.trajectory) {
      day.push_back(s.day);
      spread.push_back(s.spread);
      dispersion.push_back(s.dispersion);
      lambda.push_back(s.lambda);
      share.push_back(s.share);
    }
    // Sampled at exchanges (at most SimOptions::trajectory_samples):
    // λ by shard (-1 unknown or dead; 0 nothing to fetch), share by shard
    // in pages per day, the spread max/min of the positive λs and their
    // dispersion (sched::LambdaDispersion).
    c["trajectory"] = {{"day", day},
                       {"lambda_spread", spread},
                       {"lambda_dispersion", dispersion},
                       {"lambda", lambda},
                       {"share_per_day", share}};
    j["cluster"] = c;
  }
  j["cpu_seconds"] = r.cpu_seconds;
  return j.dump();
}

}  // namespace freshd::sim
