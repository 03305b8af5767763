// The discrete-event simulator: runs the production sched::Scheduler on a
// WebModel in virtual time and measures what it achieves.
//
// Pages start fetched and fresh at t = 0 (as in the noisy-signals paper's
// simulator); tokens arrive at the budget rate; each token goes to the
// scheduler's choice, fetched instantly; changes and signals are Poisson
// streams of the model. Metrics are time-averaged over [warmup, days] and
// weighted by importance μ (= each page's Poisson request rate, so they are
// the expected request-weighted values). Deterministic from the model seed.
// Not thread-safe; independent runs may go in parallel.

#ifndef FRESHD_SIM_SIMULATOR_H_
#define FRESHD_SIM_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "base/status.h"
#include "sched/rate_shares.h"
#include "sched/scheduler.h"
#include "sim/web_model.h"

namespace freshd::sim {

struct RateChange {
  double day;           // from this day on
  double rate_per_day;  // the new budget
};

// An operator's rule in simulation (issue 31 item 7): sched::PageRule on
// every page of one web class (the simulator's pages have no URLs; a class
// stands for a host or URL pattern).
struct SimRule {
  std::string cls;  // WebSpec class name
  sched::PageRule rule;
};

// What a rule's pages saw over the measured window (SimResult::rules):
// their intervals between fetches, the last one running to the end.
struct SimRuleResult {
  uint64_t pages = 0;
  uint64_t crawls = 0;
  double shortest_interval = -1;  // s; -1: no interval closed by a fetch
  double longest_interval = -1;   // s, open intervals at the end included
  // Intervals (open ones included) longer than the rule's max_interval +
  // kRuleSlackS: one selection step and a host's delay on the webs here.
  // More than none where the rule's pages come due together faster than the
  // budget can fetch them (every page starts fetched at time 0, so their
  // first deadlines coincide): they wait their turn, earliest deadline first.
  uint64_t late_intervals = 0;
};
inline constexpr double kRuleSlackS = 3600;

// A sharded run's events (SimOptions::shards): from `day` on the cluster's
// budget is `factor` times what it was; or `count` shards die, their hosts
// moving to the survivors.
struct BudgetChange {
  double day;
  double factor;
};
struct ShardLoss {
  double day;
  int count;
};

struct SimOptions {
  std::string policy = "freshness";
  bool oracle = false;
  bool oracle_rate = false;  // estimated, but with the true Δ (diagnostic)
  // Estimated mode: SchedulerOptions::rate_mixture ("mixture") or the
  // Gamma host prior ("gamma"), and SchedulerOptions::explore.
  std::string rate_model = "mixture";
  bool explore = true;
  // Diagnostic, with oracle only: the policy sees each page's Δ distorted as
  // an estimator might, ln Δ' = c + slope·(ln Δ − c) + noise·z, c the mean
  // ln Δ of the page's host, z ~ N(0, 1) per page. slope < 1 pulls the rates
  // toward the host's (as a prior does); noise is unbiased scatter.
  double oracle_rate_slope = 1;
  double oracle_rate_noise = 0;
  // Diagnostic, with oracle only: the policy sees each page's posterior
  // mean (Δ, α, ν) under the web's own population distributions, given the
  // page's changed bits and signal counts so far (PopulationPosterior): the
  // best a point estimate of counts and bits can do. Not with a distortion
  // or a longevity policy; webs of at most 16,384 pages.
  bool oracle_posterior = false;
  // With oracle_posterior: > 0 values each page over that many draws from
  // its posterior instead of at the mean, given the signals since its last
  // fetch (sim::OracleTruth::SetMixture, read by the scheduler as a
  // sched::ModelSource): how the same greedy policy decides under the same
  // uncertainty. At most 256.
  int oracle_posterior_draws = 0;
  bool distorts_rates() const {
    return oracle && (oracle_rate_slope != 1 || oracle_rate_noise != 0);
  }
  double rate_per_day = 100;  // budget R
  double burst = 1;           // token bucket depth
  double days = 100;
  double warmup_days = -1;       // < 0: 10% of days
  double max_interval_days = 0;  // floor; 0: none
  double min_interval_s = 60;
  double new_page_value = 1e300;  // never-fetched pages first (none here)
  int history = 4;
  // Instants, evenly spread over the measured window, at which the
  // scheduler's own estimate of its copy's freshness (what the daemon's
  // /status reports) is sampled for SimResult::estimated_freshness; 0: none.
  int estimate_samples = 100;
  // Signals with no claimed change time received within this long after a
  // page's fetch are dropped (sched::SchedulerOptions::signal_window); days.
  double signal_window_days = 0;
  std::vector<RateChange> rate_changes;  // e.g. R -> 2R -> R
  // Operators' rules, the first naming a page's class being its rule (at
  // most sched::kMaxPageRules). Empty: the run is as without this option.
  std::vector<SimRule> rules;
  // The cluster (issue 30 item 4): pages are split by host (rendezvous
  // hashing of the host id over the live shards) among `shards` schedulers,
  // each with its own token bucket at its share of the budget. Every
  // `exchange_period_s` the shares move toward equal thresholds by
  // sched::NextRateShares (the daemon's rule); 0: fixed equal shares. One
  // shard and no exchange is the single-node run, unchanged. 1..1024
  // shards; at most 1e6 exchanges in a run.
  int shards = 1;
  double exchange_period_s = 0;
  sched::RateShareOptions share_options;
  std::vector<BudgetChange> budget_changes;  // days strictly increasing
  std::vector<ShardLoss> shard_losses;       // at least one shard survives
  // The per-shard λ and share trajectory kept for the JSON: at most this
  // many exchanges, evenly strided.
  int trajectory_samples = 100;
  bool clustered() const {
    return shards > 1 || exchange_period_s > 0 || !budget_changes.empty() ||
           !shard_losses.empty();
  }
  // Called with the simulated day reached, about every 1% of `days`, on the
  // simulating thread (a command line's progress line); empty: none.
  std::function<void(double day)> progress;
};

// The Δ an oracle run with distortion (slope, noise) shows page `page`
// (SimOptions::oracle_rate_slope/noise): deterministic in (seed, page).
// host_log_mean: c. Δ ≤ 0 (never changes) is returned unchanged.
double DistortedRate(uint64_t seed, uint32_t page, double delta,
                     double host_log_mean, double slope, double noise);

struct SimMetrics {
  double weight = 0;     // Σμ over pages
  double fresh = 0;      // Σμ·fresh time / (Σμ·T)
  double age_days = 0;   // Σμ·∫age / (Σμ·T), days
  double staleness = 0;  // Σμ·∫D / (Σμ·T)
  uint64_t crawls = 0;   // within the measured window
  uint64_t pages = 0;
  // Estimated mode: the median of ln(Δ̂/Δ) over the changing pages with an
  // estimate at the end of the run (> 0: rates read too fast); NaN: none.
  double rate_log_bias = std::numeric_limits<double>::quiet_NaN();
};

struct SimResult {
  SimMetrics total;
  std::vector<SimMetrics> per_class;  // by WebSpec class index
  uint64_t crawls_total = 0;          // including warm-up
  uint64_t overdue_crawls = 0;        // chosen by the max_interval floor
  uint64_t changes = 0, signals = 0;
  double measured_days = 0;
  double continuous_optimum = -1;       // Azar optimum at rate_per_day
  double continuous_optimum_ncis = -1;  // NCIS optimum (if any signals)
  // Longevity policies only (at most 20,000 pages): fragment staleness at the
  // continuous staleness optimum at rate_per_day (sched::
  // LongevityContinuousOptimum), at the Azar optimum's rates, and the budget
  // (per day) at which the Azar optimum's staleness equals the staleness
  // optimum's: item (c)'s crawl ratio without simulation is rate_per_day /
  // that. -1: not computed (or, for the budget, not reached by 2^20·R).
  double staleness_optimum = -1;
  double staleness_at_freshness_optimum = -1;
  double freshness_rate_for_staleness_optimum = -1;
  // Per rate-change segment (one segment without rate changes), over the
  // second half of each segment: μ-weighted freshness and crawls per day.
  // The JSON carries them only when there are rate changes.
  std::vector<double> window_freshness;
  std::vector<double> window_crawls_per_day;
  double mean_evaluations = 0;  // selector values evaluated per selection
  // Median over pages that change of |ln(Δ̂/Δ)| at the end: how far the
  // scheduler's change-rate estimates are from the truth (0.1 ≈ 10%).
  // -1 in oracle mode.
  double rate_log_error = -1;
  // The shape of that error, by least squares of ln Δ̂ on ln Δ over the same
  // pages: slope 1 means the estimates follow the truth, < 1 that they are
  // pulled together (toward their hosts' priors); scatter is the residual
  // standard deviation. scatter -1: not measured (oracle, < 3 pages).
  double rate_log_slope = 0;
  double rate_log_scatter = -1;
  // The μ-weighted mean over pages of the scheduler's P(fresh)
  // (sched::Scheduler::FreshProbability), averaged over the samples of
  // SimOptions::estimate_samples: the daemon's `estimated_freshness`, to
  // set against `total.fresh`. -1: not sampled.
  double estimated_freshness = -1;
  // Crawls per page of the least-crawled host over the measured window, as
  // a share of crawls per page over all hosts: about 0 when a whole host
  // was given up (every estimate of it too high to be worth a fetch, and
  // nothing fetched to correct it). -1: no crawls measured.
  double least_host_crawl_share = -1;
  // At the end: the spread of the hosts' estimated log rates less their
  // noise, and the pseudo-changes it lends each host
  // (sched::HostPool::HostRateSpread, HostRateWeight).
  double host_rate_spread = 0;
  double host_rate_weight = 0;
  double cpu_seconds = 0;
  std::vector<SimRuleResult> rules;  // by SimOptions::rules
  // SimOptions::clustered() runs: the exchange's record.
  struct Sample {
    double day;
    double spread;               // max/min of the positive λs; 0: none
    double dispersion;           // sched::LambdaDispersion
    std::vector<double> lambda;  // by shard; -1 unknown or dead
    std::vector<double> share;   // by shard, pages per day; 0 when dead
  };
  struct Event {
    std::string kind;  // "start", "budget_change", "shard_loss"
    double day = 0;
    double value = 0;  // the factor, or the shards lost
    // Days from the event until the λs are within 10% (their dispersion,
    // sched::LambdaDispersion, ≤ ln 1.1) at an exchange and stay so at
    // every exchange until the next event or the end (settle), or first
    // are (first); -1: not within it.
    double settle_days = -1;
    double first_days = -1;
  };
  std::vector<Sample> trajectory;  // strided
  std::vector<Event> events;
  std::vector<uint64_t> shard_pages;  // at the end, by shard
  uint64_t exchanges = 0;
  uint64_t pages_moved = 0;  // by shard losses
};

// The scheduler options a run's SimOptions ask for (policy, rate model,
// budget, intervals, history), shared by the web and trace simulations.
sched::SchedulerOptions SchedulerOptionsFor(const SimOptions& options);

// Runs `options.policy` on `model`. InvalidArgument for a bad policy or
// option (non-positive rate or days; rate changes not at strictly
// increasing days inside (0, days) or with a non-positive rate; shards out
// of 1..1024, an exchange period under 1 s or over 1e6 exchanges in the
// run, budget changes or shard losses not at strictly increasing days in
// (0, days), a factor not in (0, 1e3], or losses leaving no shard).
Result<SimResult> RunSimulation(const WebModel& model,
                                const SimOptions& options);

// The result as one JSON object (the `freshd sim` output contract).
std::string SimResultToJson(const WebModel& model, const SimOptions& options,
                            const SimResult& result);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_SIMULATOR_H_
