// `freshd fetch` as an operator runs it, against real servers on 127.0.0.1:
// JSON Lines in input order, the default config refusing loopback, HTML
// fingerprints, exit codes, and --warc output.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/run_command.h"
#include "tests/fetch/test_server.h"

namespace freshd {
namespace {

using fetch::testing::Reply;
using fetch::testing::ServerRequest;
using fetch::testing::TestServer;
using testing::RunFreshd;
using testing::WriteTempFile;

std::vector<nlohmann::json> JsonLines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  }
  return v;
}

Reply Site(const ServerRequest& req) {
  if (req.target == "/robots.txt") return Reply::Status(404);
  if (req.target == "/page.html") {
    return Reply::Html(
        "<html><head><title>T</title></head><body><p>one two three four "
        "five six</p><a href=\"/a\">a</a> <a href=\"b.html\">b</a>"
        "</body></html>");
  }
  if (req.target == "/moved") return Reply::Redirect(301, "/page.html");
  return Reply::Status(404, "nope");
}

std::string LoopbackConfig() {
  return WriteTempFile(
      "[fetch]\nallow_private_networks = true\n"
      "[politeness]\nmin_delay = \"50ms\"\n");
}

TEST(FetchCliTest, DefaultConfigRefusesLoopbackAndSaysSo) {
  TestServer server(Site);
  auto r = RunFreshd({"fetch", server.Url("/page.html")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0]["outcome"], "blocked-address");
  EXPECT_NE(
      lines[0]["detail"].get<std::string>().find("allow_private_networks"),
      std::string::npos);
  EXPECT_EQ(server.request_count(), 0u);
}

TEST(FetchCliTest, UnresolvableHostIsADnsOutcome) {
  // RFC 6761: .invalid never resolves. robots.txt comes first; its DNS
  // failure is what the URL reports.
  auto r = RunFreshd({"fetch", "http://no-such-host.invalid/x"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0]["outcome"], "dns");
}

TEST(FetchCliTest, PrintsOneObjectPerUrlInOrderWithHtmlFingerprint) {
  TestServer server(Site);
  std::string config = LoopbackConfig();
  auto r = RunFreshd({"fetch", "--config", config, server.Url("/moved"),
                      server.Url("/missing"), "mailto:x@example.com"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  const auto& page = lines[0];
  EXPECT_EQ(page["url"], server.Url("/moved"));
  EXPECT_EQ(page["final_url"], server.Url("/page.html"));
  EXPECT_EQ(page["outcome"], "ok");
  EXPECT_EQ(page["status"], 200);
  EXPECT_EQ(page["redirects"], 1);
  EXPECT_GT(page["bytes"].get<int>(), 100);
  EXPECT_GE(page["elapsed_ms"].get<int>(), 0);
  EXPECT_EQ(page["text_hash"].get<std::string>().size(), 16u);
  EXPECT_GT(page["shingles"].get<int>(), 0);
  EXPECT_EQ(page["links"], 2);
  EXPECT_EQ(lines[1]["outcome"], "4xx");
  EXPECT_EQ(lines[1]["status"], 404);
  EXPECT_FALSE(lines[1].contains("text_hash"));
  EXPECT_EQ(lines[2]["outcome"], "bad-url");
  std::remove(config.c_str());
}

TEST(FetchCliTest, BadUsageExits2) {
  EXPECT_EQ(RunFreshd({"fetch"}).exit_code, 2);
  EXPECT_EQ(RunFreshd({"fetch", "--config", "/nonexistent.toml", "http://x/"})
                .exit_code,
            2);
  std::string bad = WriteTempFile("[fetch]\nno_such_key = 1\n");
  auto r = RunFreshd({"fetch", "--config", bad, "http://example.com/"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no_such_key"), std::string::npos);
  std::remove(bad.c_str());
}

TEST(FetchCliTest, WarcOutputHoldsTheResponse) {
  TestServer server(Site);
  std::string config = LoopbackConfig();
  char dir_template[] = "/tmp/freshd-warc-XXXXXX";
  std::string dir = mkdtemp(dir_template);
  auto r = RunFreshd(
      {"fetch", "--config", config, "--warc", dir, server.Url("/page.html")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    files.push_back(e.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find(".warc.gz"), std::string::npos);
  EXPECT_EQ(files[0].find(".open"), std::string::npos);
  std::string text = dir + "/dump.txt";
  ASSERT_EQ(std::system(("gzip -dc " + files[0] + " > " + text).c_str()), 0);
  std::string warc = testing::ReadWholeFile(text);
  EXPECT_NE(warc.find("WARC-Type: response"), std::string::npos);
  EXPECT_NE(warc.find("WARC-Target-URI: " + server.Url("/page.html")),
            std::string::npos);
  EXPECT_NE(warc.find("one two three four"), std::string::npos);
  std::filesystem::remove_all(dir);
  std::remove(config.c_str());
}

}  // namespace
}  // namespace freshd
