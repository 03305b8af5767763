// Per-origin request headers and credentials (issue #44 item 6,
// fetch/origin_credentials.h) against real servers on 127.0.0.1 that
// record every request's headers: the rule's origin gets its headers,
// cookie and basic or bearer Authorization; another origin (another port)
// does not, nor a redirect hop or robots.txt there, nor a proxy's CONNECT;
// the kept request head (what WARC request records hold) has every secret
// value redacted, and the WARC record's block digest is of those bytes.
// The credentials file parser and the file-mode refusal, alone.

#include "fetch/origin_credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fetch/crawler.h"
#include "store/warc_writer.h"
#include "tests/fetch/fetch_helpers.h"
#include "tests/fetch/forward_proxy.h"
#include "tests/fetch/test_server.h"
#include "tests/store/warc_reader.h"

namespace freshd::fetch {
namespace {

using testing::FastFetchConfig;
using testing::ForwardProxy;
using testing::Reply;
using testing::ServerRequest;
using testing::TestServer;

constexpr char kPassword[] = "Pw-origin-4417-secret";
constexpr char kToken[] = "tok-origin-9921-secret";
constexpr char kApiKey[] = "key-origin-6603-secret";
constexpr char kCookie[] = "session=cookie-origin-1188-secret";

std::filesystem::path FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("freshd_origin_cred_" + name + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string WriteFile(const std::filesystem::path& path,
                      const std::string& content, mode_t mode) {
  std::ofstream(path) << content;
  ::chmod(path.c_str(), mode);
  return path.string();
}

std::string Origin(const TestServer& s) {
  return "http://127.0.0.1:" + std::to_string(s.port());
}

Reply Page(const ServerRequest& req) {
  if (req.target == "/robots.txt") return Reply::Status(404);
  return Reply::Html("<html><body>" + req.target + "</body></html>");
}

// Every header value a server saw, one string, for "no secret" checks.
std::string AllHeaders(const TestServer& s) {
  std::string out;
  for (const ServerRequest& r : s.requests()) {
    for (const auto& [name, value] : r.headers) out += name + ": " + value;
  }
  return out;
}

void ExpectNoSecret(const std::string& bytes, const std::string& what) {
  for (const char* secret : {kPassword, kToken, kApiKey, kCookie}) {
    EXPECT_EQ(bytes.find(secret), std::string::npos) << what << ": " << secret;
  }
}

RuleConfig MembersRule(const std::string& origin, const std::string& cred) {
  RuleConfig r;
  r.name = "members";
  r.origin = origin;
  r.headers["X-Api-Key"] = kApiKey;
  r.cookie = kCookie;
  r.credentials_file = cred;
  return r;
}

CrawlerOptions Opts(std::vector<RuleConfig> rules) {
  CrawlerOptions o;
  o.fetcher.config = FastFetchConfig();
  o.fetcher.user_agent = "freshd-test/1.0";
  o.fetcher.origin_rules = std::move(rules);
  o.product_token = "freshd-test";
  o.politeness.min_delay_s = 0;
  return o;
}

std::map<std::string, FetchResult> CrawlAll(
    const CrawlerOptions& o, const std::vector<std::string>& urls) {
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, o);
  std::map<std::string, FetchResult> out;
  EXPECT_TRUE(crawler.ok()) << crawler.status().ToString();
  if (!crawler.ok()) return out;
  for (const std::string& u : urls) {
    CrawlRequest req;
    req.url = u;
    req.keep_raw = true;
    (*crawler)->Fetch(req, [&out, u](FetchResult r) { out[u] = std::move(r); });
  }
  io.run();
  return out;
}

TEST(CredentialsTextTest, BasicAndBearerLines) {
  // RFC 7617 §2's example.
  EXPECT_EQ(*ParseCredentialsText("basic Aladdin:open sesame\n"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  EXPECT_EQ(*ParseCredentialsText("  BASIC a:\r\nignored"), "Basic YTo=");
  EXPECT_EQ(*ParseCredentialsText("bearer mF_9.B5f-4.1JqM\n"),
            "Bearer mF_9.B5f-4.1JqM");
  EXPECT_EQ(*ParseCredentialsText("Bearer abc=="), "Bearer abc==");
  for (const char* bad : {"", "\n", "basic", "basic :pw", "basic nocolon",
                          "bearer", "bearer a b", "bearer =abc", "bearer a=b",
                          "digest a:b", "user:password", "basic a:b\x01"}) {
    Result<std::string> r = ParseCredentialsText(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("first line"), std::string::npos);
    }
  }
  // A refusal never quotes the file.
  Result<std::string> r =
      ParseCredentialsText(std::string("basic ") + kPassword + "\x7f");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find(kPassword), std::string::npos);
}

TEST(OriginCredentialsTest, AFileOthersMayReadIsRefusedNamingTheRule) {
  const auto dir = FreshDir("mode");
  const std::string cred = WriteFile(
      dir / "members.cred", std::string("basic u:") + kPassword + "\n", 0640);
  Result<OriginCredentials> c =
      OriginCredentials::Create({MembersRule("http://127.0.0.1:1", cred)}, "");
  ASSERT_FALSE(c.ok());
  const std::string e = c.status().message();
  EXPECT_NE(e.find("[rule \"members\"] credentials_file"), std::string::npos)
      << e;
  EXPECT_NE(e.find("mode 0640"), std::string::npos) << e;
  EXPECT_EQ(e.find(kPassword), std::string::npos) << e;
  ::chmod(cred.c_str(), 0600);
  EXPECT_TRUE(
      OriginCredentials::Create({MembersRule("http://127.0.0.1:1", cred)}, "")
          .ok());
  // A bad line: named, not quoted.
  WriteFile(dir / "members.cred", std::string("token ") + kPassword, 0600);
  c = OriginCredentials::Create({MembersRule("http://127.0.0.1:1", cred)}, "");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("first line"), std::string::npos);
  EXPECT_EQ(c.status().message().find(kPassword), std::string::npos);
}

TEST(OriginCredentialsTest, SystemdCredentialIsReadFromCredentialsDirectory) {
  const auto dir = FreshDir("systemd");
  WriteFile(dir / "members", std::string("bearer ") + kToken + "\n", 0400);
  RuleConfig r;
  r.name = "members";
  r.origin = "https://members.example.org";
  r.credential = "members";
  Result<OriginCredentials> c = OriginCredentials::Create({r}, "");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("$CREDENTIALS_DIRECTORY is not set"),
            std::string::npos);
  c = OriginCredentials::Create({r}, dir.string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(
      c->HeadersFor("https://members.example.org:443"),
      std::vector<std::string>{std::string("Authorization: Bearer ") + kToken});
  EXPECT_TRUE(c->HeadersFor("http://members.example.org:80").empty());
  EXPECT_TRUE(c->HeadersFor("https://members.example.org:8443").empty());
}

TEST(OriginCredentialsTest, RedactBlanksEverySecretValueAndKeepsTheRest) {
  OriginCredentials c =
      *OriginCredentials::Create({MembersRule("http://127.0.0.1:1", "")}, "");
  const std::string head = std::string(
                               "GET /a?authorization:x HTTP/1.1\r\n"
                               "Host: 127.0.0.1:1\r\n"
                               "authorization: Basic abc\r\n"
                               "X-API-KEY: ") +
                           kApiKey + "\r\nCookie: " + kCookie +
                           "\r\nAccept: */*\r\n\r\n";
  EXPECT_EQ(c.Redact(head),
            "GET /a?authorization:x HTTP/1.1\r\n"
            "Host: 127.0.0.1:1\r\n"
            "authorization: [redacted]\r\n"
            "X-API-KEY: [redacted]\r\n"
            "Cookie: [redacted]\r\n"
            "Accept: */*\r\n\r\n");
}

TEST(OriginCredentialsTest, OnlyTheRulesOriginGetsHeadersCookieAndBasic) {
  TestServer members(Page), other(Page);
  const auto dir = FreshDir("basic");
  const std::string cred = WriteFile(
      dir / "members.cred", std::string("basic crawler:") + kPassword, 0600);
  const std::string a = Origin(members) + "/page", b = Origin(other) + "/page";
  auto out = CrawlAll(Opts({MembersRule(Origin(members), cred)}), {a, b});
  ASSERT_EQ(out[a].outcome, OutcomeClass::kOk) << out[a].detail;
  ASSERT_EQ(out[b].outcome, OutcomeClass::kOk) << out[b].detail;
  ASSERT_EQ(members.CountTarget("/page"), 1u);
  for (const ServerRequest& r : members.requests()) {
    // robots.txt of the same origin too.
    EXPECT_EQ(r.Header("x-api-key"), kApiKey) << r.target;
    EXPECT_EQ(r.Header("cookie"), kCookie) << r.target;
    EXPECT_EQ(
        r.Header("authorization"),
        // base64 of "crawler:" + kPassword, by Python's base64.
        "Basic " + std::string("Y3Jhd2xlcjpQdy1vcmlnaW4tNDQxNy1zZWNyZXQ="))
        << r.target;
  }
  EXPECT_EQ(other.CountTarget("/page"), 1u);
  EXPECT_EQ(AllHeaders(other).find("authorization"), std::string::npos);
  EXPECT_EQ(AllHeaders(other).find("cookie"), std::string::npos);
  ExpectNoSecret(AllHeaders(other), "the other origin");
  // The kept request heads: the fields are there, their values are not.
  ASSERT_FALSE(out[a].raw_request.empty());
  EXPECT_NE(out[a].raw_request.find("Authorization: [redacted]\r\n"),
            std::string::npos)
      << out[a].raw_request;
  EXPECT_NE(out[a].raw_request.find("X-Api-Key: [redacted]\r\n"),
            std::string::npos);
  EXPECT_NE(out[a].raw_request.find("Cookie: [redacted]\r\n"),
            std::string::npos);
  for (const auto& [url, r] : out) ExpectNoSecret(r.raw_request, url);
}

TEST(OriginCredentialsTest, BearerGoesToItsOriginOnly) {
  TestServer members(Page), other(Page);
  const auto dir = FreshDir("bearer");
  RuleConfig r;
  r.name = "api";
  r.origin = Origin(members);
  r.credentials_file =
      WriteFile(dir / "api.cred", std::string("bearer ") + kToken + "\n", 0600);
  const std::string a = Origin(members) + "/x", b = Origin(other) + "/x";
  auto out = CrawlAll(Opts({r}), {a, b});
  ASSERT_EQ(out[a].outcome, OutcomeClass::kOk) << out[a].detail;
  ASSERT_EQ(out[b].outcome, OutcomeClass::kOk) << out[b].detail;
  for (const ServerRequest& req : members.requests()) {
    EXPECT_EQ(req.Header("authorization"), std::string("Bearer ") + kToken);
  }
  ExpectNoSecret(AllHeaders(other), "the other origin");
  EXPECT_EQ(AllHeaders(other).find("authorization"), std::string::npos);
}

TEST(OriginCredentialsTest, ARedirectToAnotherOriginCarriesNone) {
  TestServer other(Page);
  const std::string landing = Origin(other) + "/landing";
  TestServer members([&](const ServerRequest& req) {
    if (req.target == "/robots.txt") return Reply::Status(404);
    if (req.target == "/moved") return Reply::Redirect(302, landing);
    return Reply::Html("<html></html>");
  });
  const auto dir = FreshDir("redirect");
  const std::string cred = WriteFile(
      dir / "members.cred", std::string("basic crawler:") + kPassword, 0600);
  const std::string start = Origin(members) + "/moved";
  auto out = CrawlAll(Opts({MembersRule(Origin(members), cred)}), {start});
  ASSERT_EQ(out[start].outcome, OutcomeClass::kOk) << out[start].detail;
  EXPECT_EQ(out[start].final_url, landing);
  EXPECT_EQ(members.CountTarget("/moved"), 1u);
  for (const ServerRequest& r : members.requests()) {
    EXPECT_EQ(r.Header("authorization").substr(0, 6), "Basic ");
  }
  // The other origin saw robots.txt and the landing page, without any.
  EXPECT_EQ(other.CountTarget("/landing"), 1u);
  EXPECT_EQ(other.CountTarget("/robots.txt"), 1u);
  EXPECT_EQ(AllHeaders(other).find("authorization"), std::string::npos);
  EXPECT_EQ(AllHeaders(other).find("cookie"), std::string::npos);
  EXPECT_EQ(AllHeaders(other).find("x-api-key"), std::string::npos);
  ExpectNoSecret(AllHeaders(other), "the redirect target");
  // The hop's kept request head is redacted too.
  ASSERT_EQ(out[start].redirect_hops.size(), 1u);
  EXPECT_NE(
      out[start].redirect_hops[0].raw_request.find("Authorization: [redacted]"),
      std::string::npos);
  ExpectNoSecret(out[start].redirect_hops[0].raw_request, "hop");
  ExpectNoSecret(out[start].raw_request, "landing");
}

TEST(OriginCredentialsTest, NeverOnAProxysConnect) {
  TestServer members(Page);
  ForwardProxy proxy;
  const auto dir = FreshDir("proxy");
  const std::string cred = WriteFile(
      dir / "members.cred", std::string("basic crawler:") + kPassword, 0600);
  CrawlerOptions o = Opts({MembersRule(Origin(members), cred)});
  o.fetcher.config.proxy = proxy.Url();
  o.fetcher.exempt_endpoints = {"127.0.0.1:" + std::to_string(members.port()),
                                "127.0.0.1:" + std::to_string(proxy.port())};
  o.fetcher.config.allow_private_networks = false;
  const std::string a = Origin(members) + "/p";
  auto out = CrawlAll(o, {a});
  ASSERT_EQ(out[a].outcome, OutcomeClass::kOk) << out[a].detail;
  ASSERT_FALSE(proxy.heads().empty());
  for (const std::string& head : proxy.heads()) {
    ExpectNoSecret(head, "CONNECT");
    std::string lower = head;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
    EXPECT_EQ(lower.find("authorization"), std::string::npos) << head;
    EXPECT_EQ(lower.find("cookie"), std::string::npos) << head;
  }
  for (const ServerRequest& r : members.requests()) {
    EXPECT_EQ(r.Header("x-api-key"), kApiKey);
  }
}

TEST(OriginCredentialsTest, WarcRequestRecordHoldsTheRedactedHeadAndItsDigest) {
  TestServer members(Page);
  const auto dir = FreshDir("warc");
  const std::string cred = WriteFile(
      dir / "members.cred", std::string("basic crawler:") + kPassword, 0600);
  const std::string a = Origin(members) + "/archived";
  auto out = CrawlAll(Opts({MembersRule(Origin(members), cred)}), {a});
  const FetchResult& r = out[a];
  ASSERT_EQ(r.outcome, OutcomeClass::kOk) << r.detail;
  std::filesystem::create_directories(dir / "warc");
  store::WarcWriterOptions wo;
  wo.dir = (dir / "warc").string();
  auto writer = store::WarcWriter::Open(wo);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  store::WarcExchange ex;
  ex.target_uri = r.final_url;
  ex.date = 1.7e9;
  ex.request_head = r.raw_request;
  ex.response_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
  ex.body = r.raw_body;
  ASSERT_TRUE((*writer)->WriteExchange(ex).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  bool saw_request = false;
  for (const store::ParsedRecord& rec : store::ReadWarcDir(wo.dir)) {
    ExpectNoSecret(rec.block, "WARC record");
    if (rec.fields.at("warc-type") != "request") continue;
    saw_request = true;
    EXPECT_NE(rec.block.find("Authorization: [redacted]\r\n"),
              std::string::npos)
        << rec.block;
    EXPECT_TRUE(
        store::DigestMatches(rec.fields.at("warc-block-digest"), rec.block));
  }
  EXPECT_TRUE(saw_request);
  for (const auto& e : std::filesystem::directory_iterator(wo.dir)) {
    ExpectNoSecret(store::ReadFile(e.path().string()), "WARC file (gzip)");
  }
}

}  // namespace
}  // namespace freshd::fetch
