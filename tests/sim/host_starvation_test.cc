// No host is given up for good: a signal policy's first fetches of a host
// follow its first signals, hours apart, and the changed bits of such short
// intervals once put a whole host's rate at several times the truth; none of
// its pages was then worth a fetch again, so nothing corrected it
// (sched::HostPoolOptions::min_host_rate_weight). The full noisy.toml web, on
// the seeds and budgets where that happened; fixed seeds.

#include <gtest/gtest.h>

#include <string>

#include "sim/simulator.h"
#include "sim/web_model.h"

namespace freshd::sim {
namespace {

TEST(HostStarvationTest, EveryHostKeepsBeingCrawled) {
  Result<WebSpec> spec = LoadWebSpec(FRESHD_SOURCE_DIR "/sim/webs/noisy.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<WebSpec> timed =
      LoadWebSpec(FRESHD_SOURCE_DIR "/sim/webs/noisy-lm.toml");
  ASSERT_TRUE(timed.ok()) << timed.status().ToString();
  struct Case {
    const WebSpec* web;
    double rate;
    uint64_t seed;
  };
  // Each gave 0.00, a host never crawled again, with 2 pseudo-changes per
  // host (min_host_rate_weight; the first three) or 4 for the joint fit that
  // trusted Last-Modified hosts use (host_joint_weight; the last two).
  for (const Case& c :
       {Case{&*spec, 100, 1}, Case{&*spec, 100, 2}, Case{&*spec, 200, 2},
        Case{&*timed, 100, 1}, Case{&*timed, 100, 2}}) {
    SCOPED_TRACE(c.web->name + " ncis1 R " + std::to_string(c.rate) + " seed " +
                 std::to_string(c.seed));
    WebModel model = WebModel::Build(*c.web, c.seed);
    SimOptions options;
    options.policy = "ncis1";
    options.rate_per_day = c.rate;
    options.days = 120;
    options.warmup_days = 30;
    options.estimate_samples = 0;
    Result<SimResult> r = RunSimulation(model, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::printf("least host crawl share %.3f, freshness %.4f\n",
                r->least_host_crawl_share, r->total.fresh);
    EXPECT_GT(r->least_host_crawl_share, 0.5);
  }
}

}  // namespace
}  // namespace freshd::sim
