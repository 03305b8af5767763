// freshd sim --web WEB.toml --policy NAME --rate R --days D [--seed S]
// [--oracle] ...: runs the production scheduler on a simulated web in
// virtual time (sim/simulator.h) and prints one JSON object (docs/DESIGN.md
// contract: freshness, age_days, fragment_staleness, crawls, crawls_per_day,
// plus per_class and the continuous optimum). --rate is in pages per day.
// With --trace FILE instead of --web, replays a real change history
// (sim/trace_replay.h; sim/README.md, "Traces").
// Exit 0 ok, 1 runtime failure, 2 bad usage or bad web file.

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/progress.h"
#include "conf/units.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/trace_replay.h"
#include "sim/web_model.h"

namespace freshd::cli {
namespace {

struct SimArgs {
  std::string web;
  std::string trace;
  std::string start;
  std::vector<double> trace_signals;  // recall, precision, delay days
  uint64_t seed = 1;
  bool seed_given = false;  // with --trace: shuffle the refresh phases
  sim::SimOptions options;
  std::vector<std::string> rate_changes;
  std::vector<std::string> rules;
  std::vector<std::string> budget_changes;
  std::vector<std::string> shard_losses;
};

// "CLASS:min=1d,max=7d,importance=2" (any of the three, durations as in the
// config) -> SimRule; an error message on malformed input.
std::string ParseRule(const std::string& s, sim::SimRule* out) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0)
    return "want CLASS:KEY=VALUE,...";
  out->cls = s.substr(0, colon);
  std::string rest = s.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return "want KEY=VALUE, got '" + item + "'";
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "min" || key == "max") {
      Result<double> d = ParseDuration(value);
      if (!d.ok()) return d.status().message();
      (key == "min" ? out->rule.min_interval : out->rule.max_interval) = *d;
    } else if (key == "importance") {
      try {
        size_t used = 0;
        out->rule.importance = std::stod(value, &used);
        if (used != value.size()) return "bad importance '" + value + "'";
      } catch (...) {
        return "bad importance '" + value + "'";
      }
    } else {
      return "unknown key '" + key + "' (min, max, importance)";
    }
  }
  return {};
}

// "DAY:VALUE" -> (day, value); false on malformed input.
bool ParseDayValue(const std::string& s, double* day, double* value) {
  size_t colon = s.find(':');
  if (colon == std::string::npos) return false;
  try {
    size_t used = 0;
    *day = std::stod(s.substr(0, colon), &used);
    if (used != colon) return false;
    std::string rest = s.substr(colon + 1);
    *value = std::stod(rest, &used);
    return used == rest.size() && std::isfinite(*day) && std::isfinite(*value);
  } catch (...) {
    return false;
  }
}

// "DAY:RATE" -> RateChange; false on malformed input.
bool ParseRateChange(const std::string& s, sim::RateChange* out) {
  return ParseDayValue(s, &out->day, &out->rate_per_day) && out->day >= 0 &&
         out->rate_per_day > 0;
}

// The cluster's events; false (with a message) on malformed input.
bool ParseClusterEvents(SimArgs& a) {
  for (const std::string& s : a.budget_changes) {
    sim::BudgetChange c;
    if (!ParseDayValue(s, &c.day, &c.factor)) {
      std::fprintf(stderr, "freshd sim: bad --budget-change '%s'\n", s.c_str());
      return false;
    }
    a.options.budget_changes.push_back(c);
  }
  for (const std::string& s : a.shard_losses) {
    double day = 0, count = 0;
    if (!ParseDayValue(s, &day, &count) || count != std::floor(count) ||
        !(count >= 1 && count <= 1024)) {
      std::fprintf(stderr, "freshd sim: bad --shard-loss '%s'\n", s.c_str());
      return false;
    }
    a.options.shard_losses.push_back({day, static_cast<int>(count)});
  }
  return true;
}

