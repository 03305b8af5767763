// The config-facing commands as an operator runs them: check-config's exit
// codes and located messages, demo's embedded default, usage errors.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "conf/config.h"
#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::FreePort;
using testing::ReadWholeFile;
using testing::RunFreshd;
using testing::WriteTempFile;

std::string FreeListen() { return "127.0.0.1:" + std::to_string(FreePort()); }

// The example config as installed: its seeds file exists (the operator
// creates it) and its status port is free.
TEST(CheckConfigCliTest, ExampleConfigIsOk) {
  std::string example = ReadWholeFile(FRESHD_SOURCE_DIR "/systemd/freshd.toml");
  const std::string seeds = WriteTempFile("http://example.org/\n", ".txt");
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"/etc/freshd/seeds.txt", seeds},
        {"127.0.0.1:8931", FreeListen()}}) {
    ASSERT_NE(example.find(from), std::string::npos) << from;
    example.replace(example.find(from), from.size(), to);
  }
  const std::string path = WriteTempFile(example);
  auto r = RunFreshd({"check-config", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  // Without its seeds file, the same config is an operator error.
  std::remove(seeds.c_str());
  r = RunFreshd({"check-config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(path + ": [crawler] seeds: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(seeds), std::string::npos) << r.err;
  std::remove(path.c_str());
}

// Issue #40: systemd/freshd.toml checked in a checkout names the packaged
// /etc/freshd/seeds.txt; the error says it is the installed default and
// where a checkout's seeds file is. (A missing file under /etc/freshd/
// stands in for it, so the test holds where the package is installed.)
TEST(CheckConfigCliTest, MissingInstalledSeedsFileSaysItIsThePackagesDefault) {
  std::string example = ReadWholeFile(FRESHD_SOURCE_DIR "/systemd/freshd.toml");
  const std::string installed = "/etc/freshd/seeds.txt";
  const std::string missing =
      "/etc/freshd/no-such-seeds-" + std::to_string(getpid()) + ".txt";
  ASSERT_FALSE(std::filesystem::exists(missing));
  for (auto [from, to] :
       {std::pair<std::string, std::string>{installed, missing},
        {"127.0.0.1:8931", FreeListen()}}) {
    ASSERT_NE(example.find(from), std::string::npos) << from;
    example.replace(example.find(from), from.size(), to);
  }
  const std::string path = WriteTempFile(example);
  auto r = RunFreshd({"check-config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(path + ": [crawler] seeds: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the installed default"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("packaging/seeds.txt"), std::string::npos) << r.err;
  // The file it points to exists in the checkout.
  EXPECT_TRUE(
      std::filesystem::exists(FRESHD_SOURCE_DIR "/packaging/seeds.txt"));
  // A missing seeds file elsewhere gets no such note.
  std::string other = example;
  other.replace(other.find(missing), missing.size(), "/nonexistent/seeds.txt");
  const std::string elsewhere = WriteTempFile(other);
  r = RunFreshd({"check-config", elsewhere});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("installed default"), std::string::npos) << r.err;
  std::remove(path.c_str());
  std::remove(elsewhere.c_str());
}

// Issue #26: 10,000 nested '[' (20 KB) overflowed toml11's stack (SIGSEGV,
// exit 139); nested inline tables and a 10,000-part dotted key too (or ran
// for minutes). Each is now a located error, exit 2, well within a second.
TEST(CheckConfigCliTest, HostileShapesExit2WithTheirLine) {
  const std::string deep =
      "[a]\nb = " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  std::string inline_tables = "[crawler]\n\nx = ";
  for (int i = 0; i < 5000; ++i) inline_tables += "{a=";
  std::string dotted = "[crawler]\n\n\n";
  for (int i = 0; i < 300000; ++i) dotted += "b.";
  dotted += "c = 1\n";
  const std::string long_line = "[log]\n#" + std::string(20000, 'x') + "\n";
  struct Case {
    std::string text, want;
  } cases[] = {
      {deep, ":2: TOML syntax error: nested deeper than 32 levels"},
      {inline_tables, ":3: TOML syntax error: nested deeper than 32 levels"},
      {dotted, ":4: TOML syntax error: key of more than 32 dotted parts"},
      {long_line, ":2: TOML syntax error: line longer than 16 KiB"},
      {std::string(2 << 20, '\n'), ":1048577: larger than 1 MiB"},
  };
  for (const Case& c : cases) {
    const std::string path = WriteTempFile(c.text);
    const auto start = std::chrono::steady_clock::now();
    auto r = RunFreshd({"check-config", path});
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_EQ(r.exit_code, 2) << c.want;
    EXPECT_EQ(r.err.rfind(path + c.want, 0), 0u) << r.err.substr(0, 300);
    EXPECT_LT(s, 5.0) << c.want;
    std::remove(path.c_str());
  }
}

// What `run` would trip on, caught by check-config: each exit 2 with the
// key and the path or address.
TEST(CheckConfigCliTest, OperatorErrorsExit2BeforeStart) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("check_config_cli_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string listen = FreeListen();
  auto check = [&](const std::string& body) {
    const std::string path = (dir / "freshd.toml").string();
    std::ofstream(path) << body << "[status]\nlisten = \"" << listen << "\"\n";
    auto r = RunFreshd({"check-config", path});
    r.err = r.err.substr(r.err.empty() ? 0 : path.size());
    return r;
  };
  // Missing seeds file.
  auto r =
      check("[crawler]\nseeds = \"" + (dir / "none.txt").string() + "\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(": [crawler] seeds: ", 0), 0u) << r.err;
  // warc_dir under a regular file: can never be created.
  std::ofstream(dir / "file") << "x";
  r = check("[store]\nwarc_dir = \"" + (dir / "file" / "warc").string() +
            "\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(": [store] warc_dir: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  // warc_dir that is a file.
  r = check("[store]\nwarc_dir = \"" + (dir / "file").string() + "\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
  // A missing warc_dir that can be created is fine, and is not created.
  r = check("[store]\nwarc_dir = \"" + (dir / "a" / "b").string() + "\"\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "a"));
  // The status address is taken.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(
      static_cast<uint16_t>(std::stoi(listen.substr(listen.rfind(':') + 1))));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  r = check("");
  close(fd);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(": [status] listen: cannot bind " + listen, 0), 0u)
      << r.err;
  EXPECT_EQ(check("").exit_code, 0);  // released: fine again
  // The push listener's address is taken (while the status one is free).
  const std::string push = FreeListen();
  const std::string push_config = "[push]\nlisten = \"" + push + "\"\n";
  EXPECT_EQ(check(push_config).exit_code, 0) << check(push_config).err;
  fd = socket(AF_INET, SOCK_STREAM, 0);
  addr.sin_port =
      htons(static_cast<uint16_t>(std::stoi(push.substr(push.rfind(':') + 1))));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  r = check(push_config);
  close(fd);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(": [push] listen: cannot bind " + push, 0), 0u)
      << r.err;
  fs::remove_all(dir);
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
  const std::string listen = FreeListen();
  std::string path = WriteTempFile(
      "[budget]\nrate = 7.5\n[status]\nlisten = \"" + listen + "\"\n");
  auto r = RunFreshd({"check-config", "--print", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Result<Config> printed = LoadConfigString(r.out, "printed");
  ASSERT_TRUE(printed.ok()) << printed.status().ToString();
  Config expected;
  expected.budget.rate = 7.5;
  expected.status.listen = listen;
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
