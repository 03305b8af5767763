// Tests of `freshd sim`'s refusals: longevity-bound has no oracle mode (it
// values pages by their change profiles, so --oracle only dropped its
// learning phase and scored below uniform), a clear error with exit 2. Runs
// the real binary (FRESHD_BINARY) on sim/webs/scroll-small.toml.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd::testing {
namespace {

const std::string kWeb = FRESHD_SOURCE_DIR "/sim/webs/scroll-small.toml";

TEST(SimCliTest, LongevityBoundOracleIsRejected) {
  const CommandResult r =
      RunFreshd({"sim", "--web", kWeb, "--policy", "longevity-bound",
                 "--oracle", "--rate", "10", "--days", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("longevity-bound has no oracle"), std::string::npos)
      << r.err;
}

TEST(SimCliTest, LongevityBoundEstimatedAndLongevityOracleRun) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--policy", "longevity-bound"},
        std::vector<std::string>{"--policy", "longevity", "--oracle"}}) {
    std::vector<std::string> args = {"sim", "--web",  kWeb, "--rate",
                                     "10",  "--days", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult r = RunFreshd(args);
    EXPECT_EQ(r.exit_code, 0) << extra[1] << ": " << r.err;
    EXPECT_NE(r.out.find("\"freshness\""), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace freshd::testing
