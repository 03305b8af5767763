// freshd run on a store big enough that its recovery takes a while: the
// status endpoint answers from the start, GET /status saying "recovering"
// with growing progress (pages restored of the store's count), other routes
// 503, then "running" with every page. A machine fast enough to recover
// before the first poll sees only "running": the test then checks that.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "conf/config.h"
#include "parse/url.h"
#include "store/page_store.h"
#include "tests/cli/daemon_child.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::Child;
using testing::FreePort;
using testing::HttpGetStatus;
using testing::Spawn;
using testing::Wait;

constexpr uint64_t kPages = 200000;
constexpr int kHosts = 4;

// kPages never-fetched pages over kHosts hosts, as a crawl leaves them.
void WriteStore(const std::string& path) {
  StoreConfig sc;
  sc.path = path;
  sc.sync_interval_s = 1e9;
  auto store = store::PageStore::Open(sc);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (uint64_t start = 0; start < kPages; start += 20000) {
    store::StoreBatch batch;
    for (uint64_t p = start; p < start + 20000 && p < kPages; ++p) {
      store::PageRecord r;
      r.url = "http://h" + std::to_string(p % kHosts) + ".test/page/" +
              std::to_string(p);
      r.url_key = parse::UrlKey(r.url);
      ASSERT_TRUE(batch.PutPage(r).ok());
    }
    ASSERT_TRUE((*store)->Commit(batch, 1.8e9).ok());
  }
  ASSERT_TRUE((*store)->MaybeSync(1.8e9, true).ok());
  ASSERT_TRUE((*store)->Close().ok());
}

class RecoveringCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("RecoveringCliTest_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The config: the store at `db`, /status on `port`. The hosts resolve to
  // loopback, which the default config refuses: no fetch leaves the
  // machine.
  std::string WriteConfig(const std::string& db, uint16_t port) {
    const std::string config = (dir_ / "freshd.toml").string();
    std::ofstream f(config);
    f << "[budget]\nrate = 1\n"
      << "[fetch]\nresolve = { \"h0.test\" = \"127.0.0.1\", \"h1.test\" = "
         "\"127.0.0.1\", \"h2.test\" = \"127.0.0.1\", \"h3.test\" = "
         "\"127.0.0.1\" }\n"
      << "[store]\npath = \"" << db << "\"\n"
      << "[status]\nlisten = \"127.0.0.1:" << port << "\"\n";
    return config;
  }
  std::filesystem::path dir_;
};

