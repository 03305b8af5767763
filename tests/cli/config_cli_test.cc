// The config-facing commands as an operator runs them: check-config's exit
// codes and located messages, demo's embedded default, usage errors.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "conf/config.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::RunFreshd;
using testing::WriteTempFile;

TEST(CheckConfigCliTest, ExampleConfigIsOk) {
  auto r =
      RunFreshd({"check-config", FRESHD_SOURCE_DIR "/systemd/freshd.toml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

TEST(CheckConfigCliTest, BadConfigExits2WithFileLineAndKey) {
  std::string path =
      WriteTempFile("[budget]\nrate = 1\n[fetch]\nmax_redirects = -3\n");
  auto r = RunFreshd({"check-config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(
      r.err,
      path + ":4: [fetch] max_redirects: must be between 0 and 50, got -3\n");
  std::remove(path.c_str());
}

TEST(CheckConfigCliTest, MissingFileExits2) {
  auto r = RunFreshd({"check-config", "/nonexistent/freshd.toml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/freshd.toml"), std::string::npos);
}

TEST(CheckConfigCliTest, PrintShowsEffectiveConfig) {
  std::string path = WriteTempFile("[budget]\nrate = 7.5\n");
  auto r = RunFreshd({"check-config", "--print", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Result<Config> printed = LoadConfigString(r.out, "printed");
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  Config expected;
  expected.budget.rate = 7.5;
  EXPECT_EQ(*printed, expected);
  std::remove(path.c_str());
}

// The README's first command: the daemon loop crawls the embedded web on
// loopback and reports its freshness beside the ground truth; its estimate
// follows the truth (the scheduler's prior is scaled to the demo's
// compressed day: with the default one-day prior it said 0.99 against 0.57).
TEST(DemoCliTest, CrawlsTheEmbeddedWebAndReportsTrueFreshness) {
  auto r = RunFreshd({"demo", "--seconds", "10", "--rate", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t end = r.out.find('\n', pos);
    lines.push_back(nlohmann::json::parse(r.out.substr(pos, end - pos)));
    pos = end + 1;
  }
  ASSERT_GE(lines.size(), 1u) << r.out;
  const nlohmann::json& last = lines.back();
  EXPECT_TRUE(last.value("final", false)) << r.out;
  EXPECT_EQ(last["pages_known"], 204);  // 200 pages + 4 host roots
  // 20 pages/s for ~10 s, after robots.txt: most of the budget was spent.
  EXPECT_GE(last["pages_fetched_total"].get<int>(), 100) << r.out;
  EXPECT_LE(last["pages_fetched_total"].get<int>(), 20 * 11 + 20);
  EXPECT_TRUE(last["errors"].empty()) << r.out;
  double fresh = last["true_freshness"];
  EXPECT_GT(fresh, 0.05);
  EXPECT_LE(fresh, 1.0);
  EXPECT_NEAR(last["estimated_freshness"].get<double>(), fresh, 0.25) << r.out;
  EXPECT_NE(r.err.find("status at http://127.0.0.1:"), std::string::npos);
}

TEST(UsageCliTest, NoSubcommandOrUnknownOptionExits2) {
  EXPECT_EQ(RunFreshd({}).exit_code, 2);
  EXPECT_EQ(RunFreshd({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(RunFreshd({"check-config"}).exit_code, 2);  // FILE is required
}

TEST(UsageCliTest, EverySubcommandHasHelp) {
  for (const char* cmd :
       {"run", "demo", "check-config", "robots", "sitemap", "fingerprint",
        "diff", "fetch", "sim", "allocate", "testweb"}) {
    auto r = RunFreshd({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
  }
}

}  // namespace
}  // namespace freshd
