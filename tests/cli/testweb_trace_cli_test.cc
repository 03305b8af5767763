// freshd testweb --trace end to end: a real change history served under its
// own host names on 127.0.0.1, and a real `freshd run` daemon reaching those
// names through [fetch] resolve crawls it and fetches pages of every host,
// and a page created mid-trace only once it exists.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/cli/daemon_child.h"
#include "tests/cli/free_port.h"

namespace freshd {
namespace {

using testing::Child;
using testing::Spawn;
using testing::Wait;

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Three hosts; a page created and one deleted mid-trace; changes every
// trace day over 20 days (served at a day a second).
std::string SmallTrace() {
  const long t0 = 1'700'000'000;
  std::string csv = "url,time,event\n";
  const char* hosts[] = {"https://docs.alpha.example", "http://beta.example",
                         "https://gamma.example:8443"};
  for (const char* host : hosts) {
    for (int p = 0; p < 4; ++p) {
      std::string url = std::string(host) + "/page" + std::to_string(p);
      for (int day = p; day < 20; day += 1 + p) {
        csv += url + "," + std::to_string(t0 + day * 86400) + ",change\n";
      }
    }
    csv += std::string(host) + "/late," + std::to_string(t0 + 2 * 86400) +
           ",create\n";
    csv += std::string(host) + "/gone,,\n";
    csv += std::string(host) + "/gone," + std::to_string(t0 + 5 * 86400) +
           ",delete\n";
  }
  return csv;
}

TEST(TestwebTraceCliTest, DaemonCrawlsEveryHostOfATrace) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("testweb_trace_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "trace.csv") << SmallTrace();

  Child web = Spawn({"testweb", "--trace", (dir / "trace.csv").string(),
                     "--listen", "127.0.0.1:0", "--day-seconds", "1",
                     "--access-log", (dir / "access.log").string()},
                    (dir / "testweb.err").string());
  char line[4096] = {};
  ASSERT_NE(std::fgets(line, sizeof line, web.out), nullptr)
      << Slurp(dir / "testweb.err");
  nlohmann::json hello = nlohmann::json::parse(line);
  const uint16_t port = hello["port"];
  EXPECT_EQ(hello["hosts"], 3);
  EXPECT_EQ(hello["pages"], 18);
  EXPECT_EQ(hello["t0"], 1'700'000'000.0);
  const std::vector<std::string> names = hello["host_names"];
  ASSERT_EQ(names, (std::vector<std::string>{
                       "beta.example", "docs.alpha.example", "gamma.example"}));

  const uint16_t status_port = testing::FreePort();
  std::ofstream config(dir / "freshd.toml");
  config << "[crawler]\nseeds = \"" << (dir / "seeds.txt").string() << "\"\n"
         << "[budget]\nrate = 20\nburst = 4\n"
         // robots.txt and its sitemaps again every second: a page created
         // mid-trace is found through the sitemap, as a crawler would.
         << "[politeness]\nmin_delay = \"20ms\"\nrobots_cache = \"1s\"\n"
         << "[fetch]\nallow_private_networks = true\nresolve = { ";
  std::ofstream seeds(dir / "seeds.txt");
  for (size_t i = 0; i < names.size(); ++i) {
    config << (i ? ", " : "") << "\"" << names[i] << "\" = \"127.0.0.1\"";
    seeds << "http://" << names[i] << ":" << port << "/\n";
  }
  config << " }\n[store]\npath = \"" << (dir / "db").string() << "\"\n"
         << "[status]\nlisten = \"127.0.0.1:" << status_port << "\"\n";
  config.close();
  seeds.close();

  Child run = Spawn({"run", "--config", (dir / "freshd.toml").string()},
                    (dir / "run.err").string());
  // Which trace pages (not the index, robots or sitemap) each host served,
  // and when /late (created at trace day 2: 2 s after the start) was first.
  const double start_unix = hello["start_unix"];
  std::map<std::string, std::set<std::string>> fetched;
  std::map<std::string, double> late_at;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    fetched.clear();
    late_at.clear();
    std::istringstream log(Slurp(dir / "access.log"));
    std::string entry;
    while (std::getline(log, entry)) {
      std::istringstream fields(entry);
      std::string when, host, target;
      std::getline(fields, when, '\t');
      std::getline(fields, host, '\t');
      std::getline(fields, target, '\t');
      if (target.rfind("/page", 0) == 0 || target == "/late" ||
          target == "/gone") {
        fetched[host.substr(0, host.rfind(':'))].insert(target);
      }
      if (target == "/late" && !late_at.count(host)) {
        late_at[host] = std::stod(when);
      }
    }
    bool all = fetched.size() == names.size() && late_at.size() == names.size();
    for (const auto& [host, targets] : fetched)
      all = all && targets.size() >= 3;
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (const std::string& name : names) {
    EXPECT_GE(fetched[name].size(), 3u)
        << name << "\n"
        << Slurp(dir / "access.log") << Slurp(dir / "run.err");
  }

  // A page created mid-trace is linked (and fetched) only once it exists.
  EXPECT_EQ(late_at.size(), names.size()) << Slurp(dir / "access.log");
  for (const auto& [host, when] : late_at) {
    EXPECT_GE(when, start_unix + 2) << host;
  }

  // The daemon's own count agrees: it fetched pages from the trace web.
  nlohmann::json status = nlohmann::json::parse(
      testing::HttpGet(status_port, "/status"), nullptr, false);
  EXPECT_GE(status.value("pages_fetched_total", 0), 9) << status.dump();

  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0) << Slurp(dir / "run.err");
  ASSERT_EQ(kill(web.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(web), 0);
  std::filesystem::remove_all(dir);
}

TEST(TestwebTraceCliTest, BadUsageExitsTwo) {
  auto r = testing::RunFreshd({"testweb"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--web or --trace"), std::string::npos) << r.err;
  r = testing::RunFreshd({"testweb", "--trace", "/nonexistent.csv"});
  EXPECT_NE(r.exit_code, 0);
  std::string bad = ::testing::TempDir() + "/bad_trace.csv";
  std::ofstream(bad) << "url,time\nhttp://a.example/,yesterday\n";
  r = testing::RunFreshd(
      {"testweb", "--trace", bad, "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad_trace.csv:2"), std::string::npos) << r.err;
  r = testing::RunFreshd({"testweb", "--web",
                          FRESHD_SOURCE_DIR "/sim/webs/noisy.toml", "--trace",
                          bad});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace freshd