TEST_F(RecoveringCliTest, StatusSaysRecoveringWithProgressThenRunning) {
  const std::string db = (dir_ / "db").string();
  WriteStore(db);
  if (HasFatalFailure()) return;
  const uint16_t port = FreePort();
  const std::string config = WriteConfig(db, port);
  Child d = Spawn({"run", "--config", config}, (dir_ / "run.err").string());
  ASSERT_GT(d.pid, 0);

  // Polls until "running" (bounded by the child: it exits on an error).
  int recovering = 0;
  uint64_t last_restored = 0;
  double last_elapsed = 0;
  nlohmann::json running;
  bool other_route_checked = false;
  for (int i = 0; i < 60000 && running.is_null(); ++i) {
    auto [code, body] = HttpGetStatus(port, "/status");
    if (code == 0) {  // not listening yet
      ASSERT_EQ(waitpid(d.pid, nullptr, WNOHANG), 0) << "freshd exited";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    ASSERT_EQ(code, 200) << body;
    nlohmann::json j = nlohmann::json::parse(body);
    const std::string state = j.value("state", "");
    if (state == "running") {
      running = j;
      break;
    }
    ASSERT_EQ(state, "recovering") << body;
    ++recovering;
    EXPECT_FALSE(j.contains("version")) << body;  // not the loop's summary
    const nlohmann::json& r = j.at("recovery");
    const uint64_t restored = r.at("pages_restored").get<uint64_t>();
    const uint64_t expected = r.at("pages_expected").get<uint64_t>();
    EXPECT_GE(restored, last_restored) << body;  // monotone
    EXPECT_GE(r.at("elapsed_s").get<double>(), last_elapsed) << body;
    EXPECT_TRUE(expected == 0 || expected == kPages) << body;
    EXPECT_LE(restored, kPages) << body;
    last_restored = restored;
    last_elapsed = r.at("elapsed_s").get<double>();
    if (!other_route_checked) {
      // Other routes are not ready: 503 with the state (or, if recovery
      // ended meanwhile, the loop's answer).
      auto [mcode, mbody] = HttpGetStatus(port, "/metrics");
      if (mcode == 503) {
        EXPECT_EQ(nlohmann::json::parse(mbody).value("state", ""), "recovering")
            << mbody;
        other_route_checked = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(running.is_null()) << "never running";
  EXPECT_EQ(running.at("pages_known").get<uint64_t>(), kPages) << running;
  EXPECT_EQ(running.at("recovered").at("pages_reset").get<uint64_t>(), kPages)
      << running;
  std::printf("saw \"recovering\" %d times (last %llu of %llu pages, %.2f s)\n",
              recovering, static_cast<unsigned long long>(last_restored),
              static_cast<unsigned long long>(kPages), last_elapsed);
  kill(d.pid, SIGTERM);
  EXPECT_EQ(Wait(d), 0);
}

// A seeds file added at the start (after the store, before the loop
// serves): /status says "recovering" in phase "seeds", with the lines read
// so far of the file's count, then "running" with every seed known.
TEST_F(RecoveringCliTest, SeedsAreAPhaseOfTheStart) {
  constexpr uint64_t kSeeds = 30000;
  const std::string seeds = (dir_ / "seeds.txt").string();
  {
    std::ofstream f(seeds);
    for (uint64_t p = 0; p < kSeeds; ++p) {
      f << "http://h" << p % kHosts << ".test/seed/" << p << "\n";
    }
  }
  const uint16_t port = FreePort();
  const std::string config = WriteConfig((dir_ / "db").string(), port);
  Child d = Spawn({"run", "--config", config, "--seeds", seeds},
                  (dir_ / "run.err").string());
  ASSERT_GT(d.pid, 0);
  int in_seeds = 0;
  uint64_t last_read = 0;
  nlohmann::json running;
  for (int i = 0; i < 60000 && running.is_null(); ++i) {
    auto [code, body] = HttpGetStatus(port, "/status");
    if (code == 0) {
      ASSERT_EQ(waitpid(d.pid, nullptr, WNOHANG), 0) << "freshd exited";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    ASSERT_EQ(code, 200) << body;
    nlohmann::json j = nlohmann::json::parse(body);
    if (j.value("state", "") == "running") {
      running = j;
      break;
    }
    ASSERT_EQ(j.value("state", ""), "recovering") << body;
    const nlohmann::json& r = j.at("recovery");
    const std::string phase = r.at("phase").get<std::string>();
    if (phase == "store") {
      EXPECT_EQ(in_seeds, 0) << body;  // the store comes first
    } else {
      ASSERT_EQ(phase, "seeds") << body;
      ++in_seeds;
      const uint64_t read = r.at("seeds_read").get<uint64_t>();
      EXPECT_EQ(r.at("seeds_total").get<uint64_t>(), kSeeds) << body;
      EXPECT_GE(read, last_read) << body;
      EXPECT_LE(read, kSeeds) << body;
      last_read = read;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(running.is_null()) << "never running";
  EXPECT_EQ(running.at("pages_known").get<uint64_t>(), kSeeds) << running;
  std::printf("saw phase \"seeds\" %d times (last %llu of %llu seeds)\n",
              in_seeds, static_cast<unsigned long long>(last_read),
              static_cast<unsigned long long>(kSeeds));
  kill(d.pid, SIGTERM);
  EXPECT_EQ(Wait(d), 0);
}

}  // namespace
}  // namespace freshd
