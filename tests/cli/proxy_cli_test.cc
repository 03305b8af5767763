// Egress proxies (issue #44 item 5) as an operator runs freshd: `freshd
// fetch` and `freshd run` through a forward proxy written in the tests
// (tests/fetch/forward_proxy.h) on 127.0.0.1. Shows the tunnel goes to the
// pinned address, wrong credentials are the outcome "proxy" in /status,
// and the proxy password is in neither the log nor /status nor the output;
// a credentials file others may read stops freshd at start.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/daemon_child.h"
#include "tests/cli/free_port.h"
#include "tests/cli/run_command.h"
#include "tests/fetch/forward_proxy.h"
#include "tests/fetch/test_server.h"

namespace freshd {
namespace {

using fetch::testing::ForwardProxy;
using fetch::testing::Reply;
using fetch::testing::ServerRequest;
using fetch::testing::TestServer;
using testing::Child;
using testing::RunFreshd;
using testing::Spawn;
using testing::Wait;

constexpr char kPassword[] = "Pw-cli-7731-secret";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Credentials(const std::filesystem::path& dir,
                        const std::string& password, mode_t mode) {
  const std::string path = (dir / "proxy.cred").string();
  std::filesystem::remove(path);
  std::ofstream(path) << "crawler:" << password << "\n";
  ::chmod(path.c_str(), mode);
  return path;
}

std::filesystem::path FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("freshd_proxy_cli_" + name + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string WriteFetchConfig(const std::filesystem::path& dir,
                             const std::string& proxy,
                             const std::string& cred) {
  const std::string path = (dir / "fetch.toml").string();
  std::ofstream(path) << "[fetch]\nallow_private_networks = true\n"
                      << "resolve = { \"site.test\" = \"127.0.0.1\" }\n"
                      << "proxy = \"" << proxy << "\"\n"
                      << "proxy_credentials_file = \"" << cred << "\"\n";
  return path;
}

Reply Site(const ServerRequest& req) {
  if (req.target == "/robots.txt") return Reply::Status(404);
  return Reply::Html("<html><body>through the proxy</body></html>");
}

TEST(ProxyCliTest, FetchGoesThroughTheTunnelToTheResolvedAddress) {
  TestServer site(Site);
  ForwardProxy proxy(ForwardProxy::Kind::kHttp,
                     std::string("crawler:") + kPassword);
  const auto dir = FreshDir("fetch");
  const std::string config =
      WriteFetchConfig(dir, proxy.Url(), Credentials(dir, kPassword, 0600));
  const std::string url =
      "http://site.test:" + std::to_string(site.port()) + "/p.html";
  auto r = RunFreshd({"fetch", "--config", config, url});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(line["outcome"], "ok") << r.out;
  ASSERT_FALSE(proxy.connects().empty());
  for (const std::string& c : proxy.connects()) {
    EXPECT_EQ(c, "127.0.0.1:" + std::to_string(site.port()));
  }
  EXPECT_EQ(site.CountTarget("/p.html"), 1u);
  EXPECT_EQ(r.out.find(kPassword), std::string::npos);
  EXPECT_EQ(r.err.find(kPassword), std::string::npos);
}

TEST(ProxyCliTest, ACredentialsFileOthersMayReadStopsFreshd) {
  ForwardProxy proxy;
  const auto dir = FreshDir("mode");
  const std::string config =
      WriteFetchConfig(dir, proxy.Url(), Credentials(dir, kPassword, 0644));
  auto r = RunFreshd({"fetch", "--config", config, "http://site.test/"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("mode 0644"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(kPassword), std::string::npos) << r.err;
  EXPECT_EQ(proxy.connections(), 0);
}

class ProxyRunTest : public testing::TestWebFixture {};

TEST_F(ProxyRunTest, WrongCredentialsAreCountedAsProxyErrorsAndNeverShown) {
  ForwardProxy proxy(ForwardProxy::Kind::kHttp,
                     std::string("crawler:") + kPassword);
  const std::string wrong = "Wrong-cli-5520-secret";
  const std::string cred = Credentials(dir_, wrong, 0600);
  status_port_ = testing::FreePort();
  const std::string config = (dir_ / "freshd.toml").string();
  std::ofstream(config) << "[crawler]\nseeds = \""
                        << (dir_ / "seeds.txt").string() << "\"\n"
                        << "[budget]\nrate = 20\nburst = 2\n"
                        << "[politeness]\nmin_delay = \"50ms\"\n"
                        << "[fetch]\nallow_private_networks = true\n"
                        << "resolve = { \"h0.test\" = \"127.0.0.1\" }\n"
                        << "proxy = \"" << proxy.Url() << "\"\n"
                        << "proxy_credentials_file = \"" << cred << "\"\n"
                        << "[store]\npath = \"" << (dir_ / "db").string()
                        << "\"\n"
                        << "[status]\nlisten = \"127.0.0.1:" << status_port_
                        << "\"\n"
                        << "[log]\nlevel = \"debug\"\n";
  std::ofstream(dir_ / "seeds.txt") << "http://h0.test:" << web_port_ << "/\n"
                                    << "http://h0.test:" << web_port_ << "/a\n";
  const std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) {
        return j.contains("errors") && j["errors"].is_object() &&
               j["errors"].value("proxy", 0) >= 1;
      },
      20);
  ASSERT_GE(s["errors"].value("proxy", 0), 1) << s.dump();
  EXPECT_GE(proxy.refused_407(), 1);
  const std::string status_text = testing::HttpGet(status_port_, "/status");
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0) << Slurp(err);
  const std::string log = Slurp(err);
  EXPECT_NE(log.find("proxy"), std::string::npos);
  for (const std::string& secret : {wrong, std::string(kPassword)}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << secret;
    EXPECT_EQ(status_text.find(secret), std::string::npos) << secret;
    EXPECT_EQ(s.dump().find(secret), std::string::npos) << secret;
  }
  // No proxied request reached the site.
  EXPECT_TRUE(proxy.connects().empty());
}

}  // namespace
}  // namespace freshd
