// freshd ctl against a running `freshd run` (real processes on loopback):
// pause, list, resume, block; a bad pattern and a missing control exit 2
// with the daemon's error; a non-loopback --status is refused without a
// request; a daemon that is not there exits 1; the controls show in /status
// and /metrics and survive a restart of the daemon on the same store.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/daemon_child.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::CommandResult;
using testing::FreePort;
using testing::HttpGet;
using testing::RunFreshd;
using testing::Spawn;
using testing::Wait;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class CtlCliTest : public testing::TestWebFixture {
 protected:
  std::string WriteConfig() {
    status_port_ = FreePort();
    const std::string path = (dir_ / "freshd.toml").string();
    std::ofstream f(path);
    f << "[crawler]\nseeds = \"" << (dir_ / "seeds.txt").string() << "\"\n"
      << "[budget]\nrate = 20\nburst = 2\n"
      << "[politeness]\nmin_delay = \"50ms\"\n"
      << "[fetch]\nallow_private_networks = true\n"
      << "resolve = { \"h0.test\" = \"127.0.0.1\", \"h1.test\" = "
         "\"127.0.0.1\" }\n"
      << "[store]\npath = \"" << (dir_ / "db").string() << "\"\n"
      << "[status]\nlisten = \"127.0.0.1:" << status_port_ << "\"\n";
    std::ofstream seeds(dir_ / "seeds.txt");
    seeds << "http://h0.test:" << web_port_ << "/\n"
          << "http://h1.test:" << web_port_ << "/\n";
    return path;
  }
  testing::Child StartDaemon(const std::string& config) {
    testing::Child run =
        Spawn({"run", "--config", config}, (dir_ / "run.err").string());
    const nlohmann::json s = StatusWhen(
        [](const nlohmann::json& j) { return j.contains("controls"); }, 30);
    EXPECT_TRUE(s.is_object()) << "the daemon did not start";
    return run;
  }
};

TEST_F(CtlCliTest, ControlsARunningDaemon) {
  const std::string config = WriteConfig();
  testing::Child run = StartDaemon(config);

  CommandResult r = RunFreshd({"ctl", "pause", "h0.test", "--config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["count"], 1);
  EXPECT_EQ(j["hosts_paused"], 1);

  r = RunFreshd({"ctl", "block", "--pattern", "/private/", "--config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = RunFreshd({"ctl", "list", "--config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["count"], 2);
  EXPECT_EQ(j["list"][0]["kind"], "host");
  EXPECT_EQ(j["list"][0]["target"], "h0.test");
  EXPECT_EQ(j["list"][0]["action"], "pause");
  EXPECT_EQ(j["list"][1]["target"], "/private/");
  EXPECT_EQ(j["list"][1]["action"], "block");

  // Refused by the daemon: exit 2 with its error.
  r = RunFreshd({"ctl", "pause", "--pattern", "a(b", "--config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "HTTP 400")) << r.err;
  EXPECT_TRUE(Contains(r.err, "missing )")) << r.err;
  r = RunFreshd({"ctl", "resume", "h1.test", "--config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "HTTP 404")) << r.err;
  // Bad usage: no target, or both.
  EXPECT_EQ(RunFreshd({"ctl", "pause", "--config", config}).exit_code, 2);
  EXPECT_EQ(RunFreshd({"ctl", "pause", "h1.test", "--pattern", "x", "--config",
                       config})
                .exit_code,
            2);
  // Never sent anywhere but loopback.
  r = RunFreshd({"ctl", "pause", "h1.test", "--status", "192.0.2.1:8080"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "not a loopback address")) << r.err;
  // Nobody listening: 1.
  r = RunFreshd(
      {"ctl", "list", "--status", "127.0.0.1:" + std::to_string(FreePort())});
  EXPECT_EQ(r.exit_code, 1) << r.err;

  const nlohmann::json status =
      nlohmann::json::parse(HttpGet(status_port_, "/status"));
  EXPECT_EQ(status["controls"]["count"], 2);
  EXPECT_EQ(status["controls"]["hosts_paused"], 1);
  EXPECT_EQ(status["controls"]["patterns_blocked"], 1);
  const std::string metrics = HttpGet(status_port_, "/metrics");
  EXPECT_TRUE(
      Contains(metrics, "freshd_controls{kind=\"host\",action=\"pause\"} 1"))
      << metrics;
  EXPECT_TRUE(Contains(metrics, "freshd_controls_turned_away_total "));

  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0);

  // A restart on the same store: both controls are back.
  run = StartDaemon(config);
  r = RunFreshd({"ctl", "list", "--config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["count"], 2) << r.out;
  r = RunFreshd({"ctl", "resume", "h0.test", "--config", config});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["count"], 1);
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0);
}

}  // namespace
}  // namespace freshd
