// `freshd fetch` as an operator runs it, against real servers on 127.0.0.1:
// JSON Lines in input order, the default config refusing loopback, HTML
// fingerprints, exit codes, and --warc output.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
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
  if (req.target == "/unchanged") return Reply::Status(304);
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
                      server.Url("/missing")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
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
  std::remove(config.c_str());
}

// README: exit 2 for bad input. A URL that is not an absolute http(s) URL is
// named on stderr and nothing is fetched, not even the good URLs beside it.
TEST(FetchCliTest, BadUrlExits2AndFetchesNothing) {
  for (const char* bad : {"not-a-url", "ftp://x/", "mailto:x@example.com"}) {
    auto r = RunFreshd({"fetch", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  }
  TestServer server(Site);
  std::string config = LoopbackConfig();
  auto r = RunFreshd(
      {"fetch", "--config", config, server.Url("/page.html"), "ftp://x/"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("unsupported scheme 'ftp'"), std::string::npos) << r.err;
  EXPECT_EQ(server.request_count(), 0u);
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

struct WarcRecord {
  std::map<std::string, std::string> fields;  // names as written
  std::string block;
};

// Splits uncompressed WARC data into records (framing checked by
// warc_verify.py; this only needs to find the fields and blocks).
std::vector<WarcRecord> SplitWarc(const std::string& data) {
  std::vector<WarcRecord> out;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find("\r\n\r\n", pos);
    if (end == std::string::npos) break;
    WarcRecord rec;
    std::istringstream head(data.substr(pos, end - pos));
    std::string line;
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      rec.fields[line.substr(0, colon)] = line.substr(colon + 2);
    }
    size_t len = std::stoul(rec.fields["Content-Length"]);
    rec.block = data.substr(end + 4, len);
    out.push_back(std::move(rec));
    pos = end + 4 + len + 4;
  }
  return out;
}

// The robots.txt exchange `freshd fetch --warc` archives before the pages
// (the test site answers it 404): checks it is records 1-2 and removes it.
void ExpectAndDropRobots(const TestServer& server,
                         std::vector<WarcRecord>* recs) {
  ASSERT_GE(recs->size(), 3u);
  EXPECT_EQ((*recs)[1].fields["WARC-Type"], "request");
  EXPECT_EQ((*recs)[2].fields["WARC-Type"], "response");
  for (size_t i : {1, 2}) {
    EXPECT_EQ((*recs)[i].fields["WARC-Target-URI"], server.Url("/robots.txt"));
  }
  EXPECT_EQ((*recs)[2].block.rfind("HTTP/1.1 404", 0), 0u) << (*recs)[2].block;
  recs->erase(recs->begin() + 1, recs->begin() + 3);
}

TEST(FetchCliTest, WarcOutputHoldsRequestAndResponseRecords) {
  TestServer server(Site);
  std::string config = LoopbackConfig();
  char dir_template[] = "/tmp/freshd-warc-XXXXXX";
  std::string dir = mkdtemp(dir_template);
  auto r = RunFreshd({"fetch", "--config", config, "--warc", dir,
                      server.Url("/page.html"), server.Url("/unchanged")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files, indexes;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (e.path().extension() == ".cdxj" ? indexes : files)
        .push_back(e.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  // The CDXJ beside it: robots.txt's 404, the response, the revisit.
  ASSERT_EQ(indexes.size(), 1u);
  const std::string cdxj = testing::ReadWholeFile(indexes[0]);
  EXPECT_EQ(std::count(cdxj.begin(), cdxj.end(), '\n'), 3) << cdxj;
  EXPECT_NE(cdxj.find("\"status\":\"200\",\"digest\":\""), std::string::npos)
      << cdxj;
  EXPECT_NE(files[0].find(".warc.gz"), std::string::npos);
  EXPECT_EQ(files[0].find(".open"), std::string::npos);
  // An independent reader checks framing and block/payload digests.
  std::string verify = "python3 " + std::string(FRESHD_SOURCE_DIR) +
                       "/tests/tools/warc_verify.py " + files[0] + " > " + dir +
                       "/verify.txt 2>&1";
  EXPECT_EQ(std::system(verify.c_str()), 0)
      << testing::ReadWholeFile(dir + "/verify.txt");
  EXPECT_NE(
      testing::ReadWholeFile(dir + "/verify.txt").find("7 records, 0 errors"),
      std::string::npos)
      << testing::ReadWholeFile(dir + "/verify.txt");
  std::string text = dir + "/dump.txt";
  ASSERT_EQ(std::system(("gzip -dc " + files[0] + " > " + text).c_str()), 0);
  std::vector<WarcRecord> recs = SplitWarc(testing::ReadWholeFile(text));
  ASSERT_EQ(recs.size(), 7u);
  ExpectAndDropRobots(server, &recs);
  EXPECT_EQ(recs[0].fields["WARC-Type"], "warcinfo");
  WarcRecord& req = recs[1];
  WarcRecord& resp = recs[2];
  ASSERT_EQ(req.fields["WARC-Type"], "request");
  ASSERT_EQ(resp.fields["WARC-Type"], "response");
  EXPECT_EQ(req.fields["WARC-Target-URI"], server.Url("/page.html"));
  EXPECT_EQ(req.fields["Content-Type"], "application/http;msgtype=request");
  EXPECT_EQ(req.fields["WARC-Concurrent-To"], resp.fields["WARC-Record-ID"]);
  EXPECT_EQ(resp.fields["WARC-Concurrent-To"], req.fields["WARC-Record-ID"]);
  EXPECT_EQ(req.fields["WARC-IP-Address"], "127.0.0.1");
  EXPECT_NE(resp.block.find("one two three four"), std::string::npos);
  // The request block is the head curl sent: request line, then exactly the
  // header fields the server received, ending in CRLF CRLF.
  EXPECT_EQ(req.block.rfind("GET /page.html HTTP/1.1\r\n", 0), 0u) << req.block;
  ASSERT_GE(req.block.size(), 4u);
  EXPECT_EQ(req.block.substr(req.block.size() - 4), "\r\n\r\n");
  ServerRequest seen;
  for (const ServerRequest& sr : server.requests()) {
    if (sr.target == "/page.html") seen = sr;
  }
  ASSERT_FALSE(seen.headers.empty());
  size_t lines = 0;
  for (size_t p = 0; (p = req.block.find("\r\n", p)) != std::string::npos;
       p += 2) {
    ++lines;
  }
  EXPECT_EQ(lines, seen.headers.size() + 2) << req.block;  // + line, + end
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(c));
    return s;
  };
  for (const auto& [name, value] : seen.headers) {
    EXPECT_NE(
        lower(req.block).find(lower("\r\n" + name + ": " + value + "\r\n")),
        std::string::npos)
        << name << " missing from " << req.block;
  }
  EXPECT_NE(req.block.find("User-Agent: freshd"), std::string::npos);
  EXPECT_NE(req.block.find("Accept-Encoding: gzip, deflate, br\r\n"),
            std::string::npos);
  // The 304 is a server-not-modified revisit, with its own request record.
  WarcRecord& req304 = recs[3];
  WarcRecord& revisit = recs[4];
  ASSERT_EQ(req304.fields["WARC-Type"], "request");
  ASSERT_EQ(revisit.fields["WARC-Type"], "revisit");
  EXPECT_NE(revisit.fields["WARC-Profile"].find("server-not-modified"),
            std::string::npos);
  EXPECT_EQ(req304.fields["WARC-Concurrent-To"],
            revisit.fields["WARC-Record-ID"]);
  EXPECT_EQ(revisit.fields["WARC-Concurrent-To"],
            req304.fields["WARC-Record-ID"]);
  EXPECT_EQ(req304.block.rfind("GET /unchanged HTTP/1.1\r\n", 0), 0u);
  EXPECT_EQ(revisit.block.rfind("HTTP/1.1 304", 0), 0u) << revisit.block;
  std::filesystem::remove_all(dir);
  std::remove(config.c_str());
}

// Each redirect hop is its own request + response pair, then the page; a
// 404 is archived as a response too ([store] warc_errors, on by default);
// the CDXJ beside the file names each response, warc_verify.py passes.
TEST(FetchCliTest, WarcHoldsEachRedirectHopAndErrorResponses) {
  TestServer server(Site);
  std::string config = LoopbackConfig();
  char dir_template[] = "/tmp/freshd-warc-XXXXXX";
  std::string dir = mkdtemp(dir_template);
  auto r = RunFreshd({"fetch", "--config", config, "--warc", dir,
                      server.Url("/moved"), server.Url("/gone")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string warc, cdxj;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (e.path().extension() == ".cdxj" ? cdxj : warc) = e.path().string();
  }
  ASSERT_FALSE(warc.empty());
  ASSERT_FALSE(cdxj.empty());
  std::string verify = "python3 " + std::string(FRESHD_SOURCE_DIR) +
                       "/tests/tools/warc_verify.py " + warc + " > " + dir +
                       "/verify.txt 2>&1";
  EXPECT_EQ(std::system(verify.c_str()), 0)
      << testing::ReadWholeFile(dir + "/verify.txt");
  std::string text = dir + "/dump.txt";
  ASSERT_EQ(std::system(("gzip -dc " + warc + " > " + text).c_str()), 0);
  std::vector<WarcRecord> recs = SplitWarc(testing::ReadWholeFile(text));
  ASSERT_EQ(recs.size(), 9u);
  ExpectAndDropRobots(server, &recs);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"request", "/moved"},     {"response", "/moved"},
      {"request", "/page.html"}, {"response", "/page.html"},
      {"request", "/gone"},      {"response", "/gone"}};
  for (size_t i = 0; i < want.size(); ++i) {
    WarcRecord& rec = recs[i + 1];
    EXPECT_EQ(rec.fields["WARC-Type"], want[i].first) << i;
    EXPECT_EQ(rec.fields["WARC-Target-URI"], server.Url(want[i].second)) << i;
  }
  EXPECT_EQ(recs[2].block.rfind("HTTP/1.1 301", 0), 0u) << recs[2].block;
  EXPECT_NE(recs[2].block.find("Location: "), std::string::npos);
  EXPECT_EQ(recs[6].block.rfind("HTTP/1.1 404", 0), 0u) << recs[6].block;
  EXPECT_NE(recs[6].block.find("\r\n\r\nnope"), std::string::npos);
  const std::string index = testing::ReadWholeFile(cdxj);
  EXPECT_EQ(std::count(index.begin(), index.end(), '\n'), 4) << index;
  EXPECT_NE(index.find("\"status\":\"301\""), std::string::npos) << index;
  EXPECT_NE(index.find("\"status\":\"404\""), std::string::npos) << index;
  std::filesystem::remove_all(dir);
  std::remove(config.c_str());
}

}  // namespace
}  // namespace freshd
