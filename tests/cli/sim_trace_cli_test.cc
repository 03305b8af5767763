// Tests of `freshd sim --trace` (issue 42): a trace replayed end to end
// through the real binary (FRESHD_BINARY): the JSON, the default span,
// --start, and the exit codes of a malformed trace (2, naming its line),
// a missing file and a bad combination of options.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd::testing {
namespace {

class SimTraceCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/freshd-trace-XXXXXX";
    dir_ = mkdtemp(dir);
  }
  void TearDown() override {
    std::system(("rm -rf " + ShellQuote(dir_)).c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

// One page changing at days 0.5, 2.5, 3.25 and 4 (the end of the span);
// fetched once a day by uniform.
constexpr int64_t kT0 = 1700000000;
std::string Day(double d) {
  return std::to_string(kT0 + static_cast<int64_t>(d * 86400));
}

TEST_F(SimTraceCliTest, ReplaysATraceAndPrintsTheSimJson) {
  const std::string trace =
      Write("t.csv", "url,time\nhttp://a.example/p," + Day(0) +
                         "\nhttp://a.example/p," + Day(0.5) +
                         "\nhttp://a.example/p," + Day(2.5) +
                         "\nhttp://a.example/p," + Day(3.25) +
                         "\nhttp://a.example/p," + Day(4) + "\n");
  const CommandResult r =
      RunFreshd({"sim", "--trace", trace, "--policy", "uniform", "--rate", "1",
                 "--warmup-days", "0", "--min-interval-s", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["days"].get<double>(), 4);  // the span
  EXPECT_NEAR(j["freshness"].get<double>(), 2.25 / 4, 1e-3);
  EXPECT_TRUE(j["fragment_staleness"].is_null());
  EXPECT_TRUE(j["web"].is_null());
  EXPECT_EQ(j["trace"]["pages"], 1);
  EXPECT_EQ(j["policy"], "uniform");
  EXPECT_EQ(j["changes"], 4);  // 0.5, 2.5, 3.25 and the one at the end

  // --start: t0 at day 2 (the copy then is day 0.5's version), 2 days.
  const CommandResult s =
      RunFreshd({"sim", "--trace", trace, "--policy", "uniform", "--rate", "1",
                 "--warmup-days", "0", "--start", "2023-11-16T22:13:20Z"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(s.out)["days"].get<double>(), 2);

  // Sitemap signals listing every change at once: one signal per change.
  const CommandResult g =
      RunFreshd({"sim", "--trace", trace, "--policy", "ncis", "--rate", "1",
                 "--trace-signals", "1,1,0"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const nlohmann::json gj = nlohmann::json::parse(g.out);
  EXPECT_EQ(gj["signals"], gj["changes"]);
  EXPECT_DOUBLE_EQ(gj["trace_signals"]["recall"].get<double>(), 1);
  EXPECT_EQ(RunFreshd({"sim", "--trace", trace, "--policy", "ncis", "--rate",
                       "1", "--trace-signals", "2,1,0"})
                .exit_code,
            2);
}

TEST_F(SimTraceCliTest, MalformedTraceIsExit2NamingItsLine) {
  const std::string trace =
      Write("bad.csv", "url,time\nhttp://a.example/,1\nhttp://a.example/,x\n");
  const CommandResult r = RunFreshd(
      {"sim", "--trace", trace, "--policy", "uniform", "--rate", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("bad.csv:3: time"), std::string::npos) << r.err;
}

TEST_F(SimTraceCliTest, MissingFileAndBadOptions) {
  CommandResult r = RunFreshd({"sim", "--trace", dir_ + "/none.csv", "--policy",
                               "uniform", "--rate", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string trace =
      Write("t.csv", "url,time\nhttp://a.example/,1\nhttp://a.example/,9\n");
  r = RunFreshd({"sim", "--trace", trace, "--web", "x.toml", "--policy",
                 "uniform", "--rate", "1"});
  EXPECT_NE(r.exit_code, 0);
  r = RunFreshd({"sim", "--trace", trace, "--policy", "uniform", "--rate", "1",
                 "--shards", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunFreshd({"sim", "--policy", "uniform", "--rate", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunFreshd({"sim", "--trace", trace, "--policy", "uniform", "--rate", "1",
                 "--start", "soon"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// freshd plan: 20 pages, page i changing every i + 1 days, for 60 days.
TEST_F(SimTraceCliTest, PlanFindsABudgetAndWritesJsonTableAndSvg) {
  std::string text = "url,time\n";
  for (int i = 0; i < 20; ++i) {
    const std::string url = "http://a.example/p" + std::to_string(i);
    text += url + "," + Day(0) + "\n";
    for (double d = 0.5; d < 60; d += i + 1) text += url + "," + Day(d) + "\n";
  }
  text += "http://a.example/p0," + Day(60) + "\n";
  const std::string trace = Write("t.csv", text);
  const std::string svg = dir_ + "/plan.svg";
  CommandResult r =
      RunFreshd({"plan", "--trace", trace, "--target", "0.8", "--policies",
                 "uniform", "--json", "--svg", svg, "--warmup-days", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pages"], 20);
  ASSERT_EQ(j["policies"].size(), 1u);
  const double per_day = j["policies"][0]["pages_per_day"].get<double>();
  EXPECT_GT(per_day, 0);
  EXPECT_DOUBLE_EQ(j["policies"][0]["rate_per_second"].get<double>(),
                   per_day / 86400);
  EXPECT_GE(j["policies"][0]["freshness_at_budget"].get<double>(), 0.8);
  // The budget found, replayed by freshd sim, reaches the target.
  const CommandResult s =
      RunFreshd({"sim", "--trace", trace, "--policy", "uniform", "--rate",
                 std::to_string(per_day * 1.0001), "--warmup-days", "0"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_GE(nlohmann::json::parse(s.out)["freshness"].get<double>(), 0.8);
  const std::string plot = ReadWholeFile(svg);
  EXPECT_EQ(plot.rfind("<svg", 0), 0u);
  EXPECT_NE(plot.find("<polyline"), std::string::npos);
  // The table.
  r = RunFreshd({"plan", "--trace", trace, "--target", "0.8", "--policies",
                 "uniform", "--bisections", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[budget] rate/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("uniform"), std::string::npos);
  // Bad input: exit 2.
  EXPECT_EQ(RunFreshd({"plan", "--trace", trace, "--target", "1.5"}).exit_code,
            2);
  EXPECT_EQ(
      RunFreshd({"plan", "--trace", Write("b.csv", "url\nx\n")}).exit_code, 2);
}

}  // namespace
}  // namespace freshd::testing
