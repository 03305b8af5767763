// End-to-end tests of `freshd robots` (contract in ../shared/DESIGN.md):
// runs the real binary on files written by the test.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/cli/run_command.h"

namespace freshd::testing {
namespace {

const char kRobots[] =
    "User-agent: freshd\n"
    "Disallow: /private\n"
    "Allow: /private/ok\n"
    "\n"
    "User-agent: *\n"
    "Disallow: /\n";

TEST(RobotsCliTest, PrintsOneVerdictPerUrlInOrder) {
  std::string path = WriteTempFile(kRobots, ".txt");
  CommandResult r =
      RunFreshd({"robots", "--robots", path, "--agent", "FreshD",
                 "http://h.example/private/x", "http://h.example/public",
                 "HTTP://H.example:80/private/ok/1#frag"});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "disallowed http://h.example/private/x\n"
            "allowed http://h.example/public\n"
            "allowed HTTP://H.example:80/private/ok/1#frag\n");
}

TEST(RobotsCliTest, OtherAgentsGetTheStarGroup) {
  std::string path = WriteTempFile(kRobots, ".txt");
  CommandResult r = RunFreshd({"robots", "--robots", path, "--agent",
                               "otherbot", "https://h.example/public"});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "disallowed https://h.example/public\n");
}

TEST(RobotsCliTest, BadInputExitsTwo) {
  CommandResult missing = RunFreshd({"robots", "--robots", "/nonexistent/r.txt",
                                     "--agent", "freshd", "http://h/"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(missing.out.empty());
  EXPECT_NE(missing.err.find("cannot read"), std::string::npos) << missing.err;

  std::string path = WriteTempFile(kRobots, ".txt");
  CommandResult bad_url = RunFreshd({"robots", "--robots", path, "--agent",
                                     "freshd", "http://h/ok", "ftp://h/x"});
  std::remove(path.c_str());
  EXPECT_EQ(bad_url.exit_code, 2);
  EXPECT_TRUE(bad_url.out.empty());
  EXPECT_NE(bad_url.err.find("unsupported scheme"), std::string::npos)
      << bad_url.err;

  CommandResult usage = RunFreshd({"robots", "--agent", "freshd", "http://h/"});
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace freshd::testing
