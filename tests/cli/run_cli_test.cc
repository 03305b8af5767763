// freshd run as an operator runs it: against `freshd testweb` on loopback,
// status polled over HTTP, SIGHUP reloads the budget, SIGTERM stops it with
// exit 0, and a restart on the same store restores every page. Also: the
// default config refuses loopback targets (SSRF guard) and bad seeds or
// configs exit 2.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/cli/daemon_child.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::Child;
using testing::FreePort;
using testing::HttpGet;
using testing::Spawn;
using testing::Wait;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class RunCliTest : public testing::TestWebFixture {
 protected:
  // Writes the config and seeds; keeps the status port once chosen.
  std::string WriteConfig(double rate, bool allow_private,
                          const std::string& store_extra = "") {
    if (status_port_ == 0) status_port_ = FreePort();
    std::string path = (dir_ / "freshd.toml").string();
    std::ofstream f(path);
    f << "[crawler]\nseeds = \"" << (dir_ / "seeds.txt").string() << "\"\n"
      << "[budget]\nrate = " << rate << "\nburst = 2\n"
      << "[politeness]\nmin_delay = \"50ms\"\n"
      << "[fetch]\nallow_private_networks = "
      << (allow_private ? "true" : "false") << "\n"
      << "resolve = { \"h0.test\" = \"127.0.0.1\", \"h1.test\" = "
         "\"127.0.0.1\" }\n"
      << "[store]\npath = \"" << (dir_ / "db").string() << "\"\n"
      << store_extra << "[status]\nlisten = \"127.0.0.1:" << status_port_
      << "\"\n"
      << "[log]\nlevel = \"debug\"\n";
    std::ofstream seeds(dir_ / "seeds.txt");
    seeds << "# two hosts of the test web\n"
          << "http://h0.test:" << web_port_ << "/ 2\n"
          << "http://h1.test:" << web_port_ << "/\n";
    return path;
  }
};

TEST_F(RunCliTest, CrawlsReloadsStopsAndRestartsFromItsStore) {
  std::string config = WriteConfig(10, true);
  std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) { return j["pages_fetched_total"] >= 15; },
      20);
  ASSERT_GE(s["pages_fetched_total"].get<int>(), 15) << s.dump();
  EXPECT_EQ(s["rate_target"], 10.0);
  EXPECT_GT(s["pages_known"].get<int>(), 100);  // links discovered

  // SIGHUP with a new budget: applied without a restart.
  WriteConfig(25, true);
  ASSERT_EQ(kill(run.pid, SIGHUP), 0);
  s = StatusWhen(
      [](const nlohmann::json& j) { return j["rate_target"] == 25.0; }, 10);
  EXPECT_EQ(s["rate_target"], 25.0) << Slurp(err);
  uint64_t fetched = s["pages_fetched_total"];
  uint64_t known = s["pages_known"];
  // check-config before a reload, with the daemon running: its [status]
  // listen is held by that daemon, which a reload keeps, so it is ok.
  testing::CommandResult check = testing::RunFreshd({"check-config", config});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out, "ok\n");

  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0) << Slurp(err);
  EXPECT_NE(Slurp(err).find("SIGHUP: budget now 25"), std::string::npos);
  // [log] level = "debug": one line per fetch, with its outcome.
  EXPECT_NE(Slurp(err).find(" debug fetch http://h0.test:"), std::string::npos);

  // Restart on the same store: every known page comes back.
  Child again = Spawn({"run", "--config", config}, err);
  s = StatusWhen([](const nlohmann::json& j) { return j.contains("version"); },
                 10);
  EXPECT_GE(s["pages_known"].get<uint64_t>(), known);
  ASSERT_EQ(kill(again.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(again), 0);
  std::string log = Slurp(err);
  EXPECT_NE(log.find("pages restored"), std::string::npos) << log;
  EXPECT_GT(fetched, 0u);
}

