// Tests of `freshd sim`: its progress line (a terminal only), and its
// refusals: longevity-bound has no oracle mode (it
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

// Progress goes to stderr only when it is a terminal: quiet into a file,
// a "day X of D" line under a pseudo-terminal (script(1)), erased before the
// result, which is the same JSON either way.
TEST(SimCliTest, ProgressOnlyOnATerminal) {
  const std::vector<std::string> args = {"sim",    "--web",    kWeb,
                                         "--rate", "10",       "--days",
                                         "200",    "--policy", "uniform"};
  const CommandResult quiet = RunFreshd(args);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");

  std::string cmd = ShellQuote(FRESHD_BINARY);
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  const std::string typescript = WriteTempFile("", ".txt");
  const std::string shell = "script -qec " + ShellQuote(cmd) + " " +
                            ShellQuote(typescript) + " </dev/null >/dev/null";
  ASSERT_EQ(std::system(shell.c_str()), 0);
  const std::string tty = ReadWholeFile(typescript);
  std::remove(typescript.c_str());
  EXPECT_NE(tty.find("freshd sim: day "), std::string::npos) << tty;
  EXPECT_NE(tty.find(" of 200 ("), std::string::npos) << tty;
  EXPECT_NE(tty.find("\r\033[K{"), std::string::npos) << "line not erased";
}

}  // namespace
}  // namespace freshd::testing
