// The WARC output end to end, checked by other tools: `freshd run` crawls
// `freshd testweb` (pages change, 304s, robots.txt and sitemaps), is
// SIGKILLed once (its WARC file is left ".open") and restarted (which
// finishes and indexes that file), then stopped. Every file must pass
// tests/tools/warc_verify.py, and warcio.js from npm (tests/warc_js/
// check.mjs, `npm ci` from the committed lockfile) must produce the same
// CDXJ as freshd's, recompute every digest, find every capture by URL and
// time and resolve every revisit to the payload it names. Fails, never
// skips, when python3, node or npm is missing.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/cli/daemon_child.h"

namespace freshd {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::HttpGet;
using testing::Spawn;
using testing::Wait;

class WarcJsReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("warc_js_replay_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    web_ = Spawn(
        {"testweb", "--web", FRESHD_SOURCE_DIR "/sim/webs/noisy-small.toml",
         "--listen", "127.0.0.1:0", "--day-seconds", "1"},
        (dir_ / "testweb.err").string());
    char line[1024] = {};
    ASSERT_NE(std::fgets(line, sizeof line, web_.out), nullptr);
    const auto port = nlohmann::json::parse(line)["port"].get<uint16_t>();
    status_port_ = testing::FreePort();
    config_ = (dir_ / "freshd.toml").string();
    std::ofstream f(config_);
    f << "[crawler]\nseeds = \"" << (dir_ / "seeds.txt").string() << "\"\n"
      << "contact_url = \"https://example.org/crawler\"\n"
      << "[budget]\nrate = 60\nburst = 10\n"
      << "[sched]\npolicy = \"uniform\"\nmin_interval = \"1s\"\n"
      << "[politeness]\nmin_delay = \"10ms\"\nmax_crawl_delay = \"20ms\"\n"
      << "robots_cache = \"2s\"\n"
      << "[fetch]\nallow_private_networks = true\n"
      << "resolve = { \"h0.test\" = \"127.0.0.1\", \"h1.test\" = "
         "\"127.0.0.1\" }\n"
      << "[store]\npath = \"" << (dir_ / "db").string() << "\"\n"
      << "warc_dir = \"" << (dir_ / "warc").string() << "\"\n"
      << "[status]\nlisten = \"127.0.0.1:" << status_port_ << "\"\n";
    std::ofstream seeds(dir_ / "seeds.txt");
    seeds << "http://h0.test:" << port << "/\n"
          << "http://h1.test:" << port << "/\n";
  }
  void TearDown() override {
    if (daemon_.pid > 0) {
      kill(daemon_.pid, SIGKILL);
      Wait(daemon_);
    }
    if (web_.pid > 0) {
      kill(web_.pid, SIGTERM);
      Wait(web_);
    }
    fs::remove_all(dir_);
  }

  void StartDaemon() {
    daemon_ = Spawn({"run", "--config", config_}, (dir_ / "run.err").string());
  }
  // pages_fetched_total once it reaches `n` (within `timeout_s`), else the
  // last value read (-1: no status).
  int FetchedAtLeast(int n, double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(int(timeout_s * 1000));
    int fetched = -1;
    while (std::chrono::steady_clock::now() < deadline) {
      auto j = nlohmann::json::parse(HttpGet(status_port_, "/status"), nullptr,
                                     false);
      if (!j.is_discarded() && j.contains("pages_fetched_total")) {
        fetched = j["pages_fetched_total"].get<int>();
        if (fetched >= n) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return fetched;
  }
  int Run(const std::string& cmd, const std::string& log) {
    int rc = std::system((cmd + " > " + log + " 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
  }

  fs::path dir_;
  std::string config_;
  Child web_, daemon_;
  uint16_t status_port_ = 0;
};

TEST_F(WarcJsReplayTest, WarcioAgreesWithFreshdsIndexesAndDigests) {
  const fs::path warc = dir_ / "warc";
  StartDaemon();
  ASSERT_GE(FetchedAtLeast(60, 120), 60)
      << testing::ReadWholeFile((dir_ / "run.err").string());
  kill(daemon_.pid, SIGKILL);
  Wait(daemon_);
  int open_files = 0;
  for (const auto& e : fs::directory_iterator(warc)) {
    open_files += e.path().extension() == ".open";
  }
  EXPECT_EQ(open_files, 1);
  StartDaemon();  // finishes the file left open, then crawls on
  ASSERT_GE(FetchedAtLeast(150, 120), 150);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(daemon_.pid, SIGTERM);
  EXPECT_EQ(Wait(daemon_), 0);
  daemon_.pid = -1;
  const std::string log = testing::ReadWholeFile((dir_ / "run.err").string());
  EXPECT_NE(log.find("was left open (a crash); finished and indexed"),
            std::string::npos)
      << log;

  // Every file closed, with its CDXJ; warc_verify.py passes on all.
  std::string files;
  int warcs = 0, indexes = 0;
  for (const auto& e : fs::directory_iterator(warc)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(e.path().extension(), name.ends_with(".cdxj") ? ".cdxj" : ".gz")
        << name;
    if (name.ends_with(".warc.gz")) {
      ++warcs;
      files += " " + e.path().string();
      EXPECT_TRUE(
          fs::exists(warc / (name.substr(0, name.size() - 8) + ".cdxj")))
          << name;
    } else {
      ++indexes;
    }
  }
  EXPECT_GE(warcs, 2);
  EXPECT_EQ(indexes, warcs);
  const std::string verify_log = (dir_ / "verify.txt").string();
  EXPECT_EQ(
      Run("python3 " FRESHD_SOURCE_DIR "/tests/tools/warc_verify.py" + files,
          verify_log),
      0)
      << testing::ReadWholeFile(verify_log);

  // warcio.js, installed from the committed lockfile in a scratch copy.
  const fs::path js = dir_ / "js";
  fs::create_directories(js);
  for (const char* f : {"package.json", "package-lock.json", "check.mjs"}) {
    fs::copy_file(fs::path(FRESHD_SOURCE_DIR) / "tests" / "warc_js" / f,
                  js / f);
  }
  const std::string npm_log = (dir_ / "npm.txt").string();
  ASSERT_EQ(Run("cd " + js.string() +
                    " && npm ci --prefer-offline --no-audit --no-fund",
                npm_log),
            0)
      << "npm ci failed (CI installs nodejs and npm):\n"
      << testing::ReadWholeFile(npm_log);
  const std::string out = (dir_ / "check.json").string();
  const int rc = std::system(("node " + (js / "check.mjs").string() + " " +
                              warc.string() + " > " + out + " 2>&1")
                                 .c_str());
  const std::string text = testing::ReadWholeFile(out);
  std::printf("check.mjs: %s", text.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << text;
  auto s = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(s.is_discarded()) << text;
  EXPECT_EQ(s["problem_count"], 0) << text;
  EXPECT_EQ(s["files"], warcs);
  EXPECT_GE(s["responses"].get<int>(), 100) << text;
  EXPECT_EQ(s["payload_digests"], s["responses"]);
  EXPECT_EQ(s["block_digests"], s["records"]);
  // 304s and repeated robots.txt bodies: revisits, each resolved.
  EXPECT_GE(s["revisits"].get<int>(), 10) << text;
  EXPECT_EQ(s["revisits_resolved"], s["revisits"]) << text;
  EXPECT_GE(s["robots"].get<int>(), 4) << text;
  EXPECT_EQ(s["lookups"], s["cdxj_lines"]);
  // Pages fetched, then revisited, then changed: each capture still found.
  EXPECT_GE(s["fetched_revisited_changed"].get<int>(), 1) << text;
}

}  // namespace
}  // namespace freshd
