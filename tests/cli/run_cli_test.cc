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

#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::FreePort;

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
  std::string err_path;
};

// Starts FRESHD_BINARY with `args`, stdout on a pipe, stderr to a file.
Child Spawn(const std::vector<std::string>& args, const std::string& err) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    FILE* e = std::fopen(err.c_str(), "w");
    if (e != nullptr) dup2(fileno(e), 2);
    close(fds[0]);
    std::vector<char*> argv{const_cast<char*>(FRESHD_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(FRESHD_BINARY, argv.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fdopen(fds[0], "r"), err};
}

int Wait(Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  if (c.out != nullptr) std::fclose(c.out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string HttpGet(uint16_t port, const std::string& path) {
  return testing::HttpGet(port, path).second;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("run_cli_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    web_ = Spawn({"testweb", "--web", FRESHD_SOURCE_DIR "/sim/webs/noisy.toml",
                  "--listen", "127.0.0.1:0", "--day-seconds", "20"},
                 (dir_ / "testweb.err").string());
    char line[1024] = {};
    ASSERT_NE(std::fgets(line, sizeof line, web_.out), nullptr);
    web_port_ = nlohmann::json::parse(line)["port"].get<uint16_t>();
  }
  void TearDown() override {
    if (web_.pid > 0) {
      kill(web_.pid, SIGTERM);
      Wait(web_);
    }
    std::filesystem::remove_all(dir_);
  }

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

  nlohmann::json StatusWhen(
      const std::function<bool(const nlohmann::json&)>& ok, double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(int(timeout_s * 1000));
    nlohmann::json last;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string body = HttpGet(status_port_, "/status");
      if (!body.empty()) {
        last = nlohmann::json::parse(body, nullptr, false);
        if (!last.is_discarded() && ok(last)) return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return last;
  }

  std::filesystem::path dir_;
  Child web_;
  uint16_t web_port_ = 0;
  uint16_t status_port_ = 0;
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