// freshd sim --trace: exit 0, 1 (runtime failure) or 2 (bad trace or use).
int RunTrace(SimArgs& a) {
  sim::TraceReplayOptions options;
  options.sim = a.options;
  if (!a.start.empty()) {
    double start = 0;
    if (!sim::ParseTraceTime(a.start, &start)) {
      std::fprintf(stderr, "freshd sim: bad --start '%s'\n", a.start.c_str());
      return 2;
    }
    options.start = start;
  }
  if (a.seed_given) options.seed = a.seed;
  if (a.trace_signals.size() == 3) {
    options.signals = {a.trace_signals[0], a.trace_signals[1],
                       a.trace_signals[2]};
  }
  Result<sim::Trace> trace = sim::LoadTrace(a.trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "freshd sim: %s\n", trace.status().message().c_str());
    return trace.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  auto result = sim::ReplayTrace(*trace, options);
  if (!result.ok()) {
    std::fprintf(stderr, "freshd sim: %s\n", result.status().message().c_str());
    return result.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  std::puts(sim::TraceReplayToJson(*trace, options, *result).c_str());
  return 0;
}

}  // namespace

void AddSimCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "sim", "Run a policy on a simulated web in virtual time; print JSON");
  auto a = std::make_shared<SimArgs>();
  sim::SimOptions& o = a->options;
  CLI::Option* web =
      sub->add_option("--web", a->web, "web model TOML (sim/README.md)");
  CLI::Option* trace = sub->add_option(
      "--trace", a->trace,
      "replay a real change history instead: CSV url,time[,importance,event] "
      "(sim/README.md, Traces); --days defaults to its span");
  web->excludes(trace);
  sub->add_option("--start", a->start,
                  "with --trace: t0, Unix seconds or RFC 3339 (default: the "
                  "earliest time in the file)")
      ->needs(trace);
  sub->add_option("--trace-signals", a->trace_signals,
                  "with --trace: sitemap signals listing each change with "
                  "RECALL, PRECISION and up to DELAY days late "
                  "(e.g. 0.9,0.8,1; default none)")
      ->expected(3)
      ->delimiter(',')
      ->needs(trace);
  sub->add_option("--policy", o.policy, "policy name (as [sched] policy)")
      ->required();
  sub->add_option("--rate", o.rate_per_day, "budget R, pages per day")
      ->required()
      ->check(CLI::PositiveNumber);
  o.days = -1;
  sub->add_option("--days", o.days,
                  "simulated days (required with --web; with --trace "
                  "default the file's span)")
      ->check(CLI::Range(1e-3, 1e6));
  CLI::Option* seed = sub->add_option(
      "--seed", a->seed,
      "web and event seed; with --trace: the refresh phases (pages existing "
      "at t0 added in an order shuffled by it; default: URL order)");
  CLI::Option* oracle =
      sub->add_flag("--oracle", o.oracle, "value functions see the true model");
  sub->add_flag("--oracle-rate", o.oracle_rate,
                "estimated, but with each page's true change rate "
                "(diagnostic: the rate-estimation error alone)");
  sub->add_option("--rate-model", o.rate_model,
                  "estimated mode: each host's prior of change rates, one "
                  "Gamma rate (gamma) or a distribution (mixture)")
      ->check(CLI::IsMember({"gamma", "mixture"}));
  sub->add_flag("--explore,!--no-explore", o.explore,
                "estimated mode: fetch again to learn a rate (a page "
                "fetched once; with mixture, a rate only bounded below)");
  sub->add_option("--oracle-rate-slope", o.oracle_rate_slope,
                  "with --oracle: each Δ seen pulled toward its host's "
                  "(log) mean, ln Δ' = c + SLOPE·(ln Δ − c) (diagnostic)")
      ->check(CLI::Range(0.0, 10.0))
      ->needs(oracle);
  sub->add_option("--oracle-rate-noise", o.oracle_rate_noise,
                  "with --oracle: each Δ seen times e^{SD·z}, z ~ N(0, 1) "
                  "per page (diagnostic)")
      ->check(CLI::Range(0.0, 10.0))
      ->needs(oracle);
  CLI::Option* posterior =
      sub->add_flag("--oracle-posterior", o.oracle_posterior,
                    "with --oracle: each page's model is its posterior mean "
                    "under the web's own distributions, given its changed bits "
                    "and signal counts (diagnostic: the best point estimate)")
          ->needs(oracle);
  sub->add_option("--oracle-posterior-draws", o.oracle_posterior_draws,
                  "with --oracle-posterior: value each page over K draws "
                  "from its posterior, given the signals since its fetch, "
                  "instead of at the mean (diagnostic)")
      ->check(CLI::Range(0, 256))
      ->needs(posterior);
  sub->add_option("--warmup-days", o.warmup_days,
                  "excluded from metrics (default 10% of --days)");
  sub->add_option("--max-interval-days", o.max_interval_days,
                  "floor: refetch any page at least this often (0: none)")
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--min-interval-s", o.min_interval_s, "never sooner (s)")
      ->check(CLI::Range(0.0, 1e9));
  sub->add_option("--burst", o.burst, "token bucket depth")
      ->check(CLI::Range(1.0, 1e9));
  sub->add_option("--history", o.history, "change profiles kept (longevity)")
      ->check(CLI::Range(1, 8));
  sub->add_option("--signal-window-days", o.signal_window_days,
                  "drop signals that claim no change time and arrive this "
                  "soon after a fetch (0: keep all)")
      ->check(CLI::Range(0.0, 365.0));
  sub->add_option("--rate-change", a->rate_changes,
                  "DAY:RATE budget change (repeatable), e.g. 100:200");
  sub->add_option("--rule", a->rules,
                  "CLASS:min=DUR,max=DUR,importance=X an operator's rule on "
                  "every page of a web class (repeatable; first match wins), "
                  "e.g. slow:max=7d");
  sub->add_option("--shards", o.shards,
                  "split the pages by host among this many schedulers, "
                  "each at its share of the budget (a cluster's nodes)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--exchange-period", o.exchange_period_s,
                  "seconds between the shards' λ exchanges, moving the "
                  "shares toward equal thresholds (0: fixed equal shares)")
      ->check(CLI::Range(0.0, 1e9));
  sub->add_option("--share-step", o.share_options.step,
                  "the exchange's exponent η (sched/rate_shares.h)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--share-floor", o.share_options.floor,
                  "no share below this fraction of the equal share")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--budget-change", a->budget_changes,
                  "DAY:FACTOR the cluster's budget times FACTOR from DAY "
                  "(repeatable)");
  sub->add_option("--shard-loss", a->shard_losses,
                  "DAY:K the K shards with the most pages die at DAY, their "
                  "hosts going to the others (repeatable)");
  sub->callback([exit_code, a, seed] {
    for (const std::string& s : a->rules) {
      sim::SimRule rule;
      if (std::string e = ParseRule(s, &rule); !e.empty()) {
        std::fprintf(stderr, "freshd sim: bad --rule '%s': %s\n", s.c_str(),
                     e.c_str());
        *exit_code = 2;
        return;
      }
      a->options.rules.push_back(rule);
    }
    for (const std::string& s : a->rate_changes) {
      sim::RateChange rc;
      if (!ParseRateChange(s, &rc)) {
        std::fprintf(stderr, "freshd sim: bad --rate-change '%s'\n", s.c_str());
        *exit_code = 2;
        return;
      }
      a->options.rate_changes.push_back(rc);
    }
    if (!ParseClusterEvents(*a)) {
      *exit_code = 2;
      return;
    }
    if (!a->trace.empty()) {
      a->seed_given = seed->count() > 0;
      *exit_code = RunTrace(*a);
      return;
    }
    if (a->web.empty() || !(a->options.days > 0)) {
      std::fprintf(stderr, "freshd sim: give --web and --days, or --trace\n");
      *exit_code = 2;
      return;
    }
    auto spec = sim::LoadWebSpec(a->web);
    if (!spec.ok()) {
      std::fprintf(stderr, "freshd sim: %s\n", spec.status().message().c_str());
      *exit_code = 2;
      return;
    }
    sim::WebModel model = sim::WebModel::Build(*spec, a->seed);
    ProgressLine progress("freshd sim");
    if (progress.enabled()) {
      const double days = a->options.days;
      a->options.progress = [&progress, days](double day) {
        char line[96];
        std::snprintf(line, sizeof line, "day %.1f of %g (%.0f%%)", day, days,
                      100 * day / days);
        progress.Show(line);
      };
    }
    auto result = sim::RunSimulation(model, a->options);
    progress.Clear();
    if (!result.ok()) {
      std::fprintf(stderr, "freshd sim: %s\n",
                   result.status().message().c_str());
      *exit_code =
          result.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
      return;
    }
    std::puts(sim::SimResultToJson(model, a->options, *result).c_str());
    *exit_code = 0;
  });
}

}  // namespace freshd::cli