// Probe: a truncated or deleted LevelDB .log started silently. Now the
// restart says how many pages the store expected, how many it restored and
// what was lost, and names the damage; a deleted CURRENT is named too.
TEST_F(RunCliTest, RestartReportsPagesExpectedRestoredAndLost) {
  std::string config = WriteConfig(20, true);
  std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) { return j["pages_known"] >= 100; }, 20);
  ASSERT_GE(s["pages_known"].get<int>(), 100) << s.dump();
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  ASSERT_EQ(Wait(run), 0) << Slurp(err);
  // The pages written since the last memtable flush live only in the log.
  int logs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "db")) {
    if (e.path().extension() == ".log") {
      std::filesystem::remove(e.path());
      ++logs;
    }
  }
  ASSERT_EQ(logs, 1);
  Child again = Spawn({"run", "--config", config}, err);
  s = StatusWhen([](const nlohmann::json& j) { return j.contains("version"); },
                 10);
  ASSERT_EQ(kill(again.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(again), 0);
  std::string log = Slurp(err);
  EXPECT_NE(log.find("pages expected, "), std::string::npos) << log;
  EXPECT_EQ(log.find(" 0 lost;"), std::string::npos) << log;
  EXPECT_NE(log.find("store damage: the LevelDB log lost its tail"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("freshd store repair"), std::string::npos) << log;

  std::filesystem::remove(dir_ / "db" / "CURRENT");
  auto r = testing::RunFreshd({"run", "--config", config});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("CURRENT file"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not a freshd store"), std::string::npos) << r.err;
}

TEST_F(RunCliTest, DefaultConfigRefusesLoopbackTargets) {
  std::string config = WriteConfig(20, false);
  std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) {
        return j.contains("errors") && j["errors"].contains("blocked-address");
      },
      10);
  EXPECT_TRUE(s["errors"].contains("blocked-address")) << s.dump();
  EXPECT_EQ(s["pages_fetched_total"], 0);
  kill(run.pid, SIGTERM);
  EXPECT_EQ(Wait(run), 0);
}

// Issue #26: SIGHUP with a config toml11 would crash on (10,000 nested
// '[') keeps the running config and says why; `run` creates warc_dir.
TEST_F(RunCliTest, SighupWithHostileConfigKeepsRunningAndWarcDirIsMade) {
  const std::filesystem::path warc = dir_ / "archive" / "warc";
  std::string config =
      WriteConfig(10, true, "warc_dir = \"" + warc.string() + "\"\n");
  std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) { return j["pages_fetched_total"] >= 1; },
      20);
  ASSERT_GE(s["pages_fetched_total"].get<int>(), 1) << Slurp(err);
  EXPECT_TRUE(std::filesystem::is_directory(warc));
  std::ofstream(config) << "[budget]\nrate = " << std::string(10000, '[')
                        << std::string(10000, ']') << "\n";
  ASSERT_EQ(kill(run.pid, SIGHUP), 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Slurp(err).find("config not reloaded") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  s = StatusWhen([](const nlohmann::json& j) { return j.contains("version"); },
                 10);
  EXPECT_EQ(s["rate_target"], 10.0) << s.dump();  // still the old config
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0) << Slurp(err);
  EXPECT_NE(Slurp(err).find("SIGHUP: config not reloaded: " + config +
                            ":2: TOML syntax error: nested deeper than 32"),
            std::string::npos)
      << Slurp(err);
  // And a start with it is exit 2 (was SIGSEGV, 139), before any store.
  auto r = testing::RunFreshd({"run", "--config", config});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(RunCliTest, BadSeedsAndConfigsExitTwo) {
  std::string config = WriteConfig(1, true);
  std::ofstream(dir_ / "seeds.txt") << "http://h0.test/ -1\n";
  auto r = testing::RunFreshd({"run", "--config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("seeds.txt:1: weight must be a positive number"),
            std::string::npos)
      << r.err;
  std::ofstream(dir_ / "bad.toml") << "[budget]\nrate = \"fast\"\n";
  r = testing::RunFreshd({"run", "--config", (dir_ / "bad.toml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.toml:2"), std::string::npos) << r.err;
  // A status endpoint off loopback without a bearer token is refused.
  std::ofstream(dir_ / "open.toml") << "[status]\nlisten = \"0.0.0.0:8931\"\n";
  r = testing::RunFreshd({"run", "--config", (dir_ / "open.toml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("[status] token_file: required"), std::string::npos)
      << r.err;
  std::ofstream(dir_ / "token") << "short\n";
  std::ofstream(dir_ / "token.toml")
      << "[status]\ntoken_file = \"" << (dir_ / "token").string() << "\"\n";
  r = testing::RunFreshd({"run", "--config", (dir_ / "token.toml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("token must be 16 to 4096"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace freshd
