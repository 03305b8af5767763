// Tests of `freshd allocate`: reproduces Tables IV and V of Cho & Garcia-Molina
// (TODS 2003) to two decimals (docs/MATH.md Paper 1 (b); Table IV age e₁ is
// 0.83, the paper prints 0.84), and rejects bad input with exit code 2. Runs
// the real binary (FRESHD_BINARY).

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd::testing {
namespace {

std::vector<double> Lines(const std::string& out) {
  std::vector<double> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) v.push_back(std::stod(line));
  return v;
}

void ExpectTwoDecimals(const CommandResult& r,
                       const std::vector<double>& want) {
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<double> got = Lines(r.out);
  ASSERT_EQ(got.size(), want.size()) << r.out;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_DOUBLE_EQ(std::round(got[i] * 100) / 100, want[i])
        << i << ": " << got[i];
  }
}

TEST(AllocateCliTest, TableFour) {
  ExpectTwoDecimals(RunFreshd({"allocate", "--lambda", "1,2,3,4,5", "--total",
                               "5", "--metric", "freshness"}),
                    {1.15, 1.36, 1.35, 1.14, 0.00});
  ExpectTwoDecimals(RunFreshd({"allocate", "--lambda", "1,2,3,4,5", "--total",
                               "5", "--metric", "age"}),
                    {0.83, 0.97, 1.03, 1.07, 1.09});
}

TEST(AllocateCliTest, TableFive) {
  ExpectTwoDecimals(
      RunFreshd({"allocate", "--lambda", "1,2,3,1,2,3", "--weight",
                 "1,1,1,2,2,2", "--total", "6", "--metric", "freshness"}),
      {0.78, 0.76, 0.00, 1.28, 1.56, 1.62});
  ExpectTwoDecimals(
      RunFreshd({"allocate", "--lambda", "1,2,3,1,2,3", "--weight",
                 "1,1,1,2,2,2", "--total", "6", "--metric", "age"}),
      {0.76, 0.88, 0.94, 0.99, 1.17, 1.26});
}

TEST(AllocateCliTest, FrequenciesSumToTotal) {
  const CommandResult r = RunFreshd(
      {"allocate", "--lambda", "0.5,7,2", "--total", "3.5", "--metric", "age"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double sum = 0;
  for (double f : Lines(r.out)) sum += f;
  EXPECT_NEAR(sum, 3.5, 2e-6);
}

// Issue 31 item 5: these summed to 0.0252 and 2.55 (no f below ≈ λ/40).
TEST(AllocateCliTest, SmallTotalsAreMetExactly) {
  struct Case {
    const char* lambdas;
    const char* total;
    std::vector<double> want;
  };
  const Case cases[] = {{"1,2,3,4,5", "0.01", {0.01, 0, 0, 0, 0}},
                        {"100,200,300", "1", {1, 0, 0}},
                        {"1,2,3,4,5", "1e-9", {1e-9, 0, 0, 0, 0}}};
  for (const Case& c : cases) {
    const CommandResult r =
        RunFreshd({"allocate", "--lambda", c.lambdas, "--total", c.total,
                   "--metric", "freshness"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<double> got = Lines(r.out);
    ASSERT_EQ(got.size(), c.want.size()) << r.out;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], c.want[i], 1e-9 * c.want[0]) << c.lambdas << " " << i;
    }
  }
}

TEST(AllocateCliTest, BadInputExitsTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"allocate", "--lambda", "1,-2", "--total", "5", "--metric", "age"},
      {"allocate", "--lambda", "1,2", "--weight", "1", "--total", "5",
       "--metric", "age"},
      {"allocate", "--lambda", "1,2", "--total", "0", "--metric", "age"},
      {"allocate", "--lambda", "1,2", "--total", "5", "--metric", "speed"},
      {"allocate", "--lambda", "1,x", "--total", "5", "--metric", "age"},
      {"allocate", "--total", "5", "--metric", "age"},
  };
  for (const auto& args : bad) {
    const CommandResult r = RunFreshd(args);
    EXPECT_EQ(r.exit_code, 2) << args[2] << " " << r.out;
    EXPECT_TRUE(r.out.empty());
    EXPECT_FALSE(r.err.empty());
  }
}

}  // namespace
}  // namespace freshd::testing
