// RunSimulation (sim/simulator.h): checks the options, creates the shards'
// schedulers (and the oracle posterior), runs the simulation (sim/sim_run.h)
// and adds what is measured against the truth without simulating
// (sim/rate_error.h, sim/optima.h). SimResultToJson is in
// sim/sim_result_json.cc.

#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "sched/scheduler.h"
#include "sim/optima.h"
#include "sim/population_posterior.h"
#include "sim/rate_error.h"
#include "sim/sim_run.h"

namespace freshd::sim {
namespace {

// --oracle-posterior: the prior's particles are another draw of the web.
constexpr uint64_t kPosteriorSeedSalt = 0x9e3779b97f4a7c15;

}  // namespace

sched::SchedulerOptions SchedulerOptionsFor(const SimOptions& options) {
  sched::SchedulerOptions so;
  so.policy = options.policy;
  so.oracle = options.oracle;
  so.rate_mixture = options.rate_model == "mixture";
  so.explore = options.explore;
  so.rate = options.rate_per_day / kDay;
  so.burst = std::max(1.0, options.burst);
  so.new_page_value = options.new_page_value;
  so.min_interval = options.min_interval_s;
  so.max_interval = options.max_interval_days * kDay;
  so.history = options.history;
  so.signal_window = options.signal_window_days * kDay;
  so.max_pages = kMaxSimPages;
  return so;
}

Result<SimResult> RunSimulation(const WebModel& model,
                                const SimOptions& options) {
  if (!(options.rate_per_day > 0) || !std::isfinite(options.rate_per_day) ||
      !(options.days > 0) || !std::isfinite(options.days)) {
    return Status::InvalidArgument("sim: rate and days must be > 0");
  }
  if (model.pages.empty()) return Status::InvalidArgument("sim: empty web");
  double last_day = 0;
  for (const RateChange& c : options.rate_changes) {
    if (!(c.day > last_day) || !(c.day < options.days) ||
        !(c.rate_per_day > 0) || !std::isfinite(c.rate_per_day)) {
      return Status::InvalidArgument(
          "sim: rate changes need increasing days in (0, days) and rates > 0");
    }
    last_day = c.day;
  }
  if (!(options.shards >= 1 && options.shards <= 1024)) {
    return Status::InvalidArgument("sim: shards must be in 1..1024");
  }
  if (options.exchange_period_s != 0 &&
      !(options.exchange_period_s >= 1 &&
        options.days * kDay / options.exchange_period_s <= 1e6)) {
    return Status::InvalidArgument(
        "sim: the exchange period must be >= 1 s and give at most 1e6 "
        "exchanges");
  }
  last_day = 0;
  for (const BudgetChange& c : options.budget_changes) {
    if (!(c.day > last_day) || !(c.day < options.days) ||
        !(c.factor > 0 && c.factor <= 1e3)) {
      return Status::InvalidArgument(
          "sim: budget changes need increasing days in (0, days) and "
          "factors in (0, 1000]");
    }
    last_day = c.day;
  }
  last_day = 0;
  int lost = 0;
  for (const ShardLoss& c : options.shard_losses) {
    lost += std::max(0, c.count);
    if (!(c.day > last_day) || !(c.day < options.days) || c.count < 1 ||
        lost >= options.shards) {
      return Status::InvalidArgument(
          "sim: shard losses need increasing days in (0, days), at least one "
          "shard each, and a shard left");
    }
    last_day = c.day;
  }
  if (options.oracle && options.policy == "longevity-bound") {
    // Its value is the expected curve between the change profiles' bounds,
    // which the truth cannot stand in for; with --oracle it only lost the
    // learning phase and scored worse than uniform (issue 31 item 6).
    return Status::InvalidArgument(
        "sim: longevity-bound has no oracle mode (it values pages by their "
        "change profiles, not a model); use longevity --oracle for the true "
        "curve");
  }
  for (const SimRule& r : options.rules) {
    bool known = false;
    for (const auto& c : model.spec.classes) known = known || c.name == r.cls;
    if (!known) {
      return Status::InvalidArgument("sim: rule for unknown class \"" + r.cls +
                                     "\"");
    }
  }
  sched::SchedulerOptions so = SchedulerOptionsFor(options);
  so.oracle_rate = options.oracle_rate && !options.oracle;
  if (options.rate_model != "gamma" && options.rate_model != "mixture") {
    return Status::InvalidArgument("sim: rate model must be gamma or mixture");
  }
  if (!(options.oracle_rate_slope >= 0 && options.oracle_rate_slope <= 10) ||
      !(options.oracle_rate_noise >= 0 && options.oracle_rate_noise <= 10)) {
    return Status::InvalidArgument(
        "sim: oracle rate slope and noise must be in [0, 10]");
  }
  so.rate /= options.shards;  // equal shares to begin with
  std::vector<internal::Shard> shards(static_cast<size_t>(options.shards));
  auto scheduler = sched::Scheduler::Create(so, shards[0].truth.get());
  if (!scheduler.ok()) return scheduler.status();
  std::optional<PopulationPosterior> posterior;
  if (options.oracle_posterior_draws != 0 && !options.oracle_posterior) {
    return Status::InvalidArgument(
        "sim: posterior draws need --oracle-posterior");
  }
  if (options.oracle_posterior) {
    if (!options.oracle || options.distorts_rates() ||
        !(options.oracle_posterior_draws >= 0 &&
          options.oracle_posterior_draws <= 256) ||
        (*scheduler)->policy().uses_profiles()) {
      return Status::InvalidArgument(
          "sim: --oracle-posterior needs --oracle, no rate distortion, a "
          "policy without change profiles and 0..256 draws");
    }
    auto created =
        PopulationPosterior::Create(model, model.seed ^ kPosteriorSeedSalt,
                                    (*scheduler)->policy().uses_signals());
    if (!created.ok()) return created.status();
    posterior = std::move(*created);
  }
  shards[0].sched = std::move(*scheduler);
  for (internal::Shard& sh : shards) {
    if (!sh.sched) {
      auto more = sched::Scheduler::Create(so, sh.truth.get());
      if (!more.ok()) return more.status();
      sh.sched = std::move(*more);
    }
    sh.share = so.rate;
  }
  internal::Run run(model, options, shards, posterior ? &*posterior : nullptr);
  auto result = run.Go();
  if (!result.ok()) return result;
  if (!options.oracle) {
    MeasureRateError(
        model, [&run](uint32_t p) { return run.EstimatedRate(p); }, *result);
  }
  ContinuousOptima(model, options.rate_per_day,
                   options.policy.starts_with("longevity"), *result);
  return result;
}

}  // namespace freshd::sim
