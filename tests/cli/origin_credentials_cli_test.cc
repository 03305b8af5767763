// Per-origin request headers and credentials (issue #44 item 6) as an
// operator runs freshd: `freshd fetch --warc` against sites written in the
// tests on 127.0.0.1 that record every request's headers (the rule's origin
// gets them, a redirect to another origin does not; the WARC files, stdout
// and stderr hold no secret and each request record's block digest is of
// its redacted bytes); `freshd check-config` and `freshd fetch` refuse a
// credentials file others may read, and bad header names, naming the rule;
// `freshd run` against the test web keeps every secret out of its log,
// /status and /page.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/daemon_child.h"
#include "tests/cli/free_port.h"
#include "tests/cli/run_command.h"
#include "tests/fetch/test_server.h"
#include "tests/store/warc_reader.h"

namespace freshd {
namespace {

using fetch::testing::Reply;
using fetch::testing::ServerRequest;
using fetch::testing::TestServer;
using testing::Child;
using testing::RunFreshd;
using testing::Spawn;
using testing::Wait;

constexpr char kPassword[] = "Pw-cli-origin-3319-secret";
constexpr char kApiKey[] = "key-cli-origin-7002-secret";
constexpr char kCookie[] = "sid=cookie-cli-origin-5561-secret";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("freshd_origin_cli_" + name + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Credentials(const std::filesystem::path& dir, mode_t mode) {
  const std::string path = (dir / "members.cred").string();
  std::filesystem::remove(path);
  std::ofstream(path) << "basic crawler:" << kPassword << "\n";
  ::chmod(path.c_str(), mode);
  return path;
}

// The [[rule]] for `origin`, its credentials in `cred`.
std::string MembersRule(const std::string& origin, const std::string& cred) {
  return std::string("[[rule]]\nname = \"members\"\norigin = \"") + origin +
         "\"\nheaders = { \"X-Api-Key\" = \"" + kApiKey + "\" }\n" +
         "cookie = \"" + kCookie + "\"\ncredentials_file = \"" + cred + "\"\n";
}

std::string WriteConfig(const std::filesystem::path& dir,
                        const std::string& text) {
  const std::string path = (dir / "freshd.toml").string();
  std::ofstream(path) << text;
  return path;
}

void ExpectNoSecret(const std::string& bytes, const std::string& what) {
  for (const char* secret : {kPassword, kApiKey, kCookie}) {
    EXPECT_EQ(bytes.find(secret), std::string::npos) << what << ": " << secret;
  }
}

std::string AllHeaders(const TestServer& s) {
  std::string out;
  for (const ServerRequest& r : s.requests()) {
    for (const auto& [name, value] : r.headers) out += name + ": " + value;
  }
  return out;
}

TEST(OriginCredentialsCliTest, FetchSendsThemToTheOriginOnlyAndArchivesNone) {
  TestServer other([](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    return Reply::Html("<html><body>elsewhere</body></html>");
  });
  const std::string other_origin =
      "http://127.0.0.1:" + std::to_string(other.port());
  TestServer site([&](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    if (req.target == "/moved") {
      return Reply::Redirect(302, other_origin + "/landing");
    }
    return Reply::Html("<html><body>members only</body></html>");
  });
  const std::string origin = "http://127.0.0.1:" + std::to_string(site.port());
  const auto dir = FreshDir("fetch");
  const std::string config =
      WriteConfig(dir, "[fetch]\nallow_private_networks = true\n" +
                           MembersRule(origin, Credentials(dir, 0600)));
  const std::string warc = (dir / "warc").string();
  std::filesystem::create_directories(warc);
  auto r = RunFreshd({"fetch", "--config", config, "--warc", warc,
                      origin + "/members", origin + "/moved"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(site.CountTarget("/members"), 1u);
  for (const ServerRequest& req : site.requests()) {
    EXPECT_EQ(req.Header("x-api-key"), kApiKey) << req.target;
    EXPECT_EQ(req.Header("cookie"), kCookie) << req.target;
    EXPECT_EQ(req.Header("authorization").rfind("Basic ", 0), 0u) << req.target;
  }
  EXPECT_EQ(other.CountTarget("/landing"), 1u);
  EXPECT_EQ(AllHeaders(other).find("authorization"), std::string::npos);
  EXPECT_EQ(AllHeaders(other).find("x-api-key"), std::string::npos);
  ExpectNoSecret(AllHeaders(other), "the redirect target");
  ExpectNoSecret(r.out, "stdout");
  ExpectNoSecret(r.err, "stderr");

  int requests = 0, redacted = 0;
  for (const store::ParsedRecord& rec : store::ReadWarcDir(warc)) {
    ExpectNoSecret(rec.block, rec.fields.at("warc-type") + " record");
    if (rec.fields.at("warc-type") != "request") continue;
    ++requests;
    EXPECT_TRUE(
        store::DigestMatches(rec.fields.at("warc-block-digest"), rec.block))
        << rec.block;
    if (rec.block.find("Authorization: [redacted]\r\n") != std::string::npos) {
      ++redacted;
      EXPECT_NE(rec.block.find("X-Api-Key: [redacted]\r\n"), std::string::npos);
      EXPECT_NE(rec.block.find("Cookie: [redacted]\r\n"), std::string::npos);
    }
  }
  // robots.txt, /members and /moved at the origin; robots.txt and /landing
  // at the other, whose requests carry no Authorization at all.
  EXPECT_EQ(requests, 5);
  EXPECT_EQ(redacted, 3);
  for (const auto& e : std::filesystem::directory_iterator(warc)) {
    ExpectNoSecret(Slurp(e.path().string()), e.path().filename().string());
  }
}

TEST(OriginCredentialsCliTest, ACredentialsFileOthersMayReadIsRefused) {
  const auto dir = FreshDir("mode");
  const std::string config = WriteConfig(
      dir, "[fetch]\nallow_private_networks = true\n" +
               MembersRule("http://127.0.0.1:9", Credentials(dir, 0640)));
  auto check = RunFreshd({"check-config", config});
  EXPECT_EQ(check.exit_code, 2) << check.out;
  EXPECT_NE(check.err.find("[rule \"members\"] credentials_file"),
            std::string::npos)
      << check.err;
  EXPECT_NE(check.err.find("mode 0640"), std::string::npos) << check.err;
  ExpectNoSecret(check.err, "check-config");
  auto fetch = RunFreshd({"fetch", "--config", config, "http://127.0.0.1:9/"});
  EXPECT_NE(fetch.exit_code, 0) << fetch.out;
  EXPECT_NE(fetch.err.find("mode 0640"), std::string::npos) << fetch.err;
  ExpectNoSecret(fetch.err, "fetch");
  // `run` stops at start, before serving.
  const std::string run_config = (dir / "run.toml").string();
  std::ofstream(run_config)
      << "[store]\npath = \"" << (dir / "db").string()
      << "\"\n[status]\nlisten = \"127.0.0.1:" << testing::FreePort() << "\"\n"
      << MembersRule("http://127.0.0.1:9", (dir / "members.cred").string());
  auto run = RunFreshd({"run", "--config", run_config});
  EXPECT_NE(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("mode 0640"), std::string::npos) << run.err;
  ExpectNoSecret(run.err, "run");
  // Made private, the same config passes.
  ::chmod((dir / "members.cred").c_str(), 0600);
  check = RunFreshd({"check-config", config});
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

TEST(OriginCredentialsCliTest, CheckConfigRefusesBadHeadersAndNoOrigin) {
  const auto dir = FreshDir("headers");
  auto r =
      RunFreshd({"check-config",
                 WriteConfig(dir,
                             "[[rule]]\nname = \"members\"\n"
                             "origin = \"https://members.example.org\"\n"
                             "headers = { \"Host\" = \"evil.example\" }\n")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("[rule \"members\"] headers: \"Host\" may not be set"),
            std::string::npos)
      << r.err;
  r = RunFreshd({"check-config", WriteConfig(dir,
                                             "[[rule]]\nname = \"members\"\n"
                                             "host = \"members.example.org\"\n"
                                             "cookie = \"s=1\"\n")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("[rule \"members\"] cookie: needs an origin rule"),
            std::string::npos)
      << r.err;
}

class OriginCredentialsRunTest : public testing::TestWebFixture {};

TEST_F(OriginCredentialsRunTest, NoSecretInTheLogStatusOrPage) {
  status_port_ = testing::FreePort();
  const std::string origin = "http://h0.test:" + std::to_string(web_port_);
  const std::string config = (dir_ / "freshd.toml").string();
  std::ofstream(config) << "[crawler]\nseeds = \""
                        << (dir_ / "seeds.txt").string() << "\"\n"
                        << "[budget]\nrate = 20\nburst = 2\n"
                        << "[politeness]\nmin_delay = \"50ms\"\n"
                        << "[fetch]\nallow_private_networks = true\n"
                        << "resolve = { \"h0.test\" = \"127.0.0.1\" }\n"
                        << "[store]\npath = \"" << (dir_ / "db").string()
                        << "\"\nwarc_dir = \"" << (dir_ / "warc").string()
                        << "\"\n"
                        << "[status]\nlisten = \"127.0.0.1:" << status_port_
                        << "\"\n"
                        << "[log]\nlevel = \"debug\"\n"
                        << MembersRule(origin, Credentials(dir_, 0600));
  std::ofstream(dir_ / "seeds.txt") << origin << "/\n";
  const std::string err = (dir_ / "run.err").string();
  Child run = Spawn({"run", "--config", config}, err);
  nlohmann::json s = StatusWhen(
      [](const nlohmann::json& j) {
        return j.value("pages_fetched_total", 0) >= 3;
      },
      20);
  ASSERT_GE(s.value("pages_fetched_total", 0), 3) << s.dump();
  const std::string status_text = testing::HttpGet(status_port_, "/status");
  const std::string page =
      testing::HttpGet(status_port_, "/page?url=" + origin + "/");
  EXPECT_NE(page.find("members"), std::string::npos) << page;
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  EXPECT_EQ(Wait(run), 0) << Slurp(err);
  ExpectNoSecret(Slurp(err), "log");
  ExpectNoSecret(status_text, "/status");
  ExpectNoSecret(page, "/page");
  int redacted = 0;
  for (const store::ParsedRecord& rec :
       store::ReadWarcDir((dir_ / "warc").string())) {
    ExpectNoSecret(rec.block, "WARC");
    if (rec.fields.at("warc-type") == "request") {
      EXPECT_TRUE(
          store::DigestMatches(rec.fields.at("warc-block-digest"), rec.block));
      redacted +=
          rec.block.find("Authorization: [redacted]") != std::string::npos;
    }
  }
  EXPECT_GE(redacted, 1);
}

}  // namespace
}  // namespace freshd
