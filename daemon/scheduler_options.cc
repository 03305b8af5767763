#include "daemon/scheduler_options.h"

#include <cmath>

#include "sched/math_constants.h"

namespace freshd::daemon {

sched::SchedulerOptions SchedulerOptionsFromConfig(const Config& config) {
  using sched::kDay;
  sched::SchedulerOptions o;
  o.policy = config.sched.policy;
  o.rate = config.budget.rate;
  o.burst = config.budget.burst;
  o.new_page_value = config.sched.new_page_value * kDay;
  o.min_interval = config.sched.min_interval_s;
  o.max_interval = config.sched.max_interval_s;
  o.history = config.sched.history;
  o.max_pages = config.crawler.max_urls;
  o.policy_options.risk_rho = config.sched.risk_rho;
  o.policy_options.learning_l = config.sched.learning_l * kDay;
  o.host_pool.global_prior.rate = 1.0 / config.sched.prior_change_interval_s;
  o.signal_window = config.sched.signal_window_s;
  o.value_over_rate_uncertainty = config.sched.value_over_rate_uncertainty;
  o.rate_mixture = config.sched.rate_model == "mixture";
  const double scale = config.sched.prior_change_interval_s / kDay;
  if (scale > 0 && std::isfinite(scale) && scale != 1) {
    o.rate_mixture_options.min_rate /= scale;
    o.rate_mixture_options.max_rate /= scale;
  }
  o.explore = config.sched.explore;
  return o;
}

}  // namespace freshd::daemon
