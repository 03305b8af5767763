// The scheduler's options from the daemon's config: the one place a [sched],
// [budget] or [crawler] key becomes a sched::SchedulerOptions field. It lives
// above sched/ (base <- conf <- sched <- daemon) so that sched/ knows nothing
// of the config file; sim/ builds its options from SimOptions instead
// (sim/simulator.h SchedulerOptionsFor), and cli/ and the tests reach this
// through freshd_daemon.
// Thread-safety: a pure function; safe from any thread.

#ifndef FRESHD_DAEMON_SCHEDULER_OPTIONS_H_
#define FRESHD_DAEMON_SCHEDULER_OPTIONS_H_

#include "conf/config.h"
#include "sched/scheduler.h"

namespace freshd::daemon {

// [sched] new_page_value is read in importance x days (x 86400 here);
// learning_l in days per refresh (0: auto). The rate mixture's grid
// (RateMixtureOptions::min_rate, max_rate) moves with [sched]
// prior_change_interval_s: its defaults (10 years to 10 min) at the default
// one day, each end times 86400 / prior_change_interval_s, so that a daemon
// whose clock is compressed (the live-web harness, the demo: a day in 1-10
// s, the prior interval set to match) keeps its pages' rates inside the
// grid, not pinned at its fast end, 1/600 s.
sched::SchedulerOptions SchedulerOptionsFromConfig(const Config& config);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_SCHEDULER_OPTIONS_H_
